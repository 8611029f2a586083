"""`lawindex serve` against a raw OpenSearch `_search` of the same term queries, over HTTP on loopback.

    python benchmarks/serve.py [--url URL] [--laws 6000] [--requests 2000] [--rounds 3] [--workers 1]
                               [--port 8090] [--memory-states 50 --memory-laws 100000]

A Texas-size generated corpus is loaded in a namespace of this run's own and `lawindex serve` started on
it (its own process, as users run it). Then, with 1, 8 and 32 concurrent clients (one aiohttp session
each side, keep-alive, the same connection limit), rounds alternate between:

- serve: `GET /v1/states/TX/ask?q=...` (the exact answer: expansion, window, re-scoring, JSON);
- raw:   `POST /<alias>/_search` with `indexer.schema.terms_query(terms)` of the same question, size 8
         (the terms computed before the clock starts, so the raw side does no Python work at all).

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

from indexer.corpus import read_corpora
from indexer.load import load
from indexer.opensearch import Connection, alias_of
from indexer.query import _expand
from indexer.schema import terms_query
from indexer.words import words
from tests import synthetic
from tests.synthetic import corpus_of

LAWINDEX = [sys.executable, "-c", "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"]


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def start_serve(env: dict[str, str], port: int, workers: int) -> tuple[subprocess.Popen[bytes], float]:
    """`lawindex serve` on `port`, and the seconds from its start to its first 200 on /readyz."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [*LAWINDEX, "serve", "--port", str(port), "--workers", str(workers)],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while True:
        if process.poll() is not None:
            raise SystemExit(f"lawindex serve exited {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as response:
                if response.status == 200:
                    return process, time.perf_counter() - began
        except OSError:
            pass
        time.sleep(0.01)


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
    latencies: list[float] = []
    next_one = 0
    connector = aiohttp.TCPConnector(limit=clients, force_close=False)
    async with aiohttp.ClientSession(connector=connector) as session:
        await request(session, 0)  # the connection opened before the clock starts

        async def client() -> None:
            nonlocal next_one
            while next_one < count:
                number = next_one
                next_one += 1
                began = time.perf_counter()
                await request(session, number)
                latencies.append((time.perf_counter() - began) * 1000)

        began = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        seconds = time.perf_counter() - began
    return count / seconds, latencies


def compare(
    serve_url: str, raw_url: str, alias: str, questions: list[str], bodies: list[bytes], args: argparse.Namespace
) -> None:
    async def serve(session: aiohttp.ClientSession, number: int) -> None:
        async with session.get(
            f"{serve_url}/v1/states/TX/ask", params={"q": questions[number % len(questions)]}
        ) as response:
            assert response.status == 200, await response.text()
            await response.read()

    async def raw(session: aiohttp.ClientSession, number: int) -> None:
        async with session.post(
            f"{raw_url}/{alias}/_search",
            data=bodies[number % len(bodies)],
            headers={"content-type": "application/json"},
        ) as response:
            assert response.status == 200, await response.text()
            await response.read()

    print(f"\n{'clients':>7} {'side':<6}{'q/s':>9}{'p50 ms':>9}{'p99 ms':>9}")
    for clients in (1, 8, 32):
        results: dict[str, tuple[list[float], list[float]]] = {"serve": ([], []), "raw": ([], [])}
        for number in range(args.rounds):
            order = (("serve", serve), ("raw", raw)) if number % 2 == 0 else (("raw", raw), ("serve", serve))
            for name, request in order:
                rate, latencies = asyncio.run(round_of(request, args.requests, clients))
                results[name][0].append(rate)
                results[name][1].extend(latencies)
        for name in ("serve", "raw"):
            rates, latencies = results[name]
            print(
                f"{clients:>7} {name:<6}{statistics.median(rates):>9.0f}"
                f"{percentile(latencies, 50):>9.2f}{percentile(latencies, 99):>9.2f}"
            )
        serve_rate, raw_rate = statistics.median(results["serve"][0]), statistics.median(results["raw"][0])
        over = percentile(results["serve"][1], 50) - percentile(results["raw"][1], 50)
        print(
            f"{clients:>7} {'ratio':<6}{serve_rate / raw_rate:>8.2f}x   p50 +{over:.2f} ms"
            + ("   (target: p50 at most +1 ms)" if clients == 1 else "")
            + ("   (target: q/s at least 0.60x)" if clients == 32 else "")
        )


def transports(connection: Connection, alias: str, bodies: list[dict[str, Any]], count: int) -> None:
    """The engine's window search, by the sync client in a thread pool and by AsyncOpenSearch, in process."""
    from opensearchpy import AsyncOpenSearch

    sync_client = connection.client()

    async def run(clients: int, use_async: bool) -> tuple[float, float]:
        pool = ThreadPoolExecutor(max_workers=40)  # anyio's default, which FastAPI's `def` routes run in
        async_client = AsyncOpenSearch(hosts=[connection.url], timeout=connection.timeout, pool_maxsize=32)
        latencies: list[float] = []
        next_one = 0
        loop = asyncio.get_running_loop()

        async def one(number: int) -> None:
            body = bodies[number % len(bodies)]
            if use_async:
                await async_client.search(index=alias, body=body)
            else:
                await loop.run_in_executor(pool, lambda: sync_client.search(index=alias, body=body))

        await one(0)

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
        seconds = time.perf_counter() - began
        await async_client.close()
        pool.shutdown()
        return count / seconds, percentile(latencies, 50)

    print(f"\nthe window search (size 16), in process\n{'clients':>7} {'transport':<22}{'q/s':>9}{'p50 ms':>9}")
    for clients in (1, 8, 32):
        found: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        for number in range(4):
            for use_async in (False, True) if number % 2 == 0 else (True, False):
                found[use_async].append(asyncio.run(run(clients, use_async)))
        for use_async, name in ((False, "sync in a thread pool"), (True, "AsyncOpenSearch")):
            rates = [rate for rate, _ in found[use_async]]
            p50s = [p50 for _, p50 in found[use_async]]
            print(f"{clients:>7} {name:<22}{statistics.median(rates):>9.0f}{statistics.median(p50s):>9.2f}")


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
    args = parser.parse_args()

    connection = Connection.from_env(args.url, namespace=f"lawindex_bench{int(time.time()) % 100000}")
    client = connection.client()
    laws = synthetic.generate_corpus("TX", args.laws, 2026)
    print(f"OpenSearch {client.info()['version']['number']} at {connection.url}; {len(laws)} generated laws")
    load(connection, [corpus_of("TX", laws)])
    env = {"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace}
    try:
        alias = alias_of("TX", connection.namespace)
        from indexer.query import OpenSearchEngine

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
            try:
                print(
                    f"lawindex serve --workers {args.workers}; {args.requests} requests a round, {args.rounds} rounds"
                )
                compare(f"http://127.0.0.1:{args.port}", connection.url, alias, questions, bodies, args)
            finally:
                code = stop_serve(process)
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
