"""A three-node cluster against one node, on the same corpus in the same run, and the faults' figures.

Starts (or finds) a three-node cluster of the distribution at --port (ports PORT..PORT+2) and a single
node at --single-port, both with --heap, and prints:

- each one's start to green (0 when it was already running);
- the exact ask's p50/p99 on three nodes (through the three URLs) against one node: the sample corpora
  loaded into each, the same questions interleaved one by one;
- a load of the same corpora with a replica (three nodes, auto_expand_replicas 0-1) against without
  (`--replicas 0`) on the same cluster, alternated;
- for each fault on the cluster, 8 threads asking throughout: asks, failed, wrong: (a) a node SIGKILLed,
  (c) a rolling restart of the three nodes, (d) the node holding TX's primary SIGKILLed; and (b) a node
  SIGKILLed during a 7-state load: its outcome.

    python -m benchmarks.cluster [--port 9480] [--single-port 9485] [--heap 256m] [--rounds 3]

With --hung, only a node that is alive and silent (SIGSTOPped, then SIGCONTed), on the three-node cluster:
a batch of --questions questions (`lawindex ask TX --from FILE --json`, its own process) and `lawindex
serve` under 8 clients for --seconds, each with every node answering and with one node stopped; for this
tree and, with --against DIR (another checkout, e.g. `git archive` of an older commit), for that one, in
the same run. A batch is cut off after --cap seconds (then the answers it printed are counted).

    python -m benchmarks.cluster --hung [--port 9480] [--against DIR] [--questions 300] [--seconds 10]

With --block, the time from a flood-stage block (`index.blocks.read_only_allow_delete`) set on the index
a load of 30,000 generated laws is filling, once laws are in it, to the load's end (`lawindex load`, its
own process; for this tree and --against DIR), cut off after --cap seconds; and what it left.

    python -m benchmarks.cluster --block [--port 9480] [--against DIR] [--cap 900]

It stops what it started.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from indexer.errors import LawindexError
from indexer.node import node
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.verify import default_questions
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.request import Request

CORPORA = Path(__file__).resolve().parents[1] / "corpora"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def started(port: int, nodes: int, heap: str) -> tuple[node.NodeStatus, float]:
    began = time.monotonic()
    found = node.start(port=port, heap=heap, nodes=nodes, runtime="distribution")
    return found, 0.0 if found.reused else time.monotonic() - began


def asking(
    connection: Connection, truth: dict[tuple[str, str], list[str]], fault: Callable[[], None]
) -> tuple[int, int, int]:
    """(asks, failed, wrong) of 8 threads asking while `fault` runs (2 s before and after)."""
    engine = OpenSearchEngine(connection)
    keys = list(truth)
    counts = [0, 0, 0]
    lock = threading.Lock()
    stop = threading.Event()

    def ask(seed: int) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            state, question = rng.choice(keys)
            try:
                ok = engine.ask(Request(state, question)).ids() == truth[(state, question)]
                outcome = 0 if ok else 2
            except Exception:
                outcome = 1
            with lock:
                counts[0] += 1
                if outcome:
                    counts[outcome] += 1

    threads = [threading.Thread(target=ask, args=(seed,), daemon=True) for seed in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(2)
    fault()
    time.sleep(2)
    stop.set()
    for thread in threads:
        thread.join(timeout=120)
    return counts[0], counts[1], counts[2]


LAWINDEX = "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"


def lawindex_of(tree: Path) -> tuple[list[str], dict[str, str]]:
    """The command that runs `lawindex` from `tree`'s source, and its environment (run it in `tree`:
    `python -c` puts the working directory before PYTHONPATH)."""
    return [sys.executable, "-c", LAWINDEX], {**os.environ, "PYTHONPATH": str(tree)}


def ended(process: subprocess.Popen[bytes], cap: float) -> str:
    """How `process` ended: its exit code, or "cut off at CAP s" when it ran past `cap` seconds (then killed)."""
    try:
        return str(process.wait(timeout=cap))
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return f"cut off at {cap:g} s"


def batch(tree: Path, urls: str, namespace: str, questions: Path, cap: float) -> tuple[float, int, int, str]:
    """(seconds, answered, failed, exit) of `lawindex ask TX --from questions --json`, cut off after `cap` s."""
    command, env = lawindex_of(tree)
    env.update(OPENSEARCH_URL=urls, LAWINDEX_NAMESPACE=namespace)
    began = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen([*command, "ask", "TX", "--from", str(questions), "--json"], stdout=out,
                                   stderr=subprocess.DEVNULL, env=env, cwd=tree)  # fmt: skip
        code = ended(process, cap)
        seconds = time.perf_counter() - began
        out.seek(0)
        lines = [json.loads(line) for line in out.read().decode().splitlines() if line.strip()]
    failed = sum(1 for line in lines if "error" in line)
    return seconds, len(lines) - failed, failed, code


def served(tree: Path, urls: str, namespace: str, port: int) -> subprocess.Popen[bytes]:
    command, env = lawindex_of(tree)
    env.update(OPENSEARCH_URL=urls, LAWINDEX_NAMESPACE=namespace)
    process = subprocess.Popen([*command, "serve", "--port", str(port)], env=env, cwd=tree,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/v1/states/TX/ask?q=speed")
            if connection.getresponse().status == 200:
                return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise SystemExit("lawindex serve did not come up within 60 s")


def hammer(port: int, questions: list[str], seconds: float, clients: int = 8) -> tuple[float, int, dict[int, int]]:
    """(q/s, answers, status counts) of `clients` keep-alive clients asking for `seconds`."""
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    until = time.monotonic() + seconds

    def client(seed: int) -> None:
        rng = random.Random(seed)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.monotonic() < until:
            question = urllib.parse.quote(rng.choice(questions))
            try:
                connection.request("GET", f"/v1/states/TX/ask?q={question}")
                response = connection.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                status = 0
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=client, args=(seed,)) for seed in range(clients)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    answered = sum(statuses.values())
    return answered / wall, answered, statuses


def hung(args: argparse.Namespace) -> None:
    """The figures of a node stopped (SIGSTOP) on the three-node cluster, for this tree and --against."""
    three, three_s = started(args.port, 3, args.heap)
    print(f"start to green: 3 nodes {three_s:.1f} s (0 = already running)")
    namespace = f"lawindex_h{uuid.uuid4().hex[:8]}"
    connection = Connection.from_env(three.url, namespace=namespace, timeout=60.0)
    corpora = read_corpora(CORPORA, ["TX"])
    # The other checkout first: a node stopped long enough leaves the cluster, which the later runs then
    # meet (shard copies promoted and recovered); the first run meets the plain fault.
    trees = {"before": Path(args.against).resolve()} if args.against else {}
    trees["this tree"] = Path(__file__).resolve().parents[1]
    victim = int((node.status(args.port).nodes or [])[1]["pid"])
    asked = [q for q in default_questions(corpora[0]) if q.strip()]
    questions = [asked[i % len(asked)] for i in range(args.questions)]
    try:
        load(connection, corpora)
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
            handle.write("\n".join(questions) + "\n")
        for name, tree in trees.items():
            normal = batch(tree, three.url, namespace, Path(handle.name), args.cap)
            os.kill(victim, signal.SIGSTOP)
            try:
                stopped = batch(tree, three.url, namespace, Path(handle.name), args.cap)
            finally:
                os.kill(victim, signal.SIGCONT)
            print(f"{name}: batch of {args.questions}: every node {normal[0]:.1f} s ({normal[1]} answered, "
                  f"{normal[2]} failed, exit {normal[3]}); one node stopped {stopped[0]:.1f} s ({stopped[1]} "
                  f"answered, {stopped[2]} failed, exit {stopped[3]}); "
                  f"ratio {stopped[0] / normal[0]:.2f}x")  # fmt: skip
            time.sleep(3)  # the node back in every pool's rotation
            service = served(tree, three.url, namespace, args.serve_port)
            try:
                up = hammer(args.serve_port, questions, args.seconds)
                os.kill(victim, signal.SIGSTOP)
                try:
                    down = hammer(args.serve_port, questions, args.seconds)
                finally:
                    os.kill(victim, signal.SIGCONT)
            finally:
                service.terminate()
                service.wait(timeout=60)
            fivexx = sum(count for status, count in down[2].items() if status >= 500 or status == 0)
            print(f"{name}: serve, 8 clients {args.seconds:g} s: every node {up[0]:.0f} q/s {up[2]}; one node "
                  f"stopped {down[0]:.0f} q/s {down[2]} ({fivexx} 5xx or dropped); "
                  f"ratio {down[0] / up[0]:.2f}x")  # fmt: skip
            time.sleep(3)
        os.unlink(handle.name)
    finally:
        connection.client().indices.delete(index=f"{namespace}*", allow_no_indices=True)
        if not three.reused:
            node.stop(args.port)


def blocked_load(tree: Path, url: str, folder: Path, cap: float) -> tuple[float, str, str, list[str]]:
    """(seconds from the block to the end, exit, last line of stderr, indices left) of a load of `folder`
    from `tree`, with a flood-stage block set on its new index once laws are written into it."""
    from opensearchpy import OpenSearch

    from tests.integration.support import block_filling

    client = OpenSearch(hosts=[url], timeout=60)
    namespace = f"lawindex_k{uuid.uuid4().hex[:8]}"
    command, env = lawindex_of(tree)
    env.update(OPENSEARCH_URL=url, LAWINDEX_NAMESPACE=namespace)
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen([*command, "load", str(folder)], env=env, cwd=tree,
                                   stdout=subprocess.DEVNULL, stderr=err)  # fmt: skip
        blocked_at = None
        while blocked_at is None and process.poll() is None:
            if block_filling(client, namespace):
                blocked_at = time.perf_counter()
            time.sleep(0.05)
        code = ended(process, cap)
        seconds = time.perf_counter() - (blocked_at or time.perf_counter())
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    left = sorted(client.indices.get_alias(index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True))
    client.indices.delete(index=f"{namespace}-*", allow_no_indices=True, ignore_unavailable=True)
    said = [line for line in lines if line.startswith("error: ")] or lines[-1:]
    return seconds, code, (said[0] if said else "")[:160], left


def block(args: argparse.Namespace) -> None:
    from tests import synthetic

    three, _ = started(args.port, 3, args.heap)
    url = three.url.split(",")[0]
    trees = {"before": Path(args.against).resolve()} if args.against else {}
    trees["this tree"] = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        synthetic.write_corpus(Path(folder) / "TX.jsonl", synthetic.generate_corpus("TX", 30000, seed=20))
        for name, tree in trees.items():
            seconds, code, said, left = blocked_load(tree, url, Path(folder), args.cap)
            print(f"{name}: a flood-stage block mid-load ended the load in {seconds:.1f} s (exit {code}); "
                  f"left {left}; said: {said}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9480)
    parser.add_argument("--single-port", type=int, default=9485)
    parser.add_argument("--heap", default="256m")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hung", action="store_true", help="only the figures of a node SIGSTOPped")
    parser.add_argument("--against", help="another checkout, run beside this one (with --hung)")
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--cap", type=float, default=90.0)
    parser.add_argument("--serve-port", type=int, default=8091)
    parser.add_argument("--block", action="store_true", help="only a flood-stage block set mid-load")
    args = parser.parse_args()
    if args.block:
        block(args)
        return
    if args.hung:
        hung(args)
        return

    three, three_s = started(args.port, 3, args.heap)
    one, one_s = started(args.single_port, 1, args.heap)
    print(f"start to green: 3 nodes {three_s:.1f} s, 1 node {one_s:.1f} s (0 = already running)")
    namespace = f"lawindex_b{uuid.uuid4().hex[:8]}"
    many = Connection.from_env(three.url, namespace=namespace, timeout=60.0)
    single = Connection.from_env(one.url, namespace=namespace, timeout=60.0)
    corpora = read_corpora(CORPORA)
    by_state: dict[str, Corpus] = {corpus.state: corpus for corpus in corpora}
    try:
        load(many, corpora)
        load(single, corpora)
        truth = {
            (state, question): reference.ask(corpus, question).ids()
            for state, corpus in by_state.items()
            for question in default_questions(corpus)
        }
        engines = {"3 nodes": OpenSearchEngine(many), "1 node": OpenSearchEngine(single)}
        times: dict[str, list[float]] = {name: [] for name in engines}
        for _ in range(args.rounds):
            for (state, question), _ids in truth.items():
                for name, engine in engines.items():
                    began = time.perf_counter()
                    engine.ask(Request(state, question))
                    times[name].append(time.perf_counter() - began)
        p = {name: (percentile(t, 50) * 1000, percentile(t, 99) * 1000) for name, t in times.items()}
        print(f"exact ask over {len(times['1 node'])} questions each, interleaved:")
        for name, (p50, p99) in p.items():
            print(f"  {name:<8} p50 {p50:.2f} ms  p99 {p99:.2f} ms")
        print(f"  ratio 3 nodes / 1 node: p50 {p['3 nodes'][0] / p['1 node'][0]:.2f}x, "
              f"p99 {p['3 nodes'][1] / p['1 node'][1]:.2f}x")  # fmt: skip

        seconds: dict[str, list[float]] = {"with a replica": [], "without": []}
        for round_ in range(args.rounds):
            for label, replicas in (("with a replica", None), ("without", 0)):
                spare = replace(many, namespace=f"{namespace}_{round_}{'r' if replicas is None else 'n'}")
                began = time.perf_counter()
                load(spare, corpora, replicas=replicas)
                seconds[label].append(time.perf_counter() - began)
                spare.client().indices.delete(index=f"{spare.namespace}-*")
        with_, without = (sorted(s)[len(s) // 2] for s in seconds.values())
        print(f"load of the 7 sample states on 3 nodes (median of {args.rounds}): with a replica {with_:.2f} s, "
              f"without {without:.2f} s, ratio {with_ / without:.2f}x")  # fmt: skip

        def members() -> list[dict[str, Any]]:
            return node.status(args.port).nodes or []

        def heal() -> None:
            node.start(port=args.port, heap=args.heap, nodes=3, runtime="distribution")

        figures = asking(many, truth, lambda: os.kill(int(members()[2]["pid"]), signal.SIGKILL))
        print(f"fault (a) a node SIGKILLed mid-ask: {figures[0]} asks, {figures[1]} failed, {figures[2]} wrong")
        heal()

        outcome: list[str] = []

        def loading() -> None:
            spare = replace(many, namespace=f"{namespace}_fault")
            try:
                load(spare, corpora, workers=1)
                outcome.append("completed")
            except LawindexError as error:
                outcome.append(f"exit {error.exit_code}: {error}")

        loader = threading.Thread(target=loading)
        loader.start()
        time.sleep(1)
        os.kill(int(members()[1]["pid"]), signal.SIGKILL)
        loader.join()
        heal()
        print(f"fault (b) a node SIGKILLed mid-load: {outcome[0]}")

        def roll() -> None:
            for number in (1, 2, 3):
                node.stop(args.port, node=number)
                heal()

        figures = asking(many, truth, roll)
        print(f"fault (c) a rolling restart: {figures[0]} asks, {figures[1]} failed, {figures[2]} wrong")

        client = many.client()
        index = next(iter(client.indices.get_alias(index=f"{namespace}-*", name=alias_of("TX", namespace))))
        primary = next(s["node"] for s in client.cat.shards(index=index, format="json") if s["prirep"] == "p")
        victim = next(m for m in members() if m["name"] == primary)
        figures = asking(many, truth, lambda: os.kill(int(victim["pid"]), signal.SIGKILL))
        print(f"fault (d) TX's primary's node SIGKILLed: {figures[0]} asks, {figures[1]} failed, {figures[2]} wrong")
        heal()
    finally:
        for connection in (many, single):
            connection.client().indices.delete(index=f"{namespace}*", allow_no_indices=True)
        if not three.reused:
            node.stop(args.port)
        if not one.reused:
            node.stop(args.single_port)


if __name__ == "__main__":
    main()
