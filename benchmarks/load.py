"""`lawindex load` against a raw `helpers.bulk` of the same documents, side by side in one run.

    python -m benchmarks.load [--url URL] [--states 50] [--laws 100000] [--rounds 1]

A generated corpus (tests/synthetic.py: 50 states, 100,000 laws, Texas-like lengths) is written to a
temporary folder and read back as `lawindex load` reads it. Then, in a namespace of this run's own:

- raw: for each state, a plain index created from the same mappings/laws.json, `helpers.bulk` of the
  documents `indexer.opensearch.write.index_body.documents` makes (prepared before the clock starts), one refresh;
- lawindex: `indexer.opensearch.write.load.load` on the same corpora: counts, a new generation per state, bulk,
  refresh, count check, alias swap.

Each side runs twice: WORKERS states at once (as `lawindex load` runs them; raw through a pool of the
same size), and one state at a time. The ratios compare equal concurrency: pool against pool, serial
against serial (target: lawindex within 1.3x of raw, pooled). Timed from the first request to the last
answer. Every index of the namespace is deleted at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.helpers import bulk

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.write import mappings
from indexer.opensearch.write.index_body import documents
from indexer.opensearch.write.load import WORKERS, load
from indexer.retrieval.corpus import Corpus
from indexer.retrieval.statistics import count
from tests import synthetic

TARGET = 1.3


def raw_state(client: OpenSearch, index: str, actions: list[dict[str, Any]]) -> None:
    """A plain index from mappings/laws.json, `helpers.bulk` of the prepared documents, one refresh."""
    client.indices.create(index=index, body=mappings.laws_index())
    bulk(client, actions, index=index, chunk_size=1000, max_chunk_bytes=10 * 1024 * 1024)
    client.indices.refresh(index=index)


def raw_bulk(
    client: OpenSearch, namespace: str, prepared: dict[str, list[dict[str, Any]]], tag: str, workers: int
) -> float:
    """Seconds to write every state raw, `workers` states at once (1: one after another)."""
    began = time.perf_counter()
    jobs = [(f"{namespace}-raw{tag}-{state.lower()}", actions) for state, actions in prepared.items()]
    if workers <= 1:
        for index, actions in jobs:
            raw_state(client, index, actions)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for future in [pool.submit(raw_state, client, index, actions) for index, actions in jobs]:
                future.result()
    return time.perf_counter() - began


def lawindex_load(connection: Connection, corpora: list[Corpus], workers: int = WORKERS) -> float:
    """Seconds `lawindex load` takes on `corpora` (each state new, so each is indexed)."""
    began = time.perf_counter()
    results = load(connection, corpora, workers=workers)
    elapsed = time.perf_counter() - began
    assert all(result.outcome == "indexed" for result in results), "a state was not indexed"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="OpenSearch URL [env OPENSEARCH_URL, default http://127.0.0.1:9200]")
    parser.add_argument("--states", type=int, default=50)
    parser.add_argument("--laws", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=1, help="rounds of all three, turning which goes first")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="lawindex-bench-") as folder:
        began = time.perf_counter()
        corpora = synthetic.write_corpora(Path(folder), args.states, args.laws, args.seed)
        total = sum(len(corpus.laws) for corpus in corpora)
        print(f"corpus: {len(corpora)} states, {total:,} laws, generated in {time.perf_counter() - began:.1f} s")
        prepared = {corpus.state: list(documents(corpus, count(corpus.laws))) for corpus in corpora}

        namespace = f"lawindex_bench{uuid.uuid4().hex[:8]}"
        connection = Connection.from_env(args.url, namespace=namespace, timeout=60)
        client = connection.client()
        print(f"opensearch: {connection.url} {client.info()['version']['number']}, namespace {namespace}")
        sides = ("raw", "lawindex", "raw serial", "lawindex serial")
        times: dict[str, list[float]] = {side: [] for side in sides}
        try:
            for round_ in range(args.rounds):
                # The order turns each round, so that no side always meets a warmer JVM.
                for number in range(len(sides)):
                    which = sides[(number + round_) % len(sides)]
                    workers = 1 if which.endswith("serial") else WORKERS
                    tag = f"{which.replace(' ', '')}{round_}"
                    if which.startswith("raw"):
                        times[which].append(raw_bulk(client, namespace, prepared, tag, workers))
                    else:
                        # A namespace of its own: every state is new, so every state is indexed.
                        fresh = Connection.from_env(args.url, namespace=f"{namespace}{tag}", timeout=60)
                        times[which].append(lawindex_load(fresh, corpora, workers))
                    client.indices.delete(index=f"{namespace}*", ignore_unavailable=True, allow_no_indices=True)
        finally:
            client.indices.delete(index=f"{namespace}*", ignore_unavailable=True, allow_no_indices=True)

    def line(label: str, runs: list[float]) -> float:
        best = min(runs)
        print(f"{label:<38}: {total / best:7,.0f} laws/s  ({best:.2f} s; rounds {', '.join(f'{t:.2f}' for t in runs)})")
        return best

    raw = line(f"raw helpers.bulk, {WORKERS} states at once", times["raw"])
    ours = line(f"lawindex load, {WORKERS} states at once", times["lawindex"])
    raw_serial = line("raw helpers.bulk, state by state", times["raw serial"])
    serial = line("lawindex load, state by state", times["lawindex serial"])
    print(f"ratio lawindex/raw, state by state: {serial / raw_serial:.2f}x")
    ratio = ours / raw
    verdict = "within" if ratio <= TARGET else "OVER"
    print(f"ratio lawindex/raw, {WORKERS} states at once: {ratio:.2f}x ({verdict} the {TARGET}x target)")


if __name__ == "__main__":
    main()
