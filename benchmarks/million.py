"""A million-word state (issue 19, item 2): a misspelt word and a compound, before and after, side by side.

    OPENSEARCH_URL=http://127.0.0.1:10600 python -m benchmarks.million --before /tmp/main-tree [--port 12200]

`--before` is a tree of the code to compare with (`git archive <commit> | tar -x -C DIR`); this tree is
"after". A state of --laws laws and about --words distinct words (tests/synthetic.py's
generate_wide_corpus) is written once to --work (kept between runs), and loaded by each side into a
namespace of its own (`million_before`, `million_after`; --loaded: they are loaded already), words only:
the vectors are not what is measured here (a load of this state with them, since the embedder works in
bounded runs: 72.7 s, peak 1,834 MB; before that, 16 GB and killed). Then, side by side, each side's own code:

- a fresh `lawindex ask` process per question (misspelt, compound, known words), on OpenSearch and on the
  reference engine: wall time and peak RSS (the child's rusage), the median of --repeats;
- a warm `lawindex serve`: after one question, --typos distinct misspelt words one request each: the
  first's latency and the median of the rest, and the service's peak RSS (VmHWM);
- the spec's own TypeScript (tests/spec_oracle) in Node over the same file: the whole process, and
  each question's `bm25` call (its linear scan of the vocabulary for an unknown word) timed inside it;
- (after only) the seal's cost per question: the same warm questions asked with the per-law digest check
  (indexer/opensearch/trust/integrity.py) and with it switched off, alternating, in one process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parents[1]
MAIN = "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"
QUESTIONS = {
    "misspelt": "can i park near a fire hydrabt",
    "compound": "can i park by a firehydrant",
    "known": "can i park near a fire hydrant",
}
# Misspelt words for the warm service, each asked once: a letter of a road word changed.
_ROAD = ("hydrant", "pedestrian", "crosswalk", "intersection", "motorcycle", "registration", "headlight")

_LOAD = """
import resource, sys, time
from pathlib import Path
from indexer.opensearch.cluster import vector_layout as vectors
vectors.for_cluster = lambda client: None  # words only (the module docstring says why)
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
started = time.perf_counter()
(result,) = load(Connection.from_env(), read_corpora(Path(sys.argv[1]), ["TX"]), force=True)
print(f"{result.outcome} in {time.perf_counter() - started:.1f} s, peak "
      f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")
"""

_SEAL = """
import json, statistics, sys, time
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.retrieval.request import Request
engine = OpenSearchEngine(Connection.from_env())
questions = json.loads(sys.argv[1])
checked = OpenSearchEngine.refuse_altered
for question in questions:
    engine.ask(Request("TX", question))  # warm: statistics, blocks, remembered spellings
times = {"with": [], "without": []}
for round in range(int(sys.argv[2])):
    for way in ("with", "without") if round % 2 == 0 else ("without", "with"):
        OpenSearchEngine.refuse_altered = checked if way == "with" else (lambda self, state, stats, hits: None)
        started = time.perf_counter()
        hits = sum(len(engine.ask(Request("TX", question)).hits) for question in questions)
        times[way].append((time.perf_counter() - started) / len(questions))
print(json.dumps({way: statistics.median(values) for way, values in times.items()} | {"hits": hits}))
"""

_SPEC_TIMER = """
import { performance } from "node:perf_hooks";
import { readFileSync } from "node:fs";
import { LAWS } from "./corpus.js";
import { bm25 } from "./retrieve.js";
const questions = JSON.parse(readFileSync(process.env.LAWINDEX_QUESTIONS!, "utf8")) as string[];
for (const question of questions) {
  const started = performance.now();
  const ids = bm25(LAWS, question).map((law) => law.id);
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ question, ms, ids }) + "\\n");
}
"""


def run(command: list[str], env: dict[str, str], timeout: float = 900) -> tuple[float, int, str, str]:
    """(wall seconds, 0, stdout, stderr) of one child process; RuntimeError when it fails."""
    started = time.perf_counter()
    # Run from the side's own tree: `python -c` puts the working directory first on sys.path.
    cwd = env.get("PYTHONPATH") or None
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{command[-4:]} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return time.perf_counter() - started, 0, done.stdout, done.stderr


def measured(command: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS MB, stdout) of `command`, run from a fresh Python of its own so that its
    peak is its own (RUSAGE_CHILDREN of that Python)."""
    probe = (
        "import json, resource, subprocess, sys, time\n"
        "started = time.perf_counter()\n"
        "done = subprocess.run(json.loads(sys.argv[1]), capture_output=True, text=True)\n"
        "wall = time.perf_counter() - started\n"
        "print(json.dumps({'wall': wall, 'peak': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024,"
        " 'code': done.returncode, 'out': done.stdout, 'err': done.stderr[-400:]}))\n"
    )
    _, _, out, _ = run([sys.executable, "-c", probe, json.dumps(command)], env)
    found = json.loads(out)
    if found["code"] != 0:
        raise RuntimeError(f"{command[-3:]} exited {found['code']}: {found['err']}")
    return float(found["wall"]), int(found["peak"]), str(found["out"])


