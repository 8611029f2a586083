"""`lawindex serve` on a real OpenSearch, as its own process: the CLI's `--json`, byte for byte, over HTTP;
the error table; SIGTERM drains the requests in flight and exits 0."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from indexer.cli import app
from indexer.retrieval.corpus import read_corpora
from tests.integration.serving import Service, loaded, running, start
from tests.integration.support import SAMPLE_QUESTIONS

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
STATES = sorted(path.stem for path in CORPORA.glob("*.jsonl"))
runner = CliRunner()

QUESTIONS = [
    *SAMPLE_QUESTIONS,
    "how can i do it",  # stopwords only: no laws
    "",
    "İstanbul PARKS near \u212aelvin hydrants",
    'parking "fire" AND hydrant* {"query": 1} \u0000\u001b',
]


@pytest.fixture(scope="module")
def env(opensearch_url: str) -> Iterator[dict[str, str]]:
    """The sample corpora loaded in a namespace of their own; the environment that reaches them."""
    with loaded(opensearch_url, read_corpora(CORPORA)) as env:
        yield env


@pytest.fixture(scope="module")
def service(env: dict[str, str]) -> Iterator[Service]:
    with running(env, ready="/readyz") as started:
        yield started


def cli(env: dict[str, str], *args: str) -> str:
    result = runner.invoke(app, list(args), env=env)
    assert result.exit_code == 0, result.stderr
    return result.stdout


_clients: dict[str, httpx.Client] = {}


def get(service: Service, path: str, **params: Any) -> httpx.Response:
    """GET on one kept-alive connection per service (a new connection a request costs more than the answer)."""
    if service.url not in _clients:
        _clients[service.url] = httpx.Client(base_url=service.url, timeout=60)
    return _clients[service.url].get(path, params=params)


# ---- the CLI's JSON, byte for byte ----------------------------------------------------------------------


@pytest.mark.parametrize("state", STATES)
def test_ask_returns_the_bytes_ask_json_prints(
    env: dict[str, str], service: Service, state: str, tmp_path: Path
) -> None:
    own = [json.loads(line)["question"] for line in (CORPORA / f"{state}.jsonl").read_text().splitlines()][:12]
    # `ask --from` prints each question's line exactly as `ask QUESTION` does (one process for them all).
    questions = [question for question in QUESTIONS + own if question.strip()]
    asked = tmp_path / "questions.txt"
    asked.write_text("".join(question + "\n" for question in questions), encoding="utf-8")
    for extra, params in (
        ([], {}),
        (["--explain"], {"explain": "true"}),
        (["--limit", "3"], {"limit": 3}),
        (["--limit", "100", "--explain"], {"limit": 100, "explain": "true"}),
    ):
        printed = cli(env, "ask", state, "--from", str(asked), "--json", *extra).splitlines(keepends=True)
        assert len(printed) == len(questions)
        for question, line in zip(questions, printed, strict=True):
            response = get(service, f"/v1/states/{state}/ask", q=question, **params)
            assert response.status_code == 200, response.text
            assert response.headers["content-type"] == "application/json"
            assert response.content + b"\n" == line.encode("utf-8"), (state, question, extra)
    for question in ("", "how can i do it"):  # no words: the one-question form, which answers a blank too
        response = get(service, f"/v1/states/{state}/ask", q=question)
        assert response.content + b"\n" == cli(env, "ask", state, question, "--json").encode("utf-8")


def test_the_plain_path_and_the_documented_route_answer_alike(service: Service) -> None:
    """A plain ask (`q`, `limit`, `explain=true|false`) is answered by fast_ask.FastAsk; any other spelling by
    the FastAPI route. Both must give the same bytes and the same refusals."""
    for state, question in (("TX", QUESTIONS[0]), ("AL", QUESTIONS[1]), ("ZZ", "x"), ("WY", "x"), ("TX", "a" * 2001)):
        for plain, routed in (
            ({"q": question}, {"q": question, "explain": "0"}),
            ({"q": question, "explain": "true"}, {"q": question, "explain": "1"}),
            ({"q": question, "limit": "3"}, {"q": question, "limit": "3", "explain": "no"}),
            ({"q": question, "limit": "0"}, {"q": question, "limit": "0", "explain": "off"}),
        ):
            one, two = (
                get(service, f"/v1/states/{state}/ask", **plain),
                get(service, f"/v1/states/{state}/ask", **routed),
            )
            assert (one.status_code, one.content) == (two.status_code, two.content), (state, plain)
            assert one.headers["content-type"] == two.headers["content-type"] == "application/json"


def test_a_lowercase_state_is_its_code(env: dict[str, str], service: Service) -> None:
    response = get(service, "/v1/states/md/ask", q="school bus")
    assert response.content + b"\n" == cli(env, "ask", "MD", "school bus", "--json").encode()


def test_law_and_family_are_what_get_and_family_print(env: dict[str, str], service: Service) -> None:
    for state in STATES:
        laws = [json.loads(line) for line in (CORPORA / f"{state}.jsonl").read_text().splitlines()]
        for law in laws[:3] + laws[-2:]:
            response = get(service, f"/v1/states/{state}/laws/{law['id']}")
            assert response.status_code == 200
            assert response.content + b"\n" == cli(env, "get", state, law["id"], "--json").encode()
            assert response.json() == law  # the corpus line itself: every field, none added
        for key in sorted({law["family"] for law in laws if law.get("family")}):
            response = get(service, f"/v1/states/{state}/families/{key}")
            assert response.status_code == 200
            body = response.json()
            printed = [json.loads(line) for line in cli(env, "ask", state, "--family", key, "--json").splitlines()]
            assert body == {"state": state, "family": key, "laws": printed}
            assert [law["id"] for law in body["laws"]] == [
                law["id"] for law in laws if law.get("family") == key and law["kind"] == "process"
            ]


def test_states_are_what_status_prints(env: dict[str, str], service: Service) -> None:
    printed = [json.loads(line) for line in cli(env, "status", "--json").splitlines()]
    body = get(service, "/v1/states").json()
    assert body == {"states": printed}
    assert [row["state"] for row in body["states"]] == STATES


def test_a_batch_is_each_answer_in_order_and_an_error_in_its_place(service: Service) -> None:
    questions = [*QUESTIONS[:4], "x" * 2001, *QUESTIONS[4:6]]
    response = httpx.post(service.url + "/v1/states/TX/ask", json={"questions": questions, "limit": 3}, timeout=30)
    assert response.status_code == 200
    answers = response.json()["answers"]
    assert len(answers) == len(questions)
    for question, answer in zip(questions, answers, strict=True):
        if len(question) > 2000:
            assert answer == {
                "error": "question: 2001 characters, more than the 2000 accepted",
                "hint": "ask a shorter question; it is not cut for you",
                "question": question,
                "status": 400,
            }
            continue
        assert answer == get(service, "/v1/states/TX/ask", q=question, limit=3).json()


def test_health_and_readiness(service: Service) -> None:
    assert get(service, "/healthz").json() == {"status": "ok"}
    assert get(service, "/readyz").json() == {"status": "ready", "states": len(STATES)}
    schema = get(service, "/openapi.json").json()
    assert set(schema["paths"]) == {
        "/healthz",
        "/readyz",
        "/v1/states",
        "/v1/states/{state}/ask",
        "/v1/states/{state}/families/{family}",
        "/v1/states/{state}/laws",
        "/v1/states/{state}/laws/{law_id}",
    }
    assert "422" not in json.dumps(schema["paths"])  # every refusal is 400 with {"error", "hint"}
    assert get(service, "/docs").status_code == 200


# ---- the error table -----------------------------------------------------------------------------------

NO_HINT = object()

ERRORS = [
    # (method, path, params or body, status, error, hint)
    ("GET", "/v1/states/ZZ/ask", {"q": "x"}, 400, "not a state code: 'ZZ'", "use a USPS code such as TX, MD or DC"),
    ("GET", "/v1/states/_all/ask", {"q": "x"}, 400, "not a state code: '_all'", "use a USPS code such as TX, MD or DC"),
    (
        "GET",
        "/v1/states/tx,md/ask",
        {"q": "x"},
        400,
        "not a state code: 'tx,md'",
        "use a USPS code such as TX, MD or DC",
    ),
    # An encoded slash is a slash by the time routes are matched: no endpoint has that path.
    (
        "GET",
        "/v1/states/..%2Fx/ask",
        {"q": "x"},
        404,
        "no such endpoint: /v1/states/../x/ask",
        "see /docs for the endpoints",
    ),
    ("GET", "/v1/states/TX%20/ask", {"q": "x"}, 400, "not a state code: 'TX '", "use a USPS code such as TX, MD or DC"),
    (
        "GET",
        "/v1/states/TX/ask",
        {"q": "a" * 2001},
        400,
        "question: 2001 characters, more than the 2000 accepted",
        "ask a shorter question; it is not cut for you",
    ),
    ("GET", "/v1/states/TX/ask", {"q": "x", "limit": 0}, 400, "limit: must be an integer from 1 to 100, not 0", None),
    (
        "GET",
        "/v1/states/TX/ask",
        {"q": "x", "limit": 101},
        400,
        "limit: must be an integer from 1 to 100, not 101",
        None,
    ),
    (
        "GET",
        "/v1/states/TX/ask",
        {"q": "x", "limit": "eight"},
        400,
        "limit: must be an integer from 1 to 100, not eight",
        None,
    ),
    ("GET", "/v1/states/TX/ask", {}, 400, "query parameter 'q': Field required", "see /docs for the parameters"),
    (
        "GET",
        "/v1/states/WY/ask",
        {"q": "fire hydrant"},
        404,
        "no index for WY: nothing is loaded under {alias}-wy",
        "load it with `lawindex load corpora --state WY`",
    ),
    (
        "GET",
        "/v1/states/WY/laws/WY-1",
        {},
        404,
        "no index for WY: nothing is loaded under {alias}-wy",
        "load it with `lawindex load corpora --state WY`",
    ),
    ("GET", "/v1/states/MD/laws/MD-S99", {}, 404, "MD has no law 'MD-S99'", None),
    ("GET", "/v1/states/PA/families/no-such-family", {}, 404, "PA has no family 'no-such-family'", None),
    ("GET", "/v1/nothing", {}, 404, "no such endpoint: /v1/nothing", "see /docs for the endpoints"),
    (
        "DELETE",
        "/v1/states/TX/ask",
        {},
        405,
        "DELETE /v1/states/TX/ask: Method Not Allowed",
        "see /docs for the endpoints",
    ),
    (
        "POST",
        "/v1/states/TX/ask",
        {"questions": ["x"], "limit": 0},
        400,
        "limit: must be an integer from 1 to 100, not 0",
        None,
    ),
    (
        "POST",
        "/v1/states/TX/ask",
        {"questions": "x"},
        400,
        "body 'questions': Input should be a valid list",
        "see /docs for the parameters",
    ),
    (
        "POST",
        "/v1/states/TX/ask",
        {"questions": ["x"] * 1001},
        400,
        "body 'questions': List should have at most 1000 items after validation, not 1001",
        "see /docs for the parameters",
    ),
    (
        "POST",
        "/v1/states/ZZ/ask",
        {"questions": ["x"]},
        400,
        "not a state code: 'ZZ'",
        "use a USPS code such as TX, MD or DC",
    ),
]


@pytest.mark.parametrize(("method", "path", "given", "status", "error", "hint"), ERRORS, ids=lambda v: str(v)[:40])
def test_the_error_table(
    env: dict[str, str],
    service: Service,
    method: str,
    path: str,
    given: dict[str, Any],
    status: int,
    error: str,
    hint: str | None,
) -> None:
    if method == "POST":
        response = httpx.post(service.url + path, json=given, timeout=30)
    else:
        response = httpx.request(method, service.url + path, params=given, timeout=30)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": error.format(alias=env["LAWINDEX_NAMESPACE"]), "hint": hint}


def test_what_the_cli_refuses_it_refuses_with_the_same_words(env: dict[str, str], service: Service) -> None:
    """The service's message is the CLI's own line, `error: ...` (and `hint: ...`), for the same input."""
    for state, question in (("ZZ", "x"), ("TX", "a" * 2001), ("WY", "x")):
        result = runner.invoke(app, ["ask", state, question, "--json"], env=env)
        assert result.exit_code != 0
        body = get(service, f"/v1/states/{state}/ask", q=question).json()
        lines = [f"error: {body['error']}"] + ([f"hint: {body['hint']}"] if body["hint"] else [])
        assert result.stderr.splitlines() == lines


def test_a_body_over_a_mebibyte_is_refused_unread(service: Service) -> None:
    questions = ["fire hydrant " * 10] * 9000  # about 1.2 MB of JSON
    response = httpx.post(service.url + "/v1/states/TX/ask", json={"questions": questions}, timeout=30)
    assert response.status_code == 413
    assert response.json() == {
        "error": "the request body is over 1,048,576 bytes",
        "hint": "send fewer questions a request",
    }

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"questions": ['
        for _ in range(20000):
            yield b'"fire hydrant fire hydrant fire hydrant fire hydrant",'
        yield b'"x"]}'

    response = httpx.post(service.url + "/v1/states/TX/ask", content=chunks(), timeout=30)
    assert response.status_code == 413
    for sent in (b"{not json", b'"a string"', b"[1, 2]"):
        bad = httpx.post(
            service.url + "/v1/states/TX/ask", content=sent, headers={"content-type": "application/json"}, timeout=30
        )
        assert bad.status_code == 400
        assert bad.json()["error"].startswith("body"), bad.text


# ---- when OpenSearch does not answer, or refuses --------------------------------------------------------


def _unused_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_no_opensearch_is_503_with_retry_after(env: dict[str, str]) -> None:
    nowhere = f"http://127.0.0.1:{_unused_port()}"
    with running({**env, "OPENSEARCH_URL": nowhere}) as service:
        for path, params in (("/v1/states/TX/ask", {"q": "x"}), ("/readyz", {}), ("/v1/states", {})):
            response = get(service, path, **params)
            assert response.status_code == 503, response.text
            assert response.headers["retry-after"] == "5"
            body = response.json()
            assert body["error"].startswith(f"OpenSearch did not answer at {nowhere}: ")
            assert body["hint"].startswith("start a local node with `lawindex opensearch start`")
        assert get(service, "/healthz").status_code == 200  # the process itself answers


def test_a_silent_cluster_is_504_after_the_timeout(env: dict[str, str]) -> None:
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)  # accepts (the kernel does) and never answers a byte
    try:
        silent = f"http://127.0.0.1:{server.getsockname()[1]}"
        with running({**env, "OPENSEARCH_URL": silent}, "--timeout", "0.5") as service:
            response = get(service, "/v1/states/TX/ask", q="fire hydrant")
            assert response.status_code == 504, response.text
            assert response.json() == {
                "error": f"OpenSearch at {silent} did not answer within 0.5s",
                "hint": "raise --timeout, or start a local node with `lawindex opensearch start`, "
                "or point OPENSEARCH_URL (or --url) at a cluster",
            }
    finally:
        server.close()


def test_tls_that_fails_is_502(env: dict[str, str]) -> None:
    plain = env["OPENSEARCH_URL"].replace("http://", "https://")  # TLS to the node's plain-HTTP port
    with running({**env, "OPENSEARCH_URL": plain}) as service:
        response = get(service, "/v1/states/TX/ask", q="fire hydrant")
        assert response.status_code == 502, response.text
        assert response.json()["error"].startswith(f"TLS to {plain} failed: ")
        assert "retry-after" not in response.headers


def test_a_port_taken_is_refused_at_start(env: dict[str, str], service: Service) -> None:
    from tests.integration.support import lawindex

    port = service.url.rsplit(":", 1)[1]
    code, _, err = lawindex("serve", "--port", port, env=env)
    assert code == 2
    assert err.splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use",
        "hint: choose another --port, or stop what listens there",
    ]


def test_a_bad_url_is_refused_at_start(env: dict[str, str]) -> None:
    from tests.integration.support import lawindex

    code, _, err = lawindex("serve", "--port", "8099", "--url", "ftp://x", env=env)
    assert code == 2
    assert err.splitlines()[-2:] == [
        "error: not an OpenSearch URL: 'ftp://x'",
        "hint: use a URL like http://127.0.0.1:9200",
    ]


# ---- SIGTERM under load --------------------------------------------------------------------------------


def test_sigterm_drains_the_requests_in_flight_and_exits_0(env: dict[str, str]) -> None:
    service = start(env, ready="/readyz")
    try:
        _drains(service)
    finally:
        if service.process.poll() is None:
            service.process.kill()


def _drains(service: Service) -> None:
    questions = [*QUESTIONS[:6]] * 80  # a batch of 480 questions: still being answered at the signal
    batch = json.dumps({"questions": questions})
    expected = httpx.post(service.url + "/v1/states/TX/ask", json={"questions": questions}, timeout=120).json()
    assert len(expected["answers"]) == len(questions)
    answered = [0] * 8
    wrong: list[str] = []
    stop = threading.Event()

    def asker(number: int) -> None:
        with httpx.Client(base_url=service.url, timeout=60) as client:
            while not stop.is_set():
                try:
                    response = client.get("/v1/states/TX/ask", params={"q": QUESTIONS[0]})
                except httpx.TransportError:  # after the signal: refused or closed, never half an answer
                    time.sleep(0.05)
                    continue
                if response.status_code != 200 or response.json() != expected["answers"][0]:
                    wrong.append(f"{response.status_code}: {response.text[:200]}")
                    return
                answered[number] += 1

    askers = [threading.Thread(target=asker, args=(n,), daemon=True) for n in range(len(answered))]
    for thread in askers:
        thread.start()
    _until(lambda: all(answered), "every asker has an answer")
    # Four batches sent whole (http.client's request() returns once the request is written), then answers
    # go on being served for a while: the service has read them and is answering them when the signal comes.
    port = int(service.url.rsplit(":", 1)[1])
    batches = [http.client.HTTPConnection("127.0.0.1", port, timeout=120) for _ in range(4)]
    for connection in batches:
        connection.request("POST", "/v1/states/TX/ask", body=batch, headers={"content-type": "application/json"})
    before = sum(answered)
    _until(lambda: sum(answered) >= before + 16, "16 more answers after the batches were sent")
    service.process.send_signal(15)
    for connection in batches:  # each batch in flight at the signal is answered whole
        response = connection.getresponse()
        assert response.status == 200, (response.read()[:300], service.log[-3000:])
        assert json.loads(response.read()) == expected
    code = service.stop(signalled=True)
    stop.set()
    for thread in askers:
        thread.join(timeout=60)
    assert code == 0, service.log
    assert "Traceback" not in service.log
    assert not wrong, wrong[:3]
    with pytest.raises(httpx.ConnectError):
        httpx.get(service.url + "/healthz", timeout=5)


def _until(condition: Callable[[], bool], what: str, wait: float = 120) -> None:
    deadline = time.monotonic() + wait
    while not condition():
        assert time.monotonic() < deadline, f"not within {wait}s: {what}"
        time.sleep(0.02)


def test_several_workers_answer_the_same(env: dict[str, str], service: Service) -> None:
    with running(env, "--workers", "2", ready="/readyz") as pair:
        for question in QUESTIONS:
            one = get(service, "/v1/states/AL/ask", q=question, explain="true")
            two = get(pair, "/v1/states/AL/ask", q=question, explain="true")
            assert one.content == two.content


def test_a_lone_surrogate_in_a_batch_is_asked_as_a_get_asks_it(service: Service) -> None:
    # JSON carries `\ud800`, UTF-8 cannot; a GET's q reaches the service with U+FFFD in its place (what the
    # web's URLSearchParams writes for one). Before, the answer could not be encoded: 500, the batch lost.
    body = '{"questions": ["school\\ud800bus", "fire hydrant", "\\udc00headlights\\ud83d\\ude97"], "limit": 3}'
    response = httpx.post(
        service.url + "/v1/states/TX/ask", content=body, headers={"content-type": "application/json"}, timeout=30
    )
    assert response.status_code == 200, response.text
    answers = response.json()["answers"]
    asked = ["school\ufffdbus", "fire hydrant", "\ufffdheadlights\U0001f697"]
    assert answers == [get(service, "/v1/states/TX/ask", q=question, limit=3).json() for question in asked]
    assert answers[0]["words"] == ["school", "bus"] and answers[0]["hits"]


def test_a_law_is_also_had_by_a_query_parameter(service: Service) -> None:
    by_path = get(service, "/v1/states/MD/laws/MD-S01")
    by_query = get(service, "/v1/states/MD/laws", id="MD-S01")
    assert (by_query.status_code, by_query.content) == (200, by_path.content)
    missing = get(service, "/v1/states/MD/laws", id="..")
    assert (missing.status_code, missing.json()["error"]) == (404, "MD has no law '..'")
    assert get(service, "/v1/states/MD/laws").status_code == 400
