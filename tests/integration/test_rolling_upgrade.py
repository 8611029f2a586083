"""A rolling upgrade with no wrong answer (issue 47, item 1): the module's own three-node cluster with replicas,
started on the legacy pin (2.19.6), the sample corpora loaded, then taken to the default pin (3.6.0) node by node by
`lawindex opensearch upgrade` (indexer.node.upgrade) while two clients ask by words, meaning and hybrid: one raw
(the `lawindex` query's body over plain HTTP, round-robin over the nodes, as a client that is not lawindex would
send it, going on to the next node when one does not answer, at most RAW_TRIES times) and one through lawindex's
engine (its client's own bounded retry, indexer.opensearch.cluster.retried counts it). Every answer is compared with
the reference engine's; none may fail. After it: `lawindex plugin check` says each node's plugin matches, the
indices made on 2.19.6 serve exactly on 3.6.0, a load of a changed state swaps in cleanly and a rollback goes back.

2.19.6's min distribution has no k-NN: meaning and hybrid are the lawindex plugin's, on both versions.

The cluster: LAWINDEX_UPGRADE_PORT (default 9420; transport ports +100), 256m heaps, C1 (scripts/test's
OPENSEARCH_JAVA_OPTS), always stopped at the end (it ends on another version than it started). scripts/test runs
this file once, with the files that start their own nodes.
"""

from __future__ import annotations

import http.client
import itertools
import json
import os
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from indexer.errors import LawindexError
from indexer.node import node
from indexer.opensearch.cluster import retried
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.verify import default_questions
from indexer.opensearch.write.load import load
from indexer.retrieval import meaning
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.request import Request, Way
from tests import synthetic
from tests.integration.support import LAWINDEX, SAMPLE_QUESTIONS, lawindex, unique_namespace

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
PORT = int(os.environ.get("LAWINDEX_UPGRADE_PORT", "9420"))
NODES = 3
FROM, TO = node.pinned_versions()[1], node.pinned_versions()[0]
WAYS = (Way.words, Way.meaning, Way.hybrid)
QUESTIONS = 6  # a state's, besides the sample questions
# The raw client's bound, as lawindex's own (docs/operations.md): a request that a node did not answer (refused,
# dropped, a 5xx of a node leaving) goes to the next node, six tries at most, 0.25 s more of a pause each time.
RAW_TRIES = 6
AWAY_S = 2.0
# Each asker's pause between questions: the machine is two shared cores, and the nodes' recovery is the test.
PACE_S = 0.01


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[str]]:
    began = time.monotonic()
    try:
        found = node.start(version=FROM, port=PORT, heap="256m", nodes=NODES, runtime="distribution")
    except LawindexError as error:
        pytest.fail(f"no {FROM} cluster on port {PORT}: {error} ({error.hint})", pytrace=False)
    print(f"\ntiming: {NODES}-node {FROM} cluster green in {time.monotonic() - began:.1f} s")
    try:
        yield found.url.split(",")
    finally:
        node.stop(PORT)


def _expected(corpus: Corpus, question: str, way: Way) -> list[str]:
    return meaning.answer(corpus, Request(corpus.state, question, way)).ids()


