"""The reference scorer: spec/retrieve.md's `bm25()`, exactly, and fast; and OpenSearch's arithmetic beside it.

Exact means bit for bit: the same words, the same expansion, the same statistics (process rows count in
neither N, df nor the average), the same float64 formula in the same operation order, each law's terms
summed in the `asked` order, equal scores kept in corpus order. `indexer.spec_port` is the literal port
this module is proven equal to (tests/unit/test_reference.py), and the spec's own TypeScript is run
against it too (tests/unit/test_spec_oracle.py).

Fast means the work that does not depend on the question is done once per corpus: every word's
contribution to every law that has it is computed when the statistics are built, in the spec's
arithmetic, and a question only adds, per asked word, the contributions of that word's postings into
a float64 array. Adding the same float64 terms in the same order gives the same sums, so the scores are
the spec's to the last bit.

The Lucene mode (`lucene_term_score`, `lucene_score`) reproduces what OpenSearch computes for the same
statistics: float32, lengths kept in one byte, the (k1+1) factor of OpenSearch 2.x's legacy BM25.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from indexer.answers import RETRIEVED_LAWS, Answer, Hit
from indexer.corpus import Corpus, Law
from indexer.spelling import Vocabulary
from indexer.words import STOP, ranked, ranked_text, words

# The spec's BM25 parameters, and the index settings' (mappings/laws.json): k1=1.2, b=0.75.
K1 = 1.2
B = 0.75


@dataclass(frozen=True, eq=False)
class Statistics:
    """What BM25 needs of a corpus that does not depend on the question (the spec's `Index`), and the
    per-word contributions that make a question cost only its words' postings."""

    size: int  # laws ranked by words: every one but the process rows (the spec's N)
    average: float  # mean length of the ranked laws, in words after stopwords
    vocabulary: dict[str, int]  # word -> how many ranked laws have it (df), in the spec's insertion order
    lengths: list[int]  # per law, in corpus order: its length in words (0 for a process row)
    counts: list[dict[str, int]]  # per law: word -> how often it has it (tf); {} for a process row
    spelling: Vocabulary = field(repr=False)
    # Postings, word by word in vocabulary order (CSR): the laws of word w are
    # post_laws[offsets[w]:offsets[w + 1]], in corpus order, and post_scores the same slice of each
    # one's BM25 term score, computed as the spec computes it.
    offsets: npt.NDArray[np.intp] = field(repr=False)
    post_laws: npt.NDArray[np.intp] = field(repr=False)
    post_scores: npt.NDArray[np.float64] = field(repr=False)
    rank: dict[str, int] = field(repr=False)  # word -> its place in `vocabulary`

    @property
    def doc_count(self) -> int:
        """Lucene's N: the laws whose ranked field has at least one word (an all-stopword law has none)."""
        return sum(1 for length in self.lengths if length > 0)

    @property
    def sum_total_term_freq(self) -> int:
        """Lucene's sumTotalTermFreq: the ranked words of all laws together."""
        return sum(self.lengths)


# ---------------------------------------------------------------------------------------------------
# One term's score, two arithmetics: the spec's (float64, exact length) and Lucene's (float32, the
# length kept in one byte). Side by side so that the difference is visible on one screen.


def exact_term_score(tf: int, df: int, size: int, length: int, average: float) -> float:
    """The spec's BM25 term score for a word a law has `tf` times, in the spec's float64 operation order."""
    idf = math.log(1 + (size - df + 0.5) / (df + 0.5))
    return (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / average))


_K1_F = np.float32(K1)  # Lucene keeps k1 and b as Java floats: 1.2f, 0.75f
_B_F = np.float32(B)
_ONE_F = np.float32(1)


