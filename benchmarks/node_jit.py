"""A test node's CPU with the JVM's default compilers against C1 only (`-XX:TieredStopAtLevel=1`), side by side.

    python -m benchmarks.node_jit [--port 11000] [--rounds 2] [--version 3.6.0]

Each round starts one distribution node per variant in turn (the default first, then C1 only, through
OPENSEARCH_JAVA_OPTS, which lawindex passes to bin/opensearch), and reads the JVM's own CPU seconds (utime +
stime of /proc/PID/stat, so that a busy machine slows the wall clock, not the count): when green; for
`lawindex load` of the sample corpora (vectors stored already after the first load); and for `lawindex verify TX
MD` with 200 questions asked by `lawindex ask --from`. The work is the same for both; printed per run, then the
C1/default ratio of the medians. The test suite's nodes run C1 only (scripts/test); a user's node does not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from indexer.node import node

ROOT = Path(__file__).resolve().parents[1]
LAWINDEX = [sys.executable, "-c", "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"]
VARIANTS = {"default": "", "C1 only": "-XX:TieredStopAtLevel=1"}
QUESTIONS = [
    "how far from a fire hydrant can i park",
    "when must i stop for a school bus",
    "speed limit in a school zone",
    "can i turn right on red",
] * 50


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid`, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one(version: str, port: int, options: str, questions: Path) -> dict[str, float]:
    """One node started with `options`: its CPU seconds to green, for the load, for verify and the asks."""
    os.environ["OPENSEARCH_JAVA_OPTS"] = options
    began = time.monotonic()
    started = node.start(version=version, port=port, heap="512m", runtime="distribution")
    wall = time.monotonic() - began
    try:
        pid = int((node.status(port).nodes or [])[0]["pid"] or 0)
        green = cpu_seconds(pid)
        env = {
            **os.environ,
            "OPENSEARCH_URL": started.url,
            "LAWINDEX_NAMESPACE": "bench_jit",
            "LAWINDEX_TIMEOUT": "120",
        }
        subprocess.run([*LAWINDEX, "load", str(ROOT / "corpora")], env=env, capture_output=True, check=True)
        loaded = cpu_seconds(pid)
        subprocess.run([*LAWINDEX, "ask", "TX", "--from", str(questions)], env=env, capture_output=True, check=True)
        subprocess.run([*LAWINDEX, "verify", "TX", "MD"], env=env, capture_output=True, check=True)
        return {
            "start wall s": wall,
            "cpu to green": green,
            "cpu load": loaded - green,
            "cpu ask+verify": cpu_seconds(pid) - loaded,
        }
    finally:
        node.stop(port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=11000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--version", default=node.default_version())
    parser.add_argument(
        "--variant",
        action="append",
        metavar="NAME=OPTIONS",
        help="a variant's OPENSEARCH_JAVA_OPTS (repeatable; the first is the baseline); "
        "default: the JVM's default, then C1 only",
    )
    args = parser.parse_args()
    variants = dict(v.split("=", 1) for v in args.variant) if args.variant else VARIANTS
    with tempfile.TemporaryDirectory() as folder:
        questions = Path(folder) / "questions.txt"
        questions.write_text("\n".join(QUESTIONS) + "\n", encoding="utf-8")
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, options in variants.items():
                measured = one(args.version, args.port, options, questions)
                runs[name].append(measured)
                print(json.dumps({"variant": name, **{k: round(v, 1) for k, v in measured.items()}}), flush=True)
    baseline = next(iter(runs))
    keys = list(runs[baseline][0])
    print(f"\n  {'median':<16}" + "".join(f"{key:>16}" for key in keys))
    medians = {name: {key: statistics.median(r[key] for r in got) for key in keys} for name, got in runs.items()}
    for name, values in medians.items():
        print(f"  {name:<16}" + "".join(f"{values[key]:>16.1f}" for key in keys))
    for name in list(medians)[1:]:
        ratios = "".join(f"{medians[name][key] / medians[baseline][key]:>15.2f}x" for key in keys)
        print(f"  {name} / {baseline}:\n  {'':<16}" + ratios)


if __name__ == "__main__":
    main()
