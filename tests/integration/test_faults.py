"""Faults: OpenSearch down when a command starts, restarted in the middle of a batch, rejecting bulk writes.

The module starts one OpenSearch node of its own (the version under test, on OWN_PORT) with a write
queue of one, so that concurrent bulk requests are rejected with 429; the batch test restarts that same
node, so the expensive part, a node start, happens twice for the whole module. The shared node of the
other tests is never stopped.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.node import node
from indexer.opensearch.write.generations import serving
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpus
from tests import synthetic
from tests.integration.support import LAWINDEX, drop_namespace, run_threads, unique_namespace
from tests.integration.support import timed_lawindex as lawindex

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
# LAWINDEX_FAULTS_PORT: engineers sharing a machine each keep to their own ports.
OWN_PORT = int(os.environ.get("LAWINDEX_FAULTS_PORT", "9271"))
# The node's static settings (scripts/test starts it with them ahead of this file, and the fixture finds it).
OWN_SETTINGS = {"thread_pool.write.queue_size": "1", "thread_pool.write.size": "1"}


# ---- unreachable when a command starts -------------------------------------------------------------


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts TCP connections and never answers a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def hold() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    server.close()


COMMANDS = {
    "status": ("status",),
    "load": ("load", str(CORPORA), "--state", "MD"),
    "ask": ("ask", "MD", "fire hydrant", "--engine", "opensearch"),
}


def one_clear_line(err: str, *fragments: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len([line for line in lines if line.startswith("error: ")]) == 1, err
    assert all(line.startswith(("error: ", "hint: ")) for line in lines), err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, err)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_port_where_nothing_listens_is_one_line_and_exit_3_at_once(command: str) -> None:
    url = f"http://127.0.0.1:{unused_port()}"
    code, out, err, seconds = lawindex(*COMMANDS[command], env={"OPENSEARCH_URL": url})
    print(f"\n{command}: nothing listening at {url}: exit {code} in {seconds:.2f}s")
    assert code == 3, (code, out, err)
    one_clear_line(err, url, "did not answer")
    assert "lawindex opensearch start" in err  # the hint says how to get one


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("retries", [0, 2])
def test_a_port_that_never_answers_fails_within_the_timeout_per_try(
    silent_port: int, command: str, retries: int
) -> None:
    """With --timeout 1 a silent cluster is an error after one try, whatever LAWINDEX_RETRIES says: a
    request that timed out is not sent again (retries are for refused connections, which cost nothing).
    The bound is loose, for a shared machine: one timeout plus the start of Python, with room."""
    url = f"http://127.0.0.1:{silent_port}"
    env = {"OPENSEARCH_URL": url, "LAWINDEX_TIMEOUT": "1", "LAWINDEX_RETRIES": str(retries)}
    code, out, err, seconds = lawindex(*COMMANDS[command], env=env)
    print(f"\n{command}: silent port, timeout 1 s, {retries} retries: exit {code} in {seconds:.2f}s")
    assert code == 3, (code, out, err)
    one_clear_line(err, url, "within 1s")
    assert seconds < 1.0 + 4.0


def test_the_timeout_option_wins_over_the_setting(silent_port: int) -> None:
    url = f"http://127.0.0.1:{silent_port}"
    env = {"LAWINDEX_TIMEOUT": "30", "LAWINDEX_RETRIES": "0"}
    code, _, err, seconds = lawindex("status", "--url", url, "--timeout", "1", env=env)
    assert code == 3
    one_clear_line(err, "within 1s")
    assert seconds < 5


# ---- a node of our own, restarted, with a write queue of one ---------------------------------------


@pytest.fixture(scope="module")
def own_node(opensearch_version: str) -> Iterator[str]:
    """A node of this module's own on OWN_PORT, write queue of one; stopped at the end."""
    started = node.start(
        version=opensearch_version,
        port=OWN_PORT,
        settings=OWN_SETTINGS,
    )
    try:
        yield started.url
    finally:
        node.stop(OWN_PORT)


@pytest.fixture
def namespace(own_node: str) -> Iterator[str]:
    made = unique_namespace()
    yield made
    drop_namespace(OpenSearch(hosts=[own_node], timeout=60), made)


def rejected(client: OpenSearch) -> int:
    """How many write-pool tasks the node has rejected since it started."""
    stats = client.nodes.stats(metric="thread_pool")
    return sum(int(n["thread_pool"]["write"]["rejected"]) for n in stats["nodes"].values())


def write_corpus(folder: Path, state: str, laws: int, seed: int) -> Corpus:
    path = folder / f"{state}.jsonl"
    rows = synthetic.generate_corpus(state, laws, seed)
    path.write_text("".join(json.dumps(law.model_dump(exclude_none=True)) + "\n" for law in rows), encoding="utf-8")
    return read_corpus(path)


