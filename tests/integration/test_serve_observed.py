"""What `lawindex serve` tells an operator, on a real OpenSearch: `/metrics` read by Prometheus's own parser
under concurrent load, its counts equal to the requests sent (two workers, so that the multiprocess files
are what is added up), and the JSON access log, a line a request, matched to the requests by their ids."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from indexer.retrieval.corpus import read_corpora
from tests.integration.serving import free_port, loaded, running
from tests.integration.support import LAWINDEX

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
ROUTE = "/v1/states/{state}/ask"
# (state, question): each asked by every thread; an empty question is a 200 with no laws.
ASKED = [
    ("TX", "how far from a fire hydrant can i park"),
    ("MD", "when do i have to stop for a school bus"),
    ("AL", "how far must i be behing a firehydrant"),
    ("TX", ""),
]
THREADS = 6
ROUNDS = 5


@pytest.fixture(scope="module")
def env(opensearch_url: str) -> Iterator[dict[str, str]]:
    with loaded(opensearch_url, read_corpora(CORPORA, ["TX", "MD", "AL"])) as env:
        yield env


def _samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Each sample of the exposition by its name, through prometheus_client's own parser."""
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return found


def _ask_concurrently(url: str, ids: bool) -> Counter[tuple[str, str, str, int]]:
    """THREADS threads, each asking every ASKED question ROUNDS times, a bad state code and a batch each
    round; the (route, state, way, status) of every request sent, counted as the client saw it."""
    sent: Counter[tuple[str, str, str, int]] = Counter()
    guard = threading.Lock()
    failures: list[BaseException] = []

    def asker(number: int) -> None:
        try:
            with httpx.Client(base_url=url, timeout=60) as client:
                for round_ in range(ROUNDS):
                    for state, question in ASKED:
                        headers = {"X-Request-Id": f"t{number}-r{round_}-{state}-{len(question)}"} if ids else {}
                        status = client.get(f"/v1/states/{state}/ask", params={"q": question}, headers=headers)
                        with guard:
                            sent[(ROUTE, state, "words", status.status_code)] += 1
                    bad = client.get("/v1/states/ZZ/ask", params={"q": "park"})
                    batch = client.post("/v1/states/MD/ask", json={"questions": ["school bus", "park", "hydrant"]})
                    with guard:
                        sent[(ROUTE, "", "words", bad.status_code)] += 1
                        sent[(ROUTE, "MD", "words", batch.status_code)] += 1
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=asker, args=(number,)) for number in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not failures, failures
    return sent


def test_metrics_add_up_to_the_requests_sent(env: dict[str, str]) -> None:
    with running(env, "--workers", "2", ready="/readyz") as service:
        sent = _ask_concurrently(service.url, ids=False)
        scraped = httpx.get(service.url + "/metrics", timeout=60)
        assert scraped.status_code == 200
        assert scraped.headers["content-type"].startswith("text/plain")
        samples = _samples(scraped.text)
    counted = Counter(
        {
            (labels["route"], labels["state"], labels["way"], int(labels["status"])): int(value)
            for labels, value in samples["lawindex_requests_total"]
            if labels["route"] == ROUTE
        }
    )
    # /readyz was polled while the service started: not an ask, left out above.
    assert counted == sent
    assert sent[(ROUTE, "", "words", 400)] == THREADS * ROUNDS
    # Every answer counted by its path: one per GET that answered, three per batch.
    answers = sum(value for _, value in samples["lawindex_answers_total"])
    gets = sum(count for (_, state, _, status), count in sent.items() if state != "" and status == 200)
    batches = THREADS * ROUNDS
    assert answers == gets - batches + 3 * batches
    assert {labels["path"] for labels, _ in samples["lawindex_answers_total"]} <= {
        "plugin",
        "window",
        "widened",
        "reference",
    }
    # The end-to-end histogram saw each request once, and no request is under way but the scrape.
    seconds = {labels["route"]: value for labels, value in samples["lawindex_request_seconds_count"]}
    assert seconds[ROUTE] == sum(sent.values())
    assert [value for _, value in samples["lawindex_in_flight"]] == [1.0]
    assert sum(value for _, value in samples["lawindex_opensearch_seconds_count"]) > 0
    ages = {labels["state"]: value for labels, value in samples["lawindex_generation_age_seconds"]}
    assert set(ages) == {"TX", "MD", "AL"} and all(age >= 0 for age in ages.values())


