"""The local node and the node under test: the pinned version, the distribution's build and modules, the
analyzer's parts, death and rebirth, a taken port, two starts at once."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.errors import NodeError
from indexer.node import knn, node, plugin

# Apart from the session's node (9250) and the shared development nodes (9200, 9201).
REBIRTH_PORT = int(os.environ.get("LAWINDEX_REBIRTH_PORT", "9257"))
TWIN_PORT = int(os.environ.get("LAWINDEX_TWIN_PORT", "9258"))


def test_node_reports_the_pinned_version(opensearch: OpenSearch, opensearch_version: str) -> None:
    reported = opensearch.info()["version"]["number"]
    assert reported == opensearch_version
    assert reported in node.pinned_versions()


def test_node_is_an_official_build_with_its_modules(opensearch: OpenSearch) -> None:
    """The distribution (or an image of it), not a server jar on a classpath: build_type "zip" (the
    distribution, lawindex's image) or "tar"/"docker" (official packages), and the modules lawindex needs."""
    assert opensearch.info()["version"]["build_type"] in ("zip", "tar", "docker")
    nodes = opensearch.nodes.info(metric="plugins")["nodes"]
    loaded = {module["name"] for one in nodes.values() for module in one["modules"]}
    assert {"analysis-common", "transport-netty4"} <= loaded


def test_analyze_with_pattern_tokenizer_stop_list_and_pattern_replace(opensearch: OpenSearch) -> None:
    body = {
        "tokenizer": {"type": "pattern", "pattern": "[^A-Za-z0-9]+"},
        "filter": [
            "lowercase",
            {"type": "stop", "stopwords": ["how", "from", "the", "a"]},
            # The spec's plural rule: a final s off words longer than three letters not ending in ss.
            {"type": "pattern_replace", "pattern": "^(.{2,}[^s])s$", "replacement": "$1"},
        ],
        "text": "How far FROM the fire-hydrants, a bus and grass cars",
    }
    tokens = [t["token"] for t in opensearch.indices.analyze(body=body)["tokens"]]
    assert tokens == ["far", "fire", "hydrant", "bus", "and", "grass", "car"]


def _kill(found: node.NodeStatus) -> None:
    if found.container:
        subprocess.run(["docker", "kill", found.container], capture_output=True, check=False)
    else:
        assert found.pid is not None
        os.kill(found.pid, signal.SIGKILL)


def test_a_killed_node_is_dead_and_start_brings_up_a_fresh_one(opensearch_version: str) -> None:
    """Made with k-NN (--knn), where its zip installs: started again without asking, it keeps it (its indices may
    need it)."""
    first = node.start(
        version=opensearch_version, port=REBIRTH_PORT, settings={"node.attr.lawindex_test": "rebirth"}, knn=True
    )
    try:
        assert first.state == "running"
        client = OpenSearch(hosts=[first.url], timeout=30)
        assert client.info()["version"]["build_type"] == "zip" or first.runs == "official image"
        (one,) = client.nodes.info(metric="settings")["nodes"].values()
        assert one["attributes"]["lawindex_test"] == "rebirth"  # --setting reached the node's own config
        if first.runs == "distribution":
            assert first.user == ("lawindex" if os.geteuid() == 0 else first.user)
            assert first.pid is not None and Path(f"/proc/{first.pid}").stat().st_uid != 0
            # Started with bin/opensearch's own JVM options but two (issue 48.5's first minute): its temporary
            # folder is the node's own, not one more /tmp/opensearch-N made by a JVM of its own, and its heap is
            # not touched page by page before the start.
            (jvm,) = client.nodes.info(metric="jvm")["nodes"].values()
            arguments = jvm["jvm"]["input_arguments"]
            assert f"-Djava.io.tmpdir={Path(first.home).parent / 'tmp'}" in arguments
            assert arguments.index("-XX:-AlwaysPreTouch") > arguments.index("-XX:+AlwaysPreTouch")
        _kill(first)
        deadline = time.monotonic() + 20
        while node.status(REBIRTH_PORT).state != "dead" and time.monotonic() < deadline:
            time.sleep(0.2)
        dead = node.status(REBIRTH_PORT)
        assert dead.state == "dead"
        assert dead.version == opensearch_version

        second = node.start(version=opensearch_version, port=REBIRTH_PORT)
        assert second.state == "running"
        assert not second.reused
        if first.runs == "distribution":
            has_knn = knn.unsupported(opensearch_version) is None  # 2.19.x's min zip takes none
            assert knn.installed(OpenSearch(hosts=[second.url], timeout=30)) == has_knn
        if first.container is None:
            assert second.pid != first.pid
        assert node.status(REBIRTH_PORT).state == "running"
    finally:
        node.stop(REBIRTH_PORT)
    assert node.status(REBIRTH_PORT).state == "stopped"


def test_a_port_taken_by_something_else_is_a_clear_error_at_once(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        began = time.monotonic()
        with pytest.raises(NodeError, match=f"port {port} .* taken"):
            node.start(port=port, cache_dir=tmp_path)
        assert time.monotonic() - began < 5


def test_two_starts_at_once_leave_one_node(opensearch_version: str) -> None:
    results: list[node.NodeStatus | BaseException] = []

    def start() -> None:
        try:
            results.append(node.start(version=opensearch_version, port=TWIN_PORT))
        except BaseException as error:
            results.append(error)

    threads = [threading.Thread(target=start) for _ in range(2)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        statuses = [r for r in results if isinstance(r, node.NodeStatus)]
        assert len(statuses) == 2, results
        assert sorted(s.reused for s in statuses) == [False, True]
        assert statuses[0].pid == statuses[1].pid
        assert statuses[0].container == statuses[1].container
        if statuses[0].runs == "distribution":  # a plain start fetches no k-NN: the lawindex plugin ranks by meaning
            client = OpenSearch(hosts=[statuses[0].url], timeout=30)
            assert plugin.installed(client) and not knn.installed(client)
    finally:
        node.stop(TWIN_PORT)
