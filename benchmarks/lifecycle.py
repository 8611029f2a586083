"""What ownership, the lock and verified statistics cost: this checkout against a baseline commit, side by
side in one run, equal work on both sides.

    python benchmarks/lifecycle.py [--url URL] [--baseline REF] [--rounds 5]

The baseline's `indexer/` and `mappings/` are taken from git (`git archive REF`, by default the commit
where this branch left main) into a temporary folder. Each round runs one process per side, alternately,
in a namespace of its own; each process, on the seven sample states:

- load: `indexer.opensearch.write.load.load` of every state into an empty namespace (new indices, bulk, swap);
- unchanged: the same load again (nothing to write: the baseline compares a fingerprint, this checkout
  also counts and verifies the statistics);
- reload: every state changed (its last law dropped), then back: a new index per state, swapped in,
  the old one deleted (this checkout: under the state's lock, in a lock index that now exists);
- cold ask: a question with a new engine each time (the statistics fetched, and here verified, first);
- warm ask: every law's own question through one engine (statistics cached: what `serve` does).

Then the `lawindex ask` command itself, as a new process, per side. Medians are printed, and the ratio
this checkout / baseline. No test asserts any of it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DRIVER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from indexer.retrieval.corpus import read_corpora
from indexer.opensearch.write.load import load
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.engine import OpenSearchEngine

connection = Connection.from_env(sys.argv[2], namespace=sys.argv[3])
corpora = read_corpora(Path(sys.argv[4]))
questions = [(c.state, law.question) for c in corpora for law in c.laws if law.question]
times = {}
try:
    began = time.perf_counter(); load(connection, corpora); times["load"] = time.perf_counter() - began
    began = time.perf_counter(); load(connection, corpora); times["unchanged"] = time.perf_counter() - began
    changed = read_corpora(Path(sys.argv[5]))
    began = time.perf_counter(); load(connection, changed); times["reload"] = time.perf_counter() - began
    began = time.perf_counter(); load(connection, corpora); times["reload back"] = time.perf_counter() - began
    cold = questions[::10]
    began = time.perf_counter()
    for state, question in cold:
        OpenSearchEngine(connection).ask(state, question)
    times["cold ask"] = (time.perf_counter() - began) / len(cold)
    engine = OpenSearchEngine(connection)
    for state in {c.state for c in corpora}:
        engine.statistics(state)
    began = time.perf_counter()
    for state, question in questions:
        engine.ask(state, question)
    times["warm ask"] = (time.perf_counter() - began) / len(questions)
finally:
    connection.client().indices.delete(index=sys.argv[3] + "-*", ignore_unavailable=True, allow_no_indices=True)
print(json.dumps(times))
"""

COMMAND = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"
)


def baseline_tree(ref: str, into: Path) -> Path:
    """The baseline's indexer/ and mappings/ under `into`."""
    archive = subprocess.run(["git", "archive", ref, "indexer", "mappings"], cwd=ROOT, capture_output=True, check=True)
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def side(root: Path, url: str, changed: Path) -> dict[str, float]:
    namespace = f"lawindex_bench{uuid.uuid4().hex[:8]}"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(root), url, namespace, str(ROOT / "corpora"), str(changed)],
        capture_output=True,
        text=True,
        check=True,
    )
    times: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return times


def ask_commands(sides: dict[str, Path], url: str, runs: int) -> dict[str, float]:
    """Median seconds of `lawindex ask TX ...` as a new process, per side, on a state each side loaded in
    a namespace of its own; the sides alternate, run by run."""
    from opensearchpy import OpenSearch

    namespaces = {name: f"lawindex_bench{uuid.uuid4().hex[:8]}" for name in sides}
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    try:
        for name, root in sides.items():
            env = {**os.environ, "OPENSEARCH_URL": url, "LAWINDEX_NAMESPACE": namespaces[name]}
            load = [sys.executable, "-c", COMMAND, str(root), "load", str(ROOT / "corpora"), "--state", "TX"]
            subprocess.run(load, env=env, capture_output=True, check=True)
        for run in range(runs):
            order = list(sides.items())
            for name, root in order if run % 2 == 0 else reversed(order):
                env = {**os.environ, "OPENSEARCH_URL": url, "LAWINDEX_NAMESPACE": namespaces[name]}
                ask = [sys.executable, "-c", COMMAND, str(root), "ask", "TX", "how far from a fire hydrant can i park"]
                began = time.perf_counter()
                subprocess.run(ask, env=env, capture_output=True, check=True)
                seconds[name].append(time.perf_counter() - began)
    finally:
        for namespace in namespaces.values():
            OpenSearch(hosts=[url]).indices.delete(
                index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True
            )
    return {name: statistics.median(values) for name, values in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200"))
    parser.add_argument("--baseline", default=None, help="a git ref (default: where this branch left main)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ref = (
        args.baseline
        or subprocess.run(
            ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"baseline": baseline_tree(ref, Path(tmp) / "baseline"), "this": ROOT}
        changed = Path(tmp) / "changed"
        changed.mkdir()
        for path in sorted((ROOT / "corpora").glob("*.jsonl")):
            (changed / path.name).write_text("".join(path.read_text(encoding="utf-8").splitlines(True)[:-1]))
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        for round_number in range(args.rounds):
            # Each side goes first in every other round: the node's caches and the machine's other work
            # fall on both alike.
            order = list(sides.items())
            for name, root in order if round_number % 2 == 0 else reversed(order):
                runs[name].append(side(root, args.url, changed))
        commands = ask_commands(sides, args.url, 3 * args.rounds)
    print(f"baseline {ref[:12]}, {args.rounds} rounds, medians; 7 sample states, {args.url}")
    print(f"{'':22}{'baseline':>12}{'this':>12}{'ratio':>8}")
    for key in runs["this"][0]:
        base = statistics.median(run[key] for run in runs["baseline"])
        this = statistics.median(run[key] for run in runs["this"])
        unit, scale = ("ms", 1000.0)
        print(f"{key:22}{base * scale:>10.1f}{unit}{this * scale:>10.1f}{unit}{this / base:>8.2f}")
    base, this = commands["baseline"], commands["this"]
    print(f"{'ask command (process)':22}{base * 1000:>10.1f}ms{this * 1000:>10.1f}ms{this / base:>8.2f}")


if __name__ == "__main__":
    main()