@contextmanager
def logging_service(env: dict[str, str], directory: Path, *args: str) -> Iterator[tuple[str, Path]]:
    """`lawindex serve --log-format json ARGS`, its stderr into a file (a pipe nobody reads while it runs
    would fill at 64 KiB, some 180 lines, and hold the service in its write); (its URL, the file)."""
    log = directory / "serve.log"
    port = free_port()
    with log.open("wb") as err:
        process = subprocess.Popen(
            [*LAWINDEX, "serve", "--port", str(port), "--log-format", "json", *args],
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()
            try:
                if httpx.get(url + "/readyz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield url, log
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0, log.read_text()


def _lines(log: Path) -> list[dict[str, Any]]:
    """Every line of the service's stderr, each one JSON object (`--log-format json`: no line may be other)."""
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert all(isinstance(line, dict) for line in lines)
    return lines


# Requests uvicorn's parser refuses (400, closed), each sent raw on a connection of its own.
NOT_HTTP = {
    "a bare CR": b"GET /healthz HTTP/1.1\rHost: x\r\n\r\n",
    "a bare LF": b"GET /healthz HTTP/1.1\nHost: x\n\n",
    "an obs-fold": b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n",
    "a NUL in a header": b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n",
    "a TLS hello": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
}


def _raw(url: str, request: bytes) -> bytes:
    """What the service answers to `request` sent as it is, until it closes the connection."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize("workers", ["1", "2"])
def test_every_line_on_stderr_is_one_json_object(env: dict[str, str], tmp_path: Path, workers: str) -> None:
    """The banner, uvicorn's start and stop, the requests, and each request uvicorn's parser refuses (with its
    reason and the request id its 400 carries): every line on stderr is one JSON object."""
    with logging_service(env, tmp_path, "--workers", workers) as (url, log):
        ids = {}
        for name, request in NOT_HTTP.items():
            answer = _raw(url, request)
            assert answer.startswith(b"HTTP/1.1 400 "), (name, answer)
            ids[name] = re.search(rb"\r\nx-request-id: ([0-9a-f]{32})\r\n", answer).group(1).decode()  # type: ignore[union-attr]
        assert httpx.get(url + "/v1/states/TX/ask", params={"q": "hydrant"}).status_code == 200
    lines = _lines(log)
    assert lines[0]["level"] == "info" and lines[0]["message"].startswith("lawindex serve: http://127.0.0.1:")
    assert lines[0]["workers"] == int(workers)
    messages = [line.get("message", "") for line in lines]
    assert any(message.startswith("Uvicorn running on") for message in messages)
    assert sum(message.startswith("Finished server process") for message in messages) == int(workers)
    refused = {line["request_id"]: line for line in lines if line.get("refused") == "invalid_request"}
    assert set(refused) == set(ids.values())
    for name, request_id in ids.items():
        assert refused[request_id]["status"] == 400 and refused[request_id]["detail"], name
    assert "Invalid HTTP request received." not in log.read_text()
    assert [line["status"] for line in lines if line.get("route") == ROUTE] == [200]


def test_json_log_a_line_a_request(env: dict[str, str], tmp_path: Path) -> None:
    with logging_service(env, tmp_path) as (url, log):
        sent = _ask_concurrently(url, ids=True)
        echoed = httpx.get(url + "/v1/states/TX/ask", params={"q": "hydrant"}, headers={"X-Request-Id": "mine-1"})
        made = httpx.get(url + "/v1/states/TX/ask", params={"q": "hydrant"})
    assert echoed.headers["x-request-id"] == "mine-1"
    assert len(made.headers["x-request-id"]) == 32
    lines = _lines(log)
    asks = [line for line in lines if line.get("route") == ROUTE]
    assert len(asks) == sum(sent.values()) + 2
    logged = Counter((line["route"], line["state"], line["way"], line["status"]) for line in asks)
    sent[(ROUTE, "TX", "words", 200)] += 2
    assert logged == sent
    by_id = {line["request_id"]: line for line in asks}
    assert len(by_id) == len(asks)  # every id its own
    for number in range(THREADS):
        for round_ in range(ROUNDS):
            for state, question in ASKED:
                line = by_id[f"t{number}-r{round_}-{state}-{len(question)}"]
                assert line["state"] == state and line["status"] == 200
                assert line["path"] in ("plugin", "window", "widened")
                assert line["seconds"] >= line["opensearch_seconds"] > 0
    assert by_id["mine-1"]["path"] in ("plugin", "window", "widened")
    assert by_id[made.headers["x-request-id"]]["windows"]
    # No learner's text unless asked for.
    assert not any("question" in line for line in lines)
    assert "hydrant" not in log.read_text()


def test_log_questions_only_when_asked(env: dict[str, str], tmp_path: Path) -> None:
    with logging_service(env, tmp_path, "--log-questions") as (url, log):
        httpx.get(url + "/v1/states/TX/ask", params={"q": "fire hydrant"}, headers={"X-Request-Id": "q-1"})
        httpx.post(url + "/v1/states/TX/ask", json={"questions": ["park", "bus"]}, headers={"X-Request-Id": "q-2"})
    lines = {line["request_id"]: line for line in _lines(log) if "request_id" in line}  # not uvicorn's own
    assert lines["q-1"]["question"] == "fire hydrant"
    assert lines["q-2"]["question"] == ["park", "bus"]
    assert lines["q-2"]["path"] and len(lines["q-2"]["windows"]) == 2
