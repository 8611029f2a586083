"""Concurrent first questions on a fresh `lawindex serve`: how many statistics fetches, and what peak memory.

    OPENSEARCH_URL=http://127.0.0.1:9600 python -m benchmarks.first_questions [--laws 20000 | --corpus TX.jsonl]
        [--concurrent 16]

A generated state (tests/synthetic.py, --laws laws: a vocabulary of about twice as many words) is loaded
in a namespace of this run's own. Then, each on a freshly started service (its own process, as users run
it): one question; and --concurrent questions sent at once (distinct questions, none answered before),
each with a word the laws do not use (so that the first builds the spelling index).
Printed per run: the gets of the state's index that the node counted (`_stats/get`: the statistics
fetches; a window is a search), the service's resident memory when ready, its peak (VmHWM) after the
questions, and the peak's growth over ready; the ratio of the concurrent growth to the single one.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import read_corpus
from tests import synthetic
from tests.synthetic import corpus_of

LAWINDEX = [sys.executable, "-c", "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"]


def memory_kb(pid: int, field: str) -> int:
    """A field of /proc/PID/status in kB (VmRSS now, VmHWM the peak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def gets(url: str, index: str) -> int:
    """The gets of `index` the node has counted (realtime gets of documents: the statistics fetches)."""
    body = httpx.get(f"{url}/{index}/_stats/get", timeout=30).json()
    return int(body["indices"][index]["total"]["get"]["total"])


def first_questions(url: str, env: dict[str, str], index: str, questions: list[str], port: int) -> dict[str, int]:
    """`questions` all at once on a fresh service: the node's gets, the service's memory (kB)."""
    process = subprocess.Popen(
        [*LAWINDEX, "serve", "--port", str(port)], env={**os.environ, **env},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(base + "/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        ready = memory_kb(process.pid, "VmRSS")
        before = gets(url, index)

        def ask(question: str) -> int:
            return httpx.get(f"{base}/v1/states/TX/ask", params={"q": question}, timeout=300).status_code

        with ThreadPoolExecutor(len(questions)) as pool:
            codes = list(pool.map(ask, questions))
        assert set(codes) == {200}, codes
        return {"gets": gets(url, index) - before, "ready_kb": ready, "peak_kb": memory_kb(process.pid, "VmHWM")}
    finally:
        process.terminate()
        process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--laws", type=int, default=20_000)
    parser.add_argument("--corpus", type=Path, help="a TX.jsonl to load instead (benchmarks/million.py's state)")
    parser.add_argument("--concurrent", type=int, default=16)
    parser.add_argument("--port", type=int, default=int(os.environ.get("LAWINDEX_BENCH_PORT", "9610")))
    args = parser.parse_args()
    url = os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200").rstrip("/")
    namespace = f"lawindex_b{os.getpid()}"
    connection = Connection.from_env(url, namespace=namespace)
    laws = list(read_corpus(args.corpus).laws) if args.corpus else synthetic.generate_corpus("TX", args.laws, 19)
    try:
        (loaded,) = load(connection, [corpus_of("TX", laws)])
        assert loaded.index is not None
        index = loaded.index
        env = {"OPENSEARCH_URL": url, "LAWINDEX_NAMESPACE": namespace}
        # Each with a word the laws do not use: the first such question builds the spelling index.
        # Only questions that reach a law: one that reaches none asks the alias which index it is (a get).
        drawn = synthetic.generate_questions(laws, 3 * args.concurrent, 7)
        questions = [f"{q} qxzvk" for q in drawn if reference.bm25(laws, q)][: args.concurrent + 1]
        print(f"TX: {len(laws)} laws ({args.corpus or 'generated'}), alias {alias_of('TX', namespace)}")
        one = first_questions(url, env, index, questions[:1], args.port)
        many = first_questions(url, env, index, questions[1:], args.port)
        for name, run in (("1 first question", one), (f"{args.concurrent} concurrent first questions", many)):
            growth = run["peak_kb"] - run["ready_kb"]
            print(
                f"{name:>32}: {run['gets']} statistics fetch(es); ready {run['ready_kb'] / 1024:.0f} MB, "
                f"peak {run['peak_kb'] / 1024:.0f} MB (+{growth / 1024:.0f} MB)"
            )
        ratio = (many["peak_kb"] - many["ready_kb"]) / max(1, one["peak_kb"] - one["ready_kb"])
        print(f"peak growth, {args.concurrent} concurrent / 1: {ratio:.2f}x")
    finally:
        connection.client().indices.delete(index=f"{namespace}-*", ignore_unavailable=True)


if __name__ == "__main__":
    main()
