"""Print the tuning figures of tables: handbook tuning half and samples (words, meaning, hybrid) and the
traindata dev topics (meaning). Usage: python3 score.py TABLE... ('wordllama' for the shipped one)."""

import sys

import bench

if __name__ == "__main__":
    sets = bench.tuning_sets()
    for name in sys.argv[1:]:
        embedder = bench.table_embedder(None if name == "wordllama" else bench.read_table(name))
        r = bench.report(embedder, sets)
        d = bench.dev_measure(embedder)
        h, s = r["handbook-tuning"], r["samples"]
        print(f"{name}: hb m {h['meaning']['R@8']:.3f}/{h['meaning']['RR@8']:.3f} "
              f"h {h['hybrid']['R@8']:.3f}/"
              f"{h['hybrid']['RR@8']:.3f} | samples m {s['meaning']['R@8']:.3f}/{s['meaning']['RR@8']:.3f} h "
              f"{s['hybrid']['R@8']:.3f}/{s['hybrid']['RR@8']:.3f} | "
              f"dev({d['questions']}) {d['R@8']:.3f}/{d['RR@8']:.3f}",
              flush=True)
