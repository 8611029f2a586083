"""What an operator's tools cost `lawindex serve`, and what a rollback costs the askers.

    OPENSEARCH_URL=http://127.0.0.1:9200 python benchmarks/observed.py [--laws 6000] [--requests 2000]
        [--rounds 4] [--clients 8] [--workers 1] [--port 8090] [--rollbacks 6] [--askers 4]

1. Metrics. A generated Texas of `--laws` laws is loaded in a namespace of this run's own and two services
   started on it side by side: `lawindex serve` (with /metrics, the default) and `lawindex serve --no-metrics`;
   then rounds alternate between them, the same questions, `--clients` concurrent aiohttp clients, keep-alive.
   Printed: each side's q/s and p50/p99, and the ratios (target: within 3%). Then the same again with
   `--log-format json` (stderr to /dev/null) against neither.
2. Rollback. A second generation of the same size (another seed) is loaded, and `--askers` threads ask
   questions of both generations through the engine, each answer compared with the reference's answer on
   either corpus, while `lawindex rollback` swaps back and forth `--rollbacks` times (each its own process,
   as an operator runs it). Printed: each rollback's seconds (the library's, lock to record, and the
   process's), and the answers seen during them: the old generation's, the new one's, neither (must be 0),
   errors (must be 0).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.serve import LAWINDEX, percentile, ready, round_of, stop_serve
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.request import Request
from tests import synthetic


def corpus(directory: Path, laws: int, seed: int) -> Corpus:
    directory.mkdir(parents=True, exist_ok=True)
    synthetic.write_corpus(directory / "TX.jsonl", synthetic.generate_corpus("TX", laws, seed))
    (made,) = read_corpora(directory, ["TX"])
    return made


def start(env: dict[str, str], port: int, workers: int, extra: list[str]) -> subprocess.Popen[bytes]:
    """`lawindex serve EXTRA` on `port`, once /readyz answers 200 (its stderr, and so a JSON log, to /dev/null)."""
    process = subprocess.Popen(
        [*LAWINDEX, "serve", "--port", str(port), "--workers", str(workers), *extra],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return ready(process, port, pause=0.05)


def metrics_cost(env: dict[str, str], questions: list[str], args: argparse.Namespace, log: bool) -> None:
    """Rounds alternating between a service with the thing measured and one without."""
    measured_args = ["--log-format", "json"] if log else []
    sides = {}
    ports = {"with": args.port, "without": args.port + 1}
    for name, extra in (("with", measured_args), ("without", ["--no-metrics"])):
        sides[name] = start(env, ports[name], args.workers, extra)
    rates: dict[str, list[float]] = {name: [] for name in sides}
    latencies: dict[str, list[float]] = {name: [] for name in sides}

    def asker(port: int) -> Any:
        async def ask(session: aiohttp.ClientSession, number: int) -> None:
            question = questions[number % len(questions)]
            async with session.get(f"http://127.0.0.1:{port}/v1/states/TX/ask", params={"q": question}) as answer:
                await answer.read()
                assert answer.status == 200, answer.status

        return ask

    try:
        for round_ in range(args.rounds):
            order = ["with", "without"] if round_ % 2 == 0 else ["without", "with"]
            for name in order:
                rate, seen = asyncio.run(round_of(asker(ports[name]), args.requests, args.clients))
                rates[name].append(rate)
                latencies[name].extend(seen)
    finally:
        for process in sides.values():
            stop_serve(process)
    what = "--log-format json (to /dev/null) and /metrics" if log else "/metrics"
    print(f"\n{what} against --no-metrics: {args.rounds} rounds each, alternated, {args.requests} asks a round, "
          f"{args.clients} clients, {args.workers} worker(s)")  # fmt: skip
    print(f"{'':10} {'q/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    summary = {}
    for name in ("with", "without"):
        qps = statistics.median(rates[name])
        p50, p99 = percentile(latencies[name], 50), percentile(latencies[name], 99)
        summary[name] = (qps, p50, p99)
        print(f"{name:10} {qps:8.0f} {p50:8.2f} {p99:8.2f}")
    (q1, _, p1), (q0, _, p0) = summary["with"], summary["without"]
    print(f"ratio: q/s {q1 / q0:.3f} (with / without), p99 {p1 / p0:.3f}")


def rollbacks(connection: Connection, env: dict[str, str], old: Corpus, new: Corpus, args: argparse.Namespace) -> None:
    questions = synthetic.generate_questions(old.laws, 40, 1) + synthetic.generate_questions(new.laws, 40, 2)
    expected = {
        question: (
            [(hit.law.id, hit.score) for hit in reference.ask(old, question).hits],
            [(hit.law.id, hit.score) for hit in reference.ask(new, question).hits],
        )
        for question in questions
    }
    seen = {"old": 0, "new": 0, "either": 0, "neither": 0, "errors": 0}
    said: dict[str, int] = {}
    guard = threading.Lock()
    stop = threading.Event()

    def asker(seed: int) -> None:
        engine = OpenSearchEngine(connection)
        rng = random.Random(seed)
        while not stop.is_set():
            question = rng.choice(questions)
            try:
                got = [(hit.law.id, hit.score) for hit in engine.ask(Request("TX", question)).hits]
            except Exception as error:  # counted, and said: there must be none
                message = f"{type(error).__name__}: {error}"[:200]
                with guard:
                    seen["errors"] += 1
                    said[message] = said.get(message, 0) + 1
                continue
            was, now = expected[question]
            key = "either" if got == was == now else "old" if got == was else "new" if got == now else "neither"
            with guard:
                seen[key] += 1

    threads = [threading.Thread(target=asker, args=(n,)) for n in range(args.askers)]
    for thread in threads:
        thread.start()
    timings = []
    try:
        time.sleep(1.0)
        for _ in range(args.rollbacks):
            began = time.perf_counter()
            done = subprocess.run(
                [*LAWINDEX, "rollback", "TX", "--json"], env={**os.environ, **env}, capture_output=True, timeout=300
            )
            process_seconds = time.perf_counter() - began
            assert done.returncode == 0, done.stderr.decode()
            timings.append((json.loads(done.stdout)["seconds"], process_seconds))
            # The default goes to the newest kept one older than the serving: from the old one there is none,
            # so forward again by name.
            kept = subprocess.run(
                [*LAWINDEX, "history", "TX", "--json"], env={**os.environ, **env}, capture_output=True, timeout=300
            )
            rows = [json.loads(line) for line in kept.stdout.splitlines()]
            serving = [row["index"] for row in rows if row.get("kind") == "generation" and row["serving"]]
            others = [row["index"] for row in rows if row.get("kind") == "generation" and not row["serving"]]
            if serving and others and others[0] > serving[0]:
                began = time.perf_counter()
                done = subprocess.run(
                    [*LAWINDEX, "rollback", "TX", "--to", others[0], "--json"],
                    env={**os.environ, **env}, capture_output=True, timeout=300,
                )  # fmt: skip
                assert done.returncode == 0, done.stderr.decode()
                timings.append((json.loads(done.stdout)["seconds"], time.perf_counter() - began))
            time.sleep(0.5)
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    library = [one for one, _ in timings]
    process = [one for _, one in timings]
    print(f"\nrollback of a {len(old.laws):,}-law TX, {len(timings)} swaps (back and forth) under {args.askers} askers")
    print(f"  seconds, library (lock, checks, swap, record): min {min(library):.3f}  median "
          f"{statistics.median(library):.3f}  max {max(library):.3f}")  # fmt: skip
    print(f"  seconds, `lawindex rollback` process: min {min(process):.3f}  median {statistics.median(process):.3f}  "
          f"max {max(process):.3f}")  # fmt: skip
    print(f"  answers during: {seen['old']:,} the old generation's, {seen['new']:,} the new one's, "
          f"{seen['either']:,} both's, {seen['neither']:,} neither's, {seen['errors']:,} errors")  # fmt: skip
    for message, times in sorted(said.items(), key=lambda item: -item[1])[:5]:
        print(f"    {times:,} x {message}")


def micro(count: int) -> None:
    """The wrapper's own CPU a request, in process and on one event loop: a trivial ASGI app called `count`
    times bare, through `Observed` with the metrics, and with the metrics and the JSON log (to /dev/null),
    alternated in 5 rounds, the best round of each kept (the machine's other load only adds)."""
    from indexer.service.access_log import AccessLog, Observed
    from indexer.service.metrics import Metrics

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"{}"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        return None

    scope = {"type": "http", "method": "GET", "path": "/v1/states/TX/ask", "query_string": b"q=fire+hydrant",
             "headers": [(b"host", b"127.0.0.1")]}  # fmt: skip
    devnull = os.open(os.devnull, os.O_WRONLY)
    sides = {
        "bare": app,
        "metrics": Observed(app, Metrics(None, "lawindex"), None),
        "metrics + json log": Observed(app, Metrics(None, "lawindex"), AccessLog(fd=devnull)),
    }

    async def run(wrapped: Any) -> float:
        began = time.process_time()
        for _ in range(count):
            await wrapped(dict(scope), receive, send)
        return (time.process_time() - began) / count * 1e6

    best = {name: float("inf") for name in sides}
    for _ in range(5):
        for name, wrapped in sides.items():
            best[name] = min(best[name], asyncio.run(run(wrapped)))
    print(f"\nthe wrapper's CPU a request, in process ({count:,} requests a round, best of 5 rounds)")
    for name in sides:
        extra = best[name] - best["bare"]
        print(f"  {name:20} {best[name]:7.1f} us   (+{extra:.1f} us over bare)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200"))
    parser.add_argument("--laws", type=int, default=6000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--rollbacks", type=int, default=6)
    parser.add_argument("--askers", type=int, default=4)
    parser.add_argument("--skip-metrics", action="store_true")
    parser.add_argument("--micro", type=int, default=20000, help="requests a round of the in-process measure")
    parser.add_argument("--micro-only", action="store_true", help="only the in-process measure (no cluster)")
    args = parser.parse_args()
    micro(args.micro)
    if args.micro_only:
        return
    namespace = f"lawindex_bench{os.getpid()}"
    connection = Connection.from_env(args.url, namespace=namespace)
    env = {"OPENSEARCH_URL": args.url, "LAWINDEX_NAMESPACE": namespace}
    with tempfile.TemporaryDirectory() as scratch:
        old = corpus(Path(scratch) / "old", args.laws, 41)
        new = corpus(Path(scratch) / "new", args.laws, 42)
        try:
            load(connection, [old])
            if not args.skip_metrics:
                questions = synthetic.generate_questions(old.laws, 500, 7)
                metrics_cost(env, questions, args, log=False)
                metrics_cost(env, questions, args, log=True)
            load(connection, [new])
            rollbacks(connection, env, old, new, args)
        finally:
            connection.client().indices.delete(index=f"{namespace}-*", ignore_unavailable=True)


if __name__ == "__main__":
    main()
