"""A fresh `lawindex` process's CPU, this checkout against another revision, alternating run by run.

    OPENSEARCH_URL=http://127.0.0.1:11000 LAWINDEX_NAMESPACE=bench python -m benchmarks.cli_start \\
        [--against HEAD~1] [--repeats 20] [-- ask TX "how far from a fire hydrant can i park"]
    python -m benchmarks.cli_start --script SCRIPT [--against REV] [--repeats N] [-- ARGS]

`--script` times a Python script of the repository (its path from the root; ARGS its arguments) the same way,
each tree running its own copy: a test's generator, for instance.

The integration tests run `lawindex` as a process of its own some 650 times a CI run (process accounting of
one fresh-clone `.ci/run`: 658 short Python processes, median 0.7 s of CPU, 847 s in all of the run's 3,195),
and a user's every command pays the same start. The other revision is checked out into a temporary git
worktree; each tree runs its own code (PYTHONPATH) in the same interpreter. The command's CPU (user + system,
of the child, from `wait4`) is what is compared: wall time carries the machine's load. Printed: each tree's
median and quartiles, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
MAIN = "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"
DEFAULT = ["ask", "TX", "how far from a fire hydrant can i park"]


def cpu_of(tree: Path, command: list[str], script: str | None = None) -> float:
    """User + system CPU seconds of one `lawindex COMMAND` (or `python SCRIPT COMMAND`) run from `tree`'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    program = [str(tree / script)] if script else ["-c", MAIN]
    child = subprocess.Popen(
        [sys.executable, *program, *command], cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode("utf-8", "replace") if child.stderr else ""
    if child.returncode != 0:
        what = f"{script or 'lawindex'} {' '.join(command)}"
        raise SystemExit(f"{what} in {tree} exited {child.returncode}: {error.strip()}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", default="HEAD~1", help="the revision to compare with (default HEAD~1)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--script", help="a Python script of the repository to time instead of a lawindex command")
    parser.add_argument("command", nargs="*", help=f"the lawindex command (default: {' '.join(DEFAULT)})")
    arguments = parser.parse_args()
    script = arguments.script
    command = arguments.command or ([] if script else DEFAULT)
    with tempfile.TemporaryDirectory() as folder:
        other = Path(folder) / "other"
        subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", "-q", str(other), arguments.against],
                       check=True)  # fmt: skip
        try:
            trees = {"this checkout": HERE, arguments.against: other}
            runs: dict[str, list[float]] = {name: [] for name in trees}
            for tree in trees.values():  # once each first: the bytecode written, the disk cache warm
                cpu_of(tree, command, script)
            for _ in range(arguments.repeats):
                for name, tree in trees.items():
                    runs[name].append(cpu_of(tree, command, script))
        finally:
            subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(other)], check=False)
    what = f"{script or 'lawindex'} {' '.join(command)}"
    print(f"{what}: CPU seconds of a fresh process, {arguments.repeats} runs each, alternating")
    for name, got in runs.items():
        low, middle, high = statistics.quantiles(got, n=4)
        print(f"  {name:<16} median {middle:.3f}  quartiles {low:.3f}-{high:.3f}")
    this, that = (statistics.median(got) for got in runs.values())
    print(f"  this / {arguments.against}: {this / that:.2f}x")


if __name__ == "__main__":
    main()
