"""Retrieval by meaning, and hybrid: the exact rankings, and their fusion, that every engine returns.

Three ways a question reaches rows (`--by`):

- `words`: the spec's BM25 (indexer.retrieval.reference, indexer.opensearch.read.query), unchanged.
- `meaning`: every row of the state (process rows included: a page reaches the model by meaning) by the
  cosine of its vector with the question's (indexer.retrieval.embedding: unit vectors on a grid, so the float64 dot
  product is exact in any order of addition), best first, equal cosines in corpus order.
- `hybrid`: weighted reciprocal-rank fusion of the two *full* exact rankings (docs/fusion.md): the words
  ranking is every law sharing a word with the question (every law BM25 scores above 0, in the spec's
  order), the meaning ranking every row. A row's score is `a/(k + words rank) + b/(k + meaning rank)`
  (a, b: the words and meaning weights), ranks from 1, the words part left out for a row words do not
  reach, added in that order in float64 from 0.0, one division a part; equal scores in corpus order. A
  weight of 0 still counts the row as reached (its part adds 0.0); with weights 1 and 1 the scores are
  plain RRF's to the bit. Since both rankings are whole, the fused
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

Why it is exact. A row's fused score is `fl(fl(a/(k+w)) + fl(b/(k+m)))` (the words part left out for a row
words do not reach); a, b >= 0 and rounding to nearest is monotone, so a rank past the window (> W)
contributes at most `fl(a/(k+W+1))` (`fl(b/(k+W+1))` by meaning), and a bound built from it, added in the
same float64 way, is at least the score it bounds.
A row's score is *exact* when each of its ranks is known: it is in that way's window, or that way's window is
whole (then a row outside it has no rank there: words do not reach it; every row has a meaning rank, so
meaning's window is whole only when it holds every row). Every other row has an upper bound:
- in the words window only (rank w): `a/(k+w) + b/(k+W+1)`;
- in the meaning window only (rank m), words' window not whole: `a/(k+W+1) + b/(k+m)`;
- in neither: `a/(k+W+1) + b/(k+W+1)` (`b/(k+W+1)` when words' window is whole).
The first `limit` exact rows (by score, then index) are the fusion's first rows when the last of them is
*above* every bound (a row bounded by an equal score could tie it and come first in corpus order: equal is
not enough; with a weight of 0 a bound can be 0.0, and an exact row scoring 0.0 is not above it). Every
row within the answer is then exact, so each hit's ranks are known, not bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from indexer.observe import timed
from indexer.retrieval.answers import Answer, Hit, Reached
from indexer.retrieval.corpus import Corpus, Law
from indexer.retrieval.embedding import (
    DIMENSION,
    Embedder,
    Vectors,
    cosines,
    default_embedder,
    given_grid,
    identity,
    row_text,
)
from indexer.retrieval.request import DEFAULT_FUSION, Fusion, Request, Way, refusal
from indexer.retrieval.statistics import PerSequence


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


def fuse(words: Sequence[int], meaning: Sequence[int], fusion: Fusion = DEFAULT_FUSION) -> list[Fused]:
    """The rows of the two full rankings (row indexes, best first) by weighted reciprocal-rank fusion, best
    first, equal scores in corpus order (by index)."""
    words_rank = {index: rank for rank, index in enumerate(words, 1)}
    meaning_rank = {index: rank for rank, index in enumerate(meaning, 1)}
    fused = []
    for index in sorted(words_rank.keys() | meaning_rank.keys()):
        w, m = words_rank.get(index), meaning_rank.get(index)
        fused.append(Fused(index, fusion.score(w, m), w, m))
    fused.sort(key=lambda row: -row.score)  # stable: equal scores stay in index (corpus) order
    return fused


def proven(
    words: Sequence[int],
    words_whole: bool,
    meaning: Sequence[int],
    rows: int,
    limit: int,
    fusion: Fusion = DEFAULT_FUSION,
) -> list[Fused] | None:
    """The first `limit` rows of the fusion of the full rankings whose first rows are `words` and `meaning`
    (row indexes, best first; `words_whole`: words' window is its whole ranking; `rows`: how many rows the
    state holds, all of them in the full meaning ranking), or None when these windows do not prove them."""
    meaning_whole = len(meaning) >= rows
    words_rank = {index: rank for rank, index in enumerate(words, 1)}
    meaning_rank = {index: rank for rank, index in enumerate(meaning, 1)}
    a, b, rrf_k = fusion.words_weight, fusion.meaning_weight, fusion.rrf_k
    past_words = a / (rrf_k + len(words) + 1)  # at least any words part past the window
    past_meaning = b / (rrf_k + len(meaning) + 1)
    exact: list[Fused] = []
    bounds: list[float] = []  # the highest score each kind of row not exact here can have
    for index in words_rank.keys() | meaning_rank.keys():
        w, m = words_rank.get(index), meaning_rank.get(index)
        words_known = w is not None or words_whole
        meaning_known = m is not None or meaning_whole
        if words_known and meaning_known:
            exact.append(Fused(index, fusion.score(w, m), w, m))
        elif w is not None:  # meaning not known: past its window
            bounds.append(a / (rrf_k + w) + past_meaning)
        else:  # in meaning's window only, words' window not whole: a words rank past it, or none
            assert m is not None
            bounds.append(past_words + b / (rrf_k + m))
    seen = len(words_rank.keys() | meaning_rank.keys())
    if not meaning_whole and seen < rows:  # rows in neither window
        bounds.append(past_meaning if words_whole else past_words + past_meaning)
    want = min(limit, rows)
    exact.sort(key=lambda row: (-row.score, row.index))
    if len(exact) < want:
        return None
    if want and bounds and not exact[want - 1].score > max(bounds):
        return None
    if want == 0:
        return []
    return exact[:want]


def _embed_rows(laws: Sequence[Law]) -> Vectors:
    return default_embedder().embed([row_text(law) for law in laws])


# The rows' vectors, embedded once per laws sequence and kept (the reference engine's, in process).
vectors: PerSequence[Vectors] = PerSequence(_embed_rows)
# The same for each other embedder (`answer`'s `embedder`: `lawindex eval --embedder`), by its identity.
_vectors_by: dict[str, PerSequence[Vectors]] = {}


def vectors_of(laws: Sequence[Law], embedder: Embedder | None = None) -> Vectors:
    """The rows' vectors by `embedder` (the default's: `vectors`), embedded once per laws sequence and kept."""
    if embedder is None:
        return vectors(laws)
    kept = _vectors_by.get(identity(embedder))
    if kept is None:
        kept = _vectors_by[identity(embedder)] = PerSequence(
            lambda rows: embedder.embed([row_text(law) for law in rows]), kept=16
        )
    return kept(laws)


# A state's own vectors on the grid (indexer.retrieval.own_vectors), by the identity of the array the corpus read.
_own: dict[int, tuple[npt.NDArray[np.float64], Vectors]] = {}
_OWN_KEPT = 64


def row_vectors(corpus: Corpus, embedder: Embedder | None = None) -> Vectors:
    """Every row's vector in corpus order: the rows' own (on the grid) where the file carries them, else
    `embedder`'s (the default's when None)."""
    given = corpus.vectors
    if given is None:
        return vectors_of(corpus.laws, embedder)
    found = _own.get(id(given))
    if found is None or found[0] is not given:
        from indexer.retrieval.own_vectors import OwnVectors

        if len(_own) >= _OWN_KEPT:
            _own.clear()
        found = _own[id(given)] = (given, OwnVectors(given).grid())
    return found[1]


def asked_vector(
    request: Request, where: str, model: str | None, dimension: int, embedder: Embedder | None = None
) -> Vectors:
    """The question's vector for a state whose rows' vectors are `model`'s of `dimension` (`where` names it): its
    own (`Request.vector`), of that length, on the grid; else the embedder's of its text, where lawindex has
    that model; else the refusal saying the question needs its vector."""
    from indexer.retrieval.own_vectors import EXTERNAL, needs_vector

    if request.vector is not None:
        if len(request.vector) != dimension:
            raise refusal("vector_dimension", value=len(request.vector), dimension=dimension)
        return given_grid(request.vector)
    if model == EXTERNAL:
        raise needs_vector(where, model)
    return question_vector(request.question, embedder)


def question_vector(question: str, embedder: Embedder | None = None) -> Vectors:
    """The question's unit vector (the zero vector for a question with no tokens)."""
    chosen = embedder or default_embedder()
    with timed("embedder"):  # lawindex serve's embedder histogram (indexer.observe)
        vector: Vectors = chosen.embed([question])[0]
    if not chosen.questions_on_node and vector.any():
        # A model the plugin cannot run: on OpenSearch lawindex's client sends this vector and the node puts it on
        # the grid as any given vector (normalised again); the reference engine ranks the same grid, to the bit.
        vector = given_grid(vector.astype(np.float64))
    return vector


