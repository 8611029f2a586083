"""A user's own vectors (issue 46 item 3, docs/meaning.md "Your own vectors") on every path: a sample state whose
rows carry 48-dimension vectors made here (whole thousandths from a seeded generator, never by the code under test),
loaded on the session's node, asked with questions' own vectors by meaning and by hybrid through `ask` on
OpenSearch (the plugin's path), the raw plugin query (http.client, no lawindex between), `lawindex serve` (GET and
the batch) and the TypeScript client (ClusterClient and LawindexClient): every path gives the reference engine's
rows in its order, with its exact scores and ranks. A question's own 256-dimension vector on an index the node
embeds for is ranked as the reference ranks that vector. Hostile vectors (4,097 numbers, NaN, strings, 1e308 whose
square overflows, another length, none where one is needed) are refused, 400 or exit 2, naming `vector`. The load
seals the vectors: `lawindex verify` passes, and an altered row's vector is refused.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opensearchpy import OpenSearch

from indexer.node import plugin
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.read.vectors import plugin_explanation
from indexer.opensearch.write.load import load
from indexer.retrieval import meaning
from indexer.retrieval.corpus import Corpus, read_corpus
from indexer.retrieval.request import Request
from tests.integration.hostile_support import Raw
from tests.integration.serving import running
from tests.integration.support import drop_namespace, lawindex, unique_namespace

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "typescript"
DIMENSION = 48
QUESTIONS = ["where can i park near a hydrant", "texting while driving", "", "?!", "permit hours at night"]


def numbers(seed: int, count: int = DIMENSION) -> list[float]:
    """A deterministic vector made here: whole thousandths from -1 to 1."""
    rng = random.Random(seed)
    return [rng.randint(-1000, 1000) / 1000 for _ in range(count)]


def own_state(folder: Path) -> Path:
    """PA's sample rows, each with its own 48-dimension vector; the last row's vector twice the first's (a tie in
    cosine, broken by corpus order), and one row's small integers (equal cosines among rows)."""
    laws = [json.loads(line) for line in (ROOT / "corpora" / "PA.jsonl").read_text().splitlines() if line.strip()]
    rows = []
    for place, law in enumerate(laws):
        vector = numbers(1000 + place)
        if place == len(laws) - 1:
            vector = [2 * value for value in numbers(1000)]
        rows.append(json.dumps({**law, "vector": vector}))
    path = folder / "PA.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def loaded(opensearch_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    client = OpenSearch(hosts=[opensearch_url], timeout=120)
    assert plugin.installed(client), f"the node at {opensearch_url} has no lawindex plugin (_cat/plugins)"
    folder = tmp_path_factory.mktemp("own-vectors")
    own = read_corpus(own_state(folder))
    shutil.copy(ROOT / "corpora" / "AL.jsonl", folder / "AL.jsonl")
    road = read_corpus(folder / "AL.jsonl")
    namespace = unique_namespace()
    connection = Connection.from_env(opensearch_url, namespace=namespace, timeout=120.0)
    load(connection, [own, road], vectors=True)
    raw = Raw(opensearch_url, timeout=60)
    try:
        yield {
            "connection": connection,
            "corpora": folder,
            "own": own,
            "road": road,
            "raw": raw,
            "env": {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace},
        }
    finally:
        raw.close()
        drop_namespace(client, namespace)


@pytest.fixture(scope="module")
def service(loaded: dict[str, Any]) -> Iterator[str]:
    """A `lawindex serve` of the module's namespace: its URL."""
    with running(loaded["env"]) as served:
        yield served.url


def asked() -> list[tuple[str, str, list[float]]]:
    """(by, question, vector): each question with vectors of its own, by meaning and by hybrid; one the first
    row's vector itself (the tie with the last row at the top)."""
    out = []
    for n, question in enumerate(QUESTIONS):
        for by in ("meaning", "hybrid"):
            out.append((by, question, numbers(n * 7 + (by == "hybrid"))))
    out.append(("meaning", "x", numbers(1000)))
    return out


def reference(corpus: Corpus, by: str, question: str, vector: list[float], limit: int) -> Any:
    return meaning.answer(corpus, Request.of(corpus.state, question, {"by": by, "limit": limit, "vector": vector}))