def lucene_term_score(tf: int, df: int, doc_count: int, norm_length: int, average: float, legacy: bool) -> np.float32:
    """OpenSearch's score for one term of one document: Lucene's BM25Similarity in float32.

    `norm_length` is the field's length in words as indexed; Lucene keeps it in one byte
    (SmallFloat.intToByte4), so lengths over 40 are rounded down. `average` is sumTotalTermFreq / docCount
    in float64 (Lucene casts it to float). `legacy` applies OpenSearch 2.x's LegacyBM25Similarity, which
    passes boost * (1 + k1) to the scorer: the spec's (k1 + 1) factor, in float.
    """
    # BM25Similarity.idf: Math.log in double, then cast to float. (Java's Math.log may differ from C's
    # log by an ulp in rare cases; after the cast to float that is almost never visible.)
    idf = np.float32(math.log(1 + (doc_count - df + 0.5) / (df + 0.5)))
    # BM25Scorer: weight = boost * idf; LegacyBM25Similarity.scorer passes boost * (1 + getK1()).
    boost = _ONE_F * (_ONE_F + _K1_F) if legacy else _ONE_F
    weight = boost * idf
    # avgFieldLength: (float) (sumTotalTermFreq / (double) docCount).
    avgdl = np.float32(average)
    # scorer(): cache[i] = 1f / (k1 * ((1 - b) + b * LENGTH_TABLE[i] / avgdl)), all in float.
    dl = np.float32(byte4_to_int(int_to_byte4(norm_length)))
    norm_inverse = _ONE_F / (_K1_F * ((_ONE_F - _B_F) + _B_F * dl / avgdl))
    # BM25Scorer.score (Lucene 9.12, OpenSearch 2.19) and doScore (Lucene 10, OpenSearch 3.x), the same
    # expression in both: weight - weight / (1f + freq * normInverse).
    return np.float32(weight - weight / (_ONE_F + np.float32(tf) * norm_inverse))


def lucene_score(terms: Sequence[str], stats: Statistics, index: int, legacy: bool = False) -> float:
    """OpenSearch's `_score` for law `index` of a bool of `term` queries, one per term: 0.0 if none match.

    Lucene sums the clauses' float scores in a double and casts the sum to float: DisjunctionSumScorer,
    WANDScorer and MaxScoreBulkScorer all do `double score = 0; score += scorer.score(); (float) score`,
    and BooleanScorer keeps a double per bucket. The clauses' order differs between scorers, but the sum
    of a few floats of like magnitude in a double is exact, so the order does not show.
    """
    counts = stats.counts[index]
    length = stats.lengths[index]
    doc_count = stats.doc_count
    average = stats.sum_total_term_freq / doc_count if doc_count else 0.0
    total = 0.0
    for term in terms:
        tf = counts.get(term, 0)
        if tf:
            total += float(lucene_term_score(tf, stats.vocabulary[term], doc_count, length, average, legacy))
    return float(np.float32(total))


# Lucene's SmallFloat, ported from lucene/core/src/java/org/apache/lucene/util/SmallFloat.java: a
# field's length is stored in one byte; 0..40 survive exactly, longer lengths keep 4 significant bits.


def _long_to_int4(i: int) -> int:
    if i < 0:
        raise ValueError(f"only non-negative values, got {i}")
    num_bits = i.bit_length()
    if num_bits < 4:
        return i  # subnormal
    shift = num_bits - 4
    encoded = (i >> shift) & 0x07  # the 4 most significant bits, less the implicit leading one
    return encoded | ((shift + 1) << 3)  # the shift, plus one: 0 is reserved for subnormal values


