"""Two builds of the lawindex plugin in one cluster (issue 47, item 2): this build (wire 1 today) on one node, and on
the other a build with a parameter added (`probe`, at the next wire version: plugin/ copied, Wire.java and PATCH
applied, built as lawindex builds the plugin, javac, cached by its sources' digest). Each state has a copy on both
nodes, and every query is sent so that it crosses from one build to the other (`preference=_only_nodes:<the other
node>`).

- The new parameter is a 400 that names it from either node, never a 500: the old build's parser does not know
  it; the new build, coordinating, sees the old node's `node.attr.lawindex_wire` and refuses up front, naming the
  parameter and the node.
- Without it, words, meaning and hybrid answer exactly as the reference engine, each build reading the other's
  stream (the bodies lawindex's client sends, unchanged since before wire versions: an older client against
  either build).

The cluster is the module's own (2 nodes, 256m heaps, on LAWINDEX_WIRE_PORT, default 9486, transport ports +100),
started new and stopped at the end. scripts/test runs this file in its phase of files that start their own nodes.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from indexer.errors import LawindexError
from indexer.node import node, plugin
from indexer.node.cluster import start_cluster
from indexer.node.host import writable_cache
from indexer.node.java import find_java
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.query import plugin_query
from indexer.opensearch.read.vectors import plugin_meaning_query
from indexer.opensearch.verify import default_questions
from indexer.opensearch.write.load import load
from indexer.retrieval import meaning
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.request import Fusion, Request, Way
from tests import synthetic
from tests.integration.hostile_support import Raw
from tests.integration.support import cluster_version, unique_namespace

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PORT = int(os.environ.get("LAWINDEX_WIRE_PORT", "9486"))
OLD, NEW = PORT, PORT + 1
# A build with one parameter added, as a later lawindex would add one: declared at wire 2, read, written, parsed.
PATCH = {
    "src/main/java/org/lawindex/LawindexQueryBuilder.java": [
        ("    private final String question;\n", "    private final String question;\n    private String probe;\n"),
        (
            "        Wire.In added = new Wire.In(in).refuseUnknown(Wire.PARAMETERS, wire);\n",
            "        Wire.In added = new Wire.In(in).refuseUnknown(Wire.PARAMETERS, wire);\n"
            "        probe = added.value(Wire.PROBE, StreamInput::readString, null);\n",
        ),
        (
            "        added.writeTo(out);\n",
            "        String probed = probe;\n        if (probed != null) {\n"
            "            added.put(Wire.PROBE, o -> o.writeString(probed));\n        }\n        added.writeTo(out);\n",
        ),
        (
            "        Parsed parsed = new Parsed();\n",
            "        Parsed parsed = new Parsed();\n        String probed = null;\n",
        ),
        (
            "            } else if (token.isValue()) {\n",
            '            } else if (token.isValue() && "probe".equals(current)) {\n'
            "                probed = parser.text();\n"
            "            } else if (token.isValue()) {\n",
        ),
        (  # the test's way past the coordinating node's check, to reach the old node's reader with a stream
            "String refusal = Wire.refusal(",
            'String refusal = "unchecked".equals(probed) ? null : Wire.refusal(',
        ),
        (
            "        return parsed.built(parser);\n",
            "        LawindexQueryBuilder built = parsed.built(parser);\n"
            "        built.probe = probed;\n        return built;\n",
        ),
    ],
}
VERSION = re.compile(r"static final int VERSION = (\d+);")
PARAMETERS = re.compile(r"static final List<Parameter> PARAMETERS = List\.of\(([^)]*)\);")


def newer_wire(text: str) -> tuple[str, int]:
    """Wire.java with `probe` declared at the next wire version, and that version."""
    found = VERSION.search(text)
    assert found is not None and len(PARAMETERS.findall(text)) == 1, "Wire.java no longer declares VERSION, PARAMETERS"
    newer = int(found.group(1)) + 1
    text = VERSION.sub(f"static final int VERSION = {newer};", text)
    declared = PARAMETERS.search(text).group(1).strip()  # type: ignore[union-attr]
    listed = f"{declared}, PROBE" if declared else "PROBE"
    text = PARAMETERS.sub(
        f'static final Parameter PROBE = new Parameter("probe", {newer});\n'
        f"    static final List<Parameter> PARAMETERS = List.of({listed});",
        text,
    )
    return text, newer


WAYS: list[tuple[str, dict[str, Any]]] = [
    ("words", {}),
    ("meaning", {}),
    ("hybrid", {}),
    ("hybrid", {"rrf_k": 60, "words_weight": 1.0, "meaning_weight": 0.5}),
]


def patched_build(version: str, where: Path, cache: Path) -> tuple[Path, int]:
    """The plugin zip of the build with `probe` (plugin/ and contract/ copied to `where`, PATCH applied), and its
    wire version (this build's plus one)."""
    copy = where / "plugin"
    shutil.copytree(ROOT / "plugin", copy, ignore=shutil.ignore_patterns("target"))
    shutil.copytree(ROOT / "contract", where / "contract")
    wire = copy / "src/main/java/org/lawindex/Wire.java"
    text, newer = newer_wire(wire.read_text(encoding="utf-8"))
    wire.write_text(text, encoding="utf-8")
    for name, edits in PATCH.items():
        source = copy / name
        text = source.read_text(encoding="utf-8")
        for old, new in edits:
            assert text.count(old) == 1, f"PATCH no longer fits {name}: {old!r}"
            text = text.replace(old, new)
        source.write_text(text, encoding="utf-8")
    return plugin.build(version, cache_dir=cache, root=copy), newer


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    version = cluster_version()
    cache = writable_cache(None)
    began = time.monotonic()
    zipped, newer = patched_build(version, tmp_path_factory.mktemp("wire-newer"), cache)
    home = plugin.node_home(version, cache, find_java(version)[0], zips=[zipped])
    print(f"\ntiming: the patched build and its home in {time.monotonic() - began:.1f} s")
    with contextlib.suppress(LawindexError):
        node.stop(PORT)  # a cluster a failed run left there
    try:
        start_cluster(cache, version, PORT, "256m", {}, 2, False, homes={NEW: home})
    except LawindexError as error:
        pytest.fail(f"no two-build cluster on port {PORT}: {error} ({error.hint})", pytrace=False)
    print(f"timing: the two-build cluster green in {time.monotonic() - began:.1f} s")
    try:
        urls = {port: f"http://127.0.0.1:{port}" for port in (OLD, NEW)}
        # Each node's id (a node answers `_nodes/_local` about itself).
        ids = {
            port: next(iter(OpenSearch(hosts=[url]).nodes.info(node_id="_local")["nodes"]))
            for port, url in urls.items()
        }
        laws = synthetic.generate_corpus("TX", 300, 47)
        corpora = [*read_corpora(ROOT / "corpora", ["AL"]), synthetic.corpus_of("TX", laws)]
        asked = {corpus.state: default_questions(corpus)[:6] for corpus in corpora}
        asked["TX"] = synthetic.generate_questions(laws, 6, 47)
        connection = Connection.from_env(",".join(urls.values()), namespace=unique_namespace(), timeout=60.0)
        load(connection, corpora)  # auto_expand_replicas 0-1: a copy of each state on both nodes
        print(f"timing: loaded in {time.monotonic() - began:.1f} s")
        yield {"urls": urls, "ids": ids, "wire": {OLD: newer - 1, NEW: newer}, "namespace": connection.namespace,
               "asked": asked, "corpora": {corpus.state: corpus for corpus in corpora}}  # fmt: skip
    finally:
        node.stop(PORT)


def _send(url: str, index: str, body: dict[str, Any], preference: str | None = None) -> tuple[int, Any]:
    raw = Raw(url, timeout=60)
    try:
        reply = raw.send("POST", f"/{index}/_search" + (f"?preference={preference}" if preference else ""), body)
    finally:
        raw.close()
    return reply.status, reply.body


def test_each_node_carries_its_builds_wire_version(cluster: dict[str, Any]) -> None:
    nodes = OpenSearch(hosts=[cluster["urls"][OLD]]).nodes.info()["nodes"]
    wire = cluster["wire"]
    assert {info["name"]: info["attributes"].get("lawindex_wire") for info in nodes.values()} == {
        f"lawindex-{OLD}": str(wire[OLD]),
        f"lawindex-{NEW}": str(wire[NEW]),
    }


@pytest.mark.parametrize("coordinator", [OLD, NEW], ids=["old build coordinates", "new build coordinates"])
def test_the_new_parameter_is_a_400_naming_it(cluster: dict[str, Any], coordinator: int) -> None:
    index = alias_of("AL", cluster["namespace"])
    for by in ("words", "meaning", "hybrid"):
        body = {"size": 8, "query": {"lawindex": {"question": "stop sign", "by": by, "probe": "x"}}}
        status, answer = _send(cluster["urls"][coordinator], index, body)
        reason = str(answer)
        assert status == 400, (status, reason[:2000])
        assert "[probe]" in reason, reason[:2000]
        if coordinator == NEW:  # the coordinating node names the node whose build cannot read it
            assert f"node [lawindex-{OLD}] runs a lawindex plugin of wire {cluster['wire'][OLD]}" in reason, reason[
                :2000
            ]
        print(f"\nby {by} through lawindex-{coordinator}: 400, {answer['error']['root_cause'][0]['reason']}")


def test_a_stream_with_the_new_parameter_that_reaches_the_old_build_is_a_400_naming_it(cluster: dict[str, Any]) -> None:
    """Past the coordinating node's check (a node that joined after it, a cross-cluster search; here the patched
    build's `"probe": "unchecked"`), the old build's reader meets the parameter in the stream: a 400 that names it."""
    index = alias_of("AL", cluster["namespace"])
    body = {"size": 8, "query": {"lawindex": {"question": "stop sign", "probe": "unchecked"}}}
    status, answer = _send(cluster["urls"][NEW], index, body, preference=f"_only_nodes:{cluster['ids'][OLD]}")
    reason = str(answer)
    assert status == 400, (status, reason[:2000])
    wire = cluster["wire"]
    said = f"[lawindex] [probe] needs lawindex wire version {wire[NEW]}, but this node's lawindex plugin reads wire "
    said += str(wire[OLD])
    assert said in reason, reason[:2000]
    print(f"\nthe old build's reader: {status}, {answer['error']['root_cause'][0]['reason']}")


def _reference(corpus: Corpus, question: str, by: str, fusion: dict[str, Any]) -> list[str]:
    answer = meaning.answer(corpus, Request.of(corpus.state, question, {"by": by, **fusion}))
    return [hit.law.id for hit in answer.hits]


@pytest.mark.parametrize("coordinator", [OLD, NEW], ids=["old build sends to new", "new build sends to old"])
def test_without_it_every_way_answers_as_the_reference_engine_across_builds(
    cluster: dict[str, Any], coordinator: int
) -> None:
    """The bodies lawindex's client sends (an older client: unchanged by wire versions), through one build, ranked
    by the other build's copy: ids and order equal to the reference engine's."""
    other = NEW if coordinator == OLD else OLD
    target = cluster["ids"][other]
    asked = 0
    for state, questions in cluster["asked"].items():
        corpus = cluster["corpora"][state]
        index = alias_of(state, cluster["namespace"])
        for question in questions:
            for by, fusion in WAYS:
                if by == "words":
                    body = plugin_query(question, 8)
                else:
                    body = plugin_meaning_query(question, 8, Way(by), Fusion.of(fusion))
                status, answer = _send(cluster["urls"][coordinator], index, body, preference=f"_only_nodes:{target}")
                assert status == 200, (status, str(answer)[:2000])
                hits = answer["hits"]["hits"]
                assert all(hit.get("_node", target) == target for hit in hits)  # `_node` comes with explain
                got = [hit["_source"]["id"] for hit in hits]
                assert got == _reference(corpus, question, by, fusion), (state, question, by, fusion)
                asked += 1
    print(f"\n{asked} questions through lawindex-{coordinator}, ranked on lawindex-{other}: all exact")
