"""A local node keeps its data whatever runs it: `stop` + `start` keeps every state loaded into it.

Each test loads Texas into a node of its own, asks a question, stops the node and starts it again, and
asks again: the same answer, or the test fails (before, a container node came back empty, "no index for
TX", and a distribution node came back as an empty container once `lawindex/opensearch` was built).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indexer.node import node
from tests.docker.support import REPO, forget_node, lawindex_cli

UNPULLABLE = "127.0.0.1:1/lawindex-unpullable/opensearch"
# The official image can never be had here, on any machine: what `auto` finds is the local image or nothing.
NO_OFFICIAL = {"LAWINDEX_OFFICIAL_IMAGE": UNPULLABLE}
NO_IMAGE = {**NO_OFFICIAL, "LAWINDEX_LOCAL_IMAGE": "lawindex-test/never-built"}
QUESTION = "how far from a fire hydrant can i park"


@pytest.fixture
def fresh_port(base_port: int, request: pytest.FixtureRequest) -> Iterator[int]:
    """A port of this test's own (base + 5 or more), with no record and no data left from an earlier run."""
    port = base_port + 5 + int(request.param)
    forget_node(port)
    yield port
    node.stop(port)


def _start(port: int, *args: str, env: dict[str, str]) -> node.NodeStatus:
    done = lawindex_cli("opensearch", "start", "--port", str(port), "--heap", "256m", *args, env=env)
    assert done.returncode == 0, done.stderr
    return node.status(port)


def _stop(port: int) -> None:
    done = lawindex_cli("opensearch", "stop", "--port", str(port))
    assert done.returncode == 0, done.stderr
    assert node.status(port).state == "stopped"


def _load_texas(port: int) -> None:
    done = lawindex_cli("load", str(REPO / "corpora"), "--state", "TX", "--url", f"http://127.0.0.1:{port}")
    assert done.returncode == 0, done.stderr


def _ask_texas(port: int) -> dict[str, Any]:
    done = lawindex_cli("ask", "TX", QUESTION, "--json", "--url", f"http://127.0.0.1:{port}")
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.mark.parametrize("fresh_port", [0], indirect=True)
def test_a_distribution_node_stays_the_distribution_with_its_states_once_an_image_exists(
    local_image: str, fresh_port: int
) -> None:
    port = fresh_port
    # Created while no image could be had: `auto` runs the distribution.
    first = _start(port, env=NO_IMAGE)
    assert first.runs == "distribution"
    _load_texas(port)
    before = _ask_texas(port)
    assert [hit["id"] for hit in before["hits"]][:1] == ["TX-S01"]
    _stop(port)
    # Now `lawindex/opensearch` is there and `auto` would choose it for a new node: this one is not new.
    done = lawindex_cli("opensearch", "start", "--port", str(port), "--heap", "256m", env=NO_OFFICIAL)
    assert done.returncode == 0, done.stderr
    assert "the distribution at" in done.stderr and "created as the distribution" in done.stderr
    again = node.status(port)
    assert (again.runs, again.container, again.data_dir) == ("distribution", None, first.data_dir)
    assert _ask_texas(port) == before


@pytest.mark.parametrize("fresh_port", [1], indirect=True)
def test_a_container_node_keeps_its_states_in_its_folder_and_the_distribution_reads_them(
    local_image: str, version: str, fresh_port: int
) -> None:
    port = fresh_port
    first = _start(port, env=NO_OFFICIAL)
    assert (first.runs, first.image) == ("local image", local_image)
    data = Path(str(first.data_dir))
    assert data == node.default_cache_dir().resolve() / "nodes" / str(port) / "data" / version
    _load_texas(port)
    before = _ask_texas(port)
    assert before["hits"]
    # The container is removed at stop; its indices are on the host, in the node's folder.
    _stop(port)
    assert (data / "nodes").is_dir()
    again = _start(port, env=NO_OFFICIAL)
    assert (again.runs, again.data_dir) == ("local image", str(data))
    assert _ask_texas(port) == before
    # The same data, whatever runs it.
    _stop(port)
    switched = _start(port, "--runtime", "distribution", env=NO_OFFICIAL)
    assert (switched.runs, switched.data_dir) == ("distribution", str(data))
    assert _ask_texas(port) == before
