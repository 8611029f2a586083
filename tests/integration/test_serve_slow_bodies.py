"""`lawindex serve` beside slow request bodies (issue 26): a request whose body is still arriving takes no
place among the requests in flight, so normal clients are answered beside thousands of them, at once and
without a retry, and the slow ones are answered 408 and closed at the body timeout.

Before: 300 POSTs whose bodies never finished held the service's 256 places until the 30 s body timeout,
and every normal request of the next 15 s was answered 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from indexer.retrieval.corpus import read_corpora
from tests.integration.serving import in_parallel, loaded, more_files, reopened, running

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
ASK = "/v1/states/TX/ask?q=how+far+from+a+fire+hydrant+can+i+park"
# Headers whole, then a body that never finishes: 1,000 bytes announced, 15 sent.
SLOW_BODY = (
    b"POST /v1/states/TX/ask HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
    b'content-length: 1000\r\n\r\n{"questions": ['
)
SLOW_BODIES = 1000  # past the 256 places in flight four times over
NORMAL_CLIENTS = 4
QUESTIONS = 40


@pytest.fixture(scope="module")
def env(opensearch_url: str) -> Iterator[dict[str, str]]:
    with loaded(opensearch_url, read_corpora(CORPORA, ["TX"])) as env:
        yield env


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _read_all(sock: socket.socket) -> bytes:
    got = b""
    with contextlib.suppress(ConnectionResetError, TimeoutError):
        while chunk := sock.recv(65536):
            got += chunk
    return got


def test_slow_bodies_take_no_place_in_flight_and_are_closed_at_the_body_timeout(env: dict[str, str]) -> None:
    with running(env, "--max-in-flight", "2", "--body-timeout", "3") as service:
        slow = [socket.create_connection(("127.0.0.1", _port(service.url)), timeout=30) for _ in range(20)]
        for sock in slow:
            sock.sendall(SLOW_BODY)
        time.sleep(1)
        # Ten times the places in flight are bodies still arriving: a normal request is answered.
        answered = [httpx.get(service.url + ASK, timeout=10) for _ in range(5)]
        assert [response.status_code for response in answered] == [200] * 5, answered[0].text
        # At the body timeout each slow one is answered 408 and closed.
        for sock in slow:
            answer = _read_all(sock)
            assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
            assert b"the request's body did not arrive within 3 s" in answer
            sock.close()


def test_a_request_whose_body_is_in_still_counts_in_flight(env: dict[str, str]) -> None:
    """The bound itself holds: requests under way (waiting on an OpenSearch that never answers) take the
    places, and the next is answered 503 with Retry-After until one ends."""
    silent = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def hold() -> None:
        silent.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(silent.accept()[0])

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    mute = {**env, "OPENSEARCH_URL": f"http://127.0.0.1:{silent.getsockname()[1]}"}
    try:
        with running(mute, "--max-in-flight", "2", "--timeout", "60") as service, ThreadPoolExecutor(2) as pool:
            waiting = [pool.submit(httpx.get, service.url + ASK, timeout=90) for _ in range(2)]
            # The two first questions of a state share one fetch (test_first_questions), so the silent
            # OpenSearch sees one connection, not two: waiting for a second one ran out its 30 s bound on
            # every run. What the test needs is both requests under way: the service says so itself, by
            # refusing the next one (a /healthz answered 200 meanwhile took a place and gave it back).
            deadline = time.monotonic() + 60
            while not held and time.monotonic() < deadline:
                time.sleep(0.05)
            assert held, "the service never asked the silent OpenSearch within 60 s"
            refused = httpx.get(service.url + "/healthz", timeout=10)
            while refused.status_code == 200 and time.monotonic() < deadline:
                time.sleep(0.05)
                refused = httpx.get(service.url + "/healthz", timeout=10)
            assert (refused.status_code, refused.headers.get("retry-after")) == (503, "1"), refused.text
            assert refused.json() == {"error": "lawindex serve has 2 requests under way", "hint": "retry after 1 s"}
            stop.set()
            for sock in held:
                sock.close()  # OpenSearch "goes away": the two requests end, and their places are free
            silent.close()
            assert all(future.result().status_code >= 500 for future in waiting)
            assert httpx.get(service.url + "/healthz", timeout=10).status_code == 200
    finally:
        stop.set()
        silent.close()
        for sock in held:
            sock.close()


def test_thousands_of_slow_bodies_leave_normal_clients_answered_without_a_retry(env: dict[str, str]) -> None:
    with running(env, "--body-timeout", "5") as service:
        port = _port(service.url)
        context = multiprocessing.get_context("fork")
        timed_out = context.Value("q", 0)
        opened = context.Value("q", 0)
        stop = context.Event()
        bodies = context.Process(target=_slow_bodies, args=(port, opened, timed_out, stop), daemon=True)
        bodies.start()
        try:
            deadline = time.monotonic() + 60
            while opened.value < SLOW_BODIES and time.monotonic() < deadline:
                time.sleep(0.2)
            assert opened.value >= SLOW_BODIES
            with ThreadPoolExecutor(NORMAL_CLIENTS) as pool:
                asking = [pool.submit(_normal_client, port, number % 2 == 0) for number in range(NORMAL_CLIENTS)]
                answers = [client.result() for client in asking]
            # Past the body timeout (5 s) the first slow bodies were answered 408 and closed.
            deadline = time.monotonic() + 30
            while timed_out.value < SLOW_BODIES and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            stop.set()
            bodies.join(20)
            if bodies.is_alive():
                bodies.kill()
    errors = [answer for got in answers for answer in got if answer != "200"]
    assert errors == [], errors[:5]
    assert sum(len(got) for got in answers) == NORMAL_CLIENTS * QUESTIONS
    assert timed_out.value >= SLOW_BODIES


def _normal_client(port: int, keep: bool) -> list[str]:
    """QUESTIONS questions, on one kept-alive connection or a connection each, never asked again: each
    answer's status, or what it met instead."""
    got: list[str] = []
    with httpx.Client(limits=httpx.Limits(max_keepalive_connections=1 if keep else 0), timeout=10) as client:
        for _ in range(QUESTIONS):
            try:
                response = client.get(f"http://127.0.0.1:{port}{ASK}")
                got.append("200" if response.status_code == 200 else f"{response.status_code} {response.text}")
            except httpx.HTTPError as error:
                got.append(repr(error))
    return got


def _slow_bodies(port: int, opened: Any, timed_out: Any, stop: Any) -> None:
    """In its own process, until `stop`: SLOW_BODIES requests whose bodies trickle (a byte a second), each
    opened again when the service closes it; `timed_out` counts the 408s."""
    more_files()

    async def slow() -> None:
        while (connected := await reopened(port, stop)) is not None:
            reader, writer = connected
            with opened.get_lock():
                opened.value += 1
            try:
                writer.write(SLOW_BODY)
                while not stop.is_set():
                    with contextlib.suppress(TimeoutError):
                        answer = await asyncio.wait_for(reader.read(4096), 1)
                        if answer.startswith(b"HTTP/1.1 408 "):
                            with timed_out.get_lock():
                                timed_out.value += 1
                        break
                    writer.write(b" ")
            except OSError:
                pass
            finally:
                writer.close()

    in_parallel(slow, SLOW_BODIES, stop)
