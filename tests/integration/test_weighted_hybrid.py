"""Weighted hybrid on a real OpenSearch (the window path: indexer.opensearch.vectors with
indexer.retrieval.meaning.proven) equal to the reference engine, ids, ranks and scores to the bit, with weights
other than the defaults: over eval/corpora/OH.jsonl (342 rows, wider than the first hybrid window of 64) and
the held-out questions of eval/handbook.jsonl. Where the node has no k-NN plugin, hybrid is refused naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from indexer.errors import NoMeaning
from indexer.node import knn
from indexer.opensearch.load import load
from indexer.retrieval import meaning as rank
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.service.engines import ClusterEngine
from indexer.service.eval import of_split, read_judged
from tests.integration.support import fresh_connection, lawindex

pytestmark = pytest.mark.integration

EVAL = Path(__file__).resolve().parents[2] / "eval"
# Not the defaults (5, 1, 4): words favoured, plain RRF at a small k, a way weighed 0 each side.
FUSIONS = [(60, 3.0, 0.5), (1, 1.0, 1.0), (5, 0.0, 1.0), (20, 1.0, 0.0), (2, 0.25, 7.5)]


@dataclass(frozen=True)
class Loaded:
    engine: ClusterEngine
    corpus: Corpus
    url: str
    namespace: str
    knn: bool


@pytest.fixture(scope="module")
def loaded(opensearch_url: str) -> Iterator[Loaded]:
    (corpus,) = read_corpora(EVAL / "corpora", ["OH"])
    with fresh_connection(opensearch_url) as connection:
        load(connection, [corpus])
        has = knn.installed(connection.client())
        yield Loaded(ClusterEngine(connection), corpus, opensearch_url, connection.namespace, has)


def test_weighted_hybrid_on_opensearch_is_the_reference_engines(loaded: Loaded) -> None:
    if not loaded.knn:  # a node without k-NN refuses hybrid, naming the plugin
        with pytest.raises(NoMeaning, match=r"has no k-NN plugin \(opensearch-knn\)"):
            loaded.engine.ask("OH", "fire hydrant", 8, "hybrid", *FUSIONS[0])
        return
    questions = [one.question for one in of_split(read_judged(EVAL / "handbook.jsonl"), "held-out")]
    asked = 0
    for number, question in enumerate(questions):
        for fusion in FUSIONS if number % 4 == 0 else FUSIONS[:1]:
            for limit in (8, 100) if number % 8 == 0 else (8,):
                expected = rank.answer(loaded.corpus, question, limit, "hybrid", *fusion)
                got = loaded.engine.ask("OH", question, limit, "hybrid", *fusion)
                assert got.ids() == expected.ids(), (question, fusion, limit)
                assert got.reached == expected.reached, (question, fusion, limit)
                assert [hit.score for hit in got.hits] == [hit.score for hit in expected.hits]
                assert (got.rrf_k, got.weights) == (fusion[0], fusion[1:]) == (expected.rrf_k, expected.weights)
                asked += 1
    assert asked > 100


def test_ask_prints_the_weights_it_fused_with(loaded: Loaded) -> None:
    if not loaded.knn:
        return
    question = "how close can i park near the train tracks"
    env = {"OPENSEARCH_URL": loaded.url, "LAWINDEX_NAMESPACE": loaded.namespace}
    code, out, err = lawindex(
        "ask", "OH", question, "--by", "hybrid", "--rrf-k", "20", "--words-weight", "2", "--meaning-weight", "0.5",
        "--json", env=env,
    )  # fmt: skip
    assert code == 0, err
    answer = json.loads(out)
    assert (answer["by"], answer["rrf_k"], answer["weights"]) == ("hybrid", 20, {"words": 2.0, "meaning": 0.5})
    expected = rank.answer(loaded.corpus, question, 8, "hybrid", 20, 2.0, 0.5)
    assert [hit["id"] for hit in answer["hits"]] == expected.ids()
    code, _out, err = lawindex("ask", "OH", question, "--by", "hybrid", "--meaning-weight", "-1", env=env)
    assert code == 2 and "--meaning-weight" in err
