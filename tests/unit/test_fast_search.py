"""indexer.opensearch.cluster.fast_search.FastSearch: a plain 200 is read on the light path; anything else is
opensearch-py's to answer."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.cluster.fast_search import FastSearch

BODY = b'{"hits": {"hits": [{"_id": "law:TX-S01", "_score": 1.5}]}}'
PLAIN = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(BODY), BODY)
CHUNKED = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)
MISSING = b"HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\n\r\n{}"
NOT_JSON = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"


class Node:
    """A socket that answers each request with the next of `answers` (None: close the connection)."""

    def __init__(self, answers: list[bytes | None]) -> None:
        self.answers = answers
        self.requests: list[bytes] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.answers:
            connection, _ = self.server.accept()
            with connection:
                while self.answers:
                    request = connection.recv(65536)
                    if not request:
                        break
                    self.requests.append(request)
                    answer = self.answers.pop(0)
                    if answer is None:
                        break
                    connection.sendall(answer)


class Fallback:
    """What stands in for the opensearch-py client: its headers, and a record of what it was asked."""

    def __init__(self) -> None:
        self.asked = 0
        self.transport = self

    def get_connection(self) -> Any:
        return type("Own", (), {"headers": {"content-type": "application/json", "user-agent": "t"}, "url_prefix": ""})

    def search(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self.asked += 1
        return {"fallback": True}


@pytest.fixture
def searches() -> Iterator[tuple[FastSearch, Fallback, list[Node]]]:
    nodes: list[Node] = []
    fallback = Fallback()

    def make(answers: list[bytes | None]) -> FastSearch:
        node = Node(answers)
        nodes.append(node)
        return FastSearch(Connection(url=f"http://127.0.0.1:{node.port}", timeout=5), fallback)  # type: ignore[arg-type]

    yield make, fallback, nodes  # type: ignore[misc]


def test_a_plain_200_is_read_here_in_one_write(searches: Any) -> None:
    make, fallback, nodes = searches
    light = make([PLAIN, PLAIN])
    assert light.search("lawindex-tx", {"size": 16}) == {"hits": {"hits": [{"_id": "law:TX-S01", "_score": 1.5}]}}
    assert light.search("lawindex-tx", {"size": 16})["hits"]["hits"][0]["_score"] == 1.5
    assert fallback.asked == 0
    head, _, body = nodes[0].requests[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /lawindex-tx/_search HTTP/1.1\r\n") and b"user-agent: t" in head
    assert body == b'{"size":16}'


@pytest.mark.parametrize("answer", [CHUNKED, MISSING, NOT_JSON], ids=["chunked", "404", "not-json"])
def test_anything_else_is_asked_again_through_opensearch_py(searches: Any, answer: bytes) -> None:
    make, fallback, _ = searches
    assert make([answer]).search("lawindex-tx", {"size": 16}) == {"fallback": True}
    assert fallback.asked == 1


def test_a_kept_alive_connection_the_node_closed_is_opened_again(searches: Any) -> None:
    make, fallback, nodes = searches
    light = make([PLAIN, None, PLAIN])
    light.search("lawindex-tx", {})
    assert light.search("lawindex-tx", {})["hits"]["hits"][0]["_id"] == "law:TX-S01"
    assert fallback.asked == 0 and len(nodes[0].requests) == 3


def test_https_is_opensearch_py_s(searches: Any) -> None:
    _, fallback, _ = searches
    secured = FastSearch(Connection(url="https://127.0.0.1:1"), fallback)  # type: ignore[arg-type]
    assert secured.search("lawindex-tx", {}) == {"fallback": True}


def test_several_hosts_or_a_preference_are_opensearch_py_s(searches: Any) -> None:
    make, fallback, nodes = searches
    node = make([PLAIN])  # a live node that would answer the light path
    url = f"http://127.0.0.1:{nodes[0].port}"
    cluster = FastSearch(Connection(url=f"{url},{url}"), fallback)  # type: ignore[arg-type]
    assert cluster.search("lawindex-tx", {}) == {"fallback": True}
    replica = FastSearch(Connection(url=url, preference="_replica"), fallback)  # type: ignore[arg-type]
    assert replica.search("lawindex-tx", {}) == {"fallback": True}
    assert fallback.asked == 2 and nodes[0].requests == []
    assert node.search("lawindex-tx", {})["hits"]["hits"][0]["_id"] == "law:TX-S01"


def test_an_answer_that_drips_is_a_timeout_within_the_timeout_not_a_timeout_per_read() -> None:
    from opensearchpy.exceptions import ConnectionTimeout

    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drip() -> None:
        connection, _ = server.accept()
        with connection:
            connection.recv(65536)
            for byte in PLAIN:  # a byte every 0.1 s: never 1 s without one
                if stop.wait(0.1):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    return

    threading.Thread(target=drip, daemon=True).start()
    light = FastSearch(Connection(url=f"http://127.0.0.1:{server.getsockname()[1]}", timeout=1.0), Fallback())  # type: ignore[arg-type]
    try:
        with pytest.raises(ConnectionTimeout):
            light.search("lawindex-tx", {})  # PLAIN whole would take 9 s at that pace
    finally:
        stop.set()
        server.close()
