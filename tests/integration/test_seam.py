"""The engine seam: what an answer carries, and what `--explain` reads from it.

Each hit carries what its exact score was computed from (the count of each scored term it has, and its
length), the answer carries the story of its window, and explaining an answer asks nothing more of the
cluster (it once fetched the whole statistics document again for every question).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.cluster.schema import STATISTICS_ID
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.read.query import WINDOW
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpus
from indexer.retrieval.request import Request
from tests.integration.support import drop_namespace, unique_namespace

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
QUESTIONS = ["how far from a fire hydrant can i park", "school bus", "how far must i be behing a firehydrant", "x"]


@pytest.fixture
def loaded(opensearch_url: str, opensearch: OpenSearch) -> Iterator[tuple[Connection, Corpus]]:
    connection = Connection.from_env(opensearch_url, namespace=unique_namespace())
    corpus = read_corpus(CORPORA / "MD.jsonl")
    load(connection, [corpus], plugin=False)  # the window path: its first window is WINDOW
    try:
        yield connection, corpus
    finally:
        drop_namespace(opensearch, connection.namespace)


def test_each_hit_carries_its_counts_and_length_and_the_answer_its_window(
    loaded: tuple[Connection, Corpus],
) -> None:
    connection, corpus = loaded
    engine = OpenSearchEngine(connection)
    stats = reference.statistics(corpus.laws)
    order = {law.id: number for number, law in enumerate(corpus.laws)}
    for question in QUESTIONS:
        answer = engine.ask(Request("MD", question, limit=8))
        assert answer.window is not None and answer.window.sizes[0] == WINDOW
        for hit in answer.hits:
            # From the reference's own tokenizing of the corpus file, not from what the index stored.
            place = order[hit.law.id]
            want = {term: stats.counts[place][term] for term in answer.terms if stats.counts[place].get(term)}
            assert dict(hit.counts) == want and want
            assert hit.length == stats.lengths[place]


def test_explaining_an_answer_asks_the_cluster_nothing_more(
    loaded: tuple[Connection, Corpus], opensearch: OpenSearch
) -> None:
    connection, _ = loaded
    engine = OpenSearchEngine(connection)
    answers = [engine.ask(Request("MD", question)) for question in QUESTIONS]
    # The statistics document gone: an explanation that fetched it again would fail.
    opensearch.delete(index=alias_of("MD", connection.namespace), id=STATISTICS_ID, refresh=True)
    for answer in answers:
        parts = engine.explain(answer)
        for hit, hit_parts in zip(answer.hits, parts, strict=True):
            total = 0.0
            for part in hit_parts:
                total += part.score
            assert total == hit.score