def test_a_state_of_own_vectors_loads_with_them_sealed(loaded: dict[str, Any]) -> None:
    connection: Connection = loaded["connection"]
    client = connection.client()
    index = next(iter(client.indices.get_alias(index=alias_of("PA", connection.namespace))))
    meta = client.indices.get_mapping(index=index)[index]["mappings"]["_meta"]["lawindex"]["meaning"]
    assert (meta["model"], meta["dimension"], meta["questions"]) == ("external", DIMENSION, "client")
    road = next(iter(client.indices.get_alias(index=alias_of("AL", connection.namespace))))
    assert (
        client.indices.get_mapping(index=road)[road]["mappings"]["_meta"]["lawindex"]["meaning"]["questions"] == "node"
    )
    code, out, err = lawindex("verify", "PA", "--corpora", str(loaded["corpora"]), env=loaded["env"])
    assert code == 0, out + err


def test_every_path_in_process_and_the_raw_query_rank_as_the_reference(loaded: dict[str, Any]) -> None:
    own: Corpus = loaded["own"]
    engine = OpenSearchEngine(loaded["connection"])
    index = alias_of("PA", loaded["connection"].namespace)
    checked = 0
    for by, question, vector in asked():
        for limit in (8, len(own.laws)):
            expected = reference(own, by, question, vector, limit)
            got = engine.ask(Request.of("PA", question, {"by": by, "limit": limit, "vector": vector}))
            assert [hit.law.id for hit in got.hits] == [hit.law.id for hit in expected.hits], (by, question)
            assert [hit.score for hit in got.hits] == [hit.score for hit in expected.hits], (by, question)
            assert got.reached == expected.reached, (by, question)
            checked += 1
        body = {
            "size": len(own.laws),
            "explain": True,
            "_source": ["id"],
            "query": {"lawindex": {"question": question, "by": by, "vector": vector}},
        }
        reply = loaded["raw"].send("POST", f"/{index}/_search", body)
        assert reply.status == 200, reply.body
        rows = []
        for hit in reply.body["hits"]["hits"]:
            details = {
                d["description"].split(":")[0]: d["value"] for d in plugin_explanation(hit["_explanation"])["details"]
            }
            rows.append((hit["_source"]["id"], float(details["exact score"])))
        expected = reference(own, by, question, vector, len(own.laws))
        assert rows == [(hit.law.id, hit.score) for hit in expected.hits], (by, question)
        checked += 1
    assert checked == 3 * len(asked())
    # The tie: the first row and the last (twice its vector) lead, in corpus order.
    top = engine.ask(Request.of("PA", "x", {"by": "meaning", "vector": numbers(1000)}))
    assert [hit.law.id for hit in top.hits[:2]] == [own.laws[0].id, own.laws[-1].id]


def test_ask_with_vector_from_a_file_on_opensearch(loaded: dict[str, Any], tmp_path: Path) -> None:
    own: Corpus = loaded["own"]
    for by, question, vector in asked()[:4]:
        path = tmp_path / "q.json"
        path.write_text(json.dumps(vector))
        code, out, err = lawindex(
            "ask", "PA", question or "-", "--by", by, "--json", "--vector-from", str(path), env=loaded["env"]
        )
        assert code == 0, err
        expected = reference(own, by, question or "-", vector, 8)
        assert [hit["id"] for hit in json.loads(out)["hits"]] == [hit.law.id for hit in expected.hits]
    code, _, err = lawindex("ask", "PA", "where to park", "--by", "meaning", env=loaded["env"])
    assert code == 2 and "vector: " in err and "--vector-from" in err, err


def test_a_questions_own_vector_on_an_index_the_node_embeds_for(loaded: dict[str, Any]) -> None:
    road: Corpus = loaded["road"]
    engine = OpenSearchEngine(loaded["connection"])
    for seed in range(4):
        for by in ("meaning", "hybrid"):
            vector = numbers(seed, 256)
            expected = reference(road, by, "school bus", vector, len(road.laws))
            got = engine.ask(Request.of("AL", "school bus", {"by": by, "limit": len(road.laws), "vector": vector}))
            assert [(h.law.id, h.score) for h in got.hits] == [(h.law.id, h.score) for h in expected.hits]
    index = alias_of("AL", loaded["connection"].namespace)
    reply = loaded["raw"].send(
        "POST", f"/{index}/_search", {"query": {"lawindex": {"question": "q", "by": "meaning", "vector": numbers(1)}}}
    )
    assert reply.status == 400 and "vector: 48 numbers, and the index's vectors have 256" in json.dumps(reply.body)


