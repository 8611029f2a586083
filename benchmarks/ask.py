"""How much the exact `ask` costs over a raw OpenSearch search, and how fast `lawindex` starts.

On a Texas-size generated corpus (6,000 laws) loaded in a namespace of its own: the warm per-question
latency of `OpenSearchEngine.ask` (exact: expansion, window, re-scoring, proof, widening included) and,
interleaved question by question in the same run, a raw opensearch-py `search` for the same `term`
queries (size 8, no window, default `_source`). Then the cold start of the command: `lawindex --help`
against `python -c "import opensearchpy"`, each the median of several runs.

    python benchmarks/ask.py [--url URL] [--questions 2000] [--laws 6000] [--runs 7]

The target: exact ask within 1.3x of the raw search at p50.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any

from indexer.load import load
from indexer.opensearch import Connection, alias_of
from indexer.query import WINDOW, OpenSearchEngine
from tests import synthetic
from tests.synthetic import corpus_of


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def cold_start(runs: int) -> tuple[float, float]:
    """Median seconds of `lawindex --help` and of `python -c "import opensearchpy"`, alternated."""
    help_times: list[float] = []
    import_times: list[float] = []
    for _ in range(runs):
        for command, into in (
            ([shutil.which("lawindex") or "lawindex", "--help"], help_times),
            ([sys.executable, "-c", "import opensearchpy"], import_times),
        ):
            began = time.perf_counter()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            into.append(time.perf_counter() - began)
    return statistics.median(help_times), statistics.median(import_times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=None)
    parser.add_argument("--laws", type=int, default=6000)
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7, help="cold starts of each command")
    parser.add_argument("--window", type=int, default=WINDOW, help="the exact ask's first window")
    args = parser.parse_args()

    connection = Connection.from_env(args.url, namespace=f"lawindex_bench{int(time.time()) % 100000}")
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
        from indexer.query import _expand
        from indexer.words import words

        terms_of = {question: _expand(words(question), stats) for question in questions}

        def raw(question: str) -> dict[str, Any]:
            body = {"size": 8, "query": {"bool": {"should": [{"term": {"words": t}} for t in terms_of[question]]}}}
            result: dict[str, Any] = client.search(index=index, body=body)
            return result

        # Warm both paths: connection pool, caches, the JIT of the node.
        for question in questions[:200]:
            engine.ask("TX", question)
            raw(question)
        exact_ms: list[float] = []
        raw_ms: list[float] = []
        widened = 0
        for number, question in enumerate(questions):
            # Interleaved, and the order alternated, so that neither path always runs on a warmer node.
            for which in (0, 1) if number % 2 == 0 else (1, 0):
                began = time.perf_counter()
                if which == 0:
                    engine.ask("TX", question)
                    exact_ms.append((time.perf_counter() - began) * 1000)
                    window = engine.last_window
                    widened += window is not None and len(window.sizes) > 1
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
    finally:
        client.indices.delete(index=f"{connection.namespace}-*", ignore_unavailable=True, allow_no_indices=True)

    help_s, import_s = cold_start(args.runs)
    print()
    print(
        f"cold start, median of {args.runs}: lawindex --help {help_s * 1000:.0f} ms, "
        f"python -c 'import opensearchpy' {import_s * 1000:.0f} ms ({help_s / import_s:.2f}x)"
    )


if __name__ == "__main__":
    main()
