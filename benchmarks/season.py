"""A day of traffic, compressed (issue 47, item 3): a 3-node cluster with replicas, N clients asking by words,
meaning and hybrid on three paths, loads and rollbacks every few minutes, a node SIGKILLed and brought back,
the flood-stage watermark reached and left; every answer held against the reference engine.

    python -m benchmarks.season [--port 9650] [--minutes 30] [--clients 16] [--states 4] [--laws 1500]
                                [--serve-port 9655] [--keep]

The cluster is lawindex's own (`lawindex opensearch start --nodes 3 --port P --heap 256m`), started here when it
does not run (and stopped at the end when started here); the states are loaded with one replica (laws.json's
auto-expansion, 0-1, gives one on three nodes). Each state has three generated versions (tests/synthetic.py,
seeds 1-3: different laws, different answers). The clients, a third on each path:

- raw: the lawindex plugin's query sent as any client sends it (`_search` on the state's alias, httpx, not
  lawindex), round-robin over the three nodes; a client that is not lawindex retries on the next node after a
  refused connection, a 5xx or a partial answer (`_shards.failed`), each node at most once: counted as retried;
- lawindex: `OpenSearchEngine.ask` (the library, its own retries), one engine shared, as a web worker shares it;
- serve: `GET /v1/states/{state}/ask` of one `lawindex serve` over the three nodes; anything but a 200 is failed.

Each question's way is drawn at random (words, meaning, hybrid). The conductor, meanwhile, at fixed fractions
of the run: loads a state's next version and rolls it back (`load_state`, `history.rollback`: the operator's
`lawindex load` and `lawindex rollback`) every `--every` seconds; SIGKILLs a node at 30% and starts it again
(what `lawindex opensearch start --nodes 3` does) a while after, a load done while it is down; at 60% puts the
disk watermarks (cluster settings of this cluster only: `cluster.routing.allocation.disk.*` as absolute free
bytes just over what the filesystem has free, so the flood stage is past on every node, the three sharing one
disk) and waits for OpenSearch to put its `read_only_allow_delete` block on the indices, then lowers them again
and waits for OpenSearch to lift the block itself. No file is written to fill a disk: the machine is shared.

Every answer is checked once the traffic is over. A raw answer names its generation (each hit's `_index`):
it must be that generation's reference answer, a generation serving at some moment of the request, and its
hits must come from one index (else "mixed"). A lawindex or serve answer names none: it must be the reference
answer, ids and exact scores, of a generation that served at some moment between the question sent and the
answer received; one that is none of them but whose every hit is one of theirs is counted "mixed", any
other "wrong".

Printed: questions answered, q/s, p50/p99 per way and per path, retried, failed, wrong, mixed, what the
conductor did and when, and each node's heap used and open file descriptors (`_nodes/stats`) and the service's
RSS and descriptors at the end against the start. Exit 1 when anything failed or was wrong or mixed.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from opensearchpy import OpenSearch

from indexer.node import node
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write import history
from indexer.opensearch.write.generations import serving
from indexer.opensearch.write.load import load
from indexer.retrieval import meaning
from indexer.retrieval.corpus import Corpus
from indexer.retrieval.request import Request
from tests import synthetic

WAYS = ("words", "meaning", "hybrid")
PATHS = ("raw", "lawindex", "serve")
VERSIONS = 3  # seeds 1..3 of each state
Key = tuple[tuple[str, float], ...]


@dataclass
class Op:
    """One change of what a state serves: began and ended (perf_counter), the version before and after."""

    began: float
    ended: float
    before: int
    after: int


class Timeline:
    """What each state served when: the version behind its alias at the start, every change since, and the
    version each generation (index) holds."""

    def __init__(self) -> None:
        self.first: dict[str, int] = {}
        self.ops: dict[str, list[Op]] = {}
        self.version_of: dict[str, tuple[str, int]] = {}  # index -> (state, version)
        self.lock = threading.Lock()

    def serving_now(self, state: str) -> int:
        with self.lock:
            ops = self.ops.get(state, [])
            return ops[-1].after if ops else self.first[state]

    def record(self, state: str, began: float, before: int, after: int, index: str) -> None:
        with self.lock:
            known = self.version_of.setdefault(index, (state, after))
            if known != (state, after):
                raise AssertionError(f"{index} was {known}, now said to hold {state} version {after}")
            if before != after:
                self.ops.setdefault(state, []).append(Op(began, time.perf_counter(), before, after))

    def live(self, state: str, sent: float, answered: float) -> set[int]:
        """The versions that served `state` at some moment between `sent` and `answered` (a change under way
        counts both sides)."""
        with self.lock:
            ops = list(self.ops.get(state, []))
        now = self.first[state]
        found: set[int] = set()
        for op in ops:
            if op.ended < sent:
                now = op.after
            elif op.began <= answered:
                found.update((op.before, op.after))
        return found | {now}


@dataclass
class Asked:
    """One question and what came of it."""

    path: str
    way: str
    state: str
    question: str
    sent: float
    answered: float
    hits: Key = ()
    indices: tuple[str, ...] = ()  # raw only: each hit's `_index`
    error: str | None = None
    retried: int = 0


class References:
    """The reference engine's answer, (id, exact score) per hit, for a (state, version, way, question);
    computed once each."""

    def __init__(self, versions: dict[str, list[Corpus]]) -> None:
        self.versions = versions
        self.known: dict[tuple[str, int, str, str], Key] = {}

    def of(self, state: str, version: int, way: str, question: str) -> Key:
        slot = (state, version, way, question)
        if slot not in self.known:
            answer = meaning.answer(self.versions[state][version], Request(state, question, way))  # type: ignore[arg-type]
            self.known[slot] = tuple((hit.law.id, float(hit.score)) for hit in answer.hits)
        return self.known[slot]


@dataclass
class Verdicts:
    origin: float = 0.0  # the season's start (perf_counter): an example says when its question was sent
    counts: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    def add(self, kind: str, asked: Asked, why: str) -> None:
        self.counts[kind] += 1
        if len(self.examples) < 12:
            self.examples.append(
                f"{kind} at {asked.sent - self.origin:.1f} s: {asked.path} {asked.way} {asked.state} "
                f"{asked.question!r}: {why}"
            )


def judge(asked: list[Asked], timeline: Timeline, references: References, origin: float = 0.0) -> Verdicts:
    """failed, wrong and mixed, each with its first examples."""
    verdicts = Verdicts(origin)
    for one in asked:
        if one.error is not None:
            verdicts.add("failed", one, one.error)
            continue
        live = sorted(timeline.live(one.state, one.sent, one.answered))
        if one.path == "raw":
            if len(set(one.indices)) > 1:
                verdicts.add("mixed", one, f"hits from {sorted(set(one.indices))}")
                continue
            ids = tuple(law for law, _ in one.hits)
            if not one.indices:  # no hit: every live generation must have none
                versions = live
            else:
                state, version = timeline.version_of.get(one.indices[0], ("", -1))
                if state != one.state or version not in live:
                    verdicts.add("wrong", one, f"answered by {one.indices[0]}, not a generation live then ({live})")
                    continue
                versions = [version]
            if not any(tuple(law for law, _ in references.of(one.state, v, one.way, one.question)) == ids
                       for v in versions):  # fmt: skip
                verdicts.add("wrong", one, f"not the reference answer of version(s) {versions}: {ids}")
            continue
        expected = [references.of(one.state, v, one.way, one.question) for v in live]
        if one.hits in expected:
            continue
        union = {hit for answer in expected for hit in answer}
        if one.hits and all(hit in union for hit in one.hits):
            verdicts.add("mixed", one, f"hits of versions {live} together: {one.hits}")
        else:
            verdicts.add("wrong", one, f"the answer of no version live then ({live}): {one.hits}")
    return verdicts


class RawClient:
    """The plugin's query as a client that is not lawindex sends it: round-robin over the nodes, the next node
    after a refused connection, a timeout, a 5xx or a partial answer, each node at most once."""

    def __init__(self, urls: list[str], start: int) -> None:
        self.urls = urls
        self.turn = start
        self.http = httpx.Client(timeout=10.0)

    def ask(self, index: str, question: str, way: str) -> tuple[Key, tuple[str, ...], int]:
        body = {"size": 8, "_source": ["id"], "query": {"lawindex": {"question": question, "by": way}}}
        problems = []
        for tried in range(len(self.urls)):
            url = self.urls[self.turn % len(self.urls)]
            self.turn += 1
            try:
                response = self.http.post(f"{url}/{index}/_search", json=body)
            except httpx.TransportError as error:
                problems.append(f"{url}: {type(error).__name__}")
                continue
            if response.status_code >= 500:
                problems.append(f"{url}: {response.status_code}")
                continue
            found = response.json()
            if response.status_code != 200:
                raise RuntimeError(f"{url}: {response.status_code}: {str(found)[:300]}")
            if found["_shards"]["failed"] or found.get("timed_out"):
                problems.append(f"{url}: partial ({found['_shards']})")
                continue
            hits = found["hits"]["hits"]
            return (
                tuple((hit["_source"]["id"], float(hit["_score"])) for hit in hits),
                tuple(hit["_index"] for hit in hits),
                tried,
            )
        raise RuntimeError("; ".join(problems))

    def close(self) -> None:
        self.http.close()


@dataclass
class Shape:
    """What a season is made of."""

    seconds: float
    clients: int = 16
    every: float = 90.0  # seconds between two changes (a load, then a rollback, and so on)
    down: float = 60.0  # how long the killed node stays down before it is started again
    flooded: float = 60.0  # how long the flood stage is held (once OpenSearch has blocked the indices)
    seed: int = 47


@dataclass
class Cluster:
    """The cluster a season runs on: its URLs, how to find a node's process, how to heal it."""

    urls: list[str]
    port: int
    heal: Callable[[], object]

    def pids(self) -> list[int]:
        return [int(member["pid"]) for member in node.status(self.port).nodes or [] if member["pid"] is not None]


