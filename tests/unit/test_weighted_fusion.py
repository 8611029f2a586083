"""Weighted reciprocal-rank fusion (docs/fusion.md; indexer.retrieval.meaning): a row's score is
words_weight/(k + words rank) + meaning_weight/(k + meaning rank), words part first, from 0.0. The expected
values below are worked out by hand (the decimals are the float64 nearest each sum, written out), never by the
code under test; `proven` with weights is held equal to `fuse` on generated rankings and weights."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.errors import BadInput
from indexer.retrieval import request
from indexer.retrieval.meaning import Fused, fuse, proven
from indexer.retrieval.request import Fusion
from tests.unit.rankings import LIMITS, WINDOWS, Ranked, rankings


def test_a_score_is_each_weight_over_k_plus_its_rank() -> None:
    # 1/(5+1) + 4/(5+3) = 0.1666... + 0.5
    assert Fusion(5, 1.0, 4.0).score(1, 3) == 0.6666666666666666
    # words do not reach it: 4/(5+2) alone
    assert Fusion(5, 1.0, 4.0).score(None, 2) == 0.5714285714285714
    # a weight of 0: its part adds 0.0
    assert Fusion(5, 0.0, 4.0).score(3, None) == 0.0
    assert Fusion(1, 0.0, 2.5).score(3, 1) == 1.25
    # weights 1 and 1: plain RRF, 1/61 + 1/63
    assert Fusion(60, 1.0, 1.0).score(1, 3) == 1 / 61 + 1 / 63 == 0.032266458495966694


def test_weights_reorder_the_fusion() -> None:
    # k = 5, words 1, meaning 4. Words rank rows 0, 1, 2; meaning ranks 2, 1, 0, 3:
    #   row 0: 1/6 + 4/8 = 0.6667   row 1: 1/7 + 4/7 = 0.7143   row 2: 1/8 + 4/6 = 0.7917   row 3: 4/9 = 0.4444
    words, meaning = [0, 1, 2], [2, 1, 0, 3]
    fused = fuse(words, meaning, Fusion(5, 1.0, 4.0))
    assert [row.index for row in fused] == [2, 1, 0, 3]
    assert fused[0] == Fused(2, 0.7916666666666666, 3, 1)
    assert fused[3] == Fused(3, 0.4444444444444444, None, 4)
    # k = 60, weights 1 and 1: rows 0 and 2 tie to the bit (1/61 + 1/63, 1/63 + 1/61), above row 1 (2/62):
    # corpus order breaks the tie.
    assert [row.index for row in fuse(words, meaning, Fusion(60, 1.0, 1.0))] == [0, 2, 1, 3]


def test_a_way_weighed_0_still_reaches_its_rows() -> None:
    # k = 1, words 0: row 0 is words' first, yet scores only its meaning part 1/(1+2)
    fused = fuse([0, 1], [1, 0, 2], Fusion(1, 0.0, 1.0))
    assert [(row.index, row.score, row.words, row.meaning) for row in fused] == [
        (1, 0.5, 2, 1), (0, 0.3333333333333333, 1, 2), (2, 0.25, None, 3)
    ]  # fmt: skip


def test_the_defaults_are_the_chosen_ones() -> None:
    # eval/README.md, "Choosing the fusion": chosen on the tuning half of eval/handbook.jsonl.
    assert (request.RRF_K, request.WORDS_WEIGHT, request.MEANING_WEIGHT) == (5, 1.0, 4.0)


@pytest.mark.parametrize(
    ("fusion", "named"),
    [
        ((0, 1.0, 1.0), "rrf_k"),
        ((10_001, 1.0, 1.0), "rrf_k"),
        ((5, -0.5, 1.0), "words_weight"),
        ((5, 1.0, math.nan), "meaning_weight"),
        ((5, math.inf, 1.0), "words_weight"),
        ((5, 1e40, 1.0), "words_weight"),  # issue 44: the fused score overflowed to Infinity
        ((5, 1.0, 1e-300), "meaning_weight"),
        ((5, 0.0, 0.0), "words_weight, meaning_weight"),
    ],
)
def test_a_fusion_out_of_range_is_refused_naming_it(fusion: tuple[int, float, float], named: str) -> None:
    with pytest.raises(BadInput, match=f"^{named}:"):
        Fusion(*fusion)
    Fusion(10_000, 0.0, 1e-6)  # the edges are accepted
    Fusion(1, 1e6, 0.0)


@settings(max_examples=500, deadline=None)
@given(
    st.floats(min_value=0.0, allow_infinity=False, allow_nan=False)
    | st.sampled_from([0.0, 1e-6, 1e6, 1.7976931348623157e308]),
    st.integers(min_value=1, max_value=request.RRF_K_MAX),
    st.integers(min_value=1, max_value=1_000_000),
)
def test_a_weight_is_refused_past_the_contracts_bound_and_else_never_overflows(
    weight: float, k: int, rank: int
) -> None:
    # Issue 44: any finite weight >= 0 is either refused (the contract's bound: 0 or 1e-6..1e6) or fused into
    # a finite score, on every rank (k from 1 to its maximum, ranks up to a million rows).
    inside = weight == 0 or request.WEIGHT_MIN <= weight <= request.WEIGHT_MAX
    try:
        fusion = Fusion(k, weight, 1.0)
    except BadInput as refused:
        assert not inside
        assert refused.message.startswith("words_weight: a weight must be 0 or a number from 0.000001 to 1000000")
        return
    assert inside
    for words_rank in (1, rank, None):
        score = fusion.score(words_rank, 1)
        assert math.isfinite(score) and score > 0


weights = st.sampled_from([0.0, 0.5, 1.0, 4.0, 1e-6, 3.7, 1e6]) | st.floats(min_value=1e-6, max_value=1e6)


@settings(max_examples=300, deadline=None)
@given(
    rankings(),
    WINDOWS,
    LIMITS,
    st.sampled_from([1, 2, 5, 60, 10_000]),
    weights,
    weights,
)
def test_a_proven_weighted_answer_is_the_full_fusion(
    ranked: Ranked, window: int, limit: int, k: int, words_weight: float, meaning_weight: float
) -> None:
    if words_weight == 0 and meaning_weight == 0:
        meaning_weight = 1.0
    words, meaning, rows = ranked
    full = fuse(words, meaning, Fusion(k, words_weight, meaning_weight))[:limit]
    got = proven(
        words[:window], window >= len(words), meaning[:window], rows, limit, Fusion(k, words_weight, meaning_weight)
    )
    if got is not None:
        assert got == full
    if window >= max(len(words), rows):  # both whole: always proven
        assert got == full


def test_a_way_weighed_0_ties_every_row_it_alone_reaches_and_is_not_proven_early() -> None:
    # Meaning weighed 0: rows words do not reach all score 0.0 and come in corpus order. Rows 0..3, words reach
    # only row 3; a meaning window of 2 (rows 2, 1) leaves row 0 unknown, bounded by 0.0, and it must come
    # before rows 1 and 2 (corpus order): equal to the bound is not enough.
    words, meaning = [3], [2, 1, 0, 3]
    assert [row.index for row in fuse(words, meaning, Fusion(1, 1.0, 0.0))] == [3, 0, 1, 2]
    assert proven(words, True, meaning[:2], 4, 2, Fusion(1, 1.0, 0.0)) is None
    assert proven(words, True, meaning, 4, 2, Fusion(1, 1.0, 0.0)) == fuse(words, meaning, Fusion(1, 1.0, 0.0))[:2]
