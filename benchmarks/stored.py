"""The reference engine on a million-word state, a fresh `lawindex ask --engine reference` process each time:
counting the file in the process (before) against reading the stored state (after), side by side.

    python -m benchmarks.stored --before /tmp/main-tree [--repeats 5]

`--before` is a tree of the code to compare with (`git archive <commit> | tar -x -C DIR`); this tree is
"after". The state is benchmarks/million.py's (--work, written there if missing). Each side's own CLI, in
the same run, alternating question by question, each with LAWINDEX_CACHE at a temporary directory of its
own: after's first process counts the file and stores it (reported apart), every later one reads what was
stored. Wall time and peak RSS of each process (the median, the largest), and whether both sides printed
the same answer.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.million import MAIN, QUESTIONS, measured, side_env

HERE = Path(__file__).resolve().parents[1]


def _ask(tree: Path, cache: Path, corpora: Path, question: str) -> tuple[float, int, str]:
    env = {**side_env(tree, "stored"), "LAWINDEX_CACHE": str(cache)}
    command = [sys.executable, "-c", MAIN, "ask", "TX", question, "--engine", "reference", "--corpora", str(corpora)]
    return measured(command, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="a tree of the code compared with")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "lawindex-million")
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    corpora = arguments.work / "corpora"
    if not (corpora / "TX.jsonl").exists():
        from tests import synthetic

        corpora.mkdir(parents=True, exist_ok=True)
        synthetic.write_corpus(corpora / "TX.jsonl", synthetic.generate_wide_corpus("TX", 24000, 1000000, 19))
    size = (corpora / "TX.jsonl").stat().st_size
    print(f"state: {corpora / 'TX.jsonl'} ({size:,} bytes); {arguments.repeats} fresh processes a side a question")
    with tempfile.TemporaryDirectory() as before_cache, tempfile.TemporaryDirectory() as after_cache:
        wall, peak, _ = _ask(HERE, Path(after_cache), corpora, QUESTIONS["known"])
        print(f"after, the first process (counts the file and stores it): {wall:.2f} s, {peak} MB")
        print("| question | before (counted) | after (stored) | after / before | same answer |")
        print("|---|---|---|---|---|")
        for name, question in QUESTIONS.items():
            sides: dict[str, list[tuple[float, int, str]]] = {"before": [], "after": []}
            for _ in range(arguments.repeats):
                sides["before"].append(_ask(arguments.before, Path(before_cache), corpora, question))
                sides["after"].append(_ask(HERE, Path(after_cache), corpora, question))
            walls = {side: statistics.median(run[0] for run in runs) for side, runs in sides.items()}
            peaks = {side: max(run[1] for run in runs) for side, runs in sides.items()}
            same = {run[2] for runs in sides.values() for run in runs}
            print(
                f"| {name} | {walls['before']:.2f} s, {peaks['before']} MB | {walls['after']:.2f} s, "
                f"{peaks['after']} MB | {walls['after'] / walls['before']:.3f}x | {'yes' if len(same) == 1 else 'NO'} |"
            )


if __name__ == "__main__":
    main()
