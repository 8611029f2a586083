"""BM25, written once: the idf and the term score, in the spec's arithmetic and in Lucene's.

Two variants of one definition, side by side so that the difference is visible on one screen:

- exact: the spec's `bm25` (docs/contract.md), float64, the law's exact length, every operation in the
  spec's order: `idf = log(1 + (N - df + 0.5) / (df + 0.5))` and
  `idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))`;
- Lucene: what OpenSearch computes for the same statistics (BM25Similarity), float32, the length kept
  in one byte (SmallFloat, below: exact to 40 words, rounded down above), N the laws that have the
  field, and the (k1 + 1) factor only with OpenSearch 2.x's LegacyBM25Similarity (`legacy`).

Every scorer of lawindex calls these: the reference's postings (`term_score` on numpy arrays, the same
expression element by element), the OpenSearch engine's re-scoring and its window bound, `--explain`,
and `verify`. The spec's literal port in the tests keeps its own copy on purpose: it is the oracle.

The logarithm is V8's (indexer.retrieval.fdlibm, fdlibm's e_log.c), never Python's or numpy's: those are glibc's,
an ulp off V8's for about 3% of idf arguments, which reverses laws the spec scores bit-equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from indexer.retrieval.fdlibm import log, log_array

# The spec's BM25 parameters, and the index settings' (mappings/laws.json): k1=1.2, b=0.75.
K1 = 1.2
B = 0.75

Floats = npt.NDArray[np.float64]


# ---------------------------------------------------------------------------------------------------
# Exact: the spec's arithmetic.


def idf(df: int, size: int) -> float:
    """The spec's idf of a word `df` of `size` laws have: `Math.log(1 + (size - n + 0.5) / (n + 0.5))`,
    V8's logarithm bit for bit."""
    return log(1 + (size - df + 0.5) / (df + 0.5))


def idf_array(df: npt.ArrayLike, size: int) -> Floats:
    """`idf` of every element of `df` (integers), elementwise: each element the bits `idf` gives. The
    argument is the same operations on exact integers (`size - df` is exact in float64 below 2^53)."""
    n = np.asarray(df, dtype=np.int64)
    return log_array(1 + ((size - n) + 0.5) / (n + 0.5))


@overload
def term_score(idf: float, tf: float, length: float, average: float) -> float: ...


@overload
def term_score(idf: float | Floats, tf: Floats, length: Floats, average: float) -> Floats: ...


def term_score(idf: Any, tf: Any, length: Any, average: float) -> Any:
    """The spec's term score, `(idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / average))`.

    One expression for a single law (Python floats) and for many at once (float64 numpy arrays,
    elementwise): IEEE +, -, *, / are correctly rounded either way, so each element is bit for bit the
    scalar result (tests/unit/test_scoring.py holds them equal).
    """
    return (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / average))


def exact_term_score(tf: int, df: int, size: int, length: int, average: float) -> float:
    """The spec's score of one word a law has `tf` times: `term_score(idf(df, size), ...)`."""
    return term_score(idf(df, size), tf, length, average)


# ---------------------------------------------------------------------------------------------------
# Lucene: OpenSearch's arithmetic for the same formula.

_K1_F = np.float32(K1)  # Lucene keeps k1 and b as Java floats: 1.2f, 0.75f
_B_F = np.float32(B)
_ONE_F = np.float32(1)


def lucene_idf(df: int, doc_count: int) -> np.float32:
    """BM25Similarity.idf: the same logarithm in double, cast to float; N is Lucene's `doc_count`.

    Lucene calls `Math.log`, which HotSpot may replace by its own intrinsic (within 1 ulp of the true
    value, not specified bit for bit, not StrictMath's). This mode takes fdlibm's (`idf`): the one
    logarithm lawindex has, the one StrictMath (and the lawindex plugin) uses, and an ulp in the double
    changes the float only where the double lies within an ulp of a float rounding boundary (2^-29 of
    arguments, about); test_lucene_mode.py holds the cast to OpenSearch's explained idf.
    """
    return np.float32(idf(df, doc_count))


def lucene_term_score(tf: int, df: int, doc_count: int, norm_length: int, average: float, legacy: bool) -> np.float32:
    """OpenSearch's score for one term of one document: Lucene's BM25Similarity in float32.

    `norm_length` is the field's length in words as indexed; Lucene keeps it in one byte
    (`int_to_byte4`), so lengths over 40 are rounded down. `average` is sumTotalTermFreq / docCount
    in float64 (Lucene casts it to float). `legacy` applies OpenSearch 2.x's LegacyBM25Similarity, which
    passes boost * (1 + k1) to the scorer: the spec's (k1 + 1) factor, in float.
    """
    # BM25Scorer: weight = boost * idf; LegacyBM25Similarity.scorer passes boost * (1 + getK1()).
    boost = _ONE_F * (_ONE_F + _K1_F) if legacy else _ONE_F
    weight = boost * lucene_idf(df, doc_count)
    # avgFieldLength: (float) (sumTotalTermFreq / (double) docCount).
    avgdl = np.float32(average)
    # scorer(): cache[i] = 1f / (k1 * ((1 - b) + b * LENGTH_TABLE[i] / avgdl)), all in float.
    dl = np.float32(byte4_to_int(int_to_byte4(norm_length)))
    norm_inverse = _ONE_F / (_K1_F * ((_ONE_F - _B_F) + _B_F * dl / avgdl))
    # BM25Scorer.score (Lucene 9.12, OpenSearch 2.19) and doScore (Lucene 10, OpenSearch 3.x), the same
    # expression in both: weight - weight / (1f + freq * normInverse).
    return np.float32(weight - weight / (_ONE_F + np.float32(tf) * norm_inverse))


def lucene_score(
    terms: Sequence[str],
    counts: Mapping[str, int],
    length: int,
    vocabulary: Mapping[str, int],
    doc_count: int,
    average: float,
    legacy: bool = False,
) -> float:
    """OpenSearch's `_score` of a law (its `counts` and `length`) for a bool of `term` queries, one per
    term: 0.0 if none match. `average` is Lucene's: the laws' total length over `doc_count`.

    Lucene sums the clauses' float scores in a double and casts the sum to float: DisjunctionSumScorer,
    WANDScorer and MaxScoreBulkScorer all do `double score = 0; score += scorer.score(); (float) score`,
    and BooleanScorer keeps a double per bucket. The clauses' order differs between scorers, but the sum
    of a few floats of like magnitude in a double is exact, so the order does not show.
    """
    total = 0.0
    for term in terms:
        tf = counts.get(term, 0)
        if tf:
            total += float(lucene_term_score(tf, vocabulary[term], doc_count, length, average, legacy))
    return float(np.float32(total))


# ---------------------------------------------------------------------------------------------------
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


def lucene_length(length: int) -> int:
    """The length Lucene scores a field of `length` words with: decoded from the byte it keeps."""
    return byte4_to_int(int_to_byte4(length))