def answer(corpus: Corpus, request: Request, embedder: Embedder | None = None) -> Answer:
    """The reference engine's answer to `request` (its state's `corpus`): words (the spec's BM25), meaning or
    hybrid, exact; by meaning with `embedder`'s vectors (the default embedder's when None)."""
    from indexer.retrieval import reference

    question, limit = request.question, request.limit
    if request.way is Way.words:
        return reference.ask(corpus, question, limit)
    laws = corpus.laws
    stats = reference.statistics(laws)
    asked, terms = reference.expand(question, stats)
    fields = request.answer_fields()
    # A question with nothing to embed (no letter or digit: indexer.retrieval.request) is near no row: nothing,
    # as a question of stopwords by words; nor is a question the embedder makes the zero vector of.
    own = corpus.vectors
    model: str | None
    if own is not None:
        model, dimension = "external", int(own.shape[1])
    else:
        model, dimension = (None, DIMENSION) if embedder is None else (embedder.model, embedder.dimension)
    asking = asked_vector(request, corpus.state, model, dimension, embedder) if laws and request.embeddable else None
    if asking is None or not asking.any():
        return Answer(corpus.state, question, asked, terms, [], **fields, reached=[])
    scores = cosines(row_vectors(corpus, embedder), asking)
    by_meaning = meaning_order(scores)
    chosen: list[tuple[int, float, int | None, int | None]]
    if request.way is Way.meaning:
        chosen = [(index, float(scores[index]), None, rank) for rank, index in enumerate(by_meaning[:limit], 1)]
    else:
        by_words = [hit.order for hit in reference.top_hits(stats, laws, terms, len(laws))] if terms else []
        chosen = [
            (row.index, row.score, row.words, row.meaning) for row in fuse(by_words, by_meaning, request.fusion)[:limit]
        ]
    hits = []
    reached = []
    for index, value, words_rank, meaning_rank in chosen:
        counts = stats.counts[index]
        tfs = {term: counts[term] for term in terms if counts.get(term)}
        hits.append(Hit(laws[index], value, index, tfs, stats.lengths[index]))
        reached.append(Reached(words_rank, meaning_rank, float(scores[index])))
    return Answer(corpus.state, question, asked, terms, hits, **fields, reached=reached)
