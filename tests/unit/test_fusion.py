"""The hybrid windows' proof (indexer.retrieval.meaning.proven) against the brute-force fusion of the two full
rankings (indexer.retrieval.meaning.fuse): whenever the windows prove an answer it is the full fusion's first
rows, exactly (indexes, scores to the bit, ranks, order); once both windows are whole they always prove it.
The hand-worked cases are of plain RRF (weights 1 and 1, given); tests/unit/test_weighted_fusion.py has the
weighted ones."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.retrieval.meaning import fuse, proven
from indexer.retrieval.request import Fusion
from tests.unit.rankings import LIMITS, WINDOWS, Ranked, rankings


@settings(max_examples=150, deadline=None)
@given(rankings(), WINDOWS, LIMITS, st.sampled_from([1, 2, 3, 60, 1000]))
def test_a_proven_answer_is_the_full_fusion(ranked: Ranked, window: int, limit: int, k: int) -> None:
    words, meaning, rows = ranked
    full = fuse(words, meaning, Fusion(k))[:limit]
    got = proven(words[:window], window >= len(words), meaning[:window], rows, limit, Fusion(k))
    if got is not None:
        assert got == full
    if window >= max(len(words), rows):  # both whole: always proven
        assert got == full


@settings(max_examples=150, deadline=None)
@given(rankings(), st.integers(min_value=0, max_value=70), st.sampled_from([1, 60]))
def test_doubling_windows_end_with_the_full_fusion(ranked: Ranked, limit: int, k: int) -> None:
    words, meaning, rows = ranked
    window = 1
    while (got := proven(words[:window], window >= len(words), meaning[:window], rows, limit, Fusion(k))) is None:
        assert window < max(len(words), rows)  # never refused once both are whole
        window *= 2
    assert got == fuse(words, meaning, Fusion(k))[:limit]


def test_a_row_bounded_at_an_equal_score_is_not_proven_out() -> None:
    # Rows 0..3; words ranks row 3 first, meaning ranks row 2 first: rows 2 and 3 then tie by swapped ranks
    # (1/(k+1) + 1/(k+2)), row 2 first in corpus order. A window of one row each knows neither exactly.
    words, meaning = [3, 2, 1, 0], [2, 3, 1, 0]
    assert proven(words[:1], False, meaning[:1], 4, 1, Fusion(60, 1.0, 1.0)) is None
    assert (
        proven(words[:2], False, meaning[:2], 4, 1, Fusion(60, 1.0, 1.0))
        == fuse(words, meaning, Fusion(60, 1.0, 1.0))[:1]
    )
    assert [row.index for row in fuse(words, meaning, Fusion(60, 1.0, 1.0))[:2]] == [2, 3]


def test_small_windows_prove_agreeing_rankings() -> None:
    # Where the two ways agree on their first rows, a window a little wider than the limit is enough.
    rows = 2000
    meaning = list(range(rows))
    words = list(range(rows))
    got = proven(words[:64], False, meaning[:64], rows, 8, Fusion(60))
    assert got is not None and [row.index for row in got] == list(range(8))


def test_a_bound_equal_to_the_last_exact_score_is_not_enough() -> None:
    # k = 1, windows of 4: row 1 (ranks 2, 2) is exact at 1/3 + 1/3; row 0 (words rank 1, meaning past the
    # window) is bounded by 1/2 + 1/(1 + 5), the same float64 score, and its meaning rank is 5: it ties row 1
    # and comes first in corpus order. Not proven at 4; at 5 row 0 is exact and second.
    words, meaning = [0, 1, 2, 3, 4, 5], [2, 1, 3, 4, 0, 5]
    assert [row.index for row in fuse(words, meaning, Fusion(1, 1.0, 1.0))[:2]] == [2, 0]
    assert proven(words[:4], False, meaning[:4], 6, 2, Fusion(1, 1.0, 1.0)) is None
    assert (
        proven(words[:5], False, meaning[:5], 6, 2, Fusion(1, 1.0, 1.0))
        == fuse(words, meaning, Fusion(1, 1.0, 1.0))[:2]
    )


def test_a_row_in_the_meaning_window_only_may_still_have_a_words_part() -> None:
    # k = 1, windows of 4, words not whole: row 4 (meaning rank 2, words rank 5, past the window) scores
    # 1/6 + 1/3 = 0.5, above row 2's exact 1/4 + 1/5: its bound must count a words part past the window.
    words, meaning = [0, 1, 2, 3, 4, 5], [0, 4, 1, 2, 3, 5]
    assert [row.index for row in fuse(words, meaning, Fusion(1, 1.0, 1.0))[:3]] == [0, 1, 4]
    assert proven(words[:4], False, meaning[:4], 6, 3, Fusion(1, 1.0, 1.0)) is None
    assert (
        proven(words[:5], False, meaning[:5], 6, 3, Fusion(1, 1.0, 1.0))
        == fuse(words, meaning, Fusion(1, 1.0, 1.0))[:3]
    )
