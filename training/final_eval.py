"""Once, after every choice is frozen: each route on the held-out data (handbook held-out half, and the new
states under /work/scratch/evalsets), words / meaning / hybrid, with a paired randomization test of each
against today's default (WordLlama, k 5, 1:4) on the same question.
Usage: python3 final_eval.py NAME=TABLE[:k:b[:prep]]... (the first is the baseline)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import bench
import numpy as np
import prep

EVALSETS = Path(__file__).resolve().parents[1] / "eval"


def held_out_sets() -> dict[str, list[bench.Set]]:
    out = {"handbook-held-out": bench.load_set("handbook-held-out", bench.MAIN / "eval/handbook.jsonl",
                                              bench.MAIN / "eval/corpora", "held-out")}
    for state, questions in (("CO", "colorado.jsonl"), ("FL", "florida.jsonl")):
        out[state] = bench.load_set(state, EVALSETS / questions, EVALSETS / "corpora")
    return out


def paired(a: list[float], b: list[float], rounds: int = 10000) -> float:
    """Two-sided paired randomization (sign-flip) test of mean(b - a)."""
    d = np.array(b) - np.array(a)
    if not d.any():
        return 1.0
    rng = np.random.default_rng(0)
    flips = rng.choice([-1.0, 1.0], size=(rounds, len(d)))
    observed = abs(d.mean())
    return float(((np.abs((flips * d).mean(1)) >= observed - 1e-12).sum() + 1) / (rounds + 1))


def main() -> None:
    sets = held_out_sets()
    routes = []
    for spec in sys.argv[1:]:
        name, rest = spec.split("=", 1)
        parts = rest.split(":")
        table = parts[0]
        k, b = (int(parts[1]), float(parts[2])) if len(parts) > 2 else (5, 4.0)
        kind = parts[3] if len(parts) > 3 else None
        routes.append((name, table, k, b, kind))
    results: dict = {}
    embedders: dict = {}
    for name, table, k, b, kind in routes:
        if table not in embedders:
            embedders[table] = bench.table_embedder(None if table == "wordllama" else bench.read_table(table))
        for set_name, group in sets.items():
            ranked = bench.rankings(embedders[table], group, prep.preparer(kind) if kind else None)
            for way in ("words", "meaning", "hybrid"):
                total, each = bench.measure(ranked, way, k, 1.0, b, per_question=True)
                results[(name, set_name, way)] = (total, each)
    base = routes[0][0]
    lines = []
    for set_name, group in sets.items():
        count = sum(len(s.questions) for s in group)
        lines.append(f"\n### {set_name} ({count} questions)\n")
        lines.append("| route | way | recall@8 | MRR@8 | nDCG@8 | p recall (vs baseline) | p MRR | p nDCG |")
        lines.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for name, *_ in routes:
            for way in ("words", "meaning", "hybrid"):
                if way == "words" and name != base:
                    continue
                total, each = results[(name, set_name, way)]
                ps = []
                for m in bench.MEASURES:
                    if name == base:
                        ps.append("")
                        continue
                    _, other = results[(base, set_name, way)]
                    ids = sorted(each)
                    ps.append(f"{paired([other[i][m] for i in ids], [each[i][m] for i in ids]):.4f}")
                lines.append(f"| {name} | {way} | {total['R@8']:.3f} | {total['RR@8']:.3f} | {total['nDCG@8']:.3f} | "
                             + " | ".join(ps) + " |")
    text = "\n".join(lines)
    print(text)
    Path(bench.__file__).parent.joinpath("out/held_out.md").write_text(text + "\n")
    found = {"|".join(key): value[0] for key, value in results.items()}
    (Path(bench.__file__).parent / "out/held_out.json").write_text(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
