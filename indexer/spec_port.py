"""spec/retrieve.md's `bm25`, `spelledAs` and `oneEditApart`, ported line for line and nothing more.

Slow on purpose: no index, a scan of the vocabulary per unknown word, statistics rebuilt per call.
It is the oracle the fast reference scorer (`indexer.reference`) and the spelling index
(`indexer.spelling`) are proven equal to, and the baseline the benchmarks print ratios against.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from indexer.corpus import Law
from indexer.words import ranked, ranked_text, words


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


def bm25_scored(laws: Sequence[Law], question: str, limit: int = 8) -> list[tuple[Law, float]]:
    """The spec's `bm25`, with each returned law's score."""
    if not laws:
        return []
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
            idf = math.log(1 + (size - n + 0.5) / (n + 0.5))
            score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / average))
        scored.append((law, score))
    # Python's sort is stable, as Array.prototype.sort is: equal scores keep corpus order.
    kept = sorted((pair for pair in scored if pair[1] > 0), key=lambda pair: -pair[1])
    return kept[:limit]


def bm25(laws: Sequence[Law], question: str, limit: int = 8) -> list[Law]:
    """The laws most likely to answer `question`, best first; a law sharing no word is never returned."""
    return [law for law, _ in bm25_scored(laws, question, limit)]