class RawAsker:
    """The `lawindex` query over http.client, a kept-alive connection a node, round-robin over the nodes; a node
    that does not answer goes to the next at once, a 5xx after a pause (0.25 s more each time), RAW_TRIES tries at
    most: the bound lawindex's own client keeps (docs/operations.md)."""

    def __init__(self, urls: list[str]) -> None:
        self.nodes = [(urlsplit(url).hostname or "127.0.0.1", urlsplit(url).port or 9200) for url in urls]
        self.turn = itertools.cycle(range(len(urls)))
        self.open: dict[int, http.client.HTTPConnection] = {}
        self.retried: Counter[str] = Counter()
        self.away: dict[int, float] = {}  # a node that refused, left alone until then (as lawindex's pool does)

    def ids(self, index: str, question: str, way: Way) -> list[str]:
        body = json.dumps(
            {"size": 8, "_source": ["id"], "query": {"lawindex": {"question": question, "by": way.value}}}
        )
        problem = ""
        for attempt in range(RAW_TRIES):
            which = next(self.turn)
            if self.away.get(which, 0.0) > time.monotonic() and len(self.away) < len(self.nodes):
                which = next(self.turn)  # the next one (two nodes are never away at once here)
            try:
                if which not in self.open:
                    self.open[which] = http.client.HTTPConnection(*self.nodes[which], timeout=30)
                sent = self.open[which]
                sent.request("POST", f"/{index}/_search", body, {"Content-Type": "application/json"})
                answer = sent.getresponse()
                data = answer.read()
            except (OSError, http.client.HTTPException) as error:
                self.open.pop(which, None)
                self.away[which] = time.monotonic() + AWAY_S
                problem = f"{self.nodes[which]}: {type(error).__name__}: {error}"
                self.retried["connection failed"] += 1
                continue
            self.away.pop(which, None)
            if answer.status == 200:
                return [str(hit["_source"]["id"]) for hit in json.loads(data)["hits"]["hits"]]
            problem = f"{self.nodes[which]}: {answer.status} {data[:300]!r}"
            if answer.status < 500:
                raise AssertionError(problem)
            self.retried[f"answered {answer.status}"] += 1
            time.sleep(0.25 * (attempt + 1))
        raise AssertionError(f"no answer in {RAW_TRIES} tries: {problem}")


class Traffic:
    """Two askers, raw and through lawindex's engine, each asking every (state, question, way) in turn until stopped;
    what each asked, got wrong and failed, by way."""

    def __init__(self, urls: list[str], namespace: str, truth: dict[tuple[str, str, Way], list[str]]) -> None:
        self.urls, self.namespace, self.truth = urls, namespace, truth
        self.stop = threading.Event()
        self.asked: Counter[tuple[str, str]] = Counter()
        self.wrong: list[str] = []
        self.failed: list[str] = []
        self.raw_retried: Counter[str] = Counter()
        self.guard = threading.Lock()
        self.threads = [threading.Thread(target=self._raw), threading.Thread(target=self._engine)]

    def __enter__(self) -> Traffic:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(120)

    def _loop(self, how: str, ask: Any) -> None:
        while not self.stop.is_set():
            for (state, question, way), want in self.truth.items():
                if self.stop.is_set():
                    return
                try:
                    got = ask(state, question, way)
                except Exception as error:  # every failure is counted, and the test fails on it
                    with self.guard:
                        self.asked[(how, way.value)] += 1
                        self.failed.append(f"{how} {state} {way.value} {question!r}: {type(error).__name__}: {error}")
                    continue
                with self.guard:
                    self.asked[(how, way.value)] += 1
                    if got != want:
                        self.wrong.append(f"{how} {state} {way.value} {question!r}: {got} != {want}")
                time.sleep(PACE_S)

    def _raw(self) -> None:
        raw = RawAsker(self.urls)
        try:
            self._loop("raw", lambda state, q, way: raw.ids(alias_of(state, self.namespace), q, way))
        finally:
            self.raw_retried = raw.retried

    def _engine(self) -> None:
        engine = OpenSearchEngine(Connection.from_env(",".join(self.urls), namespace=self.namespace))
        self._loop("lawindex", lambda state, q, way: engine.ask(Request(state, q, way)).ids())


def _check(urls: list[str], to: str) -> tuple[int, dict[str, Any]]:
    code, out, err = lawindex("plugin", "check", "--url", ",".join(urls), "--to", to, "--json")
    assert out.strip(), err
    return code, json.loads(out)


