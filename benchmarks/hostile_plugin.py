"""One long question against the lawindex plugin (issue 26): its time and peak heap on the node, beside the
spec's own time for the same question (its TypeScript under Node), for questions of 1,000, 10,000 and 100,000
characters of three kinds: one random token, one token of the laws' own words glued, and real words.

The corpus is a generated Texas loaded on the plugin path. Each question is sent raw (http.client) with
`"size": 8`; the node's heap is sampled every 20 ms while it runs (GET _nodes/_local/stats/jvm): the peak
above the heap just before it is the figure (a sample, not an exact peak). The spec runs every question
once after one warm-up call that builds its index. `--before URL` runs the same on a second node (main's
plugin) for the lengths listed in `--before-lengths` only: on main's plugin a token of 1,500 letters killed
the 512 MB node with OutOfMemoryError.

    python -m benchmarks.hostile_plugin --url http://127.0.0.1:9200 [--before http://127.0.0.1:9201]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import string
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.words import ranked, ranked_text, words
from tests import synthetic
from tests.spec_oracle.oracle import TSX, prepare, spec_path

LENGTHS = (1_000, 10_000, 100_000)
KINDS = ("random token", "known words glued", "real words")

# Times each question once, after a warm-up call that builds the spec's index for the laws.
SPEC_TIMER = """
import { readFileSync } from "node:fs";
import { LAWS } from "./corpus.js";
import { bm25 } from "./retrieve.js";
bm25(LAWS, "warm up");
for (const line of readFileSync(process.env.LAWINDEX_QUESTIONS as string, "utf8").split("\\n")) {
  if (line === "") continue;
  const question = JSON.parse(line) as string;
  const began = process.hrtime.bigint();
  const ids = bm25(LAWS, question).map((law) => law.id);
  const ms = Number(process.hrtime.bigint() - began) / 1e6;
  process.stdout.write(JSON.stringify({ ms, ids }) + "\\n");
}
"""


def question(kind: str, length: int, vocabulary: list[str], seed: int) -> str:
    rng = random.Random(seed)
    if kind == "random token":
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(length))
    glued: list[str] = []
    total = 0
    while total < length:
        glued.append(rng.choice(vocabulary))
        total += len(glued[-1]) + (kind == "real words")
    return ("".join(glued) if kind == "known words glued" else " ".join(glued))[:length]


class Node:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 9200

    def call(self, method: str, path: str, body: object = None, timeout: float = 600) -> tuple[int, dict[str, object]]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            payload = None if body is None else json.dumps(body).encode()
            connection.request(method, path, body=payload, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"{}")
        finally:
            connection.close()

    def heap(self) -> int:
        _, stats = self.call("GET", "/_nodes/_local/stats/jvm")
        node = next(iter(stats["nodes"].values()))  # type: ignore[union-attr]
        return int(node["jvm"]["mem"]["heap_used_in_bytes"])

    def ask(self, index: str, text: str) -> tuple[float, int, list[str], str]:
        """Wall seconds, peak heap above the start (bytes, sampled), the ids, and an error if any."""
        base = self.heap()
        peak = [base]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                try:
                    peak[0] = max(peak[0], self.heap())
                except OSError:
                    return
                time.sleep(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        began = time.perf_counter()
        try:
            status, body = self.call(
                "POST", f"/{index}/_search", {"size": 8, "_source": ["id"], "query": {"lawindex": {"question": text}}}
            )
        except (OSError, http.client.HTTPException) as error:
            return time.perf_counter() - began, peak[0] - base, [], f"no answer: {error!r}"
        finally:
            done.set()
            sampler.join()
        seconds = time.perf_counter() - began
        if status != 200:
            return seconds, peak[0] - base, [], f"{status}: {str(body)[:200]}"
        return seconds, peak[0] - base, [str(hit["_source"]["id"]) for hit in body["hits"]["hits"]], ""  # type: ignore[index]


def spec_times(laws_file: Path, questions: list[str]) -> list[tuple[float, list[str]]]:
    with tempfile.TemporaryDirectory() as work:
        directory = Path(work)
        prepare(directory, spec_path())
        (directory / "timer.ts").write_text(SPEC_TIMER, encoding="utf-8")
        asked = directory / "questions.jsonl"
        asked.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
        done = subprocess.run(
            [str(TSX), str(directory / "timer.ts")],
            env={**os.environ, "LAWINDEX_CORPUS": str(laws_file), "LAWINDEX_QUESTIONS": str(asked)},
            capture_output=True,
            text=True,
            timeout=3600,
            check=True,
        )
        rows = [json.loads(line) for line in done.stdout.splitlines()]
        return [(float(row["ms"]) / 1000, list(row["ids"])) for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--before", help="a node with main's plugin, for the lengths of --before-lengths")
    parser.add_argument("--before-lengths", default="1000")
    parser.add_argument("--laws", type=int, default=6000)
    args = parser.parse_args()

    laws = synthetic.generate_corpus("TX", args.laws, seed=26)
    vocabulary = sorted({word for law in laws if ranked(law) for word in words(ranked_text(law))})
    work = Path(tempfile.mkdtemp(prefix="hostile-plugin-"))
    corpus = synthetic.corpus_of("TX", laws, work / "TX.jsonl")
    synthetic.write_corpus(work / "TX.jsonl", laws)
    asked = [
        (kind, length, question(kind, length, vocabulary, seed=length + i))
        for i, kind in enumerate(KINDS)
        for length in LENGTHS
    ]
    spec = spec_times(work / "TX.jsonl", [text for _, _, text in asked])
    print(f"corpus: {args.laws} generated laws, {len(vocabulary)} words (longest {max(map(len, vocabulary))} letters)")

    nodes = [("after", args.url)] + ([("before", args.before)] if args.before else [])
    before_lengths = {int(n) for n in args.before_lengths.split(",")}
    indices: dict[str, str] = {}
    connections = []
    for name, url in nodes:
        connection = Connection.from_env(url, namespace=f"lawindex_bench{random.getrandbits(24):x}", timeout=300.0)
        load(connection, [corpus])
        connections.append(connection)
        indices[name] = alias_of("TX", connection.namespace)
    try:
        print(
            f"{'question':<34} {'spec':>9} "
            + " ".join(f"{name + ' time':>12} {name + ' heap':>11}" for name, _ in nodes)
            + "  same ids"
        )
        for (kind, length, text), (spec_s, spec_ids) in zip(asked, spec, strict=True):
            assert spec_ids == reference.ask(corpus, text).ids()
            cells = [f"{kind + ', ' + format(length, ','):<34} {spec_s * 1000:>7.0f}ms"]
            same = []
            for name, url in nodes:
                if name == "before" and length not in before_lengths:
                    cells.append(f"{'not tried':>12} {'':>11}")
                    continue
                seconds, heap, ids, error = Node(url).ask(indices[name], text)
                cells.append(f"{seconds * 1000:>10.0f}ms {heap / 2**20:>9.0f}MB" + (f" ({error})" if error else ""))
                same.append("yes" if ids == spec_ids and not error else "NO")
            print(" ".join(cells) + "  " + "/".join(same))
    finally:
        for connection in connections:
            connection.client().indices.delete(
                index=f"{connection.namespace}-*", ignore_unavailable=True, allow_no_indices=True
            )


if __name__ == "__main__":
    main()
