"""What `lawindex serve` tells an operator of each request: its metrics (indexer.service.metrics) and, with
`--log-format json`, one JSON object a line on stderr.

`Observed` wraps the whole service (outside the bound on requests in flight, so that its 503s are seen): it
takes the request's id from `X-Request-Id` (or makes one) and returns it in the answer's headers, keeps a
`Record` of the request that the route answering it fills in (state, way, each answer's path and windows, the
seconds spent waiting on OpenSearch and the embedder), and once the answer is sent counts it and logs it.

A line (keys always present; `question` only with `--log-questions`, since a learner's question is their own
text):

    {"time": "2026-12-02T17:50:01.123Z", "request_id": "5f0c...", "method": "GET",
     "route": "/v1/states/{state}/ask", "state": "TX", "way": "words", "status": 200, "seconds": 0.0021,
     "opensearch_seconds": 0.0012, "embedder_seconds": 0.0, "path": "window", "windows": [16]}

A batch has a list of paths and of windows, one per answer. A connection refused before its request was
whole (408, 431, the connection bound's 503: indexer.service.client_limits) is a line too, with its `refused`
reason. Each line is one `write` to file descriptor 2: whole lines from several workers on one pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

import orjson

from indexer.retrieval.request import Way
from indexer.service.metrics import CONTENT_TYPE, CURRENT, Metrics, Record, route_of

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

LOG_FORMATS = ("text", "json")
ASK_ROUTE = "/v1/states/{state}/ask"
# A request id a client sends is kept when it is this short and plain (it goes into a header and a log line).
_REQUEST_ID = re.compile(rb"[A-Za-z0-9._:/+=-]{1,128}")
# The id a refusal's response carries (indexer.service.client_limits._response).
_REFUSAL_ID = re.compile(rb"\r\nx-request-id: ([0-9a-f]+)\r\n")
_WAYS = frozenset(Way)  # indexer.retrieval.request


@dataclass(frozen=True)
class Observing:
    """What the service tells an operator (`lawindex serve` options): `/metrics`, and the access log's format."""

    metrics: bool = True
    log_format: str = "text"  # text: none but uvicorn's own lines; json: a line a request (AccessLog)
    log_questions: bool = False

    def json_obj(self) -> dict[str, Any]:
        return asdict(self)


def observed(app: App, observing: Observing, client: Any, namespace: str, in_flight: Any = None) -> App:
    """`app` with its requests counted and logged as `observing` asks (the app itself when nothing is)."""
    from indexer.service import client_limits
    from indexer.service.metrics import install

    measured = install(client, namespace, observing.metrics)
    log = AccessLog(observing.log_questions) if observing.log_format == "json" else None
    if measured is None and log is None:
        return app

    def refused(response: bytes, detail: str | None = None) -> None:
        status, reason = refusal_reason(response)
        if measured is not None:
            measured.refused(status, reason)
        if log is not None:
            found = _REFUSAL_ID.search(response)
            log.refused(status, reason, found.group(1).decode("ascii") if found else None, detail)

    client_limits.REFUSED = refused
    return Observed(app, measured, log, in_flight)


class AccessLog:
    """One JSON line per request on stderr; the question's text only when `questions`."""

    def __init__(self, questions: bool = False, fd: int = 2) -> None:
        self.questions = questions
        self.fd = fd

    def write(self, record: Record, seconds: float) -> None:
        line: dict[str, Any] = {
            "time": _now(),
            "request_id": record.request_id,
            "method": record.method,
            "route": record.route,
            "state": record.state,
            "way": record.way,
            "status": record.status,
            "seconds": round(seconds, 6),
            "opensearch_seconds": round(record.opensearch, 6),
            "embedder_seconds": round(record.embedder, 6),
            "path": record.paths[0] if len(record.paths) == 1 and record.method == "GET" else record.paths or None,
            "windows": record.windows[0] if len(record.windows) == 1 and record.method == "GET" else record.windows,
        }
        if self.questions:
            line["question"] = record.questions[0] if len(record.questions) == 1 else record.questions
        self._out(line)

    def refused(self, status: int, reason: str, request_id: str | None = None, detail: str | None = None) -> None:
        """A connection refused before its request was whole, or not HTTP (`detail`: what the parser found)."""
        line = {
            "time": _now(),
            "request_id": request_id or uuid.uuid4().hex,
            "status": status,
            "refused": reason,
        }
        if detail is not None:
            line["detail"] = detail
        self._out(line)

    def _out(self, line: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):  # a closed stderr must not fail the request
            os.write(self.fd, orjson.dumps(line) + b"\n")