@dataclass
class Season:
    asked: list[Asked]
    events: list[str]
    seconds: float
    verdicts: Verdicts
    nodes_before: dict[str, tuple[int, int]]
    nodes_after: dict[str, tuple[int, int]]
    serve_before: tuple[int, int]
    serve_after: tuple[int, int]
    timeline: Timeline

    @property
    def failed(self) -> int:
        return self.verdicts.counts["failed"]

    @property
    def wrong(self) -> int:
        return self.verdicts.counts["wrong"]

    @property
    def mixed(self) -> int:
        return self.verdicts.counts["mixed"]

    @property
    def clean(self) -> bool:
        """Nothing failed, wrong or mixed, and every step of the conductor done."""
        counts = self.verdicts.counts
        return not (counts["failed"] or counts["wrong"] or counts["mixed"] or counts["conductor failed"])


def write_versions(folder: Path, states: int, laws: int) -> dict[str, list[Corpus]]:
    """Each state's three versions, written as `<folder>/<seed>/<STATE>.jsonl` and read back."""
    versions: dict[str, list[Corpus]] = {}
    for seed in range(1, VERSIONS + 1):
        for corpus in synthetic.write_corpora(folder / str(seed), states, laws, seed):
            versions.setdefault(corpus.state, []).append(corpus)
    return versions


