"""`lawindex serve` against a raw OpenSearch `_search` of the same term queries, over HTTP on loopback.

    python benchmarks/serve.py [--url URL] [--laws 6000] [--requests 2000] [--rounds 3] [--workers 1]
                               [--port 8090] [--memory-states 50 --memory-laws 100000] [--against DIR]

A Texas-size generated corpus is loaded in a namespace of this run's own and `lawindex serve` started on
it (its own process, as users run it). Then, with 1, 8 and 32 concurrent clients (one aiohttp session
each side, keep-alive, the same connection limit), rounds alternate between:

- serve: `GET /v1/states/TX/ask?q=...` (the exact answer: expansion, window, re-scoring, JSON);
- raw:   `POST /<alias>/_search` with `cluster.schema.terms_query(terms)` of the same question, size 8
         (the terms computed and the body serialized before the clock starts, so the raw side does no
         Python work at all): what a client asking OpenSearch itself for the top 8 would send;
- before (with --against DIR): `lawindex serve` run from another checkout's source (DIR, e.g. an older
         commit's `git archive`), in this run's virtual environment: the service before a change.

Each round asks the same questions on both sides; q/s is requests over the round's wall time, p50/p99 of
each request's latency. Targets on a 2-core machine: at 1 client, serve's p50 no more than 1 ms over
raw's; at 32 clients, at least 60% of raw's q/s.

Then: the transport the service could have used, in process: the engine's window search (size 16) by the
sync client in a thread pool (what the service does) and by AsyncOpenSearch awaited directly; the cold
start of `lawindex serve` to ready; and the resident memory of one worker with the corpus loaded and asked
(and, with --memory-states, of a generated corpus of that many states and --memory-laws laws).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import aiohttp

from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.cluster.schema import terms_query
from indexer.opensearch.read.query import _expand
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
from indexer.retrieval.words import words
from tests import synthetic
from tests.synthetic import corpus_of

LAWINDEX = [sys.executable, "-c", "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"]


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def start_serve(
    env: dict[str, str], port: int, workers: int, source: str | None = None
) -> tuple[subprocess.Popen[bytes], float]:
    """`lawindex serve` on `port` (from the checkout at `source`, if given), and the seconds from its start to
    its first 200 on /readyz."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [*LAWINDEX, "serve", "--port", str(port), "--workers", str(workers)],
        env={**os.environ, **env, **({"PYTHONPATH": source} if source else {})},
        cwd=source,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return ready(process, port), time.perf_counter() - began


def ready(process: subprocess.Popen[bytes], port: int, pause: float = 0.01) -> subprocess.Popen[bytes]:
    """`process`, a `lawindex serve` on `port`, once /readyz answers 200 (asked every `pause` seconds); SystemExit
    when it exits first."""
    while True:
        if process.poll() is not None:
            raise SystemExit(f"lawindex serve exited {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as response:
                if response.status == 200:
                    return process
        except OSError:
            pass
        time.sleep(pause)


def stop_serve(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=60)


def rss_mib(pid: int) -> float:
    """Resident memory of process `pid` and its children (the workers), MiB."""
    total = 0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(child) for child in children]
    except OSError:
        pass
    for one in pids:
        for line in Path(f"/proc/{one}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


Request = Callable[[aiohttp.ClientSession, int], Awaitable[None]]


async def round_of(request: Request, count: int, clients: int) -> tuple[float, list[float]]:
    """`count` requests by `clients` concurrent clients on one keep-alive session: (q/s, latencies in ms)."""
    connector = aiohttp.TCPConnector(limit=clients, force_close=False)
    async with aiohttp.ClientSession(connector=connector) as session:
        await request(session, 0)  # the connection opened before the clock starts
        seconds, latencies = await concurrently(lambda number: request(session, number), count, clients)
    return count / seconds, latencies


async def concurrently(one: Callable[[int], Awaitable[None]], count: int, clients: int) -> tuple[float, list[float]]:
    """`one(0)` .. `one(count - 1)` awaited by `clients` concurrent callers: (seconds, each call's latency in ms)."""
    latencies: list[float] = []
    next_one = 0

    async def client() -> None:
        nonlocal next_one
        while next_one < count:
            number = next_one
            next_one += 1
            began = time.perf_counter()
            await one(number)
            latencies.append((time.perf_counter() - began) * 1000)

    began = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return time.perf_counter() - began, latencies


def compare(
    serve_urls: dict[str, str],
    raw_url: str,
    alias: str,
    questions: list[str],
    bodies: list[bytes],
    args: argparse.Namespace,
) -> None:
    """Rounds of each side in turn (the order rotating), at 1, 8 and 32 clients: q/s, p50 and p99."""

    def asker(url: str) -> Request:
        async def serve(session: aiohttp.ClientSession, number: int) -> None:
            async with session.get(
                f"{url}/v1/states/TX/ask", params={"q": questions[number % len(questions)]}
            ) as response:
                assert response.status == 200, await response.text()
                await response.read()

        return serve

    async def raw(session: aiohttp.ClientSession, number: int) -> None:
        async with session.post(
            f"{raw_url}/{alias}/_search",
            data=bodies[number % len(bodies)],
            headers={"content-type": "application/json"},
        ) as response:
            assert response.status == 200, await response.text()
            await response.read()

    sides: list[tuple[str, Request]] = [(name, asker(url)) for name, url in serve_urls.items()]
    sides.append(("raw", raw))
    print(
        "each side: one aiohttp session per round, keep-alive, as many connections as clients; raw is "
        'POST /<alias>/_search {"size": 8, "query": <the same term queries>}, the body serialized beforehand'
    )
    print(f"\n{'clients':>7} {'side':<7}{'q/s':>9}{'p50 ms':>9}{'p99 ms':>9}")
    for clients in (1, 8, 32):
        results: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _ in sides}
        for number in range(args.rounds):
            turn = number % len(sides)
            for name, request in sides[turn:] + sides[:turn]:
                rate, latencies = asyncio.run(round_of(request, args.requests, clients))
                results[name][0].append(rate)
                results[name][1].extend(latencies)
        for name, _ in sides:
            rates, latencies = results[name]
            print(
                f"{clients:>7} {name:<7}{statistics.median(rates):>9.0f}"
                f"{percentile(latencies, 50):>9.2f}{percentile(latencies, 99):>9.2f}"
            )
        raw_rate, raw_p50 = statistics.median(results["raw"][0]), percentile(results["raw"][1], 50)
        for name in serve_urls:
            rate = statistics.median(results[name][0])
            over = percentile(results[name][1], 50) - raw_p50
            label = "ratio" if name == "serve" else name[:6]
            print(
                f"{clients:>7} {label:<7}{rate / raw_rate:>8.2f}x   p50 {over:+.2f} ms"
                + ("   (target: p50 at most +1 ms)" if clients == 1 and name == "serve" else "")
                + ("   (target: q/s at least 0.60x)" if clients == 32 and name == "serve" else "")
            )


