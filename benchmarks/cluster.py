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

It stops what it started.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from indexer.errors import LawindexError
from indexer.node import node
from indexer.opensearch.connection import Connection, alias_of
from indexer.opensearch.load import load
from indexer.opensearch.query import OpenSearchEngine
from indexer.opensearch.verify import default_questions
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpora

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
                ok = engine.ask(state, question).ids() == truth[(state, question)]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9480)
    parser.add_argument("--single-port", type=int, default=9485)
    parser.add_argument("--heap", default="256m")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

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
                    engine.ask(state, question)
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
