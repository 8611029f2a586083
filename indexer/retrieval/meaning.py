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
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from indexer.errors import BadInput
from indexer.retrieval.answers import RETRIEVED_LAWS, RRF_K, Answer, Hit, Reached
from indexer.retrieval.corpus import Corpus, Law
from indexer.retrieval.embedding import Embedder, Vectors, cosines, default_embedder, row_text
from indexer.retrieval.fusion import Fused as Fused
from indexer.retrieval.fusion import score
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


def _embed_rows(laws: Sequence[Law]) -> Vectors:
    return default_embedder().embed([row_text(law) for law in laws])


# The rows' vectors, embedded once per laws sequence and kept (the reference engine's, in process).
vectors: PerSequence[Vectors] = PerSequence(_embed_rows)


def question_vector(question: str, embedder: Embedder | None = None) -> Vectors:
    """The question's unit vector (the zero vector for a question with no tokens)."""
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