def transports(connection: Connection, alias: str, bodies: list[dict[str, Any]], count: int) -> None:
    """The engine's window search, in process: by opensearch-py's sync client in a thread pool (the service
    before), by the light path (`fast_search.FastSearch`) in a thread pool (the service now), and by
    AsyncOpenSearch awaited on the loop."""
    from opensearchpy import AsyncOpenSearch

    from indexer.opensearch.cluster.fast_search import FastSearch

    sync_client = connection.client()
    light = FastSearch(connection, sync_client)

    async def run(clients: int, transport: str) -> tuple[float, float]:
        pool = ThreadPoolExecutor(max_workers=40)  # anyio's default, which FastAPI's `def` routes run in
        async_client = AsyncOpenSearch(hosts=[connection.url], timeout=connection.timeout, pool_maxsize=32)
        loop = asyncio.get_running_loop()

        async def one(number: int) -> None:
            body = bodies[number % len(bodies)]
            if transport == "async":
                await async_client.search(index=alias, body=body)
            elif transport == "light":
                await loop.run_in_executor(pool, lambda: light.search(alias, body))
            else:
                await loop.run_in_executor(pool, lambda: sync_client.search(index=alias, body=body))

        await one(0)
        seconds, latencies = await concurrently(one, count, clients)
        await async_client.close()
        pool.shutdown()
        return count / seconds, percentile(latencies, 50)

    names = {
        "sync": "opensearch-py, pool",
        "light": "light path, pool",
        "async": "AsyncOpenSearch",
    }
    print(
        f"\nthe window search (size 16), in process; CPU is this process's, a search"
        f"\n{'clients':>7} {'transport':<22}{'q/s':>9}{'p50 ms':>9}{'CPU ms':>9}"
    )
    for clients in (1, 8, 32):
        found: dict[str, list[tuple[float, float, float]]] = {name: [] for name in names}
        for number in range(3):
            turn = number % len(names)
            for transport in [*names][turn:] + [*names][:turn]:
                cpu = time.process_time()
                rate, p50 = asyncio.run(run(clients, transport))
                found[transport].append((rate, p50, (time.process_time() - cpu) / count * 1000))
        for transport, name in names.items():
            rates, p50s, cpus = zip(*found[transport], strict=True)
            print(
                f"{clients:>7} {name:<22}{statistics.median(rates):>9.0f}{statistics.median(p50s):>9.2f}"
                f"{statistics.median(cpus):>9.2f}"
            )


