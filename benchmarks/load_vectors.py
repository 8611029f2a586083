"""Loads with vectors against the words-only load of the same states, side by side (issue 28, item 6).

    OPENSEARCH_URL=http://127.0.0.1:11600 python -m benchmarks.load_vectors [--before DIR]
        [--states 50 --laws 360000] [--work /tmp/lawindex-load-vectors]

Generated states (tests/synthetic.py: lognormal lengths, a Zipf vocabulary, 7,200 laws a state on average) are
written once to --work. Each load below runs in a fresh Python process of its own (its peak RSS is its own), in
a namespace of its own, on a node with k-NN (so that a load with vectors is possible), one after the other:

1. words only: `load(..., vectors=False)` (`lawindex load --no-vectors`);
2. with vectors, the vector store empty (a fresh folder): every row embedded;
3. with vectors again after one state's file changed (a tenth of its laws' text), the store kept from 2: the
   49 unchanged states are left alone, the changed state is rebuilt and only its changed laws embedded;
4. with vectors, every state rebuilt (`force`), the store kept: nothing embedded;
5. the same for the window path (`plugin=False`: the k-NN field, where a cluster has k-NN and not the plugin);
6. (with --before DIR, a tree of the code compared with) that code's runs 1, 2 and 4, each just before this
   code's: run 2 with a store of its own, empty too; run 4 with the same store (every state rebuilt, nothing
   embedded, so that only what the index is given differs: its fields, a graph or not).

`--runs words,vectors` runs only those of 1-5 (by the names words, vectors, changed, force, window; changed and
force after vectors, whose store they keep).

For each: wall seconds; the client's CPU seconds and peak RSS; the node's CPU seconds (`_nodes/stats`, the
process's own) and its heap's peak (sampled every 0.25 s). Ratios are to run 1. The machine is shared: CPU
seconds are steadier than wall time there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

HERE = Path(__file__).resolve().parents[1]

_LOAD = """
import json, resource, sys, time
from pathlib import Path
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
way, folder, store_folder = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
started = time.perf_counter()
options = {}
if way != "before":
    from indexer.retrieval.vector_store import VectorStore
    options = {"vectors": way != "words", "store": VectorStore(Path(store_folder)), "force": way in ("force", "window")}
    if way == "window":
        options["plugin"] = False
results = load(Connection.from_env(timeout=120), read_corpora(folder, kept=False), **options)
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": time.perf_counter() - started, "cpu": usage.ru_utime + usage.ru_stime,
                  "peak_mb": usage.ru_maxrss / 1024, "outcomes": [r.outcome for r in results]}))
