"""One request a question for every way where the lawindex plugin runs (issue 28, item 4): once a state's
statistics are read, `ask`, `serve` and `eval` (all three ask through indexer.opensearch.read.engine.OpenSearchEngine)
send one `_search` for a question by words, by meaning or by hybrid, whatever the limit, on the samples and
on a generated state wide enough that the window path would widen (it asked 2 to 8 requests a hybrid
question). Counted where the engine sends them (its search path, indexer.opensearch.cluster.fast_search.FastSearch,
and opensearch-py's transport), against a real node; status says the plugin path for both. Besides the
searches, only the vocabulary's blocks are read, lazily, each word length once per index (the spelling's
stored fields of the statistics document), never again for a later question. By words, a law tied (as a
float32 `_score`) with the limit-th is read on in pages until the scores fall below it
(indexer.opensearch.read.rescore's `plugin_proven`): a second request for those questions only, counted here.

On a node without the plugin there is nothing of the plugin's to count: the test asks that the node has it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexer.node import plugin
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.read.status import status
from indexer.opensearch.verify import default_questions
from indexer.opensearch.write.load import load
from indexer.retrieval import meaning as rank
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.request import Request, Way
from tests import synthetic
from tests.integration.support import fresh_connection

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
LAWS = 1500


def _tied_at(corpus: Corpus, question: str, limit: int) -> bool:
    """Whether the reference's law after the limit-th by words has the same float32 score (a page more)."""
    stats = reference.statistics(corpus.laws)
    _, terms = reference.expand(question, stats)
    hits = reference.top_hits(stats, corpus.laws, terms, limit + 1) if terms else []
    return len(hits) > limit and np.float32(hits[limit].score) == np.float32(hits[limit - 1].score)


def test_every_way_is_one_search_a_question_on_the_plugin_path(opensearch_url: str) -> None:
    laws = synthetic.generate_corpus("GU", LAWS, 44)
    corpora = [*read_corpora(CORPORA, ["MD"]), synthetic.corpus_of("GU", laws)]
    with fresh_connection(opensearch_url) as connection:
        assert plugin.installed(connection.client()), f"the node at {opensearch_url} has no lawindex plugin"
        load(connection, corpora)
        assert {(row.state, row.path, row.meaning_path) for row in status(connection)} == {
            ("GU", "plugin", "plugin"),
            ("MD", "plugin", "plugin"),
        }
        engine = OpenSearchEngine(connection)
        searches: list[str] = []
        other: list[tuple[str, str, str]] = []
        fast = engine.fast_search
        search, transport = fast.search, engine.client.transport
        perform = transport.perform_request

        def counted_search(index: str, body: dict[str, Any]) -> dict[str, Any]:
            searches.append(index)
            return search(index, body)

        def counted(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            if not url.endswith("/_search"):  # a search FastSearch handed to opensearch-py is counted above
                other.append((method, url, str((kwargs.get("params") or {}).get("stored_fields"))))
            return perform(method, url, *args, **kwargs)

        for corpus in corpora:
            engine.ask(
                Request(corpus.state, "school bus", limit=8)
            )  # reads and keeps the statistics and the index's _meta
            engine.ask(Request(corpus.state, "school bus", Way.meaning, 8))
        fast.search = counted_search  # type: ignore[method-assign]
        transport.perform_request = counted  # type: ignore[method-assign]
        try:
            asked, tied = 0, 0
            for corpus in corpora:
                questions = [*default_questions(corpus)[:6], *synthetic.generate_questions(corpus.laws, 6, 44)]
                for number, question in enumerate(questions):
                    for by in ("words", "meaning", "hybrid"):
                        limit = 100 if number % 3 == 0 else 8
                        searches.clear()
                        got = engine.ask(Request(corpus.state, question, Way(by), limit))
                        if by == "words" and _tied_at(corpus, question, limit):
                            assert len(searches) == 2, (corpus.state, question, by, searches)
                            tied += 1
                        else:
                            assert len(searches) == 1, (corpus.state, question, by, searches)
                        if by != "words":  # still the reference engine's answer
                            assert (
                                got.ids() == rank.answer(corpus, Request(corpus.state, question, Way(by), limit)).ids()
                            ), (question, by)
                        asked += 1
        finally:
            fast.search = search  # type: ignore[method-assign]
            transport.perform_request = perform  # type: ignore[method-assign]
        assert asked == 2 * 12 * 3, tied
        # The vocabulary's blocks, each read once: nothing else, nothing twice.
        assert all(method == "GET" and url.endswith("/_doc/statistics") for method, url, _ in other), other
        assert len(set(other)) == len(other), other
