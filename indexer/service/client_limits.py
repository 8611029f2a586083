"""What `lawindex serve` grants a client: how long its request may take to arrive, how many connections and
requests it may hold.

uvicorn (0.54, httptools) has a keep-alive timeout for an idle connection, but none for a request whose
headers or body never finish: a probe held 10,500 half-sent requests for 60 s and none was closed; two such
runs took the process's 20,000 file descriptors and normal clients got "Remote end closed connection".
Its `limit_concurrency` answers 503 once connections *or* tasks pass the limit, so a slowloris past it
refuses every normal request too, and its 503 has no Retry-After. And a request whose body was still coming
held SIGTERM for the whole 30 s grace period, then was cancelled with an "Exception in ASGI application"
traceback. So, here, over uvicorn's own protocol (`GuardedProtocol`, named to uvicorn as its `http`):

- a header timeout, from the moment a connection is ready for a request (accepted, or its last answer
  sent) until the request's headers are complete, whatever trickles in meanwhile (uvicorn's keep-alive timer
  stops at the first byte); and at most `max_header_bytes` of headers;
- a body timeout, from the headers to the body's last byte;
- a bound on open connections: past it, a new connection takes the place of one waiting for a request's
  headers (one that sent part of them first, then one silent for over a second since it was accepted,
  then an idle kept-alive one, each oldest first: `_Waiting`); when none can go (each has a request under
  way, or was accepted just now), the new one is answered 503 with Retry-After and closed;
- at SIGTERM, a request whose body is still coming is closed at once (it could not be answered anyway);
  the requests whose bodies are in are answered, then the process exits;
- `InFlight`, an ASGI wrapper: past `max_in_flight` requests under way, 503 with Retry-After; a request is
  under way once its body is in, so slow bodies never take a normal request's place.

What uvicorn does offer is used as it is: `timeout_keep_alive` (its 5 s) still closes a kept-alive
connection idle between requests, and `backlog` bounds what the kernel queues. What it offers does not do
the rest: `limit_concurrency` is one count of connections and tasks together, so past it every request is
refused, the normal ones first among them; `h11_max_incomplete_event_size` bounds headers for its h11
protocol only, and the service runs on httptools (the faster, which benchmarks/serve.py measured).

Why a subclass of uvicorn's protocol and not a library: an ASGI middleware (the kept ones included) sees a
request only once its headers are in, which is too late for a slowloris, and changing servers (granian has
a header read timeout, hypercorn a read timeout, neither a connection bound that lets the idle go first)
would throw away what benchmarks/serve.py measured of this one. The subclass keeps to the protocol's own hooks
(`connection_made`, `data_received`, the parser's callbacks, `on_response_complete`, `shutdown`);
tests/integration/test_serve_limits.py holds each limit, benchmarks/slowloris.py measures them.

Long: every limit a slow or greedy client meets, in the one protocol subclass that must see them all.
"""

from __future__ import annotations

import asyncio
import resource
import sys
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from indexer.errors import BadInput
from indexer.service.output import ErrorOut, dumps

# The name uvicorn imports the protocol by (its `http` setting), in every worker process.
PROTOCOL = "indexer.service.client_limits:GuardedProtocol"
# Seconds a client refused for being one too many is told to wait: a question takes milliseconds.
RETRY_AFTER = 1
# File descriptors kept for everything but client connections: OpenSearch sockets (a pool per thread, 40
# threads), the log, the listening socket, what Python itself opens.
RESERVED_FILES = 256
DEFAULT_CONNECTIONS = 4096
# Seconds a silent new connection is safe from being let go for another: a client sends its request as it
# connects, and the server reads it within a turn or two of its event loop, milliseconds even when loaded.
GRACE = 1.0
# Seconds a connection answered 503, 408 or 431 and closed on our side stays open for reading: a socket
# closed with bytes unread (the request the client sent with its headers) is reset by the kernel, and the
# client's read meets "connection reset by peer" before the answer (a lingering close, as nginx's). It ends
# at once when the client closes its end, as one that has read the answer does.
LINGER = 1.0


