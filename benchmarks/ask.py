"""How much the exact `ask` costs over a raw OpenSearch search, and how fast `lawindex ask` starts.

On a Texas-size generated corpus (tests/synthetic.py, 6,000 laws) loaded in a namespace of its own: the
warm per-question latency of `OpenSearchEngine.ask` (exact: expansion, window, re-scoring, proof,
widening included) and, interleaved question by question in the same run, a raw opensearch-py `search`
for the same `term` queries (size 8, no window, default `_source`). Then the cold start, the same work
on both sides: `lawindex ask TX QUESTION` as its own process against a Python process that imports the
same libraries (typer, pydantic, numpy, opensearchpy) and sends the raw search; medians of several runs.

    python -m benchmarks.ask [--url URL] [--questions 2000] [--laws 6000] [--runs 7]

The target: exact ask within 1.3x of the raw search at p50.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from typing import Any

from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.cluster.schema import terms_query
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.read.query import WINDOW
from indexer.opensearch.write.load import load
from indexer.retrieval.request import Request
from tests import synthetic
from tests.synthetic import corpus_of


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def cold_start(runs: int, url: str, namespace: str, question: str, terms: list[str]) -> tuple[float, float]:
    """Median seconds of `lawindex ask TX QUESTION` and of a process importing the same libraries and
    sending the raw search for the same terms, alternated."""
    lawindex = [sys.executable, "-c", "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"]
    ours = [*lawindex, "ask", "TX", question, "--url", url]
    body = {"size": 8, "query": terms_query(terms)}
    raw = [
        sys.executable,
        "-c",
        "import json, sys, typer, pydantic, numpy\n"
        "from opensearchpy import OpenSearch\n"
        f"OpenSearch({url!r}).search(index={alias_of('TX', namespace)!r}, body=json.loads(sys.argv[1]))",
        json.dumps(body),
    ]
    ask_times: list[float] = []
    raw_times: list[float] = []
    env = {**os.environ, "LAWINDEX_NAMESPACE": namespace}
    for _ in range(runs):
        for command, into in ((ours, ask_times), (raw, raw_times)):
            began = time.perf_counter()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            into.append(time.perf_counter() - began)
    return statistics.median(ask_times), statistics.median(raw_times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=None)
    parser.add_argument("--laws", type=int, default=6000)
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7, help="cold starts of each command")
    parser.add_argument("--window", type=int, default=WINDOW, help="the exact ask's first window")
    args = parser.parse_args()

    connection = Connection.from_env(args.url, namespace=f"lawindex_bench{uuid.uuid4().hex[:8]}")
    client = connection.client()
    laws = synthetic.generate_corpus("TX", args.laws, 2026)
    corpus = corpus_of("TX", laws)
    version = client.info()["version"]["number"]
    print(f"OpenSearch {version} at {connection.url}; {len(laws)} generated laws, {args.questions} questions")
    began = time.perf_counter()
    load(connection, [corpus])
    print(f"loaded in {time.perf_counter() - began:.1f}s")
    try:
        engine = OpenSearchEngine(connection, window=args.window)
        index = alias_of("TX", connection.namespace)
        questions = synthetic.generate_questions(laws, args.questions, 2026)
        stats = engine.statistics("TX")
        from indexer.opensearch.read.query import _expand
        from indexer.retrieval.words import words

        terms_of = {question: _expand(words(question), stats) for question in questions}

        def raw(question: str) -> dict[str, Any]:
            body = {"size": 8, "query": terms_query(terms_of[question])}
            result: dict[str, Any] = client.search(index=index, body=body)
            return result

        # Warm both paths: connection pool, caches, the JIT of the node.
        for question in questions[:200]:
            engine.ask(Request("TX", question))
            raw(question)
        exact_ms: list[float] = []
        raw_ms: list[float] = []
        widened = 0
        for number, question in enumerate(questions):
            # Interleaved, and the order alternated, so that neither path always runs on a warmer node.
            for which in (0, 1) if number % 2 == 0 else (1, 0):
                began = time.perf_counter()
                if which == 0:
                    answer = engine.ask(Request("TX", question))
                    exact_ms.append((time.perf_counter() - began) * 1000)
                    widened += answer.window is not None and answer.window.widened
                else:
                    raw(question)
                    raw_ms.append((time.perf_counter() - began) * 1000)
        print()
        print(f"{'':<28}{'p50 ms':>10}{'p99 ms':>10}")
        for name, values in ((f"exact ask (window {args.window})", exact_ms), ("raw search (size 8)", raw_ms)):
            print(f"{name:<28}{percentile(values, 50):>10.2f}{percentile(values, 99):>10.2f}")
        p50 = percentile(exact_ms, 50) / percentile(raw_ms, 50)
        p99 = percentile(exact_ms, 99) / percentile(raw_ms, 99)
        print(f"{'ratio':<28}{p50:>9.2f}x{p99:>9.2f}x   (target: p50 within 1.30x)")
        print(f"windows widened: {widened} of {len(questions)} questions")
        asked = next(q for q in questions if terms_of[q])
        ask_s, raw_s = cold_start(args.runs, connection.url, connection.namespace, asked, terms_of[asked])
    finally:
        client.indices.delete(index=f"{connection.namespace}-*", ignore_unavailable=True, allow_no_indices=True)

    print()
    print(
        f"cold start, median of {args.runs}: lawindex ask TX (one question) {ask_s * 1000:.0f} ms, "
        f"the same imports and a raw search {raw_s * 1000:.0f} ms ({ask_s / raw_s:.2f}x)"
    )


if __name__ == "__main__":
    main()
