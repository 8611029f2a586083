"""Why OpenSearch's window holds the spec's answer: the most a law left outside it can score by the spec.

OpenSearch ranks by Lucene's BM25 (`indexer.retrieval.scoring`, the Lucene half), the spec by its own
float64 arithmetic; `ask` on OpenSearch takes OpenSearch's best laws (a window), re-scores them exactly,
and returns them only when no law outside the window can reach the answer (`proven`). The functions here
take plain statistics (N, Lucene's N, each term's df, the window's lowest OpenSearch score), no client:
tests/unit/test_bound.py holds them against scoring's Lucene arithmetic on generated states, and
tests/integration/test_lucene_mode.py against a real node's `_score`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from indexer.retrieval.scoring import K1, idf

# float32 arithmetic in Lucene, in two parts (see `outside_bound`). Relative: the idf, the weight, the
# length ratio and the final cast each carry an error of a unit in the last place (2^-24 ≈ 6e-8); 1e-5
# is over a hundred of them. Absolute: the score is computed as `weight - weight / (1 + tf·normInverse)`,
# and for a law much longer than the average the two sides nearly cancel, so the rounding of the
# division (up to two units of `weight`) is no longer small beside the result: a 3,354-word law among
# laws of 20 words on average scores 1.2e-5 below its real value, past any fixed relative slack. It is
# bounded by UNIT_ROUNDOFF · CANCELLATION units of each term's weight. A looser bound only costs a wider
# window, never a wrong answer.
FLOAT32_SLACK = 1e-5
UNIT_ROUNDOFF = 2.0**-24
CANCELLATION = 3.0


def outside_bound(dfs: Sequence[int], size: int, doc_count: int, legacy: bool, lowest: float) -> float:
    """The most a law can score by the spec, for terms of document frequencies `dfs`, when its OpenSearch
    score for those terms is at most `lowest` (a window's lowest: OpenSearch returns the best scores, so
    every law it left out scores at most that). `size` is the spec's N (every ranked law), `doc_count`
    Lucene's (the ranked laws with at least one word); `legacy` is OpenSearch 2.x's similarity.

    Per term, in real numbers, spec / OpenSearch = (idf / idf') · ((k1+1) / f) · (D' / D), where
    - idf' is Lucene's, from its N (`doc_count`), which leaves out ranked laws with no words; the spec's
      N is at least as large and df is the same, so idf / idf' >= 1, computed here per term;
    - f is (k1+1) on 2.x (LegacyBM25Similarity) and 1 on 3.x (BM25Similarity);
    - D = tf + k1·(1 - b + b·L/avg) is the spec's denominator and D' Lucene's, with the length L' decoded
      from one byte, L' <= L (SmallFloat rounds down), and avg' = total / doc_count >= avg = total / N.
      So L'/avg' <= L/avg, D' <= D, and D' / D <= 1.
    A law's score is a sum of such terms, so its ratio is at most the largest term's: ρ.

    OpenSearch's score is not the real-number one but float32, and not only relatively off: each term
    is `w - w / (1 + x)` with w = f·idf' and x = tf / D'-ish; for a law many times the average length x
    is small, the two sides nearly cancel, and the division's rounding (at most two units in the last
    place of w) is a large part of the result. So a term's real score is at most its float32 score plus
    CANCELLATION·u·w, times (1 + FLOAT32_SLACK) for the relative errors (idf cast, weight, normInverse,
    the sum's cast to float). Summed over the terms (a law has at most all of them):

        spec(law) <= ρ · (1 + FLOAT32_SLACK) · (score(law) + CANCELLATION·u·Σ_t f·idf'_t).
    """
    f = (K1 + 1) if legacy else 1.0
    worst = 1.0
    weights = 0.0
    for df in dfs:
        exact_idf = idf(df, size)
        lucene_idf = idf(df, doc_count)
        worst = max(worst, exact_idf / lucene_idf)
        weights += f * lucene_idf
    ratio = worst * ((K1 + 1) / f)
    return ratio * (1 + FLOAT32_SLACK) * (lowest + CANCELLATION * UNIT_ROUNDOFF * weights)


def grouped_bound(incomplete: Iterable[tuple[Sequence[int], float]], size: int, doc_count: int, legacy: bool) -> float:
    """The most a law outside every window can score by the spec, when a question's terms were asked in
    groups (OpenSearch's clause limit, indexer.opensearch.read.search_limits): `incomplete` holds, per window that
    was full, its terms' dfs and its lowest OpenSearch score. A complete window (fewer laws than asked
    for) is left out: no law outside it has a word of its group.

    The spec's score is a sum over terms and each term is in exactly one group, so spec(law) =
    Σ_g spec_g(law). Per group g the law is outside g's window, so either that window is complete
    (spec_g = 0) or its OpenSearch score for g is at most the window's lowest, and `outside_bound(g)`
    bounds spec_g exactly as it bounds a whole question. With one window this is `outside_bound`.
    """
    return sum(outside_bound(dfs, size, doc_count, legacy, lowest) for dfs, lowest in incomplete)


def proven(scores: Sequence[float], limit: int, bound: float) -> bool:
    """True when no law outside the windows can enter the top `limit`: `scores` are the spec's scores of
    the laws inside them, best first, and the limit-th is strictly above `bound`, the most an outside law
    can score (an equal one could win on corpus order). Every law inside is re-scored exactly over all
    the terms, so the answer's top `limit` is then the spec's."""
    return len(scores) >= limit and scores[limit - 1] > bound
