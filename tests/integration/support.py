"""Helpers the integration tests share: a namespace of their own on a shared cluster, and cleanup.

Every test that writes takes a fresh namespace (`lawindex_t<random>`), so tests, and engineers running
them against one node at once, never touch each other's states, and nothing of the user's own
`lawindex-*` indices.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from opensearchpy import OpenSearch

from indexer.errors import LawindexError
from indexer.node import node
from indexer.node.state import NodeStatus
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.cluster.schema import GRID_FIELD, VECTOR_FIELD
from indexer.retrieval.corpus import Corpus, read_corpus
from tests import synthetic
from tests.integration import forked

# The three-node cluster of test_cluster, test_failover and test_plugin_cluster (scripts/test starts it once
# for the three; a file run alone starts it, and stops what it started).
CLUSTER_PORT = int(os.environ.get("LAWINDEX_CLUSTER_PORT", "9480"))
CLUSTER_NODES = 3


# Questions of the sample corpora a learner might ask (a misspelling among them), for the CLI's and serve's tests.
SAMPLE_QUESTIONS = [
    "how far from a fire hydrant can i park",
    "how far must i be behing a firehydrant",
    "when do i have to stop for a school bus",
    "headlights",
    "what is the speed limit in a school zone",
    "can i text while driving",
]


def cluster_version() -> str:
    """The OpenSearch version the integration tests run on."""
    return os.environ.get("LAWINDEX_OPENSEARCH_VERSION") or node.default_version()


def start_cluster() -> NodeStatus:
    """The three-node cluster on CLUSTER_PORT, green (started, or every node running again); the test fails,
    never skips, when it cannot be had."""
    began = time.monotonic()
    try:
        found = node.start(
            version=cluster_version(), port=CLUSTER_PORT, heap="256m", nodes=CLUSTER_NODES, runtime="distribution"
        )
    except LawindexError as error:
        pytest.fail(f"no three-node cluster on port {CLUSTER_PORT}: {error} ({error.hint})", pytrace=False)
    print(f"\ntiming: {CLUSTER_NODES}-node cluster green in {time.monotonic() - began:.1f} s (reused: {found.reused})")
    return found


@contextmanager
def three_nodes() -> Iterator[list[str]]:
    """The cluster's URLs, for a test module's life: stopped at the end when the module started it."""
    found = start_cluster()
    try:
        yield found.url.split(",")
    finally:
        if not found.reused:
            node.stop(CLUSTER_PORT)


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


# `lawindex` as a fresh process, through the same entry point as the console script: for the tests that start a
# command and then talk to it or signal it (a server, a load stopped half-way).
LAWINDEX = forked.FRESH


def timed_lawindex(
    *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> tuple[int, str, str, float]:
    """`lawindex ARGS` as its own process (forked from a zygote that has imported the library:
    tests/integration/forked.py): exit code, stdout, stderr and seconds; never a traceback."""
    began = time.perf_counter()
    code, stdout, stderr = forked.run(list(args), {**os.environ, **(env or {})}, stdin, timeout=120)
    seconds = time.perf_counter() - began
    out, err = stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace")
    assert "Traceback" not in out + err, err
    return code, out, err, seconds


def lawindex(*args: str, env: dict[str, str] | None = None, stdin: bytes | None = None) -> tuple[int, str, str]:
    """`lawindex ARGS` as its own process: exit code, stdout, stderr; never a traceback."""
    code, out, err, _ = timed_lawindex(*args, env=env, stdin=stdin)
    return code, out, err


def each_counts_once_more(counts: list[int], stopped: Callable[[], bool], what: str, timeout: float = 120) -> None:
    """Returns once every counter of `counts` (one per thread, each raised by its own thread) has grown since
    the call, or at once when `stopped()` (a thread failed, and the test reports why); raises AssertionError
    after `timeout` seconds. The reload tests wait so for every asker to have answered on the generation about
    to be replaced: the fixed 0.3 s they slept did not promise it on a loaded 2-core machine."""
    start = list(counts)
    deadline = time.monotonic() + timeout
    while any(now == then for now, then in zip(counts, start, strict=True)) and not stopped():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not every thread counted one more in {timeout:.0f} s: {start} -> {counts}")
        time.sleep(0.01)


def run_threads(threads: list[threading.Thread], timeout: float = 300) -> float:
    """Start `threads` together, wait for each (at most `timeout` seconds apiece); the seconds taken."""
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return time.perf_counter() - began


class DroppingProxy:
    """A real TCP proxy on loopback in front of one node, that loses answers: each request is forwarded
    as it comes, and when one matches `drops` (method, path and body), the proxy waits for the node's
    answer to begin (so the node has applied it) and then closes both connections instead of passing it
    on: what a client meets when a connection drops after the node did its work. `times` requests are
    dropped, then everything passes. HTTP/1.1 without pipelining, as opensearch-py speaks it."""

    def __init__(self, upstream: str, drops: Callable[[str, str, bytes], bool], times: int = 1) -> None:
        import socket
        from urllib.parse import urlsplit

        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 9200)
        self.drops = drops
        self.left = times
        self.dropped: list[str] = []
        self._guard = threading.Lock()
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._closed = True
        self._server.close()

    def __enter__(self) -> DroppingProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: Any) -> None:
        import socket

        node = socket.create_connection(self.upstream)
        try:
            buffer = b""
            while True:
                while b"\r\n\r\n" not in buffer:
                    chunk = client.recv(65536)
                    if not chunk:
                        return
                    buffer += chunk
                head, _, rest = buffer.partition(b"\r\n\r\n")
                lines = head.split(b"\r\n")
                method, target = lines[0].decode("latin-1").split(" ")[:2]
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(rest) < length:
                    chunk = client.recv(65536)
                    if not chunk:
                        return
                    rest += chunk
                body, buffer = rest[:length], rest[length:]
                with self._guard:
                    drop = self.left > 0 and self.drops(method, target, body)
                    if drop:
                        self.left -= 1
                        self.dropped.append(f"{method} {target}")
                node.sendall(head + b"\r\n\r\n" + body)
                if drop:
                    node.recv(1)  # the node has answered: it applied the request
                    return
                self._relay_answer(node, client, method)
        except OSError:
            return
        finally:
            node.close()
            client.close()

    @staticmethod
    def _relay_answer(node: Any, client: Any, method: str) -> None:
        """One answer from the node to the client: its head, then its body by Content-Length or chunks."""
        buffer = b""
        while b"\r\n\r\n" not in buffer:
            chunk = node.recv(65536)
            if not chunk:
                raise OSError("the node closed the connection")
            buffer += chunk
        head, _, rest = buffer.partition(b"\r\n\r\n")
        length = None
        chunked = False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and method != "HEAD":
                length = int(value)
            elif name.strip().lower() == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if chunked:
            while not rest.endswith(b"0\r\n\r\n"):
                chunk = node.recv(65536)
                if not chunk:
                    raise OSError("the node closed the connection")
                rest += chunk
        else:
            while len(rest) < (length or 0):
                chunk = node.recv(65536)
                if not chunk:
                    raise OSError("the node closed the connection")
                rest += chunk
        client.sendall(head + b"\r\n\r\n" + rest)


def stored_vector(source: dict[str, Any]) -> np.ndarray:
    """A row's vector as float32, as its `_source` keeps it: a knn_vector's floats (the window path), or the
    grid's base64 (256 little-endian int32 units of 2^-20: the plugin's path, its one copy; a component the
    embedder made -0.0 reads back as 0.0, the same value)."""
    if VECTOR_FIELD in source:
        return np.array(source[VECTOR_FIELD], dtype=np.float32)
    units = np.frombuffer(base64.b64decode(source[GRID_FIELD]), dtype="<i4")
    return (units / 2.0**20).astype(np.float32)


def block_filling(client: OpenSearch, namespace: str) -> list[str]:
    """Block (`index.blocks.read_only_allow_delete`) each index a load of TX is filling in `namespace` once laws
    are written to it (mid-load: the refresh is off, so counted by the indexing stats); the indices blocked."""
    blocked = []
    found = client.indices.get_alias(index=f"{namespace}-tx-*", ignore_unavailable=True, allow_no_indices=True)
    for index, body in found.items():
        if f"{index}-filling" not in body.get("aliases", {}):
            continue
        stats = client.indices.stats(index=index, metric="indexing")["_all"]["primaries"]
        if stats.get("indexing", {}).get("index_total", 0) > 0:
            client.indices.put_settings(index=index, body={"index.blocks.read_only_allow_delete": True})
            blocked.append(index)
    return blocked


def two_corpora(root: Path, state: str, laws: int) -> tuple[Corpus, Corpus]:
    """Two generated corpora of `state` (`laws` laws each, seeds 101 and 202: they answer most questions
    differently), written as root/a/STATE.jsonl and root/b/STATE.jsonl and read back."""

    def written(path: Path, seed: int) -> Corpus:
        generated = synthetic.generate_corpus(state, laws, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(law.model_dump(exclude_none=True)) + "\n" for law in generated)
        path.write_text(text, encoding="utf-8")
        return read_corpus(path)

    return written(root / "a" / f"{state}.jsonl", 101), written(root / "b" / f"{state}.jsonl", 202)


class Reloads:
    """What the askers of a reload test share with its reloader: `done` once the reloads are over, the `errors`
    and `wrong` answers seen, each asker's count of answers (`answered`), and the generations each reload made."""

    def __init__(self, askers: int) -> None:
        self.done = threading.Event()
        self.errors: list[str] = []
        self.wrong: list[str] = []
        self.answered = [0] * askers
        self.generations: list[str] = []

    def stopped(self) -> bool:
        """Whether an asker has failed: the reloads wait for the askers no longer."""
        return bool(self.errors or self.wrong)

    def reload(
        self, client: OpenSearch, corpora: tuple[Corpus, Corpus], state: str, times: int, namespace: str
    ) -> None:
        """Load the second corpus, then the first, and so on, `times` times, each once every asker has answered
        on the generation about to be replaced (and on the last one too); a failure goes to `errors`."""
        from indexer.opensearch.write.generations import serving
        from indexer.opensearch.write.load import LoadOptions, load_state

        a, b = corpora
        try:
            for turn in range(times):
                each_counts_once_more(self.answered, self.stopped, f"before reload {turn}")
                load_state(client, b if turn % 2 == 0 else a, LoadOptions(namespace=namespace))
                self.generations.append(str(serving(client, state, namespace)))
        except Exception as error:  # a reload that fails fails the test
            self.errors.append(f"reload: {type(error).__name__}: {error}")
        finally:
            try:
                each_counts_once_more(self.answered, self.stopped, "after the last reload")
            except AssertionError as error:
                self.errors.append(str(error))
            finally:
                self.done.set()
