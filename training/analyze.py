"""Routes (d) and (e) on one table, tuning data only: the question rewritten before embedding (prep.py), and
the fusion's k and meaning weight (words weight 1) on a grid. Usage: python3 analyze.py TABLE|wordllama"""

import sys

import bench
import prep

if __name__ == "__main__":
    name = sys.argv[1]
    embedder = bench.table_embedder(None if name == "wordllama" else bench.read_table(name))
    sets = bench.tuning_sets()
    ranked_by = {}
    for kind in ("none", "stop", "spell", "both"):
        preparer = None if kind == "none" else prep.preparer(kind)
        ranked = {s: bench.rankings(embedder, g, preparer) for s, g in sets.items()}
        ranked_by[kind] = ranked
        line = " | ".join(
            f"{s} m {bench.measure(r, 'meaning')['R@8']:.3f}/{bench.measure(r, 'meaning')['RR@8']:.3f} "
            f"h {bench.measure(r, 'hybrid')['R@8']:.3f}/{bench.measure(r, 'hybrid')['RR@8']:.3f}"
            for s, r in ranked.items())
        print(f"prep {kind}: {line}", flush=True)
    for kind in ("none", "spell"):
        print(f"fusion grid (prep {kind}): k b -> handbook-tuning hybrid R@8/MRR@8/nDCG@8 | samples R@8/MRR@8")
        for k in (1, 2, 3, 5, 10, 20, 60):
            for b in (1, 2, 3, 4, 6, 8, 16, 1e6):
                h = bench.measure(ranked_by[kind]["handbook-tuning"], "hybrid", k, 1.0, b)
                s = bench.measure(ranked_by[kind]["samples"], "hybrid", k, 1.0, b)
                print(f"  k {k:3d} b {b:g}: {h['R@8']:.3f}/{h['RR@8']:.3f}/{h['nDCG@8']:.3f} | "
                      f"{s['R@8']:.3f}/{s['RR@8']:.3f}", flush=True)
