"""spelling.Vocabulary against the spec's loop (tests/spec_port.py's spelled_as), and the spec's own examples."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.retrieval.spelling import Vocabulary, one_edit_apart, spelled_as
from tests import spec_port

# Small alphabets, so that containment and one-edit collisions are common rather than rare.
_small_word = st.text(alphabet="abcd", min_size=1, max_size=9)
_vocabulary = st.lists(st.tuples(_small_word, st.integers(1, 9)), max_size=60).map(dict)


@settings(max_examples=600, deadline=None)
@given(_vocabulary, st.lists(_small_word, min_size=1, max_size=20))
def test_equals_the_spec_loop_in_value_and_order(vocabulary: dict[str, int], asked: list[str]) -> None:
    index = Vocabulary(vocabulary)
    for word in asked:
        assert index.spelled_as(word) == spec_port.spelled_as(word, vocabulary)


@settings(max_examples=300, deadline=None)
@given(_vocabulary, st.lists(_small_word, min_size=1, max_size=20))
def test_terms_are_the_spec_expansion_asked_twice(vocabulary: dict[str, int], asked: list[str]) -> None:
    # The spec's `[...new Set(words.flatMap(w => spelledAs(w, vocabulary)))]`; asked twice, so that the
    # second answer comes from the remembered spellings and must be the same.
    expected = list(dict.fromkeys(known for word in asked for known in spec_port.spelled_as(word, vocabulary)))
    index = Vocabulary(vocabulary)
    assert index.terms(asked) == expected
    assert index.terms(asked) == expected
    assert [index.spelled_as(word) for word in asked] == [spec_port.spelled_as(word, vocabulary) for word in asked]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet="ab", min_size=3, max_size=7), max_size=40).map(lambda ws: dict.fromkeys(ws, 1)),
    st.text(alphabet="ab", min_size=0, max_size=12),
)
def test_two_letter_alphabet_collides_everywhere(vocabulary: dict[str, int], word: str) -> None:
    assert spelled_as(word, vocabulary) == spec_port.spelled_as(word, vocabulary)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abc", max_size=8), st.text(alphabet="abc", max_size=8))
def test_one_edit_apart_is_edit_distance_one(a: str, b: str) -> None:
    # The spec's oneEditApart, against the textbook Levenshtein distance computed here.
    assert one_edit_apart(a, b) == (_levenshtein(a, b) == 1)


def _levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, start=1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[len(b)]


ROAD = {
    "far": 3, "fire": 5, "hydrant": 2, "park": 9, "behind": 1, "station": 4, "bus": 6, "school": 6,
    "crosswalk": 2, "feet": 7, "within": 8,
}  # fmt: skip


def test_compound_is_split_into_known_words() -> None:
    assert spelled_as("firehydrant", ROAD) == ["fire", "hydrant"]


def test_one_letter_off_is_corrected() -> None:
    assert spelled_as("behing", ROAD) == ["behind"]


def test_a_known_word_is_itself_only() -> None:
    assert spelled_as("fire", ROAD) == ["fire"]


def test_short_unknown_words_stand_for_nothing() -> None:
    # "bux" is one letter from "bus" but has 3 letters: the spec only looks into words of 4 or more.
    assert spelled_as("bux", ROAD) == []
    # Four letters: looked into for compounds, but not corrected ("parj" is one edit from "park").
    assert spelled_as("parj", ROAD) == []


def test_three_letter_known_words_are_not_found_inside_others() -> None:
    # "bus" is in the vocabulary, but a contained word must have four letters or more.
    assert spelled_as("busline", ROAD) == []


def test_order_is_vocabulary_order_not_position_in_the_word() -> None:
    # "hydrant" comes before "fire" in the word, after it in the vocabulary.
    assert spelled_as("hydrantfire", ROAD) == ["fire", "hydrant"]


def test_insertion_deletion_and_substitution() -> None:
    assert spelled_as("scholl", ROAD) == ["school"]  # substitution
    assert spelled_as("schoool", ROAD) == ["school"]  # insertion
    assert spelled_as("statin", ROAD) == ["station"]  # deletion
    assert spelled_as("sctoohl", ROAD) == []  # two edits


def test_a_swap_is_two_edits() -> None:
    # "wihtin" and "within" share the deletion keys "witin" and "wihin", but a swap is two edits.
    assert spelled_as("wihtin", ROAD) == []
    assert spec_port.spelled_as("wihtin", ROAD) == []
