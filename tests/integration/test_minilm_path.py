"""all-MiniLM-L6-v2 end to end on OpenSearch with the lawindex plugin (issue 46 items 2 and 4): the samples loaded
with `lawindex load --embedder all-minilm-l6-v2` (its index's meaning says the questions are the client's), then a
dozen learner questions by meaning and by hybrid: `lawindex ask` on OpenSearch, `lawindex serve`'s GET, the raw
plugin query with the vector computed here by the embedder, and the reference engine with the same embedder give
the same laws, exact scores and ranks. The raw query without `vector` is a 400 naming `vector` and the model, and
`lawindex eval --embedder all-minilm-l6-v2` gives the same figures on both engines.

Needs the `[minilm]` extra and the model's wheel (indexer/retrieval/minilm.py); the rows are embedded twice (the
load, and the reference engine in process), about 10 s each on one core.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opensearchpy import OpenSearch

from indexer.node import plugin
from indexer.opensearch.cluster.connection import alias_of
from indexer.opensearch.read.vectors import plugin_explanation
from indexer.retrieval import meaning
from indexer.retrieval.corpus import Corpus, read_corpus
from indexer.retrieval.embedders import MINILM, named, question_vector
from indexer.retrieval.embedding import Embedder
from indexer.retrieval.request import Request
from tests.integration.hostile_support import Raw
from tests.integration.serving import running
from tests.integration.support import drop_namespace, lawindex, unique_namespace

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"
QUESTIONS = [json.loads(line) for line in (ROOT / "eval" / "questions.jsonl").read_text().splitlines() if line.strip()]
# A dozen, two of each of six states (the first two of each, whatever their wording).
ASKED = [q for state in ("AL", "MD", "PA", "SC", "TX", "VT") for q in [x for x in QUESTIONS if x["state"] == state][:2]]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return named(MINILM)  # BadInput (a test failure, not a skip) where the extra or the wheel is missing


@pytest.fixture(scope="module")
def loaded(opensearch_url: str, embedder: Embedder) -> Iterator[dict[str, Any]]:
    client = OpenSearch(hosts=[opensearch_url], timeout=120)
    assert plugin.installed(client), f"the node at {opensearch_url} has no lawindex plugin (_cat/plugins)"
    namespace = unique_namespace()
    env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace}
    raw = Raw(opensearch_url, timeout=60)
    try:
        code, out, err = lawindex("load", str(CORPORA), "--embedder", MINILM, env=env)
        assert code == 0, out + err
        corpora = {path.stem: read_corpus(path) for path in sorted(CORPORA.glob("*.jsonl"))}
        yield {"client": client, "namespace": namespace, "env": env, "raw": raw, "corpora": corpora}
    finally:
        raw.close()
        drop_namespace(client, namespace)


def reference(corpus: Corpus, by: str, question: str, embedder: Embedder) -> list[tuple[str, float, Any]]:
    answer = meaning.answer(corpus, Request.of(corpus.state, question, {"by": by, "limit": 8}), embedder)
    return [
        (hit.law.id, hit.score, (reached.words, reached.meaning))
        for hit, reached in zip(answer.hits, answer.reached or [], strict=True)
    ]


def meaning_of(loaded: dict[str, Any], state: str) -> dict[str, Any]:
    client = loaded["client"]
    index = next(iter(client.indices.get_alias(index=alias_of(state, loaded["namespace"]))))
    found: dict[str, Any] = client.indices.get_mapping(index=index)[index]["mappings"]["_meta"]["lawindex"]["meaning"]
    return found


def test_the_index_says_its_questions_are_the_clients(loaded: dict[str, Any], embedder: Embedder) -> None:
    found = meaning_of(loaded, "AL")
    assert (found["model"], found["version"], found["dimension"], found["questions"]) == (
        MINILM,
        embedder.version,
        384,
        "client",
    )


@pytest.fixture(scope="module")
def service(loaded: dict[str, Any]) -> Iterator[str]:
    with running(loaded["env"]) as served:
        yield served.url


@pytest.mark.parametrize("by", ["meaning", "hybrid"])
def test_every_path_ranks_as_the_reference_with_the_same_embedder(
    loaded: dict[str, Any], service: str, embedder: Embedder, by: str
) -> None:
    checked = 0
    for asked in ASKED:
        state, question = asked["state"], asked["question"]
        expected = reference(loaded["corpora"][state], by, question, embedder)
        assert expected, (by, question)
        # The raw plugin query, the vector made here by the index's own model.
        vector = question_vector(meaning_of(loaded, state), question)
        assert vector is not None and len(vector) == 384
        body = {
            "size": 8,
            "explain": True,
            "_source": ["id"],
            "query": {"lawindex": {"question": question, "by": by, "vector": list(vector)}},
        }
        reply = loaded["raw"].send("POST", f"/{alias_of(state, loaded['namespace'])}/_search", body)
        assert reply.status == 200, reply.body
        raw = []
        for hit in reply.body["hits"]["hits"]:
            details = {
                d["description"].split(":")[0]: d["value"] for d in plugin_explanation(hit["_explanation"])["details"]
            }
            words = details.get("words rank")
            raw.append(
                (
                    hit["_source"]["id"],
                    float(details["exact score"]),
                    (None if words is None else int(words), int(details["meaning rank"])),
                )
            )
        assert raw == expected, (by, question)
        # lawindex ask on OpenSearch: the client embeds the question and sends it.
        code, out, err = lawindex("ask", state, question, "--by", by, "--json", env=loaded["env"])
        assert code == 0, err
        asked_hits = json.loads(out)["hits"]
        assert [(h["id"], h["score"]) for h in asked_hits] == [(i, s) for i, s, _ in expected], (by, question)
        # lawindex serve's GET.
        got = httpx.get(f"{service}/v1/states/{state}/ask", params={"q": question, "by": by}, timeout=60)
        assert got.status_code == 200, got.text
        assert [(h["id"], h["score"]) for h in got.json()["hits"]] == [(i, s) for i, s, _ in expected], (by, question)
        checked += 1
    assert checked == len(ASKED) == 12


def test_ask_on_the_reference_engine_with_the_embedder(loaded: dict[str, Any], embedder: Embedder) -> None:
    asked = ASKED[0]
    expected = reference(loaded["corpora"][asked["state"]], "hybrid", asked["question"], embedder)
    code, out, err = lawindex(
        "ask", asked["state"], asked["question"], "--by", "hybrid", "--json", "--engine", "reference",
        "--corpora", str(CORPORA), "--embedder", MINILM,
    )  # fmt: skip
    assert code == 0, err
    assert [(h["id"], h["score"]) for h in json.loads(out)["hits"]] == [(i, s) for i, s, _ in expected]


def test_a_raw_query_without_vector_is_a_400_naming_it(loaded: dict[str, Any]) -> None:
    for by in ("meaning", "hybrid"):
        body = {"query": {"lawindex": {"question": "where can i park", "by": by}}}
        reply = loaded["raw"].send("POST", f"/{alias_of('AL', loaded['namespace'])}/_search", body)
        text = json.dumps(reply.body)
        assert reply.status == 400 and "vector" in text and MINILM in text, reply.body


def test_eval_gives_the_same_figures_on_both_engines(loaded: dict[str, Any], tmp_path: Path) -> None:
    judged = tmp_path / "judged.jsonl"
    judged.write_text("".join(json.dumps(q) + "\n" for q in ASKED))
    figures = []
    for engine in (["--engine", "reference", "--corpora", str(CORPORA)], []):
        code, out, err = lawindex("eval", str(judged), "--embedder", MINILM, "--json", *engine, env=loaded["env"])
        assert code == 0, err
        figures.append(json.loads(out.splitlines()[-1]))
    assert figures[0] == figures[1]
    assert "hybrid" in json.dumps(figures[0]) and "meaning" in json.dumps(figures[0])


def test_a_road_table_index_of_another_table_needs_the_vector(opensearch_url: str, tmp_path: Path) -> None:
    """The plugin embeds a question only for an index of its own table (model and digest): an index whose `_meta`
    says another table made its rows is a 400 naming `vector` without one, and ranked with one."""
    client = OpenSearch(hosts=[opensearch_url], timeout=120)
    namespace = unique_namespace()
    env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace}
    raw = Raw(opensearch_url, timeout=60)
    try:
        (tmp_path / "VT.jsonl").write_bytes((CORPORA / "VT.jsonl").read_bytes())
        code, out, err = lawindex("load", str(tmp_path), env=env)
        assert code == 0, out + err
        alias = alias_of("VT", namespace)
        asked = {"question": "where can i park", "by": "meaning"}
        assert raw.send("POST", f"/{alias}/_search", {"query": {"lawindex": asked}}).status == 200  # its own table
        index = next(iter(client.indices.get_alias(index=alias)))
        meta = client.indices.get_mapping(index=index)[index]["mappings"]["_meta"]
        version = meta["lawindex"]["meaning"]["version"]
        meta["lawindex"]["meaning"]["version"] = version.split("+")[0] + "+000000000000"
        client.indices.put_mapping(index=index, body={"_meta": meta})
        for by in ("meaning", "hybrid"):
            reply = raw.send("POST", f"/{alias}/_search", {"query": {"lawindex": {**asked, "by": by}}})
            text = json.dumps(reply.body)
            assert reply.status == 400 and "vector: " in text and "+000000000000" in text, reply.body
            given = {**asked, "by": by, "vector": [1.0] + [0.0] * 255}
            assert raw.send("POST", f"/{alias}/_search", {"query": {"lawindex": given}}).status == 200
    finally:
        raw.close()
        drop_namespace(client, namespace)