def questions_of(versions: dict[str, list[Corpus]], each: int) -> list[tuple[str, str]]:
    """(state, question) pairs drawn from every version's laws, so that most answers differ between versions."""
    return [
        (state, question)
        for state, corpora in sorted(versions.items())
        for number, corpus in enumerate(corpora)
        for question in synthetic.generate_questions(corpus.laws, each, 11 + number)
    ]


def node_figures(client: OpenSearch) -> dict[str, tuple[int, int]]:
    """Each node's heap used (bytes) and open file descriptors, by node name."""
    found = client.nodes.stats(metric="jvm,process")["nodes"]
    return {
        body["name"]: (int(body["jvm"]["mem"]["heap_used_in_bytes"]), int(body["process"]["open_file_descriptors"]))
        for body in found.values()
    }


def process_figures(pid: int) -> tuple[int, int]:
    """A local process's RSS (bytes) and open file descriptors."""
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) * 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def flood(client: OpenSearch) -> int:
    """The disk watermarks put just over the free space of the nodes' disk (absolute free bytes, the three
    alike), the disk monitor asked to look every 10 s; the free bytes it was set against."""
    found = client.nodes.stats(metric="fs")["nodes"]
    free = min(int(body["fs"]["total"]["available_in_bytes"]) for body in found.values())
    over = f"{free + 2 * 1024**3}b"  # past the flood stage whatever the machine's other tenants free meanwhile
    client.cluster.put_settings(body={"transient": {
        "cluster.routing.allocation.disk.threshold_enabled": True,
        "cluster.info.update.interval": "10s",
        "cluster.routing.allocation.disk.watermark.low": over,
        "cluster.routing.allocation.disk.watermark.high": over,
        "cluster.routing.allocation.disk.watermark.flood_stage": over,
    }})  # fmt: skip
    return free


