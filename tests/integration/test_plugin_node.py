"""The lawindex plugin on a node lawindex started: listed in `_cat/plugins` on every node, and its raw query
(plain HTTP, no lawindex in the path) returns the spec's own top 8, ids and order, on the sample corpora.

The index is made here from mappings/laws.json as the plugin path lays it out (the similarity with the spec's
N and average, `words` with positions), but neither sorted nor merged: the laws are written in reverse corpus
order over three segments, so that document ids run against corpus order and ties must still come out in
corpus order. The expected answers are the spec's TypeScript itself (tests/spec_oracle, run with tsx).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from indexer.node import plugin
from indexer.opensearch.write import mappings
from indexer.retrieval.corpus import read_corpus
from indexer.retrieval.words import ranked, ranked_text, words
from tests import synthetic
from tests.spec_oracle.oracle import ORACLE, ROOT, TSX, prepare, spec_path

SAMPLES = sorted((ROOT / "corpora").glob("*.jsonl"))
FIXED = ["how far from a fire hydrant can i park", "how far must i be behing a firehydrant", "the", ""]


def _http(url: str, method: str = "GET", body: Any = None, ndjson: str | None = None) -> Any:
    data = ndjson.encode() if ndjson is not None else (json.dumps(body).encode() if body is not None else None)
    kind = "application/x-ndjson" if ndjson is not None else "application/json"
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": kind})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{method} {url}: {error.code} {error.read().decode('utf-8', 'replace')[:500]}") from None


def _spec_answers(directory: Path, corpus_file: Path, questions: list[str]) -> list[list[str]]:
    """The ids the spec's own bm25() returns for each question."""
    spec = spec_path()
    if not spec.is_file():
        pytest.fail(f"no spec at {spec}: the spec's TypeScript cannot be run (set LAWINDEX_SPEC)")
    if shutil.which("node") is None:
        pytest.fail("node is not installed: the spec's TypeScript cannot be run")
    if not TSX.exists():
        done = subprocess.run(["bash", str(ORACLE / "install.sh")], capture_output=True, text=True, check=False)
        assert done.returncode == 0 and TSX.exists(), done.stderr[-500:]
    prepare(directory, spec)
    questions_file = directory / "questions.jsonl"
    questions_file.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    done = subprocess.run(
        [str(TSX), str(directory / "run.ts")],
        env={**os.environ, "LAWINDEX_CORPUS": str(corpus_file), "LAWINDEX_QUESTIONS": str(questions_file)},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line)["ids"] for line in done.stdout.splitlines()]


def test_every_node_lists_the_plugin(opensearch_url: str) -> None:
    nodes = {row["name"] for row in _http(f"{opensearch_url}/_cat/nodes?format=json&h=name")}
    rows = _http(f"{opensearch_url}/_cat/plugins?format=json&h=name,component,version")
    having = {row["name"] for row in rows if row["component"] == "lawindex"}
    assert nodes and having == nodes, rows
    # The zip that serves the node's version: from 2.13 its line's (lawindex-2.19.zip on every 2.19.x), whose
    # descriptor's version is the release it is compiled against (2.19.0); before 2.13 the version's own.
    version = _http(opensearch_url)["version"]["number"]
    built_for = plugin.target(version).compile_against
    assert {row["version"] for row in rows if row["component"] == "lawindex"} == {built_for}, (version, rows)


def _index_body(size: int, average: float) -> dict[str, Any]:
    body = copy.deepcopy(mappings.laws_index())
    body.pop("_comment", None)
    body["settings"]["index"]["similarity"] = {
        "lawindex": {"type": "lawindex_bm25", "k1": 1.2, "b": 0.75, "ranked": size, "average": repr(average)}
    }
    body["settings"]["index"]["number_of_replicas"] = 0
    body["settings"]["index"].pop("auto_expand_replicas", None)
    words_field = body["mappings"]["properties"]["words"]
    words_field["similarity"] = "lawindex"
    words_field["index_options"] = "positions"
    return body


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_the_raw_query_returns_the_spec_s_top_8(opensearch_url: str, tmp_path: Path, path: Path) -> None:
    corpus = read_corpus(path)
    laws = corpus.laws
    size = sum(1 for law in laws if ranked(law))
    average = sum(len(words(ranked_text(law))) for law in laws if ranked(law)) / max(1, size)
    index = f"lawindex-plugin-test-{path.stem.lower()}-{uuid.uuid4().hex[:8]}"
    _http(f"{opensearch_url}/{index}", "PUT", _index_body(size, average))
    try:
        backwards = list(reversed(list(enumerate(laws))))
        third = len(backwards) // 3 + 1
        for start in range(0, len(backwards), third):
            lines = []
            for order, law in backwards[start : start + third]:
                source: dict[str, Any] = {"id": law.id, "kind": law.kind, "order": order}
                if ranked(law):
                    source["words"] = ranked_text(law)
                lines += [json.dumps({"index": {"_id": law.id}}), json.dumps(source)]
            done = _http(f"{opensearch_url}/{index}/_bulk?refresh=true", "POST", ndjson="\n".join(lines) + "\n")
            assert not done["errors"]
        segments = _http(f"{opensearch_url}/{index}/_segments")["indices"][index]["shards"]["0"][0]["segments"]
        assert len(segments) >= 2
        questions = [law.question for law in laws][:40] + synthetic.generate_questions(laws, 60, 21) + FIXED
        expected = _spec_answers(tmp_path, path, questions)
        for question, ids in zip(questions, expected, strict=True):
            found = _http(
                f"{opensearch_url}/{index}/_search",
                "POST",
                {"size": 8, "_source": ["id"], "query": {"lawindex": {"question": question}}},
            )
            assert [hit["_source"]["id"] for hit in found["hits"]["hits"]] == ids, question
    finally:
        _http(f"{opensearch_url}/{index}", "DELETE")