def memory(connection: Connection, env: dict[str, str], port: int, states: int, laws: int) -> None:
    """Resident memory of one worker: the sample states, then (optionally) a generated corpus, loaded and asked."""
    sample = Path(__file__).resolve().parents[1] / "corpora"
    sets: list[tuple[str, Path | None]] = [("the 7 sample states", sample)]
    if states:
        sets.append((f"{states} generated states, {laws:,} laws", None))
    print()
    for name, folder in sets:
        namespace = f"{connection.namespace}m{len(name) % 10}"
        spaced = Connection.from_env(connection.url, namespace=namespace)
        with tempfile.TemporaryDirectory() as scratch:
            if folder is None:
                folder = Path(scratch)
                for state, generated in synthetic.generate_corpora(states, laws, 2026).items():
                    with (folder / f"{state}.jsonl").open("w", encoding="utf-8") as out:
                        out.writelines(json.dumps(law.model_dump(exclude_none=True)) + "\n" for law in generated)
            corpora = read_corpora(folder)
            try:
                began = time.perf_counter()
                load(spaced, corpora)
                loaded = time.perf_counter() - began
                process, _ = start_serve({**env, "LAWINDEX_NAMESPACE": namespace}, port, 1)
                idle = rss_mib(process.pid)
                for corpus in corpora:
                    for question in synthetic.generate_questions(corpus.laws, 5, 1):
                        query = urllib.parse.urlencode({"q": question})
                        url = f"http://127.0.0.1:{port}/v1/states/{corpus.state}/ask?{query}"
                        with urllib.request.urlopen(url, timeout=60) as response:
                            response.read()
                asked = rss_mib(process.pid)
                stop_serve(process)
            finally:
                spaced.client().indices.delete(index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True)
        print(
            f"memory, {name} (loaded in {loaded:.0f}s): one worker {idle:.0f} MiB at start, "
            f"{asked:.0f} MiB after 5 questions a state"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=None)
    parser.add_argument("--laws", type=int, default=6000)
    parser.add_argument("--requests", type=int, default=2000, help="requests a round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds a side, alternated")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--memory-states", type=int, default=0)
    parser.add_argument("--memory-laws", type=int, default=100_000)
    parser.add_argument("--skip", nargs="*", default=[], choices=["compare", "transport", "memory"])
    parser.add_argument(
        "--against", default=None, help="a checkout whose `lawindex serve` is run too, as the side `before`"
    )
    args = parser.parse_args()

    connection = Connection.from_env(args.url, namespace=f"lawindex_bench{int(time.time()) % 100000}")
    client = connection.client()
    laws = synthetic.generate_corpus("TX", args.laws, 2026)
    print(f"OpenSearch {client.info()['version']['number']} at {connection.url}; {len(laws)} generated laws")
    load(connection, [corpus_of("TX", laws)])
    env = {"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace}
    try:
        alias = alias_of("TX", connection.namespace)
        from indexer.opensearch.read.engine import OpenSearchEngine

        stats = OpenSearchEngine(connection).statistics("TX")
        # Questions with at least one term: a raw bool of no clauses would match every law, while the
        # service answers such a question without a search.
        generated = synthetic.generate_questions(laws, args.requests * 2, 2026)
        questions = [question for question in generated if _expand(words(question), stats)][: args.requests]
        terms = [_expand(words(question), stats) for question in questions]
        bodies = [json.dumps({"size": 8, "query": terms_query(t)}).encode() for t in terms]

        colds = []
        for _ in range(3):
            process, seconds = start_serve(env, args.port, args.workers)
            colds.append(seconds)
            stop_serve(process)
        print(f"cold start of lawindex serve to ready (/readyz 200): median of 3 {statistics.median(colds):.2f}s")

        if "compare" not in args.skip:
            process, _ = start_serve(env, args.port, args.workers)
            before = start_serve(env, args.port + 1, args.workers, args.against)[0] if args.against else None
            urls = {"serve": f"http://127.0.0.1:{args.port}"}
            if args.against:
                urls["before"] = f"http://127.0.0.1:{args.port + 1}"
            try:
                print(
                    f"lawindex serve --workers {args.workers}; {args.requests} requests a round, {args.rounds} rounds"
                    + (f"; before: {args.against}" if args.against else "")
                )
                compare(urls, connection.url, alias, questions, bodies, args)
            finally:
                code = stop_serve(process)
                if before is not None:
                    stop_serve(before)
                print(f"lawindex serve exited {code} on SIGTERM")
        if "transport" not in args.skip:
            windows = [{"size": 16, "track_total_hits": False, "query": terms_query(t)} for t in terms]
            transports(connection, alias, windows, args.requests)
        if "memory" not in args.skip:
            memory(connection, env, args.port, args.memory_states, args.memory_laws)
    finally:
        client.indices.delete(index=f"{connection.namespace}*", ignore_unavailable=True, allow_no_indices=True)


if __name__ == "__main__":
    main()