def unflood(client: OpenSearch) -> None:
    """The watermarks lowered far under the free space, the monitor still on, so that it lifts its block."""
    client.cluster.put_settings(body={"transient": {
        "cluster.routing.allocation.disk.watermark.low": "1mb",
        "cluster.routing.allocation.disk.watermark.high": "1mb",
        "cluster.routing.allocation.disk.watermark.flood_stage": "1mb",
    }})  # fmt: skip


def settings_reset(client: OpenSearch) -> None:
    """The disk settings back to the node's own (the threshold off, as lawindex starts its nodes)."""
    client.cluster.put_settings(body={"transient": {
        "cluster.routing.allocation.disk.threshold_enabled": None,
        "cluster.info.update.interval": None,
        "cluster.routing.allocation.disk.watermark.low": None,
        "cluster.routing.allocation.disk.watermark.high": None,
        "cluster.routing.allocation.disk.watermark.flood_stage": None,
    }})  # fmt: skip


def blocked(client: OpenSearch, namespace: str) -> list[str]:
    """What the disk monitor blocked: the namespace's indices (`read_only_allow_delete`) and, when it is set, the
    cluster's `create_index` (which OpenSearch puts when every node is past the high watermark)."""
    found = client.indices.get_settings(
        index=f"{namespace}-*", name="index.blocks.read_only_allow_delete", allow_no_indices=True
    )
    indices = sorted(
        index for index, body in found.items()
        if str(body["settings"].get("index", {}).get("blocks", {}).get("read_only_allow_delete")) == "true"
    )  # fmt: skip
    return indices + (["cluster.blocks.create_index"] if _create_blocked(client) else [])


def _indices_blocked(client: OpenSearch, namespace: str) -> bool:
    return any(not name.startswith("cluster.") for name in blocked(client, namespace))


def _create_blocked(client: OpenSearch) -> bool:
    found = client.cluster.get_settings(flat_settings=True)
    return any(str(found[scope].get("cluster.blocks.create_index")) == "true" for scope in ("persistent", "transient"))


def released(client: OpenSearch, namespace: str) -> None:
    """The watermarks lowered, the blocks waited for until the disk monitor lifts them (at most 60 s), then the disk
    settings back to the node's own. A cluster's `create_index` block left by a monitor turned off before it lifted
    it would stay for good (OpenSearch writes it as a persistent setting): it is removed, and that is said."""
    unflood(client)
    try:
        wait_for("the blocks lifted", lambda: not blocked(client, namespace), 60)
    except AssertionError as error:
        print(f"season: {error}", file=sys.stderr)
    settings_reset(client)
    if _create_blocked(client):
        client.cluster.put_settings(body={"persistent": {"cluster.blocks.create_index": None}})
        print("season: the cluster's create_index block removed by hand", file=sys.stderr)


def wait_for(what: str, check: Callable[[], bool], timeout: float) -> float:
    """Seconds until `check()` held; AssertionError naming `what` after `timeout`."""
    began = time.perf_counter()
    while not check():
        if time.perf_counter() - began > timeout:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.5)
    return time.perf_counter() - began


