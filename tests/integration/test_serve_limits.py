"""`lawindex serve` against slow and many clients (indexer/service/client_limits.py): each limit, a slowloris of
thousands of connections beside normal clients, and SIGTERM with slow clients connected.

Raw sockets stand for the slow clients: no HTTP client sends half a request on purpose.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from indexer.retrieval.corpus import read_corpora
from tests.integration.serving import Service, in_parallel, loaded, more_files, reopened, running, start

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
ASK = "/v1/states/TX/ask?q=how+far+from+a+fire+hydrant+can+i+park"
SLOW_BODY = (
    b"POST /v1/states/TX/ask HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
    b'content-length: 1000\r\n\r\n{"questions": ['
)


@pytest.fixture(scope="module")
def env(opensearch_url: str) -> Iterator[dict[str, str]]:
    with loaded(opensearch_url, read_corpora(CORPORA, ["TX"])) as env:
        yield env


def _connect(service: Service) -> socket.socket:
    host, port = service.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (30 s at most)."""
    got = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            got += chunk
    return got


def test_headers_that_never_end_are_answered_408_and_closed(env: dict[str, str]) -> None:
    with running(env, "--header-timeout", "1") as service:
        sock = _connect(service)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        sock.settimeout(0.3)
        answer = b""
        # A header line every 0.3 s: each byte would have reset a timeout of idleness; this one is the whole.
        for _ in range(100):
            try:
                sock.sendall(b"X-Slow: 1\r\n")
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
            answer += chunk
            if not chunk:
                break
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), answer
        assert b"connection: close" in head
        late = b"the request's headers did not arrive within 1 s"
        assert body == b'{"error": "' + late + b'", "hint": "send the whole request at once"}'
        # And the service answers the next client as ever.
        assert httpx.get(service.url + "/healthz").status_code == 200


def test_a_connection_that_sends_nothing_is_closed(env: dict[str, str]) -> None:
    with running(env, "--header-timeout", "1") as service:
        assert _read_all(_connect(service)) == b""


def test_a_body_that_never_ends_is_answered_408(env: dict[str, str]) -> None:
    with running(env, "--body-timeout", "1") as service:
        sock = _connect(service)
        sock.sendall(SLOW_BODY)
        head, _, body = _read_all(sock).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), head
        assert b"the request's body did not arrive within 1 s" in body


def test_headers_past_64_kib_are_answered_431(env: dict[str, str]) -> None:
    with running(env) as service:
        sock = _connect(service)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            for _ in range(100):
                sock.sendall(b"X-Big: " + b"y" * 1000 + b"\r\n")
        head, _, body = _read_all(sock).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 431 "), head
        assert b"the request's headers are over 65,536 bytes" in body


def test_past_the_connection_bound_the_oldest_silent_one_goes(env: dict[str, str]) -> None:
    with running(env, "--max-connections", "20") as service:
        silent = [_connect(service) for _ in range(20)]
        time.sleep(1.5)  # accepted by the server, and over its 1 s of grace
        answered = httpx.get(service.url + ASK, timeout=30)
        assert answered.status_code == 200
        # The oldest silent one made room; the youngest still waits (its header timeout is 10 s).
        assert _read_all(silent[0]) == b""
        silent[-1].settimeout(0.5)
        with pytest.raises(TimeoutError):
            silent[-1].recv(1)


def test_past_the_connection_bound_a_half_sent_request_goes_before_a_silent_one(env: dict[str, str]) -> None:
    with running(env, "--max-connections", "20") as service:
        silent = [_connect(service) for _ in range(10)]
        time.sleep(1.5)
        half = [_connect(service) for _ in range(10)]
        for sock in half:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        time.sleep(0.5)
        assert httpx.get(service.url + ASK, timeout=30).status_code == 200
        # The oldest half-sent one made room, though every silent one is older.
        assert _read_all(half[0]) == b""
        for sock in (silent[0], half[1]):
            sock.settimeout(0.5)
            with pytest.raises(TimeoutError):
                sock.recv(1)


def test_with_every_connection_busy_a_new_one_is_answered_503_with_retry_after(env: dict[str, str]) -> None:
    with running(env, "--max-connections", "3") as service:
        busy = [_connect(service) for _ in range(3)]
        for sock in busy:
            sock.sendall(SLOW_BODY)
        time.sleep(1)
        head, _, body = _read_all(_connect(service)).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 "), head
        assert b"retry-after: 1" in head
        assert b"lawindex serve holds 3 connections and none can be let go: each has a request under way" in body


# The bound on requests in flight, and slow bodies beside it: tests/integration/test_serve_slow_bodies.py.


