"""Hybrid from windows: the exact first rows of the fusion of two full rankings, proven from their prefixes.

`indexer.retrieval.meaning.fuse` fuses two *full* rankings (every law words reach, every row by meaning).
An engine that must fetch each ranking row by row (OpenSearch) need not fetch them whole: `proven` takes the
first W rows of each (each exact, as the words and meaning paths already prove their own windows), and
returns the first `limit` rows of the full fusion, exactly as `fuse(words, meaning, k)[:limit]` does (the
same rows, scores to the bit, ranks, order, ties in corpus order), or None when the windows do not prove it
yet (the caller widens them and asks again; once both windows are whole it always answers).

Why it is exact. A row's fused score is `fl(fl(1/(k+w)) + fl(1/(k+m)))` (the words part 0.0 for a row words
do not reach); rounding to nearest is monotone, so a rank past the window (> W) contributes at most
`fl(1/(k+W+1))`, and a bound built from it, added in the same float64 way, is at least the score it bounds.
A row's score is *exact* when each of its ranks is known: it is in that way's window, or that way's window is
whole (then a row outside it has no rank there: words do not reach it; every row has a meaning rank, so
meaning's window is whole only when it holds every row). Every other row has an upper bound:
- in the words window only (rank w): `1/(k+w) + 1/(k+W+1)`;
- in the meaning window only (rank m), words' window not whole: `1/(k+W+1) + 1/(k+m)`;
- in neither: `2/(k+W+1)` (`1/(k+W+1)` when words' window is whole).
The first `limit` exact rows (by score, then index) are the fusion's first rows when the last of them is
*above* every bound (a row bounded by an equal score could tie it and come first in corpus order: equal is
not enough). Every row within the answer is then exact, so each hit's ranks are known, not bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Fused:
    """One row of a fused ranking: its index, its RRF score, its rank in each way (None: not reached)."""

    index: int
    score: float
    words: int | None
    meaning: int | None


def score(words_rank: int | None, meaning_rank: int | None, rrf_k: int) -> float:
    """A row's fused score, added as `fuse` adds it (words part first, from 0.0)."""
    total = 0.0
    if words_rank is not None:
        total += 1.0 / (rrf_k + words_rank)
    if meaning_rank is not None:
        total += 1.0 / (rrf_k + meaning_rank)
    return total


def proven(
    words: Sequence[int],
    words_whole: bool,
    meaning: Sequence[int],
    rows: int,
    limit: int,
    rrf_k: int,
) -> list[Fused] | None:
    """The first `limit` rows of the fusion of the full rankings whose first rows are `words` and `meaning`
    (row indexes, best first; `words_whole`: words' window is its whole ranking; `rows`: how many rows the
    state holds, all of them in the full meaning ranking), or None when these windows do not prove them."""
    meaning_whole = len(meaning) >= rows
    words_rank = {index: rank for rank, index in enumerate(words, 1)}
    meaning_rank = {index: rank for rank, index in enumerate(meaning, 1)}
    past_words = 1.0 / (rrf_k + len(words) + 1)  # at least any words part past the window
    past_meaning = 1.0 / (rrf_k + len(meaning) + 1)
    exact: list[Fused] = []
    bound = 0.0  # the highest score a row not exact here can have (0.0: there is none)
    for index in words_rank.keys() | meaning_rank.keys():
        w, m = words_rank.get(index), meaning_rank.get(index)
        words_known = w is not None or words_whole
        meaning_known = m is not None or meaning_whole
        if words_known and meaning_known:
            exact.append(Fused(index, score(w, m, rrf_k), w, m))
        elif w is not None:  # meaning not known: past its window
            bound = max(bound, 1.0 / (rrf_k + w) + past_meaning)
        else:  # in meaning's window only, words' window not whole: a words rank past it, or none
            assert m is not None
            bound = max(bound, past_words + 1.0 / (rrf_k + m))
    seen = len(words_rank.keys() | meaning_rank.keys())
    if not meaning_whole and seen < rows:  # rows in neither window
        bound = max(bound, past_meaning if words_whole else past_words + past_meaning)
    want = min(limit, rows)
    exact.sort(key=lambda row: (-row.score, row.index))
    if len(exact) < want:
        return None
    if want and bound and not exact[want - 1].score > bound:
        return None
    if want == 0:
        return []
    return exact[:want]
