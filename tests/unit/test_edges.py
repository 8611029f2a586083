"""Edges of the connection, of corpus paths and of standard output (docs/bad-input.md).

- An impossible URL is bad input (exit 2) before any request: port 0 and an empty port were read as
  9200 by the client, so a command silently talked to another node.
- A server that answers but is not OpenSearch is named as such (exit 3, one line), after one `GET /` and
  nothing else: an HTTP file server gave a SerializationError traceback on load and pages of HTML on
  status. The servers here are real HTTP servers on loopback, answering as such servers do.
- A corpus path that is not a regular file is refused before it is read (a symlink to /dev/zero was read
  until a MemoryError, a FIFO hung the load); reads are bounded.
- A broken or full standard output ends the command quietly, with a non-zero exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from indexer.errors import BadInput
from indexer.opensearch.cluster.connection import check_url
from indexer.retrieval.corpus import MAX_FILE_BYTES
from tests.unit.commands import refused, run
from tests.unit.laws import row

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
MAIN = "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"


def process(*args: str, **options: object) -> subprocess.CompletedProcess[bytes]:
    """`lawindex ARGS` as its own process, through the console script's entry point; a minute at most
    (a hang is a failure, not a stuck test run); never a traceback."""
    done = subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, timeout=60, **options)  # type: ignore[call-overload]
    assert b"Traceback" not in done.stdout + done.stderr, done.stderr.decode(errors="replace")
    return done  # type: ignore[no-any-return]


# ---- impossible URLs -------------------------------------------------------------------------------

IMPOSSIBLE_URLS = {
    "port 0": ("http://127.0.0.1:0", "port"),
    "an empty port": ("http://127.0.0.1:", "port"),
    "a port past 65535": ("http://127.0.0.1:65536", "port"),
    "a negative port": ("http://127.0.0.1:-1", "port"),
    "a port in other digits": ("http://127.0.0.1:９２００", "port"),
    "an empty host": ("http://:9200", "URL"),
    "a host with a space": ("http://open search:9200", "host"),
    "a host with a percent sign": ("http://127.0.0.1%20:9200", "host"),
    "a query": ("http://127.0.0.1:9200/?pretty", "query"),
    "a fragment": ("http://127.0.0.1:9200#top", "fragment"),
    "an API path": ("http://127.0.0.1:9200/_search", "path"),
    "a path that climbs": ("http://127.0.0.1:9200/a/../b", "path"),
    "a path with a space": ("http://127.0.0.1:9200/a b", "path"),
}


@pytest.mark.parametrize("case", list(IMPOSSIBLE_URLS), ids=list(IMPOSSIBLE_URLS))
def test_an_impossible_url_is_bad_input(case: str) -> None:
    url, fragment = IMPOSSIBLE_URLS[case]
    refused(run("status", "--url", url), 2, "not an OpenSearch URL", fragment)
    refused(run("ask", "TX", "fire hydrant", env={"OPENSEARCH_URL": url}), 2, "not an OpenSearch URL", fragment)
    refused(run("load", str(CORPORA), "--state", "TX", "--url", url), 2, "not an OpenSearch URL")


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:9200", "https://[::1]:9200/", "http://opensearch_1:9200", "https://proxy.example/opensearch"],
)
def test_a_possible_url_is_accepted(url: str) -> None:
    check_url(url)


def test_an_impossible_url_is_refused_by_the_library_too() -> None:
    with pytest.raises(BadInput, match="port"):
        check_url("http://127.0.0.1:0")


# ---- servers that are not OpenSearch ---------------------------------------------------------------

OPENSEARCH_ROOT = {"name": "n", "cluster_name": "c", "version": {"distribution": "opensearch", "number": "3.9.0"}}
NOT_OPENSEARCH: dict[str, tuple[int, str, bytes, str]] = {
    "an HTTP file server": (
        200,
        "text/html; charset=utf-8",
        b"<html><body><ul><li>a</li></ul></body></html>",
        "text/html",
    ),
    "a page not found": (404, "text/html", b"<h1>Not Found</h1>", "404"),
    "another JSON service": (200, "application/json", b'{"status": "ok", "version": "1.2"}', "JSON that is not"),
    "plain text": (200, "text/plain", b"hello", "not JSON"),
    "Elasticsearch": (
        200,
        "application/json",
        json.dumps(
            {
                "name": "e",
                "cluster_name": "c",
                "version": {"number": "8.13.0", "build_flavor": "default"},
                "tagline": "You Know, for Search",
            }
        ).encode(),
        "Elasticsearch 8.13.0",
    ),
}


class _Server(ThreadingHTTPServer):
    answer: tuple[int, str, bytes]  # what it says to every request
    root: bytes | None  # what it says to `GET /` instead, when set
    asked: list[str]


class _Answering(BaseHTTPRequestHandler):
    server: _Server

    def _answer(self) -> None:
        self.server.asked.append(f"{self.command} {self.path}")
        status, kind, body = self.server.answer
        if self.path == "/" and self.server.root is not None:
            status, kind, body = 200, "application/json", self.server.root
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server(serving: Callable[[_Server], _Server]) -> _Server:
    """A real HTTP server on a free loopback port; set `answer` to what it says to every request."""
    httpd = _Server(("127.0.0.1", 0), _Answering)
    httpd.asked = []
    httpd.root = None
    return serving(httpd)


COMMANDS = {
    "ask": ["ask", "TX", "fire hydrant"],
    "ask --family": ["ask", "PA", "--family", "permit-holding-period"],
    "get": ["get", "TX", "TX-S01"],
    "load": ["load", str(CORPORA), "--state", "TX"],
    "status": ["status"],
    "verify": ["verify", "TX", "--corpora", str(CORPORA)],
}


@pytest.mark.parametrize("case", list(NOT_OPENSEARCH), ids=list(NOT_OPENSEARCH))
@pytest.mark.parametrize("command", list(COMMANDS), ids=list(COMMANDS))
def test_a_server_that_is_not_opensearch_is_named_after_one_get(server: _Server, case: str, command: str) -> None:
    status, kind, body, said = NOT_OPENSEARCH[case]
    server.answer = (status, kind, body)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    message = refused(run(*COMMANDS[command], "--url", url), 3, "is not OpenSearch", url, said)
    assert "<" not in message  # no page of HTML
    assert server.asked == ["GET /"]  # nothing written, nothing else asked


def test_the_root_check_passes_opensearch(server: _Server) -> None:
    """A server whose `GET /` is OpenSearch's root is taken for OpenSearch (the check is of the shape):
    the command goes on to its next request, and says what OpenSearch answered to that."""
    server.root = json.dumps(OPENSEARCH_ROOT).encode()
    missing = {"error": {"type": "index_not_found_exception", "reason": "no such index"}, "status": 404}
    server.answer = (404, "application/json", json.dumps(missing).encode())
    result = run("ask", "TX", "fire hydrant", "--url", f"http://127.0.0.1:{server.server_address[1]}")
    assert "is not OpenSearch" not in result.output
    assert result.exit_code == 4, result.output
    assert server.asked[0] == "GET /" and len(server.asked) > 1


# ---- corpus paths that are not regular files -------------------------------------------------------


def _special(folder: Path, kind: str) -> None:
    target = folder / "TX.jsonl"
    if kind == "a symlink to /dev/zero":
        target.symlink_to("/dev/zero")
    elif kind == "a symlink to /dev/null":
        target.symlink_to("/dev/null")
    elif kind == "a FIFO":
        os.mkfifo(target)
    elif kind == "a directory":
        target.mkdir()
    elif kind == "a file over the size limit":
        with target.open("wb") as handle:
            handle.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    else:
        raise AssertionError(kind)


SPECIAL = {
    "a symlink to /dev/zero": "not a regular file (a character device)",
    "a symlink to /dev/null": "not a regular file (a character device)",
    "a FIFO": "not a regular file (a FIFO)",
    "a directory": "not a regular file (a directory)",
    "a file over the size limit": "more than the 268,435,456 accepted",
}


@pytest.mark.parametrize("kind", list(SPECIAL), ids=list(SPECIAL))
def test_a_corpus_path_that_is_not_a_regular_file_is_refused_unread(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "corpora"
    folder.mkdir()
    (folder / "MD.jsonl").write_text(row(id="MD-1") + "\n")
    _special(folder, kind)
    for args in (
        ["load", str(folder), "--dry-run", "--url", "http://127.0.0.1:9"],
        ["ask", "TX", "fire hydrant", "--engine", "reference", "--corpora", str(folder)],
    ):
        done = process(*args)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "TX.jsonl" in lines[0], lines
        assert SPECIAL[kind] in lines[0]


def test_questions_from_a_device_are_refused_unread() -> None:
    done = process("ask", "TX", "--from", "/dev/zero", "--engine", "reference", "--corpora", str(CORPORA))
    assert done.returncode == 2
    assert b"/dev/zero: cannot be read: not a regular file (a character device)" in done.stderr


def test_questions_on_standard_input_without_line_ends_are_read_with_a_bound() -> None:
    with open("/dev/zero", "rb") as zeros:
        done = process("ask", "TX", "--from", "-", "--engine", "reference", "--corpora", str(CORPORA), stdin=zeros)
    assert done.returncode == 2
    assert b"stdin:1: a line of more than 65,536 bytes: not a file of questions" in done.stderr


# ---- standard output that cannot be written --------------------------------------------------------


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_full_standard_output_is_one_line_and_exit_1(as_json: bool) -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-c", MAIN, "ask", "TX", "fire hydrant", "--engine", "reference", "--corpora",
             str(CORPORA), *(["--json"] if as_json else [])],
            stdout=full, stderr=subprocess.PIPE, timeout=60,
        )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.decode().splitlines() == ["error: cannot write the output: No space left on device"]


def test_a_closed_pipe_ends_the_batch_quietly_with_141(tmp_path: Path) -> None:
    questions = tmp_path / "questions.txt"
    questions.write_text("how far from a fire hydrant can i park\n" * 2000)
    reader, writer = os.pipe()
    os.close(reader)  # `| head -0`: the reader is gone before the first line
    try:
        done = subprocess.run(
            [sys.executable, "-c", MAIN, "ask", "TX", "--from", str(questions), "--engine", "reference",
             "--corpora", str(CORPORA)],
            stdout=writer, stderr=subprocess.PIPE, timeout=60,
        )  # fmt: skip
    finally:
        os.close(writer)
    assert done.returncode == 141
    assert done.stderr == b""


def test_a_batch_from_a_file_keeps_its_answers_and_errors_in_order(tmp_path: Path) -> None:
    # Answers to a file's questions are written in blocks, not flushed line by line; a question that
    # fails still comes after the answers before it and before those after it, on one merged stream.
    questions = tmp_path / "questions.txt"
    questions.write_text("fire hydrant\n" * 300 + "park " * 401 + "\n" + "headlights\n" * 3, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "ask", "TX", "--from", str(questions), "--json", "--engine", "reference",
         "--corpora", str(CORPORA)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 300 + 2 + 3
    assert all(json.loads(line)["question"] == "fire hydrant" for line in lines[:300])
    assert lines[300] == f"error: {questions}:301: question: 2005 characters, more than the 2000 accepted"
    assert json.loads(lines[301]) == {
        "state": "TX", "question": "park " * 401, "error": lines[300].split(": ", 2)[2], "exit_code": 2,
    }  # fmt: skip
    assert [json.loads(line)["question"] for line in lines[302:]] == ["headlights"] * 3