"""


class Node:
    """The node's CPU seconds (its process's, from _nodes/stats) and its heap's peak while sampling."""

    def __init__(self, client: OpenSearch) -> None:
        self.client = client
        self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def cpu_s(self) -> float:
        stats = self.client.nodes.stats(metric="process")["nodes"]
        return float(sum(node["process"]["cpu"]["total_in_millis"] for node in stats.values())) / 1000

    def _sample(self) -> None:
        while not self._stop.is_set():
            stats = self.client.nodes.stats(metric="jvm")["nodes"]
            self.peak = max(self.peak, sum(node["jvm"]["mem"]["heap_used_in_bytes"] for node in stats.values()))
            self._stop.wait(0.25)

    def __enter__(self) -> Node:
        self.peak = 0
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def one_load(tree: Path, way: str, corpora: Path, store: Path, namespace: str, node: Node) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree), "LAWINDEX_NAMESPACE": namespace}
    cpu = node.cpu_s()
    with node:
        done = subprocess.run(
            [sys.executable, "-c", _LOAD, way, str(corpora), str(store)],
            env=env, cwd=str(tree), capture_output=True, text=True, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{way} exited {done.returncode}: {done.stderr.strip()[-600:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    found["node_cpu"] = node.cpu_s() - cpu
    found["heap_mb"] = node.peak / 2**20
    return found


def changed_copy(source: Path, target: Path, share: float = 0.1) -> str:
    """`source`'s files in `target`, one state's with a tenth of its laws' text changed; that state's code."""
    target.mkdir(parents=True, exist_ok=True)
    files = sorted(source.glob("*.jsonl"))
    chosen = files[len(files) // 2]
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        if path == chosen:
            rng = random.Random(28)
            for number in rng.sample(range(len(lines)), max(1, int(len(lines) * share))):
                row = json.loads(lines[number])
                row["law"] += " A changed sentence."
                lines[number] = json.dumps(row, ensure_ascii=False)
        (target / path.name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return chosen.stem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="a tree of the code compared with (run 6)")
    parser.add_argument("--runs", default="words,vectors,changed,force,window", help="which of runs 1-5")
    parser.add_argument("--states", type=int, default=50)
    parser.add_argument("--laws", type=int, default=360_000)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "lawindex-load-vectors")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from indexer.opensearch.cluster.connection import Connection
    from tests import synthetic

    corpora = args.work / f"{args.states}-{args.laws}"
    if not corpora.is_dir():
        synthetic.write_corpora(corpora, args.states, args.laws, 7)
    changed = args.work / f"{args.states}-{args.laws}-changed"
    state = changed_copy(corpora, changed)
    # The cleanup deletes a namespace's indices of 50 states at once: more than a default 10 s on a busy node.
    connection = Connection.from_env(timeout=120)
    client = connection.client()
    node = Node(client)
    version = client.info()["version"]["number"]
    laws = sum(1 for path in corpora.glob("*.jsonl") for _ in path.open(encoding="utf-8"))
    nodes = client.nodes.stats(metric="jvm")["nodes"].values()
    heap = sum(node["jvm"]["mem"]["heap_max_in_bytes"] for node in nodes) / 2**30
    print(
        f"{args.states} generated states, {laws:,} laws; OpenSearch {version} at {connection.url}, heap {heap:.1f} GiB"
    )
    prefix = f"lawindex_benchlv{uuid.uuid4().hex[:6]}"
    rows: list[tuple[str, dict[str, Any]]] = []
    chosen = args.runs.split(",")
    with tempfile.TemporaryDirectory(prefix="lawindex-vectors-") as store:
        try:
            named = {
                "words": ("words only (--no-vectors)", HERE, "words", corpora, f"{prefix}w", store),
                "vectors": ("with vectors, store empty", HERE, "vectors", corpora, f"{prefix}v", store),
                "changed": (f"with vectors, {state} changed (a tenth)", HERE, "vectors", changed, f"{prefix}v", store),
                "force": ("with vectors, all rebuilt, store kept", HERE, "force", changed, f"{prefix}v", store),
                "window": ("window path (no plugin), store kept", HERE, "window", changed, f"{prefix}k", store),
            }
            runs = []
            for name in chosen:
                label, _tree, way, folder, namespace, kept = named[name]
                if args.before is not None and name in ("words", "vectors", "force"):
                    own = kept if name == "force" else os.path.join(store, "before")  # empty for run 2
                    runs.append((f"before: {label}", args.before.resolve(), way, folder, f"{prefix}b{name[0]}", own))
                runs.append(named[name])
            for label, tree, way, folder, namespace, kept in runs:
                found = one_load(tree, way, folder, Path(kept), namespace, node)
                rows.append((label, found))
                outcomes = {outcome: found["outcomes"].count(outcome) for outcome in set(found["outcomes"])}
                print(f"  done: {label}: {found['wall']:.1f} s, {outcomes}", flush=True)
        finally:
            client.indices.delete(index=f"{prefix}*", ignore_unavailable=True, allow_no_indices=True)
    base = dict(rows).get("words only (--no-vectors)", rows[0][1])  # this code's words only, where it ran
    print(f"\n  {'load':<40} {'wall s':>8} {'client cpu s':>13} {'client peak MB':>15} {'node cpu s':>11} "
          f"{'node heap MB':>13}   wall / words   client cpu / words")  # fmt: skip
    for label, found in rows:
        print(f"  {label:<40} {found['wall']:8.1f} {found['cpu']:13.1f} {found['peak_mb']:15.0f} "
              f"{found['node_cpu']:11.1f} {found['heap_mb']:13.0f}   {found['wall'] / base['wall']:10.2f}x "
              f"{found['cpu'] / base['cpu']:16.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
