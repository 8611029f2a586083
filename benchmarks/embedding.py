"""The embedder before and after, side by side in one process (issue 28, item 5): one question, meaning in
process, and a state's laws.

    python -m benchmarks.embedding [--before main] [--laws 6000] [--questions 200] [--rounds 3]
                                   [--skip question meaning state]

"before" is `indexer/retrieval/embedding.py` and `pieces.py` as they are at the git revision `--before` (read
with `git show`, loaded as modules of their own beside this tree's, its own model instance); "after" is this
tree's. Every
figure is measured with the two alternating, on the same texts, and every vector of each is checked equal to
the other's, bytes for bytes (the vectors are sealed into every index; the plugin reproduces them):

- one question: `embed([question])` of generated questions (tests/synthetic.py), each side's p50 and p99 in
  microseconds and their ratio (target: well under a millisecond);
- meaning in process: `indexer.retrieval.meaning.answer(..., by="meaning")` on a generated state of --laws
  laws, with each side's embedder and `cosines`, p50/p99 and ratio (where a question's time goes);
- a state's laws: `embed` of every row of the same state (law, question, concept), ms of CPU per 1,000 laws
  (`time.process_time`, the tokenizer's threads included), each round a first call (a new piece cache: the
  first state of a load) then a second (the cache warm).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from benchmarks.serve import percentile
from indexer.retrieval import embedding
from indexer.retrieval import meaning as rank
from indexer.retrieval.corpus import Corpus
from indexer.retrieval.request import Request, Way
from tests import synthetic

HERE = Path(__file__).resolve().parents[1]


SECTIONS = ("question", "meaning", "state")


def loaded(name: str, revision: str, path: str) -> types.ModuleType | None:
    """The file `path` at `revision`, as a module of its own named `name` (None if the file is not there)."""
    shown = subprocess.run(["git", "-C", str(HERE), "show", f"{revision}:{path}"], capture_output=True, text=True)
    if shown.returncode:
        return None
    module = types.ModuleType(name)
    module.__file__ = f"{revision}:{path}"
    sys.modules[module.__name__] = module  # dataclasses and typing look a module up by name
    exec(compile(shown.stdout, module.__file__, "exec"), module.__dict__)  # our own file, at another commit
    return module


def module_at(revision: str) -> types.ModuleType:
    """indexer/retrieval/embedding.py at `revision`, as a module of its own, importing pieces.py at `revision`."""
    pieces = loaded("pieces_before", revision, "indexer/retrieval/pieces.py")
    ours = sys.modules.get("indexer.retrieval.pieces")
    if pieces is not None:
        sys.modules["indexer.retrieval.pieces"] = pieces  # what `from indexer.retrieval.pieces import` finds
    try:
        module = loaded("embedding_before", revision, "indexer/retrieval/embedding.py")
    finally:
        if ours is not None:
            sys.modules["indexer.retrieval.pieces"] = ours
    assert module is not None, f"no indexer/retrieval/embedding.py at {revision}"
    return module


def timed(work: Callable[[], object]) -> float:
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


def alternating(sides: dict[str, Callable[[str], object]], items: Sequence[str], rounds: int) -> dict[str, list[float]]:
    """Each side's seconds per item, the sides alternating item by item (which goes first turning each round)."""
    out: dict[str, list[float]] = {side: [] for side in sides}
    names = list(sides)
    for number in range(rounds):
        order = names if number % 2 == 0 else names[::-1]
        for item in items:
            for side in order:
                out[side].append(timed(lambda: sides[side](item)))  # noqa: B023 -- called at once
    return out


def report(title: str, found: dict[str, list[float]], unit: float, label: str) -> None:
    print(f"\n{title}")
    for side, seconds in found.items():
        values = [one * unit for one in seconds]
        print(f"  {side:<7} p50 {percentile(values, 50):10.2f} {label}   p99 {percentile(values, 99):10.2f} {label}")
    before, after = found["before"], found["after"]
    print(
        f"  after / before: p50 {percentile(after, 50) / percentile(before, 50):.3f}x, "
        f"p99 {percentile(after, 99) / percentile(before, 99):.3f}x"
    )


def one_question(old: embedding.Embedder, new: embedding.Embedder, questions: Sequence[str], rounds: int) -> None:
    for question in questions:
        assert old.embed([question]).tobytes() == new.embed([question]).tobytes(), question
    found = alternating({"before": lambda q: old.embed([q]), "after": lambda q: new.embed([q])}, questions, rounds)
    report(f"one question: embed([question]), {len(questions)} generated questions x {rounds} rounds", found, 1e6, "us")


