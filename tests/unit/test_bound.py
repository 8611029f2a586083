"""indexer.retrieval.bound, the proof that OpenSearch's window holds the spec's answer, held without a
cluster against scoring's Lucene arithmetic (float32, one-byte lengths, Lucene's N) on generated states:
laws past 40 words, laws of thousands of words among short ones (float32 cancellation), laws with no
words (the spec counts them in N, Lucene does not), ties, both similarities, terms asked in groups.

For a generated state and question: every law's OpenSearch score (`scoring.lucene_score`) and spec score
(`scoring.exact_term_score` summed in the question's order); OpenSearch's window is its best `size` laws;
no law outside it may score above the bound by the spec. Then each part of the bound is dropped in turn
and hypothesis must find a state that breaks the weakened bound: the property can fail.
(tests/integration/test_lucene_mode.py holds the same bound against a real node's `_score`.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from indexer.retrieval import bound
from indexer.retrieval.bound import grouped_bound, outside_bound, proven
from indexer.retrieval.scoring import K1, exact_term_score, idf, lucene_score

TERMS = ["a", "b", "c", "d", "e"]


@dataclass(frozen=True)
class State:
    """A state's laws as the scorers see them: each law's length in words and its count of each term,
    and `filler` laws of `filler_length` words with none of the terms (they move N and the average, as a
    state's thousands of other laws do; of length 0 they are laws of stopwords, in the spec's N only)."""

    lengths: list[int]
    counts: list[dict[str, int]]
    legacy: bool
    filler: int = 0
    filler_length: int = 20

    @cached_property
    def size(self) -> int:  # the spec's N: every ranked law, those with no words too
        return len(self.lengths) + self.filler

    @cached_property
    def doc_count(self) -> int:  # Lucene's N: the laws that have the field
        return sum(1 for length in self.lengths if length > 0) + (self.filler if self.filler_length else 0)

    @cached_property
    def total(self) -> int:
        return sum(self.lengths) + self.filler * self.filler_length

    @cached_property
    def dfs(self) -> dict[str, int]:
        return {term: sum(1 for counts in self.counts if counts.get(term)) for term in TERMS}

    def df(self, term: str) -> int:
        return self.dfs[term]

    def exact(self, law: int, terms: Sequence[str]) -> float:
        average = self.total / self.size
        score = 0.0
        for term in terms:
            tf = self.counts[law].get(term, 0)
            if tf:
                score += exact_term_score(tf, self.df(term), self.size, self.lengths[law], average)
        return score

    def lucene(self, law: int, terms: Sequence[str]) -> float:
        average = self.total / self.doc_count
        return lucene_score(terms, self.counts[law], self.lengths[law], self.dfs, self.doc_count, average, self.legacy)


# A length: none (a law of stopwords), short (exact in Lucene's byte), past 40 (rounded down), thousands
# of words (the cancellation of `w - w / (1 + x)`), or a long one Lucene's byte keeps exactly (24 + m·2^k:
# its score is then off from the spec's by float32 alone).
LENGTHS = st.one_of(
    st.just(0),
    st.integers(1, 40),
    st.integers(41, 400),
    st.integers(1_000, 6_000),
    st.builds(lambda m, k: 24 + (m << k), st.integers(8, 15), st.integers(5, 9)),
)


@st.composite
def laws(draw: st.DrawFn) -> tuple[int, dict[str, int]]:
    length = draw(LENGTHS)
    counts: dict[str, int] = {}
    left = length
    for term in TERMS:
        tf = draw(st.integers(0, min(left, 4)))
        if tf:
            counts[term] = tf
            left -= tf
    return length, counts


@st.composite
def asked(draw: st.DrawFn) -> tuple[State, list[str], int]:
    """A state, a question's terms (each in some law, as the spelling only yields vocabulary words), and
    the window's size. Its laws are drawn once or twice over: twice, every score is tied."""
    drawn = draw(st.lists(laws(), min_size=1, max_size=12))
    if draw(st.booleans()):
        drawn = drawn + drawn
    if not any(counts for _, counts in drawn):
        drawn[0] = (max(1, drawn[0][0]), {"a": 1})
    state = State(
        [length for length, _ in drawn],
        [counts for _, counts in drawn],
        legacy=draw(st.booleans()),
        filler=draw(st.one_of(st.just(0), st.integers(1, 5_000))),
        filler_length=draw(st.one_of(st.just(0), st.integers(1, 40))),
    )
    present = [term for term in TERMS if state.df(term)]
    order = draw(st.permutations(present))
    return state, order[: draw(st.integers(1, len(order)))], draw(st.integers(1, 10))


Bound = Callable[[Sequence[int], int, int, bool, float], float]


def window(state: State, terms: Sequence[str], size: int) -> tuple[list[int], float, bool]:
    """OpenSearch's best `size` laws for `terms` (ties in corpus order, as the paged sort breaks them),
    the lowest score among them, and whether the window is complete (fewer laws matched than `size`)."""
    scores = [state.lucene(law, terms) for law in range(len(state.lengths))]
    matched = sorted((law for law, score in enumerate(scores) if score > 0), key=lambda law: -scores[law])
    inside = matched[:size]
    lowest = min((scores[law] for law in inside), default=0.0)
    return inside, lowest, len(matched) < size


def escapes(state: State, terms: Sequence[str], size: int, bound_of: Bound = outside_bound) -> bool:
    """True when a law outside OpenSearch's window scores above the bound by the spec."""
    inside, lowest, complete = window(state, terms, size)
    if complete:
        return False  # every law with a word of the question is inside
    limit = bound_of([state.df(term) for term in terms], state.size, state.doc_count, state.legacy, lowest)
    return any(state.exact(law, terms) > limit for law in range(len(state.lengths)) if law not in inside)


FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(asked())
def test_no_law_outside_the_window_scores_above_the_bound(case: tuple[State, list[str], int]) -> None:
    state, terms, size = case
    assert not escapes(state, terms, size)


@FAST
@given(asked(), st.integers(1, 4))
def test_no_law_outside_every_group_s_window_scores_above_the_grouped_bound(
    case: tuple[State, list[str], int], width: int
) -> None:
    # The terms cut into groups of `width`, as the clause limit cuts them, one window per group.
    state, terms, size = case
    groups = [terms[start : start + width] for start in range(0, len(terms), width)]
    windows = [(group, *window(state, group, size)) for group in groups]
    inside = {law for _, laws, _, _ in windows for law in laws}
    incomplete = [
        ([state.df(term) for term in group], lowest) for group, _, lowest, complete in windows if not complete
    ]
    limit = grouped_bound(incomplete, state.size, state.doc_count, state.legacy)
    for law in range(len(state.lengths)):
        if law not in inside:
            assert state.exact(law, terms) <= limit


def test_a_long_law_among_short_ones_needs_the_cancellation_allowance() -> None:
    # Two laws of 24 + 11·2^9 = 5,656 words (Lucene's byte keeps the length exactly) among 3,000 of 20:
    # x = tf·normInverse is about 1/260, so `w - w / (1 + x)` cancels to 1/260 of w and the division's
    # rounding is ~1e-5 of the result. Window of one: the other law is outside, tied with its lowest.
    state = State([5_656, 5_656], [{"a": 1}, {"a": 1}], legacy=False, filler=3_000, filler_length=20)
    inside, lowest, complete = window(state, ["a"], 1)
    assert (inside, complete) == ([0], False)
    assert state.exact(1, ["a"]) > (K1 + 1) * (1 + bound.FLOAT32_SLACK) * lowest  # a relative slack alone fails
    assert state.exact(1, ["a"]) <= outside_bound([2], state.size, state.doc_count, False, lowest)


def test_proven_needs_the_limit_th_score_strictly_above_the_bound() -> None:
    assert proven([3.0, 2.0, 1.5], 3, 1.0)
    assert not proven([3.0, 2.0, 1.0], 3, 1.0)  # an equal law outside could come first on corpus order
    assert not proven([3.0, 2.0], 3, 0.0)  # fewer laws than asked for: not this function's to decide


def test_one_group_is_the_window_s_bound() -> None:
    assert grouped_bound([([2, 5], 1.25)], 30, 28, True) == outside_bound([2, 5], 30, 28, True, 1.25)
    assert grouped_bound([], 30, 28, False) == 0.0


# ---- the property fails when the bound is weakened -------------------------------------------------


def _without_idf_ratio(dfs: Sequence[int], size: int, doc_count: int, legacy: bool, lowest: float) -> float:
    # The spec's N taken for Lucene's: ignores the laws with no words.
    return outside_bound(dfs, doc_count, doc_count, legacy, lowest)


def _without_cancellation(dfs: Sequence[int], size: int, doc_count: int, legacy: bool, lowest: float) -> float:
    f = (K1 + 1) if legacy else 1.0
    ratio = max([1.0, *(idf(df, size) / idf(df, doc_count) for df in dfs)]) * ((K1 + 1) / f)
    return ratio * (1 + bound.FLOAT32_SLACK) * lowest


def _without_the_last_term(dfs: Sequence[int], size: int, doc_count: int, legacy: bool, lowest: float) -> float:
    return outside_bound(dfs[:-1] or dfs, size, doc_count, legacy, lowest)


def _as_if_2x(dfs: Sequence[int], size: int, doc_count: int, legacy: bool, lowest: float) -> float:
    # 2.x's similarity multiplies by (k1+1), 3.x's does not: a 3.x score bounded as a 2.x one is bounded
    # (k1+1) times too low.
    return outside_bound(dfs, size, doc_count, True, lowest)


def _breaks(weakened: Bound) -> Callable[[tuple[State, list[str], int]], bool]:
    return lambda case: escapes(*case, bound_of=weakened)


# The first state found is enough (no shrinking): the test only shows that one exists.
SEARCH = settings(
    max_examples=20_000, deadline=None, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck)
)


def test_a_bound_that_ignores_laws_with_no_words_is_caught() -> None:
    find(asked(), _breaks(_without_idf_ratio), settings=SEARCH)


@st.composite
def cancelling(draw: st.DrawFn) -> tuple[State, list[str], int]:
    """The trap the cancellation allowance is for, generated: two tied laws of a length Lucene keeps
    exactly, hundreds of times the average, a window of one."""
    length = draw(st.builds(lambda m, k: 24 + (m << k), st.integers(8, 15), st.integers(7, 9)))
    counts = {"a": draw(st.integers(1, 3))}
    filler = draw(st.integers(1_000, 5_000))
    state = State([length, length], [counts, dict(counts)], draw(st.booleans()), filler, draw(st.integers(5, 40)))
    return state, ["a"], 1


def test_a_bound_without_the_cancellation_allowance_is_caught() -> None:
    find(cancelling(), _breaks(_without_cancellation), settings=SEARCH)


@FAST
@given(cancelling())
def test_the_bound_holds_where_cancellation_bites(case: tuple[State, list[str], int]) -> None:
    assert not escapes(*case)


def test_a_bound_that_drops_a_term_is_caught() -> None:
    find(asked(), _breaks(_without_the_last_term), settings=SEARCH)


def test_a_bound_that_takes_3x_for_2x_is_caught() -> None:
    find(asked(), _breaks(_as_if_2x), settings=SEARCH)