def _int4_to_long(i: int) -> int:
    bits = i & 0x07
    shift = (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


_MAX_INT4 = _long_to_int4(2**31 - 1)  # 231
_NUM_FREE_VALUES = 255 - _MAX_INT4  # 24: values below are stored as they are


def int_to_byte4(i: int) -> int:
    """SmallFloat.intToByte4 as an unsigned byte (0..255): how Lucene stores a field length."""
    if i < 0:
        raise ValueError(f"only non-negative values, got {i}")
    if i < _NUM_FREE_VALUES:
        return i
    return _NUM_FREE_VALUES + _long_to_int4(i - _NUM_FREE_VALUES)


def byte4_to_int(b: int) -> int:
    """SmallFloat.byte4ToInt of an unsigned byte: the length Lucene scores with."""
    if b < _NUM_FREE_VALUES:
        return b
    return _NUM_FREE_VALUES + _int4_to_long(b - _NUM_FREE_VALUES)


# ---------------------------------------------------------------------------------------------------
# Statistics, built once per laws sequence and kept.

# Keyed by the identity of the laws sequence, as the spec's WeakMap is keyed by the array. Tuples and
# lists cannot be weakly referenced, so the cache holds its sequences (which also keeps their ids from
# being reused) and forgets the least recently used past _KEPT: one per state and to spare. A tuple
# (Corpus.laws) cannot change; a list is also checked for its length, as the spec checks the array's,
# so a list changed in place at the same length is not noticed: the spec has the same edge.
_KEPT = 64
_CACHE: OrderedDict[int, tuple[Sequence[Law], int, Statistics]] = OrderedDict()


def statistics(laws: Sequence[Law]) -> Statistics:
    """The statistics of `laws`, built on first sight of that sequence and kept while it is unchanged."""
    key = id(laws)
    kept = _CACHE.get(key)
    if kept is not None and kept[0] is laws and kept[1] == len(laws):
        _CACHE.move_to_end(key)
        return kept[2]
    built = build_statistics(laws)
    _CACHE[key] = (laws, len(laws), built)
    _CACHE.move_to_end(key)
    while len(_CACHE) > _KEPT:
        _CACHE.popitem(last=False)
    return built


# words() at corpus scale. The spec's words() (indexer.words) is a regex and a list comprehension per
# law: 150 ms for Texas's 6,000 laws. Here the same tokens come from C-level string operations, and each
# distinct raw token is judged once (stopword, plural) and remembered; test_reference proves the result
# equal to words() on generated Unicode text.
_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789")
_NOT_ALNUM_TO_SPACE = bytes(c if c in _ALNUM else 0x20 for c in range(256))


class _Judged(dict[str, str]):
    """raw token -> the word words() makes of it, or "" for a stopword; filled on first sight."""

    def __missing__(self, raw: str) -> str:
        if raw in STOP:
            word = ""
        elif len(raw) > 3 and raw.endswith("s") and not raw.endswith("ss"):
            word = raw[:-1]
        else:
            word = raw
        self[raw] = word
        return word


def _tokens(text: str, judged: _Judged) -> list[str]:
    """words(text), by C-level steps: lowercase as words() does (full Unicode case mapping, so "K"
    (Kelvin) is "k"), every character but [a-z0-9] becomes a space (a non-ASCII one first becomes "?"),
    split, and each raw token judged."""
    raw = text.lower().encode("ascii", "replace").translate(_NOT_ALNUM_TO_SPACE).decode("ascii").split()
    return list(filter(None, map(judged.__getitem__, raw)))


def build_statistics(laws: Sequence[Law]) -> Statistics:
    """The statistics of `laws`, built afresh (not cached): the spec's `indexOf`."""
    counts: list[dict[str, int]] = []
    lengths: list[int] = []
    # Every ranked law's distinct words and their counts, one law after another: counted into the
    # vocabulary in the spec's order (a word enters when the first law that has it is indexed).
    distinct: list[str] = []
    tfs: list[int] = []
    judged = _Judged()
    for law in laws:
        tokens = _tokens(ranked_text(law), judged) if ranked(law) else []
        law_counts = Counter(tokens)  # a dict in first-occurrence order, counted in C
        counts.append(law_counts)
        lengths.append(len(tokens))
        distinct.extend(law_counts)
        tfs.extend(law_counts.values())
    vocabulary = dict(Counter(distinct))
    size = sum(1 for law in laws if ranked(law))
    average = sum(length for law, length in zip(laws, lengths, strict=True) if ranked(law)) / max(1, size)
    spelling = Vocabulary(vocabulary)
    rank = spelling.rank

    # Postings in CSR form, grouped by word (vocabulary order), each group in corpus order.
    per_law = np.fromiter((len(c) for c in counts), dtype=np.intp, count=len(counts))
    law_of = np.repeat(np.arange(len(counts), dtype=np.intp), per_law)
    word_of = np.fromiter(map(rank.__getitem__, distinct), dtype=np.intp, count=len(distinct))
    tf_of = np.array(tfs, dtype=np.float64)
    # Stable, so each word's postings stay in corpus order; on 16-bit keys numpy's stable sort is a radix
    # sort (3 ms instead of 20 for Texas's 180,000 postings).
    keys = word_of.astype(np.int16) if len(vocabulary) < 2**15 else word_of
    order = np.argsort(keys, kind="stable")
    offsets = np.zeros(len(vocabulary) + 1, dtype=np.intp)
    np.cumsum(np.bincount(word_of, minlength=len(vocabulary)), out=offsets[1:])
    post_laws = law_of[order]
    tf = tf_of[order]
    # The spec's arithmetic, elementwise in float64 (IEEE-exact +, -, *, /; the log is math.log, per
    # word, as the spec's Math.log per term): (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length)
    # / average)), every operation in the spec's order.
    idf_of_word = np.array(
        [math.log(1 + (size - df + 0.5) / (df + 0.5)) for df in vocabulary.values()], dtype=np.float64
    )
    idf = np.repeat(idf_of_word, np.diff(offsets))
    length = np.asarray(lengths, dtype=np.float64)[post_laws]
    post_scores = (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / average)) if len(tf) else tf

    return Statistics(
        size=size,
        average=average,
        vocabulary=vocabulary,
        lengths=lengths,
        counts=counts,
        spelling=spelling,
        offsets=offsets,
        post_laws=post_laws,
        post_scores=post_scores,
        rank=rank,
    )


