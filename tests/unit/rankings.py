"""What the fusion's tests draw (tests/unit/test_fusion.py, test_weighted_fusion.py): two rankings of one corpus,
the windows read of them and the limits asked."""

from __future__ import annotations

from hypothesis import strategies as st

Ranked = tuple[list[int], list[int], int]


@st.composite
def rankings(draw: st.DrawFn) -> tuple[list[int], list[int], int]:
    """A corpus of `rows` rows, every row ranked by meaning, a subset by words, each in a random order,
    or (often) two orders that agree, or that are reversed (the fusion's ties: swapped ranks tie to the bit)."""
    rows = draw(st.integers(min_value=0, max_value=60))
    meaning = draw(st.permutations(range(rows)))
    shape = draw(st.sampled_from(["random", "agree", "reverse"]))
    reached = draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
    if shape == "random":
        words = [index for index in draw(st.permutations(range(rows))) if reached[index]]
    else:
        order = meaning if shape == "agree" else meaning[::-1]
        words = [index for index in order if reached[index]]
    return words, meaning, rows


WINDOWS = st.integers(min_value=1, max_value=80)  # the window, past the end too
LIMITS = st.integers(min_value=0, max_value=70)  # the limit, up to past the corpus