def in_process(before: types.ModuleType, old: embedding.Embedder, corpus: Corpus, questions: Sequence[str],
               rounds: int) -> None:  # fmt: skip
    """rank.answer by meaning with each side's embedder and cosines (the module's names swapped per call)."""
    sides = {
        "before": (lambda: old, before.cosines),
        "after": (embedding.default_embedder, embedding.cosines),
    }

    def asking(side: str) -> Callable[[str], object]:
        made, cosines = sides[side]

        def ask(question: str) -> object:
            setattr(rank, "default_embedder", made)  # noqa: B010 -- the module's own names, swapped per call
            setattr(rank, "cosines", cosines)  # noqa: B010
            try:
                return rank.answer(corpus, Request(corpus.state, question, Way.meaning, 8))
            finally:
                setattr(rank, "default_embedder", embedding.default_embedder)  # noqa: B010
                setattr(rank, "cosines", embedding.cosines)  # noqa: B010

        return ask

    asks = {side: asking(side) for side in sides}
    for question in questions[:20]:
        first, second = asks["before"](question), asks["after"](question)
        assert [(h.law.id, h.score) for h in first.hits] == [(h.law.id, h.score) for h in second.hits]  # type: ignore[attr-defined]
    found = alternating(asks, questions, rounds)
    report(f"meaning in process: answer(by='meaning') on a {len(corpus.laws):,}-law state", found, 1e3, "ms")


def cold(model: embedding.Embedder) -> embedding.Embedder:
    """`model` with a new, empty piece cache (its own version's), as at the first state a process loads."""
    pieces = getattr(model, "_pieces", None)
    if pieces is not None:
        setattr(model, "_pieces", type(pieces).of(getattr(model, "_tokenizer")))  # noqa: B009, B010
    return model


def state(old: embedding.Embedder, new: embedding.Embedder, corpus: Corpus, rounds: int) -> None:
    texts = [embedding.row_text(law) for law in corpus.laws]
    first, second = cold(old).embed(texts), cold(new).embed(texts)
    assert first.tobytes() == second.tobytes(), "the state's vectors differ"
    found: dict[tuple[str, str], list[float]] = {}
    for number in range(rounds):
        for side in ("before", "after") if number % 2 == 0 else ("after", "before"):
            model = cold(old if side == "before" else new)
            for call in ("first", "second"):
                began = time.process_time()
                made = model.embed(texts)
                found.setdefault((side, call), []).append(time.process_time() - began)
                assert made.tobytes() == first.tobytes(), (side, call)
    per = 1000 / len(texts)
    print(f"\na state's laws: embed of {len(texts):,} rows (law, question, concept), {rounds} rounds, CPU "
          "(process_time) per 1,000 laws, median")  # fmt: skip
    for call, cache in (("first", "cold piece cache"), ("second", "warm piece cache")):
        print(f"  {call} call ({cache}):")
        for side in ("before", "after"):
            seconds = found[(side, call)]
            print(f"    {side:<7} {statistics.median(seconds) * per * 1000:8.1f} ms  "
                  f"({', '.join(f'{one:.2f}' for one in seconds)} s)")  # fmt: skip
        ratio = statistics.median(found[("after", call)]) / statistics.median(found[("before", call)])
        print(f"    after / before: {ratio:.3f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="main", help="the git revision compared with [main]")
    parser.add_argument("--laws", type=int, default=6000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip", nargs="*", default=[], choices=SECTIONS)
    args = parser.parse_args()
    before = module_at(args.before)
    began = time.perf_counter()
    old = before.StaticEmbedder() if hasattr(before, "StaticEmbedder") else before.WordLlamaEmbedder()
    loaded = time.perf_counter() - began
    new = embedding.default_embedder()
    if old.model != new.model:  # a revision before the road table: both sides embed with WordLlama's, same sizes
        new = embedding.StaticEmbedder(embedding.wordllama_files()[1], embedding.WORDLLAMA)
    corpus = synthetic.corpus_of("TX", synthetic.generate_corpus("TX", args.laws, 2026))
    questions = synthetic.generate_questions(corpus.laws, args.questions, 7)
    print(f"before: {args.before}'s embedding.py (model loaded in {loaded:.2f} s); after: this tree; "
          f"numpy {np.__version__}")  # fmt: skip
    if "question" not in args.skip:
        one_question(old, new, questions, args.rounds)
    if "meaning" not in args.skip:
        rank.vectors(corpus.laws)  # the rows' vectors, made once, shared by both sides
        in_process(before, old, corpus, questions, args.rounds)
    if "state" not in args.skip:
        state(old, new, corpus, args.rounds)


if __name__ == "__main__":
    main()