@dataclass(frozen=True)
class Limits:
    """How long a request may take to arrive and how many a client may hold (`lawindex serve` options)."""

    # A normal client sends its headers in one packet; 10 s is a phone on a bad line, many times over.
    header_timeout: float = 10.0
    # A batch body is at most 1 MiB (body_limit.MAX_BODY_BYTES): in 30 s that is 35 KB/s at least.
    body_timeout: float = 30.0
    # An open connection costs a descriptor and some kilobytes (benchmarks/slowloris.py measures it).
    # None: 4,096, or fewer where the process's open-file limit holds fewer (`open_files_for`).
    max_connections: int | None = None
    # Each request under way holds its body (up to 1 MiB) and, for a batch, up to 1,000 answers; 40 pool
    # threads answer at once, the rest queue.
    max_in_flight: int = 256
    # A question of 2,000 characters is at most 18 KB percent-encoded in the URL.
    max_header_bytes: int = 64 * 1024

    def json_obj(self) -> dict[str, Any]:
        return asdict(self)


LIMITS = Limits()
# Told of each refusal this layer writes (its whole response, which carries an X-Request-Id, and what the parser
# found wrong with a request it could not read), for the metrics and the access log (indexer.service.access_log);
# None: no one listens.
REFUSED: Callable[[bytes, str | None], None] | None = None


def configure(limits: Limits) -> None:
    """The limits every connection of this process is held to from now on."""
    global LIMITS
    LIMITS = limits


def open_files_for(limits: Limits) -> Limits:
    """`limits` with its connection bound settled, once the process's open-file limit is raised to its hard
    limit (as Go's runtime does): the default bound is DEFAULT_CONNECTIONS or what the files allow beside
    the reserve; a bound asked for that they cannot hold is BadInput."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = (limits.max_connections or DEFAULT_CONNECTIONS) + RESERVED_FILES
    target = hard if hard != resource.RLIM_INFINITY else max(soft, wanted)
    if soft != resource.RLIM_INFINITY and target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    room = max(soft - RESERVED_FILES, 1) if soft != resource.RLIM_INFINITY else DEFAULT_CONNECTIONS
    if limits.max_connections is None:
        return replace(limits, max_connections=min(DEFAULT_CONNECTIONS, room))
    if limits.max_connections > room:
        raise BadInput(
            f"--max-connections {limits.max_connections:,} needs {limits.max_connections + RESERVED_FILES:,} "
            f"open files; this process may open {soft:,}",
            hint=f"use --max-connections {room:,} or less, or raise `ulimit -n`",
        )
    return limits


def _response(status: int, reason: str, error: str, hint: str, retry_after: int | None = None) -> bytes:
    """A whole HTTP/1.1 response that closes its connection, with the service's JSON refusal."""
    body = dumps(ErrorOut(error=error, hint=hint).json_obj()).encode("utf-8")
    headers = [
        f"HTTP/1.1 {status} {reason}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
        f"x-request-id: {uuid.uuid4().hex}",  # the access log's line of the refusal names it too
    ]
    if retry_after is not None:
        headers.append(f"retry-after: {retry_after}")
    return ("\r\n".join(headers) + "\r\n\r\n").encode("ascii") + body


