"""The reference scorer: the spec's `bm25()` (docs/contract.md), exactly, and fast.

Exact means bit for bit: the same words, the same expansion, the same statistics (process rows count in
neither N, df nor the average), the same float64 formula in the same operation order (indexer.retrieval.scoring),
each law's terms summed in the `asked` order, equal scores kept in corpus order. The spec's literal port
(tests/spec_port.py) is the oracle this module is proven equal to (tests/unit/test_reference.py), and the
spec's own TypeScript is run against it too (tests/unit/test_spec_oracle.py).

Fast means the work that does not depend on the question is done once per corpus: every word's
contribution to every law that has it is computed when the statistics are built, in the spec's
arithmetic, and a question only adds, per asked word, the contributions of that word's postings into
a float64 array. Adding the same float64 terms in the same order gives the same sums, so the scores are
the spec's to the last bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from indexer.retrieval import scoring
from indexer.retrieval.answers import Answer, Hit
from indexer.retrieval.corpus import Corpus, Law
from indexer.retrieval.request import RETRIEVED_LAWS
from indexer.retrieval.spelling import Vocabulary
from indexer.retrieval.statistics import Counts, Pairs, PerSequence, count
from indexer.retrieval.words import words

# A word in at least 1/DENSE of the laws keeps its term scores as a whole row, one per law (0.0 for a
# law without it): a question adds the row in one vectorised step instead of scattering thousands of
# postings. Adding 0.0 to a score changes no bit of it, so the sums are the same. On a generated Texas
# (6,000 laws, 3,000 questions of 8,000 postings each) this halved the time spent adding.
DENSE = 8


@dataclass(frozen=True, eq=False)
class Statistics(Counts):
    """The counts of a corpus (the spec's `Index`), and the per-word contributions that make a question
    cost only its words' postings."""

    spelling: Vocabulary = field(repr=False)
    # Postings, word by word in vocabulary order (CSR): the laws of word w are
    # post_laws[offsets[w]:offsets[w + 1]], in corpus order, and post_scores the same slice of each
    # one's BM25 term score, computed as the spec computes it.
    offsets: list[int] = field(repr=False)  # Python ints: a slice with them is cheaper than with numpy's
    post_laws: npt.NDArray[np.intp] = field(repr=False)
    post_scores: npt.NDArray[np.float64] = field(repr=False)
    rank: dict[str, int] = field(repr=False)  # word -> its place in `vocabulary`
    dense: dict[int, npt.NDArray[np.float64]] = field(repr=False)  # word's place -> its row (see DENSE)


def postings_order(pairs: Pairs, words: int) -> npt.NDArray[np.intp]:
    """The order that puts the counted pairs (by law) into postings (CSR): grouped by word, in vocabulary
    order, each group in corpus order. Stable, so each word's laws stay in corpus order; on 16-bit keys
    numpy's stable sort is a radix sort (3 ms instead of 20 for Texas's 180,000 postings)."""
    keys = pairs.words.astype(np.int16) if words < 2**15 else pairs.words
    return np.argsort(keys, kind="stable")


def build_statistics(laws: Sequence[Law]) -> Statistics:
    """The statistics of `laws`, built afresh (not cached): the spec's `indexOf`, and the postings."""
    counted = count(laws)
    vocabulary, lengths, pairs = counted.vocabulary, counted.lengths, counted.pairs
    spelling = Vocabulary(vocabulary)

    order = postings_order(pairs, len(vocabulary))
    df_of_word = np.fromiter(vocabulary.values(), dtype=np.intp, count=len(vocabulary))
    offsets = np.zeros(len(vocabulary) + 1, dtype=np.intp)
    np.cumsum(df_of_word, out=offsets[1:])  # a word's postings are the laws that have it: df of them
    post_laws = pairs.laws[order]
    tf = pairs.tfs[order].astype(np.float64)
    # The spec's arithmetic: the idf per word (V8's logarithm, vectorised: each the bits of scoring.idf), then
    # the term score elementwise in float64 by the one expression of indexer.retrieval.scoring.
    idf = np.repeat(scoring.idf_array(df_of_word, counted.size), np.diff(offsets))
    length = np.asarray(lengths, dtype=np.float64)[post_laws]
    post_scores = scoring.term_score(idf, tf, length, counted.average) if len(tf) else tf
    dense: dict[int, npt.NDArray[np.float64]] = {}
    for w, df in enumerate(vocabulary.values()):
        if df * DENSE >= len(laws):
            row = dense[w] = np.zeros(len(laws), dtype=np.float64)
            row[post_laws[offsets[w] : offsets[w + 1]]] = post_scores[offsets[w] : offsets[w + 1]]

    return Statistics(
        size=counted.size,
        average=counted.average,
        vocabulary=vocabulary,
        lengths=lengths,
        counts=counted.counts,
        doc_count=counted.doc_count,
        sum_total_term_freq=counted.sum_total_term_freq,
        pairs=pairs,
        spelling=spelling,
        offsets=offsets.tolist(),
        post_laws=post_laws,
        post_scores=post_scores,
        rank=dict(zip(vocabulary, range(len(vocabulary)), strict=True)),
        dense=dense,
    )


# Built once per laws sequence and kept, as the spec keeps its Index per array.
statistics: PerSequence[Statistics] = PerSequence(build_statistics)


# ---------------------------------------------------------------------------------------------------
# A question.


def expand(question: str, stats: Statistics) -> tuple[list[str], list[str]]:
    """`(words(question), terms)`: terms are the vocabulary words the question's words stand for,
    distinct, in the order the spec scores them (first expansion first)."""
    asked_words = words(question)
    return asked_words, stats.spelling.terms(asked_words)


class Postings(Protocol):
    """What a question is ranked from: the built Statistics, or a state's stored on disk
    (indexer.retrieval.stored, whose `dense` is empty: every word's postings are added law by law, the
    same additions in the same order, so the same sums)."""

    @property
    def offsets(self) -> Sequence[int] | npt.NDArray[np.uint64]: ...
    @property
    def post_laws(self) -> npt.NDArray[np.intp] | npt.NDArray[np.uint32]: ...
    @property
    def post_scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def rank(self) -> Mapping[str, int]: ...
    @property
    def dense(self) -> Mapping[int, npt.NDArray[np.float64]]: ...
    @property
    def lengths(self) -> Sequence[int] | npt.NDArray[np.uint32]: ...


def top_scores(stats: Postings, terms: Sequence[str], limit: int) -> tuple[list[int], list[float]]:
    """The law indexes of the best `limit` laws for `terms` and their scores, best first, equal scores in
    corpus order."""
    if limit < 0:
        raise ValueError(f"limit must be 0 or more, got {limit}")
    laws = len(stats.lengths)
    if not terms or limit == 0 or not laws:
        return [], []
    scores: npt.NDArray[np.float64] | None = None
    offsets, post_laws, post_scores, rank, dense = (
        stats.offsets, stats.post_laws, stats.post_scores, stats.rank, stats.dense
    )  # fmt: skip
    # The postings slice the edge is taken from (see below): the widest of the words added law by law, or
    # failing that (every word dense) the narrowest dense word's.
    widest = (0, 0)
    narrowest_dense = (0, laws + 1)
    for term in terms:  # the spec's `asked` order: the same additions, in the same order, per law
        w = rank[term]
        lo, hi = int(offsets[w]), int(offsets[w + 1])
        row = dense.get(w)
        if row is not None:
            # 0.0 where the law lacks the word: x + 0.0 is x. The first term's row is the sums so far
            # (0.0 + x is x): copied, not added to zeros.
            scores = row.copy() if scores is None else np.add(scores, row, out=scores)
            if hi - lo < narrowest_dense[1] - narrowest_dense[0]:
                narrowest_dense = (lo, hi)
        else:
            if scores is None:
                scores = np.zeros(laws, dtype=np.float64)
            # A law appears once in a word's postings, so the fancy-indexed add adds each term once.
            scores[post_laws[lo:hi]] += post_scores[lo:hi]
            if hi - lo > widest[1] - widest[0]:
                widest = (lo, hi)
    assert scores is not None
    # Every term score is > 0: a law sharing no word stays at 0. Keep every law scoring at least an
    # `edge` no higher than the limit-th best score (ties at the edge included), then sort only those:
    # the spec sorts all and slices, which is the same list. The edge is the limit-th best among one
    # word's laws when it has enough (`limit` distinct laws score at least that, so the limit-th best of
    # all does too): a partition of a few hundred scores instead of every law's, a third of the time.
    # A question of dense words only takes it from the narrowest one's laws: 12 µs instead of 40.
    # (ndarray methods, not their np.* wrappers: a few microseconds a question, 10% of the ranking.)
    lo, hi = widest if widest[1] - widest[0] >= limit else narrowest_dense
    if limit <= hi - lo <= laws:
        among = scores[post_laws[lo:hi]]  # a copy: partitioned in place
        among.partition(hi - lo - limit)
        edge = among[hi - lo - limit]
    else:
        edge = np.partition(scores, laws - limit)[laws - limit] if laws > limit else 0.0
    matched = (scores >= edge).nonzero()[0] if edge > 0 else scores.nonzero()[0]
    values = scores[matched]
    # Stable, on indices in corpus order: equal scores keep corpus order, as Array.prototype.sort does.
    order = (-values).argsort(kind="stable")[:limit]
    return matched[order].tolist(), values[order].tolist()


def score(laws: Sequence[Law], question: str, limit: int = RETRIEVED_LAWS) -> list[Hit]:
    """The laws that best answer `question` with their exact spec scores, best first; at most `limit`,
    and never a law sharing no word with it."""
    if not laws:
        return []
    stats = statistics(laws)
    _, terms = expand(question, stats)
    return top_hits(stats, laws, terms, limit)


def bm25(laws: Sequence[Law], question: str, limit: int = RETRIEVED_LAWS) -> list[Law]:
    """The spec's `bm25`: the laws most likely to answer `question`, best first; a law sharing no word is
    never returned."""
    return [hit.law for hit in score(laws, question, limit)]


def ask(corpus: Corpus, question: str, limit: int = RETRIEVED_LAWS) -> Answer:
    """One state's answer to `question`: its words, the terms scored, and the best `limit` laws."""
    stats = statistics(corpus.laws)
    asked_words, terms = expand(question, stats)
    return Answer(corpus.state, question, asked_words, terms, top_hits(stats, corpus.laws, terms, limit))


def top_hits(stats: Statistics, laws: Sequence[Law], terms: Sequence[str], limit: int) -> list[Hit]:
    """The best `limit` laws as hits, each with what its score was computed from (tf per term, length)."""
    indexes, values = top_scores(stats, terms, limit)
    counts_of, lengths, make = stats.counts, stats.lengths, Hit._make
    hits = []
    # A loop, not a comprehension per hit, and Hit._make, not Hit(): 24,000 hits for Texas's 3,000
    # questions took 38 µs a question, now 18.
    for index, value in zip(indexes, values, strict=True):
        counts = counts_of[index]
        tfs = {}
        for term in terms:
            tf = counts.get(term)
            if tf:
                tfs[term] = tf
        hits.append(make((laws[index], value, index, tfs, lengths[index])))
    return hits


def lucene_score(terms: Sequence[str], stats: Counts, index: int, legacy: bool = False) -> float:
    """OpenSearch's `_score` of law `index` for a bool of `term` queries on `terms` (0.0 if none match):
    the Lucene variant of indexer.retrieval.scoring over these statistics, with Lucene's N and average."""
    average = stats.sum_total_term_freq / stats.doc_count if stats.doc_count else 0.0
    counts, length = stats.counts[index], stats.lengths[index]
    return scoring.lucene_score(terms, counts, length, stats.vocabulary, stats.doc_count, average, legacy)
