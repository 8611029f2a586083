"""Reference only: all-MiniLM-L6-v2 itself (jax forward pass, float32, not on the grid) as the meaning
embedder, on the held-out sets, with the default fusion and with k 5 / 1:8. Usage: python3 teacher_eval.py"""

import time

import bench
import final_eval
import minilm
import numpy as np


class Teacher:
    def embed(self, texts):  # type: ignore[no-untyped-def]
        return minilm.encode(list(texts)).astype(np.float32)


if __name__ == "__main__":
    started = time.process_time()
    for name, group in final_eval.held_out_sets().items():
        ranked = bench.rankings(Teacher(), group)
        print(name, "meaning", bench.measure(ranked, "meaning"), "hybrid 5/1:4", bench.measure(ranked, "hybrid"),
              "hybrid 5/1:8", bench.measure(ranked, "hybrid", 5, 1.0, 8.0), flush=True)
    print(f"{time.process_time() - started:.0f} s CPU")
