"""CPU cost of embedding with a table through lawindex's embedder: per 1,000 rows (OH's 342 rows, batch path)
and per question (embed_one), process time, best of 5. Usage: python3 cost.py TABLE|wordllama..."""

import json
import sys
import time

import bench

from indexer.retrieval.corpus import read_corpus
from indexer.retrieval.embedding import row_text

if __name__ == "__main__":
    laws = read_corpus(bench.MAIN / "eval/corpora/OH.jsonl").laws
    texts = [row_text(law) for law in laws]
    questions = [json.loads(line)["question"] for line in (bench.MAIN / "eval/handbook.jsonl").read_text().splitlines()]
    for name in sys.argv[1:]:
        e = bench.table_embedder(None if name == "wordllama" else bench.read_table(name))
        e.embed(texts[:10]), e.embed_one(questions[0])
        rows = []
        for _ in range(5):
            e._pieces._number.clear()  # a cold piece cache, as a first load
            e._pieces._ids.clear()
            t = time.process_time()
            e.embed(texts)
            rows.append(time.process_time() - t)
        asks = []
        for _ in range(5):
            t = time.process_time()
            for q in questions:
                e.embed_one(q)
            asks.append(time.process_time() - t)
        print(f"{name}: {min(rows) / len(texts) * 1000:.3f} s CPU per 1,000 rows; "
              f"{min(asks) / len(questions) * 1000:.3f} ms CPU per question")
