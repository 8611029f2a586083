"""Weighted hybrid on a real OpenSearch (the window path: indexer.opensearch.read.vectors with
indexer.retrieval.meaning.proven) equal to the reference engine, ids, ranks and scores to the bit, with weights
other than the defaults: over eval/corpora/OH.jsonl (342 rows, wider than the first hybrid window of 64) and
the held-out questions of eval/handbook.jsonl. Where the node has no k-NN plugin, hybrid is refused naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from indexer.errors import NoMeaning
from indexer.evaluation.evaluate import of_split, read_judged
from indexer.node import knn
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import load
from indexer.retrieval import meaning as rank
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.request import Fusion, Request, Way
from tests.integration.serving import running
from tests.integration.support import fresh_connection, lawindex

pytestmark = pytest.mark.integration

EVAL = Path(__file__).resolve().parents[2] / "eval"
# Not the defaults (5, 1, 4): words favoured, plain RRF at a small k, a way weighed 0 each side.
FUSIONS = [(60, 3.0, 0.5), (1, 1.0, 1.0), (5, 0.0, 1.0), (20, 1.0, 0.0), (2, 0.25, 7.5)]


@dataclass(frozen=True)
class Loaded:
    engine: OpenSearchEngine
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
        yield Loaded(OpenSearchEngine(connection), corpus, opensearch_url, connection.namespace, has)


def test_weighted_hybrid_on_opensearch_is_the_reference_engines(loaded: Loaded) -> None:
    if not loaded.knn:  # a node without k-NN refuses hybrid, naming the plugin
        with pytest.raises(NoMeaning, match=r"has no k-NN plugin \(opensearch-knn\)"):
            loaded.engine.ask(Request("OH", "fire hydrant", Way.hybrid, 8, Fusion(*FUSIONS[0])))
        return
    questions = [one.question for one in of_split(read_judged(EVAL / "handbook.jsonl"), "held-out")]
    asked = 0
    for number, question in enumerate(questions):
        for fusion in FUSIONS if number % 4 == 0 else FUSIONS[:1]:
            for limit in (8, 100) if number % 8 == 0 else (8,):
                expected = rank.answer(
                    loaded.corpus, Request(loaded.corpus.state, question, Way.hybrid, limit, Fusion(*fusion))
                )
                got = loaded.engine.ask(Request("OH", question, Way.hybrid, limit, Fusion(*fusion)))
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
    expected = rank.answer(loaded.corpus, Request(loaded.corpus.state, question, Way.hybrid, 8, Fusion(20, 2.0, 0.5)))
    assert [hit["id"] for hit in answer["hits"]] == expected.ids()
    code, _out, err = lawindex("ask", "OH", question, "--by", "hybrid", "--meaning-weight", "-1", env=env)
    assert code == 2 and "meaning_weight: a weight must be 0 or a number from 0.000001 to 1000000, not -1" in err


def test_the_service_takes_the_fusion_and_refuses_one_out_of_range_naming_it(loaded: Loaded) -> None:
    if not loaded.knn:
        return
    question = "amish buggy ahead what should i do"
    env = {"OPENSEARCH_URL": loaded.url, "LAWINDEX_NAMESPACE": loaded.namespace}
    with running(env, ready="/readyz") as service, httpx.Client(base_url=service.url, timeout=120) as client:
        fusion = {"rrf_k": 20, "words_weight": 2.0, "meaning_weight": 0.5}
        answered = client.get("/v1/states/OH/ask", params={"q": question, "by": "hybrid", **fusion})
        assert answered.status_code == 200, answered.text
        body = answered.json()
        assert (body["rrf_k"], body["weights"]) == (20, {"words": 2.0, "meaning": 0.5})
        assert [hit["id"] for hit in body["hits"]] == rank.answer(
            loaded.corpus, Request(loaded.corpus.state, question, Way.hybrid, 8, Fusion(20, 2.0, 0.5))
        ).ids()
        batch = client.post("/v1/states/OH/ask", json={"questions": [question], "by": "hybrid", **fusion})
        assert batch.status_code == 200 and batch.json()["answers"] == [body]
        for params, named in (
            ({"meaning_weight": "-1"}, "meaning_weight"),
            ({"words_weight": "nan"}, "words_weight"),
            ({"words_weight": "0", "meaning_weight": "0"}, "words_weight, meaning_weight"),
            ({"rrf_k": "0"}, "rrf_k"),
        ):
            refused = client.get("/v1/states/OH/ask", params={"q": question, "by": "hybrid", **params})
            assert refused.status_code == 400 and named in refused.json()["error"], (params, refused.text)
