"""A fresh `lawindex ask` process on a million-word state, by interpreter: the project's development
environment beside an install of lawindex with its own dependencies only, and `lawindex --help` in each as
the floor (Python, the CLI's imports).

    python -m benchmarks.fresh_ask --python dev=python --python user=/tmp/user/bin/python \\
        [--engine opensearch|reference] [--corpora DIR] [--repeats 5]

A user's install has no aiohttp (a development extra here, for the async client's tests): opensearch-py
imports its async client, and aiohttp with it (150 ms), only where aiohttp is installed. Each interpreter
runs this tree's code (PYTHONPATH), alternating run by run; OPENSEARCH_URL and LAWINDEX_NAMESPACE name
the loaded state (benchmarks/million.py loads it), LAWINDEX_CACHE the reference engine's stored states.
Printed: the median wall time and the largest peak RSS of each.
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

from benchmarks.million import MAIN, QUESTIONS, measured

HERE = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", action="append", required=True, help="LABEL=INTERPRETER, one or more")
    parser.add_argument("--engine", default="opensearch", choices=["opensearch", "reference"])
    parser.add_argument("--corpora", type=Path, default=Path("/tmp/lawindex-million/corpora"))
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    pythons = dict(entry.split("=", 1) for entry in arguments.python)
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    runs: dict[tuple[str, str], list[tuple[float, int]]] = {}
    asked = {"--help": ["--help"]} | {
        name: ["ask", "TX", question, "--engine", arguments.engine, "--corpora", str(arguments.corpora)]
        for name, question in QUESTIONS.items()
    }
    for name, words in asked.items():
        for _ in range(arguments.repeats):
            for label, python in pythons.items():
                wall, peak, _ = measured([python, "-c", MAIN, *words], env)
                runs.setdefault((name, label), []).append((wall, peak))
    print(f"engine {arguments.engine}; {arguments.repeats} fresh processes each, alternating interpreters")
    print("| | " + " | ".join(pythons) + " |")
    print("|---|" + "---|" * len(pythons))
    for name in asked:
        cells = []
        for label in pythons:
            found = runs[(name, label)]
            cells.append(f"{statistics.median(w for w, _ in found):.2f} s, {max(p for _, p in found)} MB")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
