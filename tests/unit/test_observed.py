"""What `lawindex serve` tells an operator, without a cluster: bounded labels, the path of an answer, the
refusals of the connection layer read from the very responses it writes, and the request id taken or made
and returned, through the real ASGI wrapper around a small app."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

import pytest

from indexer.retrieval.answers import Answer, Window
from indexer.service import client_limits
from indexer.service.access_log import AccessLog, Observed, refusal_reason
from indexer.service.metrics import Metrics, Record, path_of, route_of


@pytest.mark.parametrize(
    ("path", "route", "state"),
    [
        ("/v1/states/TX/ask", "/v1/states/{state}/ask", "TX"),
        ("/v1/states/tx/ask", "/v1/states/{state}/ask", "TX"),
        ("/v1/states/ZZ/ask", "/v1/states/{state}/ask", ""),  # never a label per made-up code
        ("/v1/states/MD/laws/MD-S01", "/v1/states/{state}/laws/{law_id}", "MD"),
        ("/v1/states/MD/laws", "/v1/states/{state}/laws", "MD"),
        ("/v1/states/PA/families/permit", "/v1/states/{state}/families/{family}", "PA"),
        ("/metrics", "/metrics", ""),
        ("/wp-admin/../../etc/passwd", "other", ""),
    ],
)
def test_routes_and_states_are_bounded_labels(path: str, route: str, state: str) -> None:
    assert route_of(path) == (route, state)


def test_the_path_of_an_answer() -> None:
    def answer(window: Window | None) -> Answer:
        return Answer("TX", "q", [], [], [], window=window)

    assert path_of(answer(Window((9,), plugin=True))) == "plugin"
    assert path_of(answer(Window((16,)))) == "window"
    assert path_of(answer(Window((16, 64)))) == "widened"
    assert path_of(answer(None)) == "reference"


def test_refusals_are_read_from_the_responses_the_connection_layer_writes() -> None:
    header = client_limits._response(408, "Request Timeout", "the request's headers did not arrive within 10 s", "")
    body = client_limits._response(408, "Request Timeout", "the request's body did not arrive within 30 s", "")
    large = client_limits._response(431, "Request Header Fields Too Large", "the request's headers are over 65,536", "")
    full = client_limits._response(503, "Service Unavailable", "lawindex serve holds 4,096 connections", "", 1)
    assert refusal_reason(header) == (408, "header_timeout")
    assert refusal_reason(body) == (408, "body_timeout")
    assert refusal_reason(large) == (431, "headers_too_large")
    assert refusal_reason(full) == (503, "connections")


async def _app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    status = 200 if scope["path"].endswith("/ask") else 404
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _request(app: Any, path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[bytes, bytes]]:
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": path, "query_string": b"q=park", "headers": headers}
    asyncio.run(app(scope, receive, send))
    return int(sent[0]["status"]), dict(sent[0]["headers"])


def test_the_request_id_is_taken_or_made_and_returned_and_every_request_counted(tmp_path: Any) -> None:
    log_file = tmp_path / "log"
    with log_file.open("wb") as out:
        metrics = Metrics(None, "lawindex")
        app = Observed(_app, metrics, AccessLog(fd=out.fileno()))
        _, given = _request(app, "/v1/states/TX/ask", [(b"x-request-id", b"abc-1")])
        _, made = _request(app, "/v1/states/TX/ask", [])
        _, odd = _request(app, "/v1/states/TX/ask", [(b"x-request-id", b"a b\r\nc")])  # not kept: made anew
        status, _ = _request(app, "/nowhere", [])
    assert given[b"x-request-id"] == b"abc-1"
    assert len(made[b"x-request-id"]) == 32 and made[b"x-request-id"] != odd[b"x-request-id"]
    assert status == 404
    lines = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [line["request_id"] for line in lines[:3]] == [
        "abc-1",
        made[b"x-request-id"].decode(),
        odd[b"x-request-id"].decode(),
    ]
    assert [line["status"] for line in lines] == [200, 200, 200, 404]
    assert all("question" not in line for line in lines)
    text = metrics.exposition().decode()
    assert 'lawindex_requests_total{route="/v1/states/{state}/ask",state="TX",status="200",way="words"} 3.0' in text
    assert 'lawindex_requests_total{route="other",state="",status="404",way=""} 1.0' in text
    assert "lawindex_in_flight 0.0" in text


def test_a_record_counts_each_answer_by_its_path() -> None:
    metrics = Metrics(None, "lawindex")
    record = Record("id", "POST", "/v1/states/{state}/ask", "TX", 0.0)
    import indexer.service.metrics as module

    before, module.METRICS = module.METRICS, metrics
    try:
        record.answered(Answer("TX", "one", [], [], [], window=Window((16, 64))))
        record.answered(Answer("TX", "two", [], [], [], window=Window((9,), plugin=True)))
    finally:
        module.METRICS = before
    assert record.paths == ["widened", "plugin"] and record.windows == [[16, 64], [9]]
    assert record.questions == ["one", "two"]
    text = metrics.exposition().decode()
    assert 'lawindex_answers_total{path="widened",state="TX",way="words"} 1.0' in text
