"""Helpers the integration tests share: a namespace of their own on a shared cluster, and cleanup.

Every test that writes takes a fresh namespace (`lawindex_t<random>`), so tests, and engineers running
them against one node at once, never touch each other's states, and nothing of the user's own
`lawindex-*` indices.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from opensearchpy import OpenSearch

from indexer.opensearch.connection import Connection


def unique_namespace() -> str:
    """A namespace no other test run uses."""
    return f"lawindex_t{uuid.uuid4().hex[:10]}"


def drop_namespace(client: OpenSearch, namespace: str) -> None:
    """Delete every index of `namespace`."""
    client.indices.delete(index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True)


@contextmanager
def fresh_connection(url: str) -> Iterator[Connection]:
    """A Connection to `url` in a namespace of its own, removed afterwards."""
    connection = Connection.from_env(url, namespace=unique_namespace())
    try:
        yield connection
    finally:
        drop_namespace(connection.client(), connection.namespace)


# `lawindex` as its own process, through the same entry point as the console script.
LAWINDEX = [sys.executable, "-c", "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"]


def timed_lawindex(
    *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> tuple[int, str, str, float]:
    """`lawindex ARGS` as its own process: exit code, stdout, stderr and seconds; never a traceback."""
    began = time.perf_counter()
    done = subprocess.run(
        [*LAWINDEX, *args], input=stdin, capture_output=True, env={**os.environ, **(env or {})}, timeout=120
    )
    seconds = time.perf_counter() - began
    out, err = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in out + err, err
    return done.returncode, out, err, seconds


def lawindex(*args: str, env: dict[str, str] | None = None, stdin: bytes | None = None) -> tuple[int, str, str]:
    """`lawindex ARGS` as its own process: exit code, stdout, stderr; never a traceback."""
    code, out, err, _ = timed_lawindex(*args, env=env, stdin=stdin)
    return code, out, err


def run_threads(threads: list[threading.Thread], timeout: float = 300) -> float:
    """Start `threads` together, wait for each (at most `timeout` seconds apiece); the seconds taken."""
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return time.perf_counter() - began
