"""Retrieval by meaning, and hybrid: the exact rankings, and their fusion, that every engine returns.

Three ways a question reaches rows (`--by`):

- `words`: the spec's BM25 (indexer.retrieval.reference, indexer.opensearch.query), unchanged.
- `meaning`: every row of the state (process rows included: a page reaches the model by meaning) by the
  cosine of its vector with the question's (indexer.embedding: unit vectors on a grid, so the float64 dot
  product is exact in any order of addition), best first, equal cosines in corpus order.
- `hybrid`: reciprocal-rank fusion of the two *full* exact rankings: the words ranking is every law
  sharing a word with the question (every law BM25 scores above 0, in the spec's order), the meaning
  ranking every row. A row's score is `1/(k + words rank) + 1/(k + meaning rank)`, ranks from 1, the words
  part left out (0) for a row words do not reach, added in that order in float64 (so two rows whose ranks
  are swapped tie to the bit); equal scores in corpus order. Since both rankings are whole, the fused
  order of the first rows never depends on how many were asked for, nor on the engine: it is computed
  here, from rankings each engine proves exact.

A hybrid or meaning hit says what reached it: its rank in each way (absent for a way that did not reach
it) and its cosine.

Hybrid from windows (`proven`). `fuse` fuses two *full* rankings (every law words reach, every row by meaning).
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

import numpy as np
import numpy.typing as npt

from indexer.errors import BadInput
from indexer.observe import timed
from indexer.retrieval.answers import RETRIEVED_LAWS, RRF_K, Answer, Hit, Reached
from indexer.retrieval.corpus import Corpus, Law
from indexer.retrieval.embedding import Embedder, Vectors, cosines, default_embedder, row_text
from indexer.retrieval.statistics import PerSequence

WAYS = ("words", "meaning", "hybrid")


def check_way(by: str, rrf_k: int = RRF_K) -> None:
    """Nothing, or BadInput for a way not in WAYS or an RRF k below 1."""
    if by not in WAYS:
        raise BadInput(f"unknown way {by!r}", hint=f"use one of: {', '.join(WAYS)}")
    if rrf_k < 1:
        raise BadInput(f"the RRF k must be 1 or more, got {rrf_k}")


def meaning_order(scores: npt.NDArray[np.float64]) -> list[int]:
    """Every row's index, best cosine first, equal cosines in corpus order."""
    return (-scores).argsort(kind="stable").tolist()  # type: ignore[no-any-return]


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


def fuse(words: Sequence[int], meaning: Sequence[int], rrf_k: int = RRF_K) -> list[Fused]:
    """The rows of the two full rankings (row indexes, best first) by reciprocal-rank fusion, best first,
    equal scores in corpus order (by index)."""
    words_rank = {index: rank for rank, index in enumerate(words, 1)}
    meaning_rank = {index: rank for rank, index in enumerate(meaning, 1)}
    fused = []
    for index in sorted(words_rank.keys() | meaning_rank.keys()):
        w, m = words_rank.get(index), meaning_rank.get(index)
        fused.append(Fused(index, score(w, m, rrf_k), w, m))
    fused.sort(key=lambda row: -row.score)  # stable: equal scores stay in index (corpus) order
    return fused


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


def _embed_rows(laws: Sequence[Law]) -> Vectors:
    return default_embedder().embed([row_text(law) for law in laws])


# The rows' vectors, embedded once per laws sequence and kept (the reference engine's, in process).
vectors: PerSequence[Vectors] = PerSequence(_embed_rows)


def question_vector(question: str, embedder: Embedder | None = None) -> Vectors:
    """The question's unit vector (the zero vector for a question with no tokens)."""
    with timed("embedder"):  # lawindex serve's embedder histogram (indexer.observe)
        vector: Vectors = (embedder or default_embedder()).embed([question])[0]
    return vector


def answer(corpus: Corpus, question: str, limit: int = RETRIEVED_LAWS, by: str = "words", rrf_k: int = RRF_K) -> Answer:
    """The reference engine's answer by `by`: words (the spec's BM25), meaning or hybrid, exact."""
    from indexer.retrieval import reference

    check_way(by, rrf_k)
    if by == "words":
        return reference.ask(corpus, question, limit)
    laws = corpus.laws
    stats = reference.statistics(laws)
    asked, terms = reference.expand(question, stats)
    asked_vector = question_vector(question)
    if not laws or not asked_vector.any():
        # A question with nothing to embed is near no row: nothing, as a question of stopwords by words.
        return Answer(corpus.state, question, asked, terms, [], by=by, rrf_k=_k(by, rrf_k), reached=[])
    scores = cosines(vectors(laws), asked_vector)
    by_meaning = meaning_order(scores)
    chosen: list[tuple[int, float, int | None, int | None]]
    if by == "meaning":
        chosen = [(index, float(scores[index]), None, rank) for rank, index in enumerate(by_meaning[:limit], 1)]
    else:
        by_words = [hit.order for hit in reference._hits(stats, laws, terms, len(laws))] if terms else []
        chosen = [(row.index, row.score, row.words, row.meaning) for row in fuse(by_words, by_meaning, rrf_k)[:limit]]
    hits = []
    reached = []
    for index, value, words_rank, meaning_rank in chosen:
        counts = stats.counts[index]
        tfs = {term: counts[term] for term in terms if counts.get(term)}
        hits.append(Hit(laws[index], value, index, tfs, stats.lengths[index]))
        reached.append(Reached(words_rank, meaning_rank, float(scores[index])))
    return Answer(corpus.state, question, asked, terms, hits, by=by, rrf_k=_k(by, rrf_k), reached=reached)


def _k(by: str, rrf_k: int) -> int | None:
    return rrf_k if by == "hybrid" else None