# ---------------------------------------------------------------------------------------------------
# A question.


def expand(question: str, stats: Statistics) -> tuple[list[str], list[str]]:
    """`(words(question), terms)`: terms are the vocabulary words the question's words stand for,
    distinct, in the order the spec scores them (first expansion first)."""
    asked_words = words(question)
    spelling = stats.spelling
    terms = list(dict.fromkeys(known for word in asked_words for known in spelling.spelled_as(word)))
    return asked_words, terms


def _ranked(stats: Statistics, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
    """(law index, score) of the best `limit` laws for `terms`, best first, equal scores in corpus order."""
    if limit < 0:
        raise ValueError(f"limit must be 0 or more, got {limit}")
    if not terms or limit == 0 or not stats.counts:
        return []
    scores = np.zeros(len(stats.counts), dtype=np.float64)
    offsets, post_laws, post_scores, rank = stats.offsets, stats.post_laws, stats.post_scores, stats.rank
    for term in terms:  # the spec's `asked` order: the same additions, in the same order, per law
        w = rank[term]
        lo, hi = offsets[w], offsets[w + 1]
        # A law appears once in a word's postings, so the fancy-indexed add adds each term once.
        scores[post_laws[lo:hi]] += post_scores[lo:hi]
    matched = np.flatnonzero(scores)  # every term score is > 0: a law sharing no word stays at 0
    values = scores[matched]
    if len(matched) > limit:
        # Keep every law scoring at least the limit-th best score (ties at the edge included), then sort
        # only those: the spec sorts all and slices, which is the same list.
        edge = np.partition(values, len(values) - limit)[len(values) - limit]
        keep = values >= edge
        matched, values = matched[keep], values[keep]
    # Stable, on indices in corpus order: equal scores keep corpus order, as Array.prototype.sort does.
    order = np.argsort(-values, kind="stable")[:limit]
    return [(int(matched[i]), float(values[i])) for i in order]


def score(laws: Sequence[Law], question: str, limit: int = RETRIEVED_LAWS) -> list[Hit]:
    """The laws that best answer `question` with their exact spec scores, best first; at most `limit`,
    and never a law sharing no word with it."""
    if not laws:
        return []
    stats = statistics(laws)
    _, terms = expand(question, stats)
    return [Hit(laws[index], value, index) for index, value in _ranked(stats, terms, limit)]


def bm25(laws: Sequence[Law], question: str, limit: int = RETRIEVED_LAWS) -> list[Law]:
    """The spec's `bm25`: the laws most likely to answer `question`, best first; a law sharing no word is
    never returned."""
    return [hit.law for hit in score(laws, question, limit)]


def ask(corpus: Corpus, question: str, limit: int = RETRIEVED_LAWS) -> Answer:
    """One state's answer to `question`: its words, the terms scored, and the best `limit` laws."""
    stats = statistics(corpus.laws)
    asked_words, terms = expand(question, stats)
    hits = [Hit(corpus.laws[i], value, i) for i, value in _ranked(stats, terms, limit)]
    return Answer(corpus.state, question, asked_words, terms, hits)
