"""What a state costs to serve, for planning (issue 47 item 5): the nodes' CPU a question by words, meaning and
hybrid through the plugin against OpenSearch's own `match` query on the same index (the floor), as the state
grows, with 0, 1 and 2 replicas; and the memory a state takes.

    python -m benchmarks.capacity [--url URL,URL,URL] [--laws 1000,10000] [--replicas 0,1,2]
                                  [--questions 100] [--rounds 2]

For each size, a generated state (tests/synthetic.py, seeded: the same laws every run) loaded on the plugin path
once per replica count. The questions are asked one at a time, in a block a way, the ways' blocks alternating
`--rounds` times (equal work, the same noise); the nodes' CPU is read from `_nodes/stats` (every node's
`process.cpu`, refreshed once a second) before and after each block, less their idle rate: CPU ms a question,
summed over the nodes, hence questions a second per core, and each way as a ratio to `match`. Replicas add
copies, not work a question (one copy of each shard answers a question): what they buy is more nodes' cores to
spread questions over (docs/capacity.md's model). Memory: the index's store (primaries, and every copy, `_stats`)
a 1,000 laws, the heap of every node (`_nodes/stats`, no GC asked: garbage counted) before the load and after the
asking, and the vectors' bytes (256 float32s a law: what the plugin's vector cache holds of a copy it reads).
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Callable

from indexer.errors import LawindexError
from indexer.opensearch.cluster import vector_layout
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.opensearch.write.lock import ensure_locks_index
from indexer.retrieval.corpus import Corpus
from indexer.retrieval.request import Request, Way
from tests import synthetic

WAYS = ("match", "words", "meaning", "hybrid")
REFRESH_S = 1.2  # more than a node's monitor.process.refresh_interval (1 s)


def _cpu_ms(connection: Connection) -> float:
    """The cluster's process CPU so far, in ms, summed over its nodes."""
    found = connection.client().nodes.stats(metric="process")["nodes"]
    return float(sum(node["process"]["cpu"]["total_in_millis"] for node in found.values()))


def _idle_rate(connection: Connection) -> float:
    """CPU ms a second the nodes spend with no question asked (their own upkeep, and the noise of a shared machine)."""
    time.sleep(REFRESH_S)
    before, began = _cpu_ms(connection), time.monotonic()
    time.sleep(3 * REFRESH_S)
    return (_cpu_ms(connection) - before) / (time.monotonic() - began)


def _heap_mib(connection: Connection) -> float:
    found = connection.client().nodes.stats(metric="jvm")["nodes"]
    return float(sum(node["jvm"]["mem"]["heap_used_in_bytes"] for node in found.values())) / 2**20


def _loaded(url: str, corpus: Corpus, replicas: int) -> tuple[Connection, str]:
    connection = Connection.from_env(url, namespace=f"lawindex_capacity{uuid.uuid4().hex[:6]}")
    client = connection.client()
    ensure_locks_index(client, connection.namespace)
    meaning = vector_layout.for_cluster(client, plugin=True)
    options = LoadOptions(namespace=connection.namespace, meaning=meaning, plugin=True, replicas=replicas)
    done = load_state(client, corpus, options)
    assert done.outcome == "indexed" and done.index is not None, done
    return connection, done.index


def measure(url: str, laws: int, replicas: int, questions: int, rounds: int) -> dict[str, float]:
    """One row of the table: CPU ms a question for each way, store and heap."""
    corpus = synthetic.corpus_of("TX", synthetic.generate_corpus("TX", laws, seed=47))
    asked = synthetic.generate_questions(corpus.laws, questions, seed=47)
    probe = Connection.from_env(url)
    heap_before = _heap_mib(probe)
    connection, index = _loaded(url, corpus, replicas)
    try:
        client = connection.client()
        engine = OpenSearchEngine(connection)
        alias = alias_of(corpus.state, connection.namespace)

        def asker(by: str) -> Callable[[str], object]:
            return lambda question: engine.ask(Request(corpus.state, question, Way(by), 8))

        ask: dict[str, Callable[[str], object]] = {
            # The floor: OpenSearch's own match query on the field lawindex's words are analyzed into.
            "match": lambda q: client.search(index=alias, body={"size": 8, "query": {"match": {"words": q}}}),
            **{by: asker(by) for by in ("words", "meaning", "hybrid")},
        }
        for question in asked[:5]:  # warmed: segments' vectors decoded, the embedder loaded, the JIT
            for way in WAYS:
                ask[way](question)
        # `process.cpu` is refreshed once a second on a node: read after a pause, over blocks of questions
        # (the ways' blocks alternating, `rounds` times), less what the nodes spend idle in the same wall time.
        idle = _idle_rate(connection)
        spent = dict.fromkeys(WAYS, 0.0)
        for _ in range(rounds):
            for way in WAYS:
                time.sleep(REFRESH_S)
                before, began = _cpu_ms(connection), time.monotonic()
                for question in asked:
                    ask[way](question)
                time.sleep(REFRESH_S)
                spent[way] += _cpu_ms(connection) - before - idle * (time.monotonic() - began)
        stats = client.indices.stats(index=index, metric="store")["indices"][index]
        row = {way: spent[way] / (len(asked) * rounds) for way in WAYS}
        row["store_primaries_mib"] = stats["primaries"]["store"]["size_in_bytes"] / 2**20
        row["store_total_mib"] = stats["total"]["store"]["size_in_bytes"] / 2**20
        row["heap_added_mib"] = _heap_mib(connection) - heap_before
        return row
    finally:
        connection.client().indices.delete(
            index=f"{connection.namespace}*", ignore_unavailable=True, allow_no_indices=True
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:9640,http://127.0.0.1:9641,http://127.0.0.1:9642")
    parser.add_argument("--laws", default="1000,10000")
    parser.add_argument("--replicas", default="0,1,2")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    nodes = len(Connection.from_env(args.url).client().nodes.stats(metric="process")["nodes"])
    print(f"capacity: {nodes} node(s), {args.questions} questions a block, {args.rounds} rounds of the ways' blocks")
    print("CPU ms a question (every node's process CPU, summed); q/s per core = 1000 / ms; ratio to match")
    began = time.monotonic()
    for laws in (int(part) for part in args.laws.split(",")):
        for replicas in (int(part) for part in args.replicas.split(",")):
            try:
                row = measure(args.url, laws, replicas, args.questions, args.rounds)
            except LawindexError as refused:  # a heap too small for the state: a row of the table too
                print(f"  {laws:>7,} laws, {replicas} replicas: refused: {refused.message}", flush=True)
                continue
            ways = "  ".join(
                f"{way} {row[way]:6.2f} ms {1000 / max(row[way], 1e-9):6.0f} q/s/core {row[way] / row['match']:5.2f}x"
                for way in WAYS
            )
            print(
                f"  {laws:>7,} laws, {replicas} replicas: {ways}\n"
                f"  {'':>7}       store {row['store_primaries_mib']:7.2f} MiB primaries "
                f"({row['store_primaries_mib'] * 1000 / laws:5.2f} MiB a 1,000 laws), {row['store_total_mib']:7.2f} "
                f"MiB every copy; heap +{row['heap_added_mib']:6.1f} MiB (all nodes, GC not asked); vectors "
                f"{laws * 1024 / 2**20:6.2f} MiB a copy",
                flush=True,
            )
    print(f"capacity: {time.monotonic() - began:.0f} s")


if __name__ == "__main__":
    main()
