"""Load held: one thread reloads a 50-state corpus while N threads ask, for N = 1, 4, 16.

    python -m benchmarks.soak [--url URL] [--laws 20000] [--seconds 10] [--max-questions 20000] [--check 5]

Two versions of a generated 50-state corpus (tests/synthetic.py, seeds 1 and 2: different laws, different
answers) are written to a temporary folder; version A of every state is loaded into a namespace of this
run's own. Then, for each N, for `--seconds` (or `--max-questions`, whichever comes first):

- one thread loads the states one after another, alternating A and B, so every state keeps changing
  generation under the askers (a real new index, bulk, refresh, alias swap and delete each time);
- N threads share one OpenSearchEngine and ask random (state, question) pairs drawn from both versions.
  Every `--check`-th answer is compared with the reference scorer's answer for A and for B: it must be
  one of them, ids and scores. Any exception, or an answer that is neither, is an error.

Printed per N: questions per second, p50 and p99 latency of `ask` in ms, errors (must be zero), and
how many states the loader swapped meanwhile. All threads share one Python process (and its GIL), as a
web worker would; the latency is of `ask` alone, the checks run outside the timed call. Loopback only:
the URL must be 127.0.0.1 or localhost. Every index of the namespace is deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.retrieval import reference
from indexer.retrieval.answers import Answer
from indexer.retrieval.corpus import Corpus
from indexer.retrieval.request import Request
from tests import synthetic

STATES = 50


def write_version(directory: Path, laws: int, seed: int) -> dict[str, Corpus]:
    """One version of the 50-state corpus as `<STATE>.jsonl` files, read back as a load reads them."""
    return {corpus.state: corpus for corpus in synthetic.write_corpora(directory, STATES, laws, seed)}


def key(answer: Answer) -> list[tuple[str, float]]:
    return [(hit.law.id, float(f"{hit.score:.12g}")) for hit in answer.hits]


@dataclass
class Expected:
    """The reference answers of A and of B, computed once per (state, question) on first need."""

    a: dict[str, Corpus]
    b: dict[str, Corpus]
    known: dict[tuple[str, str], tuple[list[tuple[str, float]], ...]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, state: str, question: str) -> tuple[list[tuple[str, float]], ...]:
        with self.lock:
            found = self.known.get((state, question))
            if found is None:
                found = self.known[(state, question)] = (
                    key(reference.ask(self.a[state], question)),
                    key(reference.ask(self.b[state], question)),
                )
            return found


@dataclass
class Phase:
    askers: int
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    checked: int = 0
    swaps: int = 0
    seconds: float = 0.0


def run_phase(
    connection: Connection,
    versions: tuple[dict[str, Corpus], dict[str, Corpus]],
    questions: list[tuple[str, str]],
    expected: Expected,
    askers: int,
    seconds: float,
    max_questions: int,
    check_every: int,
    turn: list[int],
) -> Phase:
    phase = Phase(askers)
    engine = OpenSearchEngine(connection)
    client = connection.client()
    stop = threading.Event()
    lock = threading.Lock()
    states = sorted(versions[0])

    def loader() -> None:
        while not stop.is_set():
            number = turn[0]
            turn[0] += 1
            state = states[number % len(states)]
            # The version not now served: A was loaded first, so the first pass over the states loads B.
            version = versions[(number // len(states) + 1) % 2]
            try:
                load_state(client, version[state], LoadOptions(namespace=connection.namespace))
                phase.swaps += 1
            except Exception as error:
                with lock:
                    phase.errors.append(f"load {state}: {type(error).__name__}: {error}")

    def asker(seed: int) -> None:
        rng = random.Random(seed)
        asked = 0
        while not stop.is_set():
            state, question = rng.choice(questions)
            began = time.perf_counter()
            try:
                answer = engine.ask(Request(state, question))
            except Exception as error:
                with lock:
                    phase.errors.append(f"ask {state} {question!r}: {type(error).__name__}: {error}")
                continue
            took = time.perf_counter() - began
            asked += 1
            checked = asked % check_every == 0
            if checked and key(answer) not in expected.of(state, question):
                with lock:
                    phase.errors.append(f"ask {state} {question!r}: neither A's nor B's answer")
            with lock:
                phase.latencies.append(took)
                phase.checked += checked
                if len(phase.latencies) >= max_questions:
                    stop.set()

    threads = [threading.Thread(target=loader)] + [
        threading.Thread(target=asker, args=(askers * 1000 + n,)) for n in range(askers)
    ]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    stop.wait(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    phase.seconds = time.perf_counter() - began
    return phase


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--url", default=os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200"))
    parser.add_argument("--laws", type=int, default=20_000, help="laws over the 50 states, per version")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--max-questions", type=int, default=20_000, help="questions at most per phase")
    parser.add_argument("--check", type=int, default=5, help="check every Nth answer against the reference")
    parser.add_argument("--askers", default="1,4,16", help="the Ns, comma-separated")
    args = parser.parse_args()
    host = urlsplit(args.url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"soak: {args.url} is not loopback; this benchmark runs against a local node only", file=sys.stderr)
        return 2

    namespace = f"lawindex_soak{uuid.uuid4().hex[:8]}"
    connection = Connection.from_env(args.url, namespace=namespace, timeout=30)
    client = connection.client()
    with tempfile.TemporaryDirectory(prefix="lawindex-soak-") as folder:
        began = time.perf_counter()
        a = write_version(Path(folder) / "a", args.laws, 1)
        b = write_version(Path(folder) / "b", args.laws, 2)
        questions = [
            (state, question)
            for state in sorted(a)
            for corpus in (a[state], b[state])
            for question in synthetic.generate_questions(corpus.laws, 20, 11)
        ]
        print(f"generated 2 x {args.laws:,} laws over {STATES} states in {time.perf_counter() - began:.1f}s")
        try:
            began = time.perf_counter()
            for state in sorted(a):
                load_state(client, a[state], LoadOptions(namespace=namespace))
            print(f"loaded version A of {STATES} states in {time.perf_counter() - began:.1f}s (namespace {namespace})")
            expected = Expected(a, b)
            turn = [0]
            columns = ("askers", 6), ("questions", 9), ("q/s", 8), ("p50 ms", 8), ("p99 ms", 8), ("checked", 8)
            print("\n" + " ".join(f"{name:>{width}}" for name, width in (*columns, ("swaps", 6), ("errors", 6))))
            failed = 0
            for askers in (int(n) for n in args.askers.split(",")):
                phase = run_phase(
                    connection, (a, b), questions, expected, askers, args.seconds, args.max_questions, args.check, turn
                )
                count = len(phase.latencies)
                cuts = statistics.quantiles(phase.latencies, n=100) if count >= 2 else [0.0] * 99
                print(
                    f"{askers:>6} {count:>9,} {count / phase.seconds:>8.1f} {cuts[49] * 1000:>8.2f} "
                    f"{cuts[98] * 1000:>8.2f} {phase.checked:>8,} {phase.swaps:>6} {len(phase.errors):>6}"
                )
                for error in phase.errors[:5]:
                    print(f"       error: {error}")
                failed += len(phase.errors)
            return 1 if failed else 0
        finally:
            client.indices.delete(index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True)


if __name__ == "__main__":
    sys.exit(main())