def test_a_rolling_upgrade_under_traffic_answers_exactly(cluster: list[str], tmp_path: Path) -> None:
    began = time.monotonic()
    namespace = unique_namespace()
    connection = Connection.from_env(",".join(cluster), namespace=namespace, timeout=60.0)
    corpora = read_corpora(CORPORA)
    load(connection, corpora)  # each state a primary and a replica (auto_expand_replicas 0-1)
    truth = {
        (corpus.state, question, way): _expected(corpus, question, way)
        for corpus in corpora
        for question in [*default_questions(corpus)[:QUESTIONS], *SAMPLE_QUESTIONS[:2]]
        for way in WAYS
    }
    code, said = _check(cluster, TO)
    assert code == 0 and said["can_step"] is True, said
    assert {(n["version"], n["needs"], n["needs_on_target"], n["matches"]) for n in said["nodes"]} == {
        (FROM, "lawindex-2.19.zip", "lawindex-3.6.zip", True)
    }, said

    retried.reset()
    with Traffic(cluster, namespace, truth) as traffic:
        time.sleep(2.0)  # the askers under way before the first node stops
        done = subprocess.run(
            [*LAWINDEX, "opensearch", "upgrade", "--port", str(PORT), "--version", TO, "--json"],
            capture_output=True, text=True, check=False, timeout=3600,
        )  # fmt: skip
        time.sleep(2.0)
    print(done.stderr)
    assert done.returncode == 0, done.stderr
    steps = [json.loads(line) for line in done.stdout.splitlines()]
    retries = retried.counts()
    print(f"\nupgrade {FROM} -> {TO} under traffic: " + ", ".join(f"{s['name']} {s['seconds']:.1f} s" for s in steps))
    print("asked: " + ", ".join(f"{how} {way} {n}" for (how, way), n in sorted(traffic.asked.items())))
    print(f"failed {len(traffic.failed)}, wrong {len(traffic.wrong)}, raw retried {dict(traffic.raw_retried)}, "
          f"lawindex retried {dict(retries)}")  # fmt: skip
    assert [(s["was"], s["now"], s["skipped"]) for s in steps] == [(FROM, TO, False)] * NODES, steps
    assert not traffic.failed, traffic.failed[:5]
    assert not traffic.wrong, traffic.wrong[:5]
    assert all(traffic.asked[(how, way.value)] >= len(corpora) for how in ("raw", "lawindex") for way in WAYS), (
        traffic.asked  # every way asked, by both, while the nodes went one by one
    )

    code, said = _check(cluster, TO)
    assert code == 0 and {(n["version"], n["matches"]) for n in said["nodes"]} == {(TO, True)}, said
    assert set(said["indices"].values()) >= {FROM}, said["indices"]  # the states' indices, made on 2.19.6
    code, said = _check(cluster, FROM)
    assert code == 10 and said["can_step"] is False and "no downgrade" in " ".join(said["blockers"]), said

    # The indices made before the upgrade serve exactly, both ways of asking.
    per_way = len(truth) // len(WAYS)  # one pass over every question, by each way and each client
    deadline = time.monotonic() + 600
    with Traffic(cluster, namespace, truth) as after:
        while time.monotonic() < deadline and not all(
            after.asked[(how, way.value)] >= per_way for how in ("raw", "lawindex") for way in WAYS
        ):
            time.sleep(0.5)
    assert all(after.asked[(how, way.value)] >= per_way for how in ("raw", "lawindex") for way in WAYS), after.asked
    assert not after.failed and not after.wrong, (after.failed[:3], after.wrong[:3])

    # A load of a changed state on 3.6.0 swaps in cleanly; a rollback goes back to the index made on 2.19.6.
    (md,) = [corpus for corpus in corpora if corpus.state == "MD"]
    changed = synthetic.corpus_of("MD", md.laws[: len(md.laws) // 2])
    questions = [q for (state, q, way) in truth if state == "MD" and way is Way.words]
    (done,) = load(connection, [changed])
    engine = OpenSearchEngine(connection)
    for question in questions:
        for way in WAYS:
            assert engine.ask(Request("MD", question, way)).ids() == _expected(changed, question, way), question
    env = {"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": namespace}
    code, out, err = lawindex("rollback", "MD", "--json", env=env)
    assert code == 0, err
    assert json.loads(out)["from_index"] == [done.index], out
    for question in questions:
        for way in WAYS:
            assert engine.ask(Request("MD", question, way)).ids() == truth[("MD", question, way)], question
    print(f"timing: the rolling upgrade's test {time.monotonic() - began:.1f} s after the cluster was green")
