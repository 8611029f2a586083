"""words(): the spec's tokeniser, stopwords and plural rule; its comments are the cases."""

from __future__ import annotations

import pytest

from indexer.corpus import Law
from indexer.words import STOP, ranked, ranked_text, words


def test_the_hydrant_question_leaves_four_words() -> None:
    assert words("how far from a fire hydrant can i park") == ["far", "fire", "hydrant", "park"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hydrants", ["hydrant"]),  # "hydrants" must find "hydrant"
        ("bus", ["bus"]),  # "bus" must not become "bu": three letters are kept whole
        ("buses", ["buse"]),  # the rule cuts one s, nothing cleverer
        ("class grass", ["class", "grass"]),  # ss is not a plural
        ("parks parking", ["park", "parking"]),  # only a final s is cut
        ("100s 4x4s", ["100", "4x4"]),  # digits are word characters
        ("abs", ["abs"]),  # exactly three letters: kept
        ("abcs", ["abc"]),  # four: cut
        ("whens", ["when"]),  # stopwords are dropped before plurals are cut, so this one survives
        ("ITS Its its", []),  # a stopword in any case
        ("Stop-sign; 15ft.", ["stop", "sign", "15ft"]),
        ("", []),
    ],
)
def test_the_rules(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_javascript_lowercasing_traps() -> None:
    # JavaScript's toLowerCase (and Python's lower) turn İ into i + U+0307: "i" is a stopword, and the
    # combining dot ends the word. Kelvin's K becomes k. The long s stays outside [a-z].
    assert words("İstanbul") == ["stanbul"]
    assert words("\u212aelvin") == ["kelvin"]
    assert words("ſtop") == ["top"]
    assert words("café") == ["caf"]


def test_the_stopword_list_is_the_spec_s() -> None:
    assert len(STOP) == 47
    assert {"park", "far", "must", "not"}.isdisjoint(STOP)


def test_process_rows_are_not_ranked_and_the_concept_is_split() -> None:
    row = {"id": "X", "law": "Park here.", "question": "Where?", "concept": "parking-fire-hydrant"}
    assert not ranked(Law(kind="process", **row))
    assert ranked(Law(kind="statute", **row))
    assert ranked_text(Law(kind="handbook", **row)) == "Park here. Where? parking fire hydrant"
