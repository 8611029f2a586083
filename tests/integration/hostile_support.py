"""What the hostile-plugin tests share: a state loaded on the plugin path, requests sent as any client sends
them (http.client, nothing of lawindex's in the path) that return the status with the body, and a check that
the node is alive with its request breaker given back and its heap under a bound.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

from opensearchpy import OpenSearch

from indexer.node import plugin
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import Corpus
from tests.integration.support import drop_namespace, unique_namespace

# After a question, the node's heap must come back under this share of its maximum (a 512 MB node idles
# near 30-40%); polled, since the garbage of a big question goes only at the next collection.
HEAP_BOUND_PERCENT = 85
HEAP_SETTLE_S = 20.0


@dataclass
class Reply:
    status: int
    body: dict[str, object]

    def reason(self) -> str:
        """The first root cause's reason of an error answer ('' for another)."""
        error = self.body.get("error")
        if not isinstance(error, dict):
            return ""
        causes = error.get("root_cause") or [error]
        return str(causes[0].get("reason", ""))  # type: ignore[union-attr]


class Raw:
    """One kept-alive http.client connection to the node: any request, its status and JSON body."""

    def __init__(self, url: str, timeout: float = 300) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.timeout = parts.hostname or "127.0.0.1", parts.port or 9200, timeout
        self._connection: http.client.HTTPConnection | None = None

    def send(self, method: str, path: str, body: object = None, headers: dict[str, str] | None = None) -> Reply:
        payload = None if body is None else json.dumps(body).encode()
        for attempt in range(2):
            if self._connection is None:
                self._connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self._connection.request(
                    method, path, body=payload, headers={"Content-Type": "application/json", **(headers or {})}
                )
                response = self._connection.getresponse()
                text = response.read()
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt:
                    raise
                continue
            return Reply(response.status, json.loads(text) if text else {})
        raise AssertionError("unreachable")

    def search(
        self, index: str, query: dict[str, object], headers: dict[str, str] | None = None, **extra: object
    ) -> Reply:
        """The lawindex query `query` on `index`, `extra` beside it in the body, `headers` on the request."""
        return self.send("POST", f"/{index}/_search", {"query": {"lawindex": query}, **extra}, headers)

    def ids(self, index: str, question: str) -> list[str]:
        reply = self.search(index, {"question": question}, size=8, _source=["id"])
        assert reply.status == 200, (reply.status, reply.body)
        return [str(hit["_source"]["id"]) for hit in reply.body["hits"]["hits"]]  # type: ignore[index]

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


@dataclass
class Loaded:
    url: str
    client: OpenSearch
    connection: Connection
    corpus: Corpus

    @property
    def alias(self) -> str:
        return alias_of(self.corpus.state, self.connection.namespace)

    def index(self) -> str:
        return next(iter(self.client.indices.get_alias(name=self.alias)))


@contextmanager
def loaded(url: str, corpus: Corpus) -> Iterator[Loaded]:
    """`corpus` loaded by lawindex on the plugin path in a namespace of its own, dropped afterwards."""
    client = OpenSearch(hosts=[url], timeout=120)
    assert plugin.installed(client), f"the node at {url} has no lawindex plugin (_cat/plugins)"
    connection = Connection.from_env(url, namespace=unique_namespace(), timeout=120.0)
    load(connection, [corpus])
    try:
        yield Loaded(url, client, connection, corpus)
    finally:
        drop_namespace(client, connection.namespace)


def node_is_well(raw: Raw) -> dict[str, float]:
    """Asserts the node answers, its request breaker holds nothing (every charge of the query given back)
    and its heap comes back under HEAP_BOUND_PERCENT; returns what it read."""
    root = raw.send("GET", "/")
    assert root.status == 200, root
    deadline = time.monotonic() + HEAP_SETTLE_S
    while True:
        stats = raw.send("GET", "/_nodes/_local/stats/jvm,breaker")
        assert stats.status == 200, stats
        node = next(iter(stats.body["nodes"].values()))  # type: ignore[union-attr]
        heap = float(node["jvm"]["mem"]["heap_used_percent"])
        held = float(node["breakers"]["request"]["estimated_size_in_bytes"])
        if (heap < HEAP_BOUND_PERCENT and held == 0) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert held == 0, f"the request breaker still holds {held:.0f} bytes"
    assert heap < HEAP_BOUND_PERCENT, f"heap {heap}% of its maximum, {HEAP_SETTLE_S:.0f} s after the question"
    return {"heap_percent": heap, "breaker_tripped": float(node["breakers"]["request"]["tripped"])}