def side_env(tree: Path, namespace: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "LAWINDEX_NAMESPACE": namespace}


def fresh_asks(tree: Path, namespace: str, corpora: Path, engine: str, repeats: int) -> dict[str, tuple[float, int]]:
    """Per question: (median wall seconds, largest peak RSS MB) of a fresh `lawindex ask` process."""
    env = side_env(tree, namespace)
    out: dict[str, tuple[float, int]] = {}
    for name, question in QUESTIONS.items():
        walls, peaks = [], []
        for _ in range(repeats):
            command = [sys.executable, "-c", MAIN, "ask", "TX", question, "--engine", engine, "--corpora", str(corpora)]
            wall, peak, _ = measured(command, env)
            walls.append(wall)
            peaks.append(peak)
        out[name] = (statistics.median(walls), max(peaks))
    return out


def typos(count: int) -> list[str]:
    made = []
    for word in _ROAD:
        for i in range(1, len(word)):
            made.append(f"can i park near a {word[:i]}q{word[i + 1 :]}")
    return made[:count]


def _rss_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def warm_service(tree: Path, namespace: str, port: int, count: int) -> dict[str, float]:
    """A `lawindex serve` of `tree`: ready, one known-word question, then `count` misspelt ones."""
    env = side_env(tree, namespace)
    process = subprocess.Popen(
        [sys.executable, "-c", MAIN, "serve", "--port", str(port)], env=env, cwd=str(tree),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(base + "/healthz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        ready = _rss_kb(process.pid, "VmRSS")
        with httpx.Client(base_url=base, timeout=300) as client:

            def ask(question: str) -> float:
                started = time.perf_counter()
                answer = client.get("/v1/states/TX/ask", params={"q": question})
                answer.raise_for_status()
                return time.perf_counter() - started

            first_known = ask(QUESTIONS["known"])
            latencies = [ask(question) for question in typos(count)]
        return {
            "ready_mb": ready / 1024,
            "first_question_s": first_known,
            "first_typo_s": latencies[0],
            "later_typos_median_ms": statistics.median(latencies[1:]) * 1000,
            "later_typos_max_ms": max(latencies[1:]) * 1000,
            "peak_mb": _rss_kb(process.pid, "VmHWM") / 1024,
        }
    finally:
        process.terminate()
        process.wait(timeout=30)


def spec_in_node(corpus: Path) -> tuple[float, int, list[dict[str, object]]]:
    """The spec's own bm25 in Node over `corpus`: (process wall s, peak RSS MB, per question its ms)."""
    sys.path.insert(0, str(HERE))
    from tests.spec_oracle import oracle

    with tempfile.TemporaryDirectory() as scratch:
        directory = oracle.prepare(Path(scratch), oracle.spec_path())
        (directory / "timed.ts").write_text(_SPEC_TIMER, encoding="utf-8")
        questions = directory / "questions.json"
        questions.write_text(json.dumps([QUESTIONS["known"], QUESTIONS["misspelt"], QUESTIONS["compound"]]))
        env = {**os.environ, "LAWINDEX_CORPUS": str(corpus), "LAWINDEX_QUESTIONS": str(questions)}
        wall, peak, out = measured([str(oracle.TSX), str(directory / "timed.ts")], env)
    return wall, peak, [json.loads(line) for line in out.splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="a tree of the code compared with")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "lawindex-million")
    parser.add_argument("--laws", type=int, default=24000)
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--port", type=int, default=12200, help="the warm services' port")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per question (after)")
    parser.add_argument("--typos", type=int, default=40)
    parser.add_argument("--loaded", action="store_true", help="both namespaces hold the state already")
    parser.add_argument("--namespaces", default="million_before,million_after", help="before's,after's")
    parser.add_argument("--skip-before-reference", action="store_true", help="(80 s a question before)")
    args = parser.parse_args()
    before_namespace, after_namespace = args.namespaces.split(",")
    sides = {"before": (args.before.resolve(), before_namespace), "after": (HERE, after_namespace)}
    corpora = args.work / "corpora"
    corpus = corpora / "TX.jsonl"
    if not corpus.is_file():
        sys.path.insert(0, str(HERE))
        from tests.synthetic import generate_wide_corpus, write_corpus

        started = time.perf_counter()
        corpora.mkdir(parents=True, exist_ok=True)
        write_corpus(corpus, generate_wide_corpus("TX", args.laws, args.words, 19))
        print(f"generated {corpus} in {time.perf_counter() - started:.1f} s")
    sys.path.insert(0, str(HERE))
    from indexer.retrieval.corpus import read_corpus
    from indexer.retrieval.statistics import count

    counted = count(read_corpus(corpus).laws)
    print(f"state: {args.laws:,} laws, {len(counted.vocabulary):,} distinct words, {corpus.stat().st_size:,} bytes")
    del counted
    if not args.loaded:
        for name, (tree, namespace) in sides.items():
            _, _, out, _ = run([sys.executable, "-c", _LOAD, str(corpora)], side_env(tree, namespace), timeout=1800)
            print(f"load ({name}): {out.strip()}")

    print("\nspec (Node, its own TypeScript over the same file):")
    wall, peak, timed = spec_in_node(corpus)
    print(f"  one process, 3 questions: {wall:.2f} s, peak {peak} MB")
    for line in timed:
        print(f"  bm25({line['question']!r}): {float(line['ms']):.1f} ms")  # type: ignore[arg-type]

    for engine in ("opensearch", "reference"):
        print(f"\nfresh `lawindex ask --engine {engine}` (median of runs; peak RSS):")
        for name, (tree, namespace) in sides.items():
            if engine == "reference" and name == "before" and args.skip_before_reference:
                print(f"  {name}: not run (--skip-before-reference)")
                continue
            repeats = args.repeats if name == "after" else 1
            for question, (wall, peak) in fresh_asks(tree, namespace, corpora, engine, repeats).items():
                print(f"  {name:6} {question:8} {wall:7.2f} s  {peak:5} MB")

    print("\nwarm `lawindex serve` (one known-word question, then distinct typos):")
    for offset, (name, (tree, namespace)) in enumerate(sides.items()):
        found = warm_service(tree, namespace, args.port + offset, args.typos)
        print(f"  {name:6} " + ", ".join(f"{key} {value:.3f}" for key, value in found.items()))

    print("\nthe seal's cost per question (after; warm engine, per-law digests checked vs not, alternating):")
    questions = [QUESTIONS["misspelt"], QUESTIONS["compound"], QUESTIONS["known"], *typos(12)]
    _, _, out, _ = run([sys.executable, "-c", _SEAL, json.dumps(questions), "10"], side_env(*sides["after"]))
    seal = json.loads(out)
    with_ms, without_ms = seal["with"] * 1000, seal["without"] * 1000
    print(
        f"  {len(questions)} questions x 10 rounds, {seal['hits']} hits a round: with {with_ms:.2f} ms, "
        f"without {without_ms:.2f} ms a question: +{with_ms - without_ms:.2f} ms ({with_ms / without_ms:.3f}x)"
    )


if __name__ == "__main__":
    main()