class _Waiting:
    """The connections of one server waiting for a request's headers, in the order they are let go past
    the bound: those that sent part of a request's headers and not the rest (a normal client sends them in
    one packet: this is what a slowloris does), oldest first; then those silent since they were accepted
    over GRACE seconds ago; then kept-alive ones idle between requests (a client that was answered before).
    A connection accepted less than GRACE ago, silent, is never let go for another: it has not had its turn.

    Not simply the oldest never-answered first, as before: under a slowloris whose connections come back
    as soon as they are let go, the server accepts hundreds of connections in one turn of its event loop,
    before it reads what any of them sent; each took the place of one accepted just before it, a normal
    client's among them, silent only because it had not been read yet. The bounded slowloris test of
    tests/integration/test_serve_limits.py got "Server disconnected without sending a response" for every
    normal request (benchmarks/RESULTS.md, "Slow clients")."""

    def __init__(self) -> None:
        self.partial: OrderedDict[GuardedProtocol, None] = OrderedDict()
        self.new: OrderedDict[GuardedProtocol, float] = OrderedDict()  # when each was accepted
        self.kept: OrderedDict[GuardedProtocol, None] = OrderedDict()

    def enter(self, connection: GuardedProtocol, kept: bool, now: float) -> None:
        self.leave(connection)
        if kept:
            self.kept[connection] = None
        else:
            self.new[connection] = now

    def began(self, connection: GuardedProtocol) -> None:
        """`connection` sent the first bytes of a request's headers and not the last."""
        if connection not in self.partial:
            self.leave(connection)
            self.partial[connection] = None

    def leave(self, connection: GuardedProtocol) -> None:
        self.partial.pop(connection, None)
        self.new.pop(connection, None)
        self.kept.pop(connection, None)

    def oldest(self, now: float) -> GuardedProtocol | None:
        """The connection to let go for a new one, or None when none may be."""
        if self.partial:
            return next(iter(self.partial))
        if self.new:
            connection, accepted = next(iter(self.new.items()))
            if now - accepted >= GRACE:
                return connection
        if self.kept:
            return next(iter(self.kept))
        return None


