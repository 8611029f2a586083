"""../shared/spec/retrieve.md's `bm25`, `spelledAs` and `oneEditApart`, ported line for line and nothing more.

Slow on purpose: no index, a scan of the vocabulary per unknown word. It is the oracle the fast
reference scorer (`indexer.retrieval.reference`) and the spelling index (`indexer.retrieval.spelling`) are
proven equal to, and the baseline the benchmarks print ratios against. It lives with the tests: production code never
imports it, and it imports nothing of indexer's scoring (its idf, term score and oneEditApart are its own
literal copies), so it cannot agree with the code by sharing a mistake. The one thing it shares is the
logarithm: the spec's `Math.log` is V8's, which Python has only as indexer.retrieval.fdlibm's port (Python's own is
glibc's, an ulp off for 3% of idf arguments), and that port is held bit-equal to Node's `Math.log` and
Java's `StrictMath.log` on its own (tests/unit/test_fdlibm.py), so sharing it shares nothing unproven.

`bm25_scored` rebuilds the statistics on every call, as a line-for-line port of the spec without its
WeakMap would; `CachedSpec` keeps them per laws sequence, as the spec's own `indexOf` does, which is the
fair baseline for a benchmark (the spec never rebuilds for the same array).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from indexer.retrieval.corpus import Law
from indexer.retrieval.fdlibm import log as v8_log  # the spec's Math.log: V8's, bit for bit
from indexer.retrieval.words import ranked, ranked_text, words


def one_edit_apart(a: str, b: str) -> bool:
    """True when one insertion, deletion or substitution turns `a` into `b`."""
    if a == b:
        return False
    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :]
    return a[i + 1 :] == b[i:] if len(a) > len(b) else a[i:] == b[i + 1 :]


def spelled_as(word: str, vocabulary: dict[str, int]) -> list[str]:
    """The vocabulary's words `word` stands for, in vocabulary order: itself, the words it contains, or one edit."""
    if word in vocabulary:
        return [word]
    if len(word) < 4:
        return []
    found: list[str] = []
    for known in vocabulary:
        if len(known) >= 4 and known in word:  # noqa: SIM114 -- the spec's two branches, kept apart
            found.append(known)
        elif len(word) >= 5 and abs(len(known) - len(word)) <= 1 and one_edit_apart(word, known):
            found.append(known)
    return found


@dataclass(frozen=True)
class Index:
    """The spec's `Index`: what BM25 needs of a laws array that does not depend on the question."""

    length: int
    size: int
    docs: list[tuple[int, dict[str, int]]]  # per law: its length and word counts
    average: float
    frequency: dict[str, int]


def index_of(laws: Sequence[Law]) -> Index:
    """The spec's `indexOf`, without its cache: built afresh."""
    frequency: dict[str, int] = {}
    docs: list[tuple[int, dict[str, int]]] = []
    for law in laws:
        tokens = words(ranked_text(law)) if ranked(law) else []
        counts: dict[str, int] = {}
        for word in tokens:
            counts[word] = counts.get(word, 0) + 1
        for word in counts:
            frequency[word] = frequency.get(word, 0) + 1
        docs.append((len(tokens), counts))
    counted = [doc for doc, law in zip(docs, laws, strict=True) if ranked(law)]
    size = len(counted)
    average = sum(length for length, _ in counted) / max(1, size)
    return Index(len(laws), size, docs, average, frequency)


def ranked_by(laws: Sequence[Law], index: Index, question: str, limit: int = 8) -> list[tuple[Law, float]]:
    """The spec's `bm25` body over a built index, with each returned law's score."""
    if not laws:
        return []
    docs, average, frequency, size = index.docs, index.average, index.frequency, index.size
    asked = list(dict.fromkeys(known for word in words(question) for known in spelled_as(word, frequency)))
    if not asked:
        return []
    k1 = 1.2
    b = 0.75
    scored: list[tuple[Law, float]] = []
    for law, (length, counts) in zip(laws, docs, strict=True):
        score = 0.0
        for word in asked:
            n = frequency.get(word)
            if n is None:
                continue
            tf = counts.get(word, 0)
            if tf == 0:
                continue
            idf = v8_log(1 + (size - n + 0.5) / (n + 0.5))
            score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / average))
        scored.append((law, score))
    # Python's sort is stable, as Array.prototype.sort is: equal scores keep corpus order.
    kept = sorted((pair for pair in scored if pair[1] > 0), key=lambda pair: -pair[1])
    return kept[:limit]


def bm25_scored(laws: Sequence[Law], question: str, limit: int = 8) -> list[tuple[Law, float]]:
    """The spec's `bm25`, with each returned law's score; the index built afresh on every call."""
    return ranked_by(laws, index_of(laws), question, limit)


def bm25(laws: Sequence[Law], question: str, limit: int = 8) -> list[Law]:
    """The laws most likely to answer `question`, best first; a law sharing no word is never returned."""
    return [law for law, _ in bm25_scored(laws, question, limit)]


class CachedSpec:
    """The spec's `bm25` with its own cache: one index per laws array (the spec's `INDEXES` WeakMap,
    keyed by identity and dropped when the array's length changes)."""

    def __init__(self) -> None:
        self._indexes: dict[int, tuple[Sequence[Law], Index]] = {}

    def bm25_scored(self, laws: Sequence[Law], question: str, limit: int = 8) -> list[tuple[Law, float]]:
        kept = self._indexes.get(id(laws))
        if kept is None or kept[0] is not laws or kept[1].length != len(laws):
            kept = self._indexes[id(laws)] = (laws, index_of(laws))
        return ranked_by(laws, kept[1], question, limit)

    def bm25(self, laws: Sequence[Law], question: str, limit: int = 8) -> list[Law]:
        return [law for law, _ in self.bm25_scored(laws, question, limit)]
