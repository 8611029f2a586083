"""indexer.opensearch.write.fill: a node that does not know the new index yet is asked again; a deleted index ends the
load at once.

A node whose cluster state is behind answers 404 for an index the cluster manager knows: CI met it once, a
load just after a silent manager came back (every document refused), and a real cluster does not produce
it on demand (a resumed node usually catches up before its first bulk request). So here a small HTTP server
plays the node: its bulk answers 404 `index_not_found_exception` for the first requests, and its alias
check answers as the manager would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opensearchpy import OpenSearch

from indexer.errors import LoadFailed
from indexer.opensearch.write import fill as fill_module
from indexer.opensearch.write.fill import fill
from indexer.opensearch.write.stop import Stop

FILLING = "lawindex-md-20261201000000000000-filling"


class Lagging(ThreadingHTTPServer):
    """A node that refuses the first `unknown` bulk requests (404 on every document), then writes them;
    the alias check answers `known`."""

    def __init__(self, unknown: int, known: bool) -> None:
        self.unknown, self.known = unknown, known
        self.bulks = 0
        self.alias_checks = 0
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: Lagging

    def log_message(self, *_: Any) -> None:
        pass

    def _answer(self, status: int, body: dict[str, Any] | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self) -> None:
        assert self.path.startswith(f"/_alias/{FILLING}"), self.path
        self.server.alias_checks += 1
        self._answer(200 if self.server.known else 404)

    def do_POST(self) -> None:
        assert self.path.startswith(f"/{FILLING}/_bulk"), self.path
        lines = self.rfile.read(int(self.headers["content-length"])).decode().splitlines()
        ids = [json.loads(line)["create"]["_id"] for line in lines[::2]]
        self.server.bulks += 1
        if self.server.bulks <= self.server.unknown:
            error = {"type": "index_not_found_exception", "reason": f"no such index [{FILLING}]"}
            items = [{"create": {"_id": i, "status": 404, "error": error}} for i in ids]
        else:
            items = [{"create": {"_id": i, "status": 201}} for i in ids]
        self._answer(200, {"took": 1, "errors": self.server.bulks <= self.server.unknown, "items": items})


def _fill(node: Lagging, laws: int = 25) -> int:
    client = OpenSearch(hosts=[f"http://127.0.0.1:{node.server_address[1]}"], timeout=10, max_retries=0)
    actions = iter([{"_id": f"law:MD-{i}", "_source": {"law": "fire hydrant"}} for i in range(laws)])
    return fill(
        client, actions, FILLING, "MD", laws, Stop(), progress=None, chunk_size=10, max_retries=8, initial_backoff=0.01
    )


def test_documents_a_lagging_node_refused_are_sent_again(serving: Callable[[Lagging], Lagging]) -> None:
    node = serving(Lagging(unknown=2, known=True))
    assert _fill(node) == 25
    assert node.alias_checks == 2  # each refusal checked with the manager's state


def test_an_index_the_manager_does_not_know_ends_the_load_at_once(serving: Callable[[Lagging], Lagging]) -> None:
    node = serving(Lagging(unknown=100, known=False))
    with pytest.raises(LoadFailed) as failed:
        _fill(node)
    assert node.bulks == 1  # not sent again: the index was deleted under the load
    assert f"10 of 26 documents were refused (law:MD-0: 404 no index behind {FILLING})" in failed.value.message


def test_a_node_that_never_catches_up_ends_the_load(
    serving: Callable[[Lagging], Lagging], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fill_module, "LAGGING_S", 0.05)
    node = serving(Lagging(unknown=100, known=True))
    with pytest.raises(LoadFailed):
        _fill(node)
    assert 1 < node.bulks <= 9