@pytest.mark.parametrize(
    ("vector", "message"),
    [
        ([0.5] * 4097, "vector: 4097 numbers, not from 1 to 4096"),
        ("[1, 2]", "vector: must be an array of numbers"),
        ([1, "2"] + [0.0] * 46, "vector: vector[1] is not a number"),
        ([1e308] + [0.0] * 47, "vector: vector[0] is 1e+308, not a finite number from -1e+150 to 1e+150"),
        ([0.0] * 48, "vector: no value is 1e-150 or more in magnitude: the zero vector is near no row"),
        ([0.5] * 47, "vector: 47 numbers, and the index's vectors have 48"),
        (None, "were made by external, which cannot embed a question here: send the question's vector"),
    ],
)
def test_hostile_vectors_are_refused_naming_vector_on_the_node_and_by_serve(
    loaded: dict[str, Any], service: str, vector: Any, message: str
) -> None:
    index = alias_of("PA", loaded["connection"].namespace)
    query: dict[str, Any] = {"question": "where to park", "by": "hybrid"}
    if vector is not None:
        query["vector"] = vector
    reply = loaded["raw"].send("POST", f"/{index}/_search", {"query": {"lawindex": query}})
    assert reply.status == 400, reply.body
    assert message in json.dumps(reply.body), reply.body
    params = {"q": "where to park", "by": "hybrid"}
    if vector is not None:
        params["vector"] = json.dumps(vector)  # on GET a JSON text: the string "[1, 2]" is no array
    got = httpx.get(f"{service}/v1/states/PA/ask", params=params, timeout=60)
    assert got.status_code == 400 and message in got.json()["error"], got.text


def test_nan_and_infinity_in_the_raw_query_are_400s(loaded: dict[str, Any]) -> None:
    index = alias_of("PA", loaded["connection"].namespace)
    for bad in (float("nan"), float("inf")):  # json.dumps writes NaN and Infinity, which are not JSON
        query = {"question": "q", "by": "meaning", "vector": [1.0, bad] + [0.0] * 46}
        reply = loaded["raw"].send("POST", f"/{index}/_search", {"query": {"lawindex": query}})
        assert reply.status == 400, reply.body


def test_an_altered_vector_is_refused(loaded: dict[str, Any]) -> None:
    connection: Connection = loaded["connection"]
    client = connection.client()
    index = next(iter(client.indices.get_alias(index=alias_of("PA", connection.namespace))))
    own: Corpus = loaded["own"]
    doc = client.search(index=index, body={"query": {"term": {"order": 3}}, "_source": True})["hits"]["hits"][0]
    units = bytearray(base64.b64decode(doc["_source"]["vector_grid"]))
    units[0] ^= 1
    client.update(
        index=index, id=doc["_id"], body={"doc": {"vector_grid": base64.b64encode(bytes(units)).decode()}}, refresh=True
    )
    try:
        code, out, err = lawindex("verify", "PA", "--corpora", str(loaded["corpora"]), env=loaded["env"])
        assert code != 0 and own.laws[3].id in out + err, out + err
    finally:
        load(connection, [own], force=True)  # the next load rebuilds it


def test_serve_and_the_typescript_client_rank_as_the_reference(
    loaded: dict[str, Any], service: str, tmp_path: Path
) -> None:
    own: Corpus = loaded["own"]
    rows = []
    for by, question, vector in asked():
        expected = reference(own, by, question, vector, 8)
        rows.append(
            {
                "state": "PA",
                "question": question,
                "by": by,
                "vector": vector,
                "ids": [hit.law.id for hit in expected.hits],
                "scores": [hit.score for hit in expected.hits],
            }
        )
    for row in rows:
        params = {"q": row["question"], "by": row["by"], "vector": json.dumps(row["vector"])}
        got = httpx.get(f"{service}/v1/states/PA/ask", params=params, timeout=60).json()
        assert "hits" in got, got
        assert [hit["id"] for hit in got["hits"]] == row["ids"]
        assert [hit["score"] for hit in got["hits"]] == row["scores"]
        batch = httpx.post(
            f"{service}/v1/states/PA/ask",
            timeout=60,
            json={"questions": [row["question"]], "by": row["by"], "vector": row["vector"]},
        ).json()
        assert [hit["id"] for hit in batch["answers"][0]["hits"]] == row["ids"]
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm are needed for the TypeScript client's tests")
    if not (CLIENT / "node_modules" / ".bin" / "tsx").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=CLIENT, check=True)
    expected_file = tmp_path / "expected.json"
    expected_file.write_text(json.dumps(rows), encoding="utf-8")
    env = {**os.environ, **loaded["env"], "LAWINDEX_EXPECTED": str(expected_file), "LAWINDEX_SERVE": service}
    done = subprocess.run(
        ["node", "--import", "tsx", "--test", "--test-reporter=spec", "test/own-vectors.test.ts"],
        cwd=CLIENT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    print(done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "exact" in done.stdout