def refusal_reason(response: bytes) -> tuple[int, str]:
    """(status, reason) of a refusal the connection layer wrote (indexer.service.client_limits._response)."""
    status = int(response[9:12])
    if status == 408:
        return status, "header_timeout" if b"headers did not arrive" in response else "body_timeout"
    if status == 431:
        return status, "headers_too_large"
    if status == 400:
        return status, "invalid_request"
    return status, "connections"


class Observed:
    """ASGI: the request id, the metrics and the log of every request (module docstring). `in_flight` is the
    wrapped bound (indexer.service.client_limits.InFlight), whose refusals are told apart from OpenSearch's 503."""

    def __init__(self, app: App, metrics: Metrics | None, log: AccessLog | None, in_flight: Any = None) -> None:
        self.app = app
        self.metrics = metrics
        self.log = log
        self.bound = in_flight

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        request_id = _request_id(scope["headers"])
        route, state = route_of(scope["path"])
        record = Record(request_id.decode("ascii"), scope["method"], route, state, began)
        if route == ASK_ROUTE and scope["method"] == "GET":
            self._asked(record, scope["query_string"])
        metrics = self.metrics
        refused_here = self.bound is not None and self.bound.under_way >= self.bound.limit
        token = CURRENT.set(record)
        if metrics is not None:
            metrics.in_flight.inc()
        done = False

        def finish() -> None:
            nonlocal done
            done = True
            seconds = time.perf_counter() - began
            if metrics is not None:
                metrics.in_flight.dec()
                metrics.request(record, seconds, "in_flight" if refused_here and record.status == 503 else None)
            if self.log is not None:
                self.log.write(record, seconds)

        async def sending(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                record.status = int(message["status"])
                message["headers"] = [*message.get("headers", ()), (b"x-request-id", request_id)]
            elif not message.get("more_body", False) and not done:
                # Counted before the last byte leaves: a client that scrapes once answered sees its request.
                finish()
            await send(message)

        try:
            if route == "/metrics" and metrics is not None and scope["method"] in ("GET", "HEAD"):
                await self._scrape(metrics, sending)
            else:
                await self.app(scope, receive, sending)
        finally:
            CURRENT.reset(token)
            if not done:  # no answer sent (the client went away): counted with status 0
                finish()

    def _asked(self, record: Record, query: bytes) -> None:
        record.way = "words"
        if b"by=" in query or (self.log is not None and self.log.questions):
            given = dict(parse_qsl(query.decode("latin-1"), keep_blank_values=True))
            by = given.get("by", "words")
            record.way = by if by in _WAYS else ""
            if self.log is not None and self.log.questions and "q" in given:
                record.questions.append(given["q"])

    async def _scrape(self, metrics: Metrics, send: Send) -> None:
        # Off the event loop: the files of every worker are read, and the cluster asked for the ages.
        body = await asyncio.get_running_loop().run_in_executor(None, metrics.exposition)
        headers = [(b"content-type", CONTENT_TYPE.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _now(at: datetime | None = None) -> str:
    return (at or datetime.now(UTC)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def json_line(level: str, message: str, **fields: Any) -> None:
    """One line of the service's own (not a request's) on stderr as `--log-format json` writes it."""
    with contextlib.suppress(OSError):
        os.write(2, orjson.dumps({"time": _now(), "level": level, "message": message, **fields}) + b"\n")


class JsonFormatter(logging.Formatter):
    """uvicorn's lines (start, stop, errors) and any other logger's, each as one JSON object: `time`, `level`,
    `logger`, `message`, and a traceback's text in `exception` (not lines of its own)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(line).decode("utf-8")


class ToldElsewhere(logging.Filter):
    """Drops uvicorn's "Invalid HTTP request received.": the protocol tells that request with its reason and id
    (indexer.service.client_limits.GuardedProtocol.send_400_response)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "uvicorn.error" and record.msg == INVALID_REQUEST)


INVALID_REQUEST = "Invalid HTTP request received."


def log_config(log_format: str) -> dict[str, Any] | None:
    """uvicorn's `log_config` for `log_format`: None (uvicorn's own) for text; for json, every logger's lines
    (uvicorn's and the root's: opensearch-py's, Python's warnings) as JSON objects on stderr."""
    if log_format != "json":
        return None
    here = "indexer.service.access_log"
    handler = {"class": "logging.StreamHandler", "formatter": "json", "filters": ["told"], "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{here}.JsonFormatter"}},
        "filters": {"told": {"()": f"{here}.ToldElsewhere"}},
        "handlers": {"stderr": handler},
        "root": {"handlers": ["stderr"], "level": "WARNING"},
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
            "uvicorn.error": {"level": "INFO"},
            "uvicorn.access": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        },
    }


def _request_id(headers: list[tuple[bytes, bytes]]) -> bytes:
    for name, value in headers:
        if name == b"x-request-id" and _REQUEST_ID.fullmatch(value):
            return value
    return uuid.uuid4().hex.encode("ascii")
