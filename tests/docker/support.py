"""What the tests under tests/docker share besides fixtures (conftest.py holds those): the repository, the
`lawindex` command in its own process, a node forgotten, JSON over HTTP, waiting."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from indexer.node import node

REPO = Path(__file__).resolve().parents[2]


def forget_node(port: int) -> None:
    """Stop the local node on `port` and remove its record and data: the next `start` there creates a node."""
    node.stop(port)
    shutil.rmtree(node.default_cache_dir() / "nodes" / str(port), ignore_errors=True)


def get_json(url: str, timeout: float = 10) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        body: dict[str, Any] = json.loads(response.read().decode("utf-8"))
    return body


def wait_for(what: str, ready: Callable[[], bool], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not ready after {timeout:.0f} s")
        time.sleep(1)


def lawindex_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """`lawindex ARGS` in its own process with `env` added; never a traceback. Its requests may take 120 s
    (LAWINDEX_TIMEOUT, unless set): a container's node just green on a loaded machine took more than the
    default 10 s to answer the first (`load` in the compose test, CI at load 12). These tests are of the
    containers; the client's own timeout is tested in tests/integration."""
    done = subprocess.run(
        [sys.executable, "-c", "from indexer.cli import main; main()", *args],
        capture_output=True, text=True, timeout=timeout, check=False, cwd=REPO,
        env={"LAWINDEX_TIMEOUT": "120", **os.environ, **(env or {})},
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done


def modules(url: str) -> set[str]:
    """The modules the node at `url` loaded, from `_nodes/plugins`."""
    nodes = get_json(f"{url}/_nodes/plugins")["nodes"]
    return {module["name"] for one in nodes.values() for module in one["modules"]}