def test_sigterm_with_slow_clients_connected_exits_at_once_without_tracebacks(env: dict[str, str]) -> None:
    service = start(env)
    slow = [_connect(service) for _ in range(300)]
    for number, sock in enumerate(slow):
        sock.sendall(SLOW_BODY if number % 3 == 0 else b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    time.sleep(2)
    service.process.send_signal(signal.SIGTERM)
    # The grace period is 30 s; a request whose body is still coming no longer waits for it (before: the
    # whole 30 s, then 100 "Exception in ASGI application" tracebacks).
    code = service.stop(timeout=15, signalled=True)
    assert code == 0, service.log
    assert "Traceback" not in service.log and "Exception in ASGI application" not in service.log, service.log
    for sock in slow:
        sock.close()


def test_a_slowloris_of_thousands_leaves_normal_clients_answered(env: dict[str, str]) -> None:
    with running(env, "--max-connections", str(BOUND)) as service:
        port = int(service.url.rsplit(":", 1)[1])
        # The slowloris in a process of its own: on the normal clients' event loop, its 2,000 connections
        # delayed their requests by seconds after they connected, so they were no normal clients.
        context = multiprocessing.get_context("fork")
        let_go = context.Value("q", 0)
        stop = context.Event()
        slowloris = context.Process(target=_slowloris, args=(port, let_go, stop), daemon=True)
        slowloris.start()
        files: list[int] = []
        try:
            time.sleep(3)
            with ThreadPoolExecutor(NORMAL_CLIENTS + 1) as pool:
                asking = [pool.submit(_normal_client, port, number % 2 == 0) for number in range(NORMAL_CLIENTS)]
                while not all(client.done() for client in asking):
                    files.append(len(os.listdir(f"/proc/{service.process.pid}/fd")))
                    time.sleep(0.2)
                answers = [client.result() for client in asking]
        finally:
            stop.set()
            slowloris.join(20)
            if slowloris.is_alive():
                slowloris.kill()
    assert [len(got) for got in answers] == [QUESTIONS] * NORMAL_CLIENTS
    errors = [answer for got in answers for answer in got if answer != "200"]
    assert errors == [], errors[:5]
    # The slowloris filled the bound (the service had its connections open), the service let some of it go
    # to make room, and the bound held (never the 2,000 open at once).
    assert let_go.value > 0
    assert BOUND * 0.9 < max(files) < BOUND + 256, files


BOUND = 1000
SLOWLORIS = 2000
NORMAL_CLIENTS = 4
QUESTIONS = 40
RETRIES = 3  # a 503's Retry-After honoured this many times


def _normal_client(port: int, keep: bool) -> list[str]:
    """QUESTIONS questions, on one kept-alive connection or a connection each: each answer's status, or
    the error it met, within 10 s. A client as the service's contract asks for (and the TypeScript client's
    `Unavailable.retryAfter` offers): a 503 with Retry-After is asked again after it, up to RETRIES times,
    since past the connection bound a new connection can meet only slowloris connections accepted in the
    same second, none of which the service may take for idle."""
    limits = httpx.Limits(max_keepalive_connections=1 if keep else 0)
    got: list[str] = []
    with httpx.Client(limits=limits, timeout=10) as client:
        kept = False  # the connection the next request goes on was kept alive after an answer
        for _ in range(QUESTIONS):
            for attempt in range(RETRIES + 2):
                reused, kept = kept, False
                try:
                    response = client.get(f"http://127.0.0.1:{port}{ASK}")
                except (httpx.RemoteProtocolError, httpx.ReadError) as error:
                    # An idle kept-alive connection may be let go for a new one (docs/serve-limits.md):
                    # a GET on it is sent again on a new connection, as HTTP clients do. Only then: a new
                    # connection closed unanswered is an error.
                    answer = repr(error)
                    if reused:
                        continue
                    break
                except httpx.HTTPError as error:
                    answer = repr(error)
                    break
                kept = keep and response.status_code == 200
                answer = str(response.status_code) if response.status_code == 200 else response.text
                after = response.headers.get("retry-after")
                if response.status_code != 503 or after is None or attempt == RETRIES:
                    break
                time.sleep(float(after))
            got.append(answer)
    return got


def _slowloris(port: int, let_go: Any, stop: Any) -> None:
    """In its own process, until `stop`: SLOWLORIS connections that never finish their headers (a header
    line every 2 s), each opened again at once when the service lets it go."""
    more_files()

    async def slow() -> None:
        while (connected := await reopened(port, stop)) is not None:
            reader, writer = connected
            try:
                writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                while not stop.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(reader.read(4096), 2)
                        break  # the service let it go: open another
                    writer.write(b"X-Slow: 1\r\n")
            except OSError:
                pass
            finally:
                writer.close()
            with let_go.get_lock():
                let_go.value += 1

    in_parallel(slow, SLOWLORIS, stop)
