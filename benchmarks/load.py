"""`lawindex load` against a raw `helpers.bulk` of the same documents, side by side in one run.

    python benchmarks/load.py [--url URL] [--states 50] [--laws 100000] [--rounds 1]

A generated corpus (indexer.synthetic: 50 states, 100,000 laws, Texas-like lengths) is written to a
temporary folder and read back as `lawindex load` reads it. Then, in a namespace of this run's own:

- raw: for each state, a plain index created from the same mappings/laws.json, `helpers.bulk` of the
  documents `indexer.load.documents` makes (prepared before the clock starts), one refresh;
- lawindex: `indexer.load.load` on the same corpora: statistics, a new generation per state, bulk,
  refresh, count check, alias swap; states three at once, as `lawindex load` runs them, and once
  more one state at a time, to show what the load's own steps cost apart from the pool.

Both are timed from the first request to the last answer, and the ratio printed (target: lawindex
within 1.3x of raw). Every index of the namespace is deleted at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.helpers import bulk

from indexer import mappings, synthetic
from indexer.corpus import Corpus, read_corpora
from indexer.load import WORKERS, documents, load
from indexer.opensearch import Connection
from indexer.reference import build_statistics

TARGET = 1.3


def write_corpora(directory: Path, states: int, laws: int, seed: int) -> list[Corpus]:
    """The generated corpora as `<STATE>.jsonl` files under `directory`, read back as a load reads them."""
    for state, generated in synthetic.generate_corpora(states, laws, seed).items():
        with (directory / f"{state}.jsonl").open("w", encoding="utf-8") as out:
            for law in generated:
                out.write(json.dumps(law.model_dump(exclude_none=True)) + "\n")
    return read_corpora(directory)


def raw_bulk(client: OpenSearch, namespace: str, prepared: dict[str, list[dict[str, Any]]], tag: str) -> float:
    """Seconds to create a plain index per state, bulk its prepared documents, and refresh it."""
    began = time.perf_counter()
    for state, actions in prepared.items():
        index = f"{namespace}-raw{tag}-{state.lower()}"
        client.indices.create(index=index, body=mappings.laws_index())
        bulk(client, actions, index=index, chunk_size=1000, max_chunk_bytes=10 * 1024 * 1024)
        client.indices.refresh(index=index)
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
        corpora = write_corpora(Path(folder), args.states, args.laws, args.seed)
        total = sum(len(corpus.laws) for corpus in corpora)
        print(f"corpus: {len(corpora)} states, {total:,} laws, generated in {time.perf_counter() - began:.1f} s")
        prepared = {corpus.state: list(documents(corpus, build_statistics(corpus.laws))) for corpus in corpora}

        namespace = f"lawindex_bench{uuid.uuid4().hex[:8]}"
        connection = Connection.from_env(args.url, namespace=namespace, timeout=60)
        client = connection.client()
        print(f"opensearch: {connection.url} {client.info()['version']['number']}, namespace {namespace}")
        times: dict[str, list[float]] = {"raw": [], "lawindex": [], "serial": []}
        try:
            for round_ in range(args.rounds):
                # The order turns each round, so neither side always meets a warmer JVM.
                order = ("raw", "lawindex", "serial")[round_ % 3 :] + ("raw", "lawindex", "serial")[: round_ % 3]
                for which in order:
                    if which == "raw":
                        times["raw"].append(raw_bulk(client, namespace, prepared, str(round_)))
                    else:
                        # A namespace of its own: every state is new, so every state is indexed.
                        fresh = Connection.from_env(args.url, namespace=f"{namespace}{which}{round_}", timeout=60)
                        workers = WORKERS if which == "lawindex" else 1
                        times[which].append(lawindex_load(fresh, corpora, workers))
                client.indices.delete(index=f"{namespace}*", ignore_unavailable=True, allow_no_indices=True)
        finally:
            client.indices.delete(index=f"{namespace}*", ignore_unavailable=True, allow_no_indices=True)

    def line(label: str, runs: list[float]) -> float:
        best = min(runs)
        print(f"{label:<34}: {total / best:7,.0f} laws/s  ({best:.2f} s; rounds {', '.join(f'{t:.2f}' for t in runs)})")
        return best

    raw = line("raw helpers.bulk, state by state", times["raw"])
    ours = line(f"lawindex load ({WORKERS} states at once)", times["lawindex"])
    # The same work without the pool: what the load's own steps (statistics, alias, checks) cost.
    serial = line("lawindex load, state by state", times["serial"])
    print(f"ratio lawindex/raw, state by state: {serial / raw:.2f}x")
    ratio = ours / raw
    verdict = "within" if ratio <= TARGET else "OVER"
    print(f"ratio lawindex/raw: {ratio:.2f}x ({verdict} the {TARGET}x target)")


if __name__ == "__main__":
    main()