# One registry per uvicorn server (its ServerState), dropped with it.
_WAITING: weakref.WeakKeyDictionary[Any, _Waiting] = weakref.WeakKeyDictionary()


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with header and body timeouts, a header size bound, a bound on open
    connections, and a stop that does not wait for bodies still coming (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = LIMITS
        self.waiting = _WAITING.setdefault(self.server_state, _Waiting())
        self.header_timer: asyncio.TimerHandle | None = None
        self.body_timer: asyncio.TimerHandle | None = None
        self.header_bytes = 0
        self.awaiting_headers = False
        self.awaiting_body = False
        self.refused = False

    # -- connections --------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        bound = self.limits.max_connections or DEFAULT_CONNECTIONS
        if len(self.connections) > bound:
            oldest = self.waiting.oldest(self.loop.time())
            if oldest is None:
                self._refuse(
                    _response(
                        503,
                        "Service Unavailable",
                        f"lawindex serve holds {bound:,} connections and none can be let go: "
                        "each has a request under way "
                        f"or was accepted less than {GRACE:g} s ago",
                        f"retry after {RETRY_AFTER} s",
                        RETRY_AFTER,
                    )
                )
                return
            oldest._refuse(None)
        self._await_headers(kept=False)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timers()
        self.waiting.leave(self)
        super().connection_lost(exc)

    def _refuse(self, response: bytes | None, detail: str | None = None) -> None:
        """Close this connection now, after `response` if any; it no longer counts against the bound."""
        self.refused = True
        if response is not None and REFUSED is not None:
            REFUSED(response, detail)
        self._stop_timers()
        self.waiting.leave(self)
        self.connections.discard(self)
        if not self.transport.is_closing():
            if response is None:
                self.transport.close()
                return
            self.transport.write(response)
            if not self.transport.can_write_eof():
                self.transport.close()
                return
            self.transport.write_eof()  # the answer, then our end shut: what the client sends is read and dropped
            self.loop.call_later(LINGER, self.transport.close)

    def _stop_timers(self) -> None:
        for timer in (self.header_timer, self.body_timer):
            if timer is not None:
                timer.cancel()
        self.header_timer = self.body_timer = None

    # -- the headers --------------------------------------------------------------------------------

    def _await_headers(self, kept: bool) -> None:
        self.awaiting_headers = True
        self.header_bytes = 0
        self.waiting.enter(self, kept, self.loop.time())
        if self.header_timer is not None:
            self.header_timer.cancel()
        self.header_timer = self.loop.call_later(self.limits.header_timeout, self._headers_late)

    def _headers_late(self) -> None:
        self.header_timer = None
        if self.header_bytes == 0:
            self._refuse(None)  # nothing was asked: closed, as an idle kept-alive connection is
            return
        self._refuse(
            _response(
                408,
                "Request Timeout",
                f"the request's headers did not arrive within {self.limits.header_timeout:g} s",
                "send the whole request at once",
            )
        )

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return
        if self.awaiting_headers:
            self.header_bytes += len(data)
        super().data_received(data)
        if self.refused:  # not HTTP (send_400_response): answered and closed
            return
        if self.awaiting_headers and self.header_bytes > self.limits.max_header_bytes:
            self._refuse(
                _response(
                    431,
                    "Request Header Fields Too Large",
                    f"the request's headers are over {self.limits.max_header_bytes:,} bytes",
                    "ask a question of at most 2,000 characters",
                )
            )
        elif self.awaiting_headers and self.header_bytes > 0 and not self.transport.is_closing():
            self.waiting.began(self)
        elif self.awaiting_body and self.body_timer is None and not self.transport.is_closing():
            self.body_timer = self.loop.call_later(self.limits.body_timeout, self._body_late)

    def send_400_response(self, msg: str) -> None:
        """A request the parser could not read (a bare CR or LF, an obs-fold, a NUL in a header): 400 and closed,
        as uvicorn answers it, and told with the parser's reason and a request id; uvicorn's own line for it
        ("Invalid HTTP request received.") says neither. uvicorn calls this in its `except HttpParserError`."""
        error = sys.exc_info()[1]
        detail = str(error) if error is not None and str(error) else msg
        self._refuse(
            _response(400, "Bad Request", f"not a valid HTTP request: {detail}", "send a well-formed HTTP/1.1 request"),
            detail,
        )

    def on_headers_complete(self) -> None:
        self.awaiting_headers = False
        self.awaiting_body = True  # until on_message_complete, which a request without a body calls at once
        self.waiting.leave(self)
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None
        super().on_headers_complete()

    # -- the body -----------------------------------------------------------------------------------

    def on_message_complete(self) -> None:
        self.awaiting_body = False
        if self.body_timer is not None:
            self.body_timer.cancel()
            self.body_timer = None
        super().on_message_complete()

    def _body_late(self) -> None:
        self.body_timer = None
        started = self.cycle is not None and self.cycle.response_started
        self._refuse(
            None
            if started
            else _response(
                408,
                "Request Timeout",
                f"the request's body did not arrive within {self.limits.body_timeout:g} s",
                "send the whole request at once",
            )
        )

    # -- between requests, and at the end -----------------------------------------------------------

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # uvicorn armed its keep-alive timer: nothing is pipelined, the connection waits for a request.
        if self.timeout_keep_alive_task is not None and not self.transport.is_closing():
            self._await_headers(kept=True)

    def shutdown(self) -> None:
        if self.awaiting_body and self.cycle is not None and not self.cycle.response_started:
            # Its body is still coming: it would hold the stop for the whole grace period, then be cancelled
            # with a traceback. It cannot be answered; closed now, the app sees the client gone.
            self._refuse(None)
            return
        super().shutdown()


Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


class InFlight:
    """ASGI: at most `limit` HTTP requests under way in this process; past it, 503 with Retry-After.

    A request counts only once its body is in (body_limit.BodyLimit reads it, within its bound, outside this
    one): a body still arriving is the body timeout's to end, not work. When bodies being read counted,
    300 POSTs whose bodies never finished held 256 places each until the 30 s body timeout, and every normal
    request of the next 15 s was answered 503 (15 of 15; 1,500 of them: 31 of 35 over 35 s)."""

    def __init__(self, app: Callable[..., Awaitable[None]], limit: int) -> None:
        self.app = app
        self.limit = limit
        self.under_way = 0

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.under_way >= self.limit:
            refusal = ErrorOut(
                error=f"lawindex serve has {self.limit:,} requests under way", hint=f"retry after {RETRY_AFTER} s"
            )
            body = dumps(refusal.json_obj()).encode("utf-8")
            await send(
                {
                    "type": "http.response.start",
                    "status": 503,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"retry-after", str(RETRY_AFTER).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        self.under_way += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.under_way -= 1