@contextmanager
def service(urls: list[str], namespace: str, port: int) -> Iterator[tuple[str, int]]:
    """`lawindex serve` on `port` over the cluster's nodes, once ready; its URL and pid. Stopped (SIGTERM) after."""
    command = [sys.executable, "-c", "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"]
    env = {**os.environ, "OPENSEARCH_URL": ",".join(urls), "LAWINDEX_NAMESPACE": namespace}
    process = subprocess.Popen(
        [*command, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                told = process.stderr.read().decode()[-2000:] if process.stderr else ""
                raise RuntimeError(f"lawindex serve exited {process.returncode}: {told}")
            try:
                if httpx.get(url + "/readyz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("lawindex serve was not ready within 120 s")
            time.sleep(0.2)
        yield url, process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def run(
    cluster: Cluster,
    versions: dict[str, list[Corpus]],
    questions: list[tuple[str, str]],
    shape: Shape,
    serve_port: int,
    say: Callable[[str], None] = print,
) -> Season:
    """Version 0 of every state loaded in a namespace of its own (dropped at the end), the service started, then
    the season: `shape.seconds` of traffic (longer when the conductor's last step runs late), checked."""
    namespace = f"lawindex_season{uuid.uuid4().hex[:8]}"
    connection = Connection.from_env(",".join(cluster.urls), namespace=namespace, timeout=30)
    client = OpenSearch(hosts=cluster.urls, timeout=60)
    timeline = Timeline()
    states = sorted(versions)
    try:
        began = time.perf_counter()
        for done in load(connection, [corpora[0] for _, corpora in sorted(versions.items())]):
            timeline.first[done.state] = 0
            timeline.record(done.state, 0.0, 0, 0, str(done.index))
        say(f"loaded version 0 of {len(states)} states in {time.perf_counter() - began:.1f} s (namespace {namespace})")
        with service(cluster.urls, namespace, serve_port) as (serve_url, serve_pid):
            return _season(cluster, client, connection, timeline, versions, questions, shape, serve_url, serve_pid, say)
    finally:
        released(client, namespace)
        client.indices.delete(index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True)


def _season(
    cluster: Cluster,
    client: OpenSearch,
    connection: Connection,
    timeline: Timeline,
    versions: dict[str, list[Corpus]],
    questions: list[tuple[str, str]],
    shape: Shape,
    serve_url: str,
    serve_pid: int,
    say: Callable[[str], None],
) -> Season:
    namespace = connection.namespace
    engine = OpenSearchEngine(connection)
    states = sorted(versions)
    # Warm every path once (the service's first question reads statistics) before the figures at the start.
    for state in states:
        for way in WAYS:
            engine.ask(Request(state, questions[0][1], way))  # type: ignore[arg-type]
            httpx.get(f"{serve_url}/v1/states/{state}/ask", params={"q": questions[0][1], "by": way}, timeout=60)
    nodes_before, serve_before = node_figures(client), process_figures(serve_pid)
    stop = threading.Event()
    records: list[list[Asked]] = [[] for _ in range(shape.clients)]
    events: list[str] = []
    origin = time.perf_counter()

    def event(text: str) -> None:
        line = f"{time.perf_counter() - origin:7.1f} s  {text}"
        events.append(line)
        say(line)

    def asker(number: int) -> None:
        rng = random.Random(shape.seed * 1000 + number)
        path = PATHS[number % len(PATHS)]
        raw = RawClient(cluster.urls, number) if path == "raw" else None
        http = httpx.Client(timeout=60.0) if path == "serve" else None
        mine = records[number]
        try:
            while not stop.is_set():
                state, question = rng.choice(questions)
                way = rng.choice(WAYS)
                asked = Asked(path, way, state, question, time.perf_counter(), 0.0)
                try:
                    if raw is not None:
                        asked.hits, asked.indices, asked.retried = raw.ask(alias_of(state, namespace), question, way)
                    elif http is not None:
                        response = http.get(f"{serve_url}/v1/states/{state}/ask", params={"q": question, "by": way})
                        if response.status_code != 200:
                            raise RuntimeError(f"serve {response.status_code}: {response.text[:300]}")
                        asked.hits = tuple((hit["id"], float(hit["score"])) for hit in response.json()["hits"])
                    else:
                        answer = engine.ask(Request(state, question, way))  # type: ignore[arg-type]
                        asked.hits = tuple((hit.law.id, float(hit.score)) for hit in answer.hits)
                except Exception as error:  # every failure is counted, never raised
                    asked.error = f"{type(error).__name__}: {str(error)[:400]}"
                asked.answered = time.perf_counter()
                mine.append(asked)
        finally:
            if raw is not None:
                raw.close()
            if http is not None:
                http.close()

    def change(kind: str, state: str) -> None:
        before = timeline.serving_now(state)
        began = time.perf_counter()
        if kind == "load":
            after = (before + 1) % VERSIONS
            (done,) = load(connection, [versions[state][after]])
            index = str(done.index)
        else:
            history.rollback(client, state, namespace)
            index = str(serving(client, state, namespace))
            after = timeline.version_of[index][1]
        timeline.record(state, began, before, after, index)
        event(f"{kind} {state}: version {before} -> {after} ({index}) in {time.perf_counter() - began:.1f} s")

    plan = _plan(shape, states)

    def conductor() -> None:
        victim = 0
        for at, kind, state in plan:
            wait = origin + at - time.perf_counter()
            if wait > 0 and stop.wait(wait):
                return
            try:
                if kind in ("load", "rollback"):
                    change(kind, state)
                elif kind == "kill":
                    victim = cluster.pids()[1]
                    os.kill(victim, signal.SIGKILL)
                    event(f"SIGKILL node 2 (pid {victim})")
                elif kind == "heal":
                    took = time.perf_counter()
                    cluster.heal()
                    event(f"node 2 started again, the cluster green in {time.perf_counter() - took:.1f} s")
                elif kind == "flood":
                    free = flood(client)
                    took = wait_for("the flood-stage block", lambda: _indices_blocked(client, namespace), 120)
                    event(f"flood stage set over {free / 1024**3:.1f} GiB free: blocked after {took:.1f} s: "
                          f"{', '.join(blocked(client, namespace))}")  # fmt: skip
                elif kind == "free":
                    unflood(client)
                    took = wait_for("the blocks lifted", lambda: not blocked(client, namespace), 120)
                    settings_reset(client)
                    event(f"watermarks lowered: the blocks lifted by OpenSearch after {took:.1f} s")
            except Exception as error:
                event(f"{kind} {state} FAILED: {type(error).__name__}: {str(error)[:400]}")
                conducted_failures.append(f"{kind} {state}: {error}")

    conducted_failures: list[str] = []
    threads = [threading.Thread(target=asker, args=(n,), name=f"asker-{n}") for n in range(shape.clients)]
    leader = threading.Thread(target=conductor, name="conductor")
    for thread in threads:
        thread.start()
    leader.start()
    leader.join()  # the plan's last step ends no earlier than shape.seconds
    remaining = origin + shape.seconds - time.perf_counter()
    if remaining > 0:
        time.sleep(remaining)
    stop.set()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - origin
    nodes_after, serve_after = node_figures(client), process_figures(serve_pid)
    asked = [one for mine in records for one in mine]
    verdicts = judge(asked, timeline, References(versions), origin)
    for failure in conducted_failures:
        verdicts.counts["conductor failed"] += 1
        verdicts.examples.append(f"conductor: {failure}")
    return Season(asked, events, seconds, verdicts, nodes_before, nodes_after, serve_before, serve_after, timeline)


def _plan(shape: Shape, states: list[str]) -> list[tuple[float, str, str]]:
    """When the conductor does what: a change every `shape.every` seconds (load, rollback, load, ... through the
    states), none while the disk is flooded; the node killed at 30% and healed `shape.down` later; the flood
    stage at 60%, freed `shape.flooded` later."""
    total = shape.seconds
    kill, flood_at = 0.3 * total, 0.6 * total
    free_at = flood_at + shape.flooded
    steps: list[tuple[float, str, str]] = [
        (kill, "kill", ""), (kill + shape.down, "heal", ""), (flood_at, "flood", ""), (free_at, "free", ""),
    ]  # fmt: skip
    at, turn = shape.every / 2, 0
    while at < total - 5:
        if not flood_at - 5 <= at <= free_at + 5:
            kind = "load" if turn % 2 == 0 else "rollback"
            steps.append((at, kind, states[(turn // 2) % len(states)]))
            turn += 1
        at += shape.every
    # A load while the node is down (its shard copies elsewhere), when the changes' rhythm puts none there.
    if not any(kill < when < kill + shape.down and kind == "load" for when, kind, _ in steps):
        steps.append((kill + shape.down / 2, "load", states[-1]))
    return sorted(steps, key=lambda step: step[0])


def report(season: Season, say: Callable[[str], None] = print) -> None:
    """The figures: questions, q/s, p50/p99 per way and per path, retried, failed, wrong, mixed; nodes and service."""
    answered = [one for one in season.asked if one.error is None]
    say(f"\n{len(season.asked):,} questions in {season.seconds:.0f} s: {len(answered):,} answered, "
        f"{len(answered) / season.seconds:.1f} q/s; retried (raw, the next node) "
        f"{sum(one.retried for one in season.asked):,}")  # fmt: skip
    say(f"{'':>9} {'answered':>9} {'q/s':>7} {'p50 ms':>8} {'p99 ms':>8}")
    for label, pick in [*((way, "way") for way in WAYS), *((path, "path") for path in PATHS)]:
        took = [one.answered - one.sent for one in answered if getattr(one, pick) == label]
        cuts = statistics.quantiles(took, n=100) if len(took) >= 2 else [0.0] * 99
        say(f"{label:>9} {len(took):>9,} {len(took) / season.seconds:>7.1f} {cuts[49] * 1000:>8.1f} "
            f"{cuts[98] * 1000:>8.1f}")  # fmt: skip
    counts = season.verdicts.counts
    say(
        f"failed {counts['failed']}, wrong {counts['wrong']}, mixed generations {counts['mixed']}"
        + (f", conductor failed {counts['conductor failed']}" if counts["conductor failed"] else "")
    )
    for example in season.verdicts.examples:
        say(f"  {example}")
    say("\nnode       heap used MiB (start -> end)   open fds (start -> end)")
    for name in sorted(season.nodes_before.keys() | season.nodes_after.keys()):
        (h0, f0), (h1, f1) = season.nodes_before.get(name, (0, 0)), season.nodes_after.get(name, (0, 0))
        say(f"{name:<10} {h0 / 2**20:>10.0f} -> {h1 / 2**20:<10.0f}          {f0:>5} -> {f1}")
    (r0, d0), (r1, d1) = season.serve_before, season.serve_after
    say(f"{'serve':<10} RSS {r0 / 2**20:.0f} -> {r1 / 2**20:.0f} MiB         {d0:>5} -> {d1}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=9650, help="the cluster's first HTTP port (three: P..P+2)")
    parser.add_argument("--serve-port", type=int, default=9655)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--states", type=int, default=4)
    parser.add_argument("--laws", type=int, default=1500, help="laws of each state's version")
    parser.add_argument("--every", type=float, default=None, help="seconds between changes (default: minutes x 6)")
    parser.add_argument("--keep", action="store_true", help="leave the cluster running when started here")
    args = parser.parse_args()
    seconds = args.minutes * 60
    shape = Shape(
        seconds=seconds, clients=args.clients, every=args.every or max(20.0, seconds / 10),
        down=min(120.0, max(20.0, seconds / 20)), flooded=min(120.0, max(20.0, seconds / 20)),
    )  # fmt: skip

    def heal() -> object:
        return node.start(port=args.port, heap="256m", nodes=3, runtime="distribution")

    began = time.perf_counter()
    found = node.start(port=args.port, heap="256m", nodes=3, runtime="distribution")
    print(f"3-node cluster on {args.port} green in {time.perf_counter() - began:.1f} s (reused: {found.reused})")
    load_average = os.getloadavg()
    try:
        with tempfile.TemporaryDirectory(prefix="lawindex-season-") as folder:
            versions = write_versions(Path(folder), args.states, args.laws)
            questions = questions_of(versions, 12)
            cluster = Cluster(found.url.split(","), args.port, heal)
            print(
                f"{args.states} states x {VERSIONS} versions x {args.laws:,} laws; {len(questions)} questions; "
                f"{args.clients} clients; {args.minutes:g} min; a change every {shape.every:.0f} s; "
                f"load average at the start {load_average[0]:.2f} {load_average[1]:.2f} {load_average[2]:.2f}"
            )
            season = run(cluster, versions, questions, shape, args.serve_port)
            report(season)
            print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            return 0 if season.clean else 1
    finally:
        if not found.reused and not args.keep:
            node.stop(args.port)


if __name__ == "__main__":
    sys.exit(main())
