"""The integration tests' `lawindex` commands started fresh against forked from a zygote (tests/integration/
forked.py): the CPU of the same commands both ways, alternating round by round.

    OPENSEARCH_URL=http://127.0.0.1:11000 python -m benchmarks.forked_commands [--rounds 4] [--repeats 5]

Each round and way is one driver process that runs the same commands `--repeats` times, as
tests.integration.support runs them (`forked.run`; `LAWINDEX_FRESH_COMMANDS=1` for the fresh way), and then
ends, its zygote with it. Its CPU (user + system of the driver and everything it waited for, the zygote and
its forks included, from `wait4`) is what is compared; the wall time carries the machine's load. The
commands: words, meaning, a batch of questions on stdin, history, verify on two states, and a refusal, on the
sample states loaded first into a namespace of the benchmark's own (dropped at the end).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
NAMESPACE = "bench_forked"
COMMANDS: list[tuple[list[str], bytes | None]] = [
    (["ask", "TX", "how far from a fire hydrant can i park", "--json"], None),
    (["ask", "MD", "when must i stop for a school bus"], None),
    (["ask", "TX", "how far from a fire hydrant can i park", "--by", "meaning"], None),
    (["ask", "AL", "--from", "-", "--json"], b"speed limit in a school zone\ncan i turn right on red\n" * 5),
    (["history", "TX", "--json"], None),
    (["verify", "AL", "MD"], None),
    (["ask", "ZZ", "a state that is not loaded"], None),
]


def drive(way: str, repeats: int) -> None:
    """The driver: every command `repeats` times, the `way` given; fails on a command that fails."""
    sys.path.insert(0, str(HERE))
    from tests.integration import forked

    env = {**os.environ, "LAWINDEX_NAMESPACE": NAMESPACE, "LAWINDEX_FRESH_COMMANDS": "1" if way == "fresh" else ""}
    for _ in range(repeats):
        for args, stdin in COMMANDS:
            code, _out, err = forked.run(args, env, stdin, timeout=300)
            if code != (2 if args[1] == "ZZ" else 0):
                raise SystemExit(f"lawindex {' '.join(args)} exited {code}: {err.decode()[-500:]}")


def measured(way: str, repeats: int) -> tuple[float, float]:
    """One driver's CPU seconds (it and all it waited for) and wall seconds."""
    began = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "benchmarks.forked_commands", "--driver", way,
                              "--repeats", str(repeats)], cwd=HERE)  # fmt: skip
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the {way} driver failed")
    return usage.ru_utime + usage.ru_stime, time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--driver", choices=["fresh", "forked"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.driver:
        drive(args.driver, args.repeats)
        return
    if not os.environ.get("OPENSEARCH_URL"):
        raise SystemExit("set OPENSEARCH_URL to a node to measure against")
    env = {**os.environ, "LAWINDEX_NAMESPACE": NAMESPACE}
    lawindex = [sys.executable, "-c", "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"]
    subprocess.run([*lawindex, "load", str(HERE / "corpora")], env=env, check=True, capture_output=True)
    runs: dict[str, list[tuple[float, float]]] = {"fresh": [], "forked": []}
    try:
        for _ in range(args.rounds):
            for way in runs:
                cpu, wall = measured(way, args.repeats)
                runs[way].append((cpu, wall))
                print(json.dumps({"way": way, "cpu s": round(cpu, 2), "wall s": round(wall, 2)}), flush=True)
    finally:
        from opensearchpy import OpenSearch

        from tests.integration.support import drop_namespace

        drop_namespace(OpenSearch(os.environ["OPENSEARCH_URL"]), NAMESPACE)
    commands = len(COMMANDS) * args.repeats
    print(f"\n{commands} commands a run, {args.rounds} rounds; medians:")
    medians = {
        way: (statistics.median(c for c, _ in got), statistics.median(w for _, w in got)) for way, got in runs.items()
    }
    for way, (cpu, wall) in medians.items():
        print(f"  {way:<7} CPU {cpu:6.1f} s ({cpu / commands:.3f} a command)  wall {wall:6.1f} s")
    print(f"  forked / fresh: CPU {medians['forked'][0] / medians['fresh'][0]:.2f}x, "
          f"wall {medians['forked'][1] / medians['fresh'][1]:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