def test_bulk_rejections_429_are_retried_until_every_law_is_in(own_node: str, namespace: str, tmp_path: Path) -> None:
    client = OpenSearch(hosts=[own_node], timeout=60)
    corpora = [write_corpus(tmp_path, state, 300, 3) for state in ("AL", "MD", "PA", "TX")]
    before = rejected(client)
    errors: list[str] = []

    def loading(corpus: Corpus) -> None:
        try:
            # Small chunks, so that four loads at once put many bulk requests on a queue of one.
            load_state(
                client, corpus, LoadOptions(namespace=namespace, chunk_size=20, max_retries=30, initial_backoff=0.05)
            )
        except Exception as error:
            errors.append(f"{corpus.state}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=loading, args=(corpus,)) for corpus in corpora]
    seconds = run_threads(threads)
    seen = rejected(client) - before
    print(f"\n429: {seen} bulk rejections seen while 4 states loaded at once in {seconds:.1f}s; all retried")
    assert not errors, errors
    assert seen > 0, "the write queue of one never rejected: the test proved nothing"
    for corpus in corpora:
        index = serving(client, corpus.state, namespace)
        assert index is not None
        stored = {hit["_id"] for hit in _all_ids(client, index)}
        assert stored == {f"law:{law.id}" for law in corpus.laws} | {"statistics"}


def _all_ids(client: OpenSearch, index: str) -> list[dict[str, str]]:
    found = client.search(index=index, body={"size": 10_000, "_source": False, "query": {"match_all": {}}})
    hits: list[dict[str, str]] = found["hits"]["hits"]
    return hits


class Batch:
    """`lawindex ask MD --from - --json` as a process fed one question at a time."""

    def __init__(self, url: str, namespace: str) -> None:
        env = {**os.environ, "OPENSEARCH_URL": url, "LAWINDEX_NAMESPACE": namespace, "LAWINDEX_TIMEOUT": "5"}
        self.process = subprocess.Popen(
            [*LAWINDEX, "ask", "MD", "--from", "-", "--json", "--engine", "opensearch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self.stderr: list[str] = []
        self.sent = 0
        for name in ("stdout", "stderr"):
            threading.Thread(target=self._read, args=(name,), daemon=True).start()

    def _read(self, name: str) -> None:
        stream = getattr(self.process, name)
        for raw in stream:
            text = raw.decode("utf-8", "replace")
            if name == "stderr":
                self.stderr.append(text)
            self.lines.put((name, text))

    def ask(self, question: str) -> dict[str, object]:
        """Send one question; its JSON line from stdout: an answer, or {"question", "error", "exit_code"},
        in which case its `error: stdin:N: ...` line on stderr is waited for too."""
        assert self.process.stdin is not None
        self.process.stdin.write(question.encode("utf-8") + b"\n")
        self.process.stdin.flush()
        self.sent += 1
        got: dict[str, object] | None = None
        while True:
            stream, text = self.lines.get(timeout=60)
            if stream == "stdout":
                got = json.loads(text)
                if "error" not in got:
                    return got
            if got is not None and any(line.startswith(f"error: stdin:{self.sent}: ") for line in self.stderr):
                return got

    def finish(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=60)


def test_a_batch_goes_on_through_a_restart_and_reports_each_failed_question(
    own_node: str, namespace: str, opensearch_version: str
) -> None:
    client = OpenSearch(hosts=[own_node], timeout=60)
    corpus = read_corpus(CORPORA / "MD.jsonl")
    load_state(client, corpus, LoadOptions(namespace=namespace))
    questions = synthetic.generate_questions(corpus.laws, 12, 5)
    batch = Batch(own_node, namespace)
    answered = failed = 0

    def expect_answer(question: str) -> None:
        nonlocal answered
        got = batch.ask(question)
        assert got["question"] == question
        hits = got["hits"]
        assert isinstance(hits, list)
        assert [hit["id"] for hit in hits] == reference.ask(corpus, question).ids()
        answered += 1

    for question in questions[:4]:
        expect_answer(question)
    node.stop(OWN_PORT)
    try:
        for question in questions[4:7]:
            got = batch.ask(question)
            assert got["question"] == question and got["exit_code"] == 3, got
            assert "did not answer" in str(got["error"]), got
            failed += 1
    finally:
        node.start(
            version=opensearch_version,
            port=OWN_PORT,
            settings=OWN_SETTINGS,
        )
    if serving(client, "MD", namespace) is None:  # a container restarts empty; a local node keeps its data
        load_state(client, corpus, LoadOptions(namespace=namespace))
    for question in questions[7:]:
        expect_answer(question)
    code = batch.finish()
    print(f"\nbatch through a restart: {answered} answered, {failed} reported failed, exit {code}")
    assert code == 3, (code, "".join(batch.stderr))
    assert not any("Traceback" in line for line in batch.stderr)
