"""The stories of the spec (../shared/spec/retrieve.md), told on the sample corpora in corpora/.

Every answer here comes from `tests/spec_port.py`, the line-for-line port of the spec, so these tests
check the corpora as much as the code: the sample laws are written so that what the spec says about
Maryland's hydrant question, Alabama's typo and the permit-holding page rows holds on them.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from indexer.retrieval.corpus import Law, read_corpus
from indexer.retrieval.words import STOP, ranked, ranked_text, words
from tests.spec_port import bm25, bm25_scored, one_edit_apart, spelled_as

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
STATES = ("MD", "AL", "TX", "PA", "WV", "SC", "VT")

HYDRANT = "how far from a fire hydrant can i park"
TYPO = "how far must i be behing a firehydrant"
FAMILY = "How long do I have to hold my permit before I can take the road test?"


@cache
def laws(state: str) -> tuple[Law, ...]:
    return read_corpus(CORPORA / f"{state}.jsonl").laws


def ids(found: list[Law]) -> list[str]:
    return [law.id for law in found]


def only(state: str, concept: str) -> Law:
    """The one ranked law of `state` with `concept`."""
    (law,) = [law for law in laws(state) if ranked(law) and law.concept == concept]
    return law


def vocabulary(state: str) -> dict[str, int]:
    """Each word of the state's ranked laws and how many laws it is in, as the spec's index counts them."""
    frequency: Counter[str] = Counter()
    for law in laws(state):
        if ranked(law):
            frequency.update(set(words(ranked_text(law))))
    return dict(frequency)


def with_pages_ranked(state: str) -> list[Law]:
    """The state's laws as they were before `ranked()`: every page row scored by words like a statute."""
    return [law.model_copy(update={"kind": "statute"}) if not ranked(law) else law for law in laws(state)]


def is_parking(law: Law) -> bool:
    return law.concept.startswith("parking-")


def is_stranger(law: Law) -> bool:
    """A law the hydrant question must not reach: headlights, or school buses at railroad crossings."""
    return law.concept.startswith("headlights") or law.concept == "school-bus-railroad"


# Story 1: the words that survive.


def test_the_hydrant_question_leaves_four_words() -> None:
    assert words(HYDRANT) == ["far", "fire", "hydrant", "park"]


def test_parking_is_not_park() -> None:
    # words() only cuts a final "s": the parking laws are found by "park", not by "parking".
    assert words("parking parks park") == ["parking", "park", "park"]


# Story 2: Maryland's hydrant question.


def test_maryland_hydrant_question_returns_the_hydrant_law_then_parking_laws() -> None:
    found = bm25(laws("MD"), HYDRANT)
    assert found[0].id == "MD-S01"
    assert found[0].concept == "parking-fire-hydrant"
    assert len(found) == 8
    assert all(is_parking(law) for law in found), [law.concept for law in found]
    concepts = {law.concept for law in found}
    assert {"parking-fire-station", "parking-crosswalk", "parking-railroad-crossing"} <= concepts
    # "the fire station law shares fire and park, the crosswalk and railroad laws share park and far"
    asked = set(words(HYDRANT))
    assert set(words(ranked_text(only("MD", "parking-fire-station")))) & asked >= {"fire", "park"}
    for concept in ("parking-crosswalk", "parking-railroad-crossing"):
        assert set(words(ranked_text(only("MD", concept)))) & asked >= {"park", "far"}
    # The three that share two words come straight after the hydrant law.
    assert {law.concept for law in found[1:4]} == {
        "parking-fire-station",
        "parking-crosswalk",
        "parking-railroad-crossing",
    }


def test_maryland_hydrant_question_reaches_nothing_about_headlights_or_railroad_buses() -> None:
    found = bm25(laws("MD"), HYDRANT, limit=len(laws("MD")))
    assert not [law.id for law in found if is_stranger(law)]
    # Because those laws share no surviving word with the question, not because they ranked low.
    asked = set(words(HYDRANT))
    strangers = [law for law in laws("MD") if is_stranger(law)]
    assert len(strangers) >= 3
    for law in strangers:
        assert not set(words(ranked_text(law))) & asked, law.id
    # Every law the question reaches is a parking law.
    assert all(is_parking(law) for law in found)


def test_maryland_hydrant_question_is_deterministic() -> None:
    first = bm25_scored(laws("MD"), HYDRANT)
    assert bm25_scored(list(laws("MD")), HYDRANT) == first
    assert bm25_scored(laws("MD"), HYDRANT) == first


@pytest.mark.parametrize("state", STATES)
def test_every_state_answers_the_hydrant_question_with_its_hydrant_law(state: str) -> None:
    found = bm25(laws(state), HYDRANT)
    assert found[0].id == f"{state}-S01"
    assert found[0].concept == "parking-fire-hydrant"
    assert len(found) == 8 and all(is_parking(law) for law in found)


# Story 3: Alabama's hydrant law, typed on a phone.


def test_alabama_typo_reaches_the_hydrant_law_first() -> None:
    assert words(TYPO) == ["far", "must", "behing", "firehydrant"]
    known = vocabulary("AL")
    assert "behind" in known and "behing" not in known and "firehydrant" not in known
    assert one_edit_apart("behing", "behind")
    assert "behind" in spelled_as("behing", known)
    assert {"fire", "hydrant"} <= set(spelled_as("firehydrant", known))
    found = bm25(laws("AL"), TYPO)
    assert found[0].id == "AL-S01"
    assert found[0].concept == "parking-fire-hydrant"


def test_alabama_typo_needs_both_tolerances() -> None:
    # The words the laws use as typed ("far", "must") do not put the hydrant law first; neither does
    # the one-edit rule alone. The compound "firehydrant" is what reaches it.
    assert bm25(laws("AL"), "how far must i be")[0].id != "AL-S01"
    assert bm25(laws("AL"), "how far must i be behing")[0].id != "AL-S01"
    assert bm25(laws("AL"), "how far must i be a firehydrant")[0].id == "AL-S01"


# Story 4: the agency's page rows never crowd the ranked laws out.

CROWDED = [
    ("PA", "permit-holding-period", "how long do i have to hold my permit before the road test"),
    ("WV", "permit-holding-period", "how long do i have to hold my permit before the road test"),
    ("SC", "conditional-license-curfew", "how long do i have to have my license before i can drive at night"),
    ("VT", "junior-passenger-limit", "how long before i can take passengers"),
]


@pytest.mark.parametrize(("state", "concept", "question"), CROWDED)
def test_page_rows_never_crowd_the_law_out(state: str, concept: str, question: str) -> None:
    target = only(state, concept)
    found = bm25(laws(state), question)
    assert target in found, ids(found)
    assert all(ranked(law) for law in found), ids(found)


@pytest.mark.parametrize(("state", "concept", "question"), CROWDED)
def test_page_rows_would_crowd_the_law_out_if_ranked(state: str, concept: str, question: str) -> None:
    # The spec's story with teeth: scored by words, five page rows a family, each carrying the
    # family's question, fill the shortlist and push the law out of it.
    target = only(state, concept)
    pages = {law.id for law in laws(state) if not ranked(law)}
    found = bm25(with_pages_ranked(state), question)
    assert target.id not in ids(found)
    assert sum(law.id in pages for law in found) >= 5, ids(found)


@pytest.mark.parametrize("state", ["PA", "WV"])
def test_permit_holding_law_is_first_for_the_permit_question(state: str) -> None:
    found = bm25(laws(state), "how long do i have to hold my permit before the road test")
    assert found[0].concept == "permit-holding-period"
    assert ranked(found[0])


@pytest.mark.parametrize("state", STATES)
def test_no_question_ever_returns_a_page_row(state: str) -> None:
    # Not the family question, not any law's own question, not a page row's own text.
    questions = {FAMILY, HYDRANT, TYPO} | {law.question for law in laws(state)} | {law.law for law in laws(state)}
    for question in sorted(questions):
        found = bm25(laws(state), question, limit=len(laws(state)))
        assert all(ranked(law) for law in found), (question, ids(found))


# Story 5: the corpus files themselves.


def test_every_required_state_has_a_file() -> None:
    assert {path.stem for path in CORPORA.glob("*.jsonl")} >= set(STATES)


@pytest.mark.parametrize("state", sorted(path.stem for path in CORPORA.glob("*.jsonl")))
def test_corpus_file_is_well_formed(state: str) -> None:
    rows = laws(state)
    assert len({law.id for law in rows}) == len(rows)
    assert all(law.id.startswith(f"{state}-") for law in rows)
    assert all(law.kind in {"statute", "regulation", "handbook", "process"} for law in rows)
    assert all(law.law.strip() and law.question.strip() for law in rows)
    assert all(law.concept == law.concept.lower() and " " not in law.concept for law in rows)
    assert sum(ranked(law) for law in rows) >= 40
    # Some laws are long, multi-clause statutes: over 40 words once stopwords are dropped.
    assert any(len(words(law.law)) > 40 for law in rows if ranked(law))


@pytest.mark.parametrize("state", sorted(path.stem for path in CORPORA.glob("*.jsonl")))
def test_page_rows_come_in_families_of_five_sharing_a_question(state: str) -> None:
    families: dict[str, list[Law]] = {}
    for law in laws(state):
        if not ranked(law):
            assert law.family, law.id
            families.setdefault(law.family, []).append(law)
        else:
            assert law.family is None, law.id
    assert "permit-holding-period" in families
    assert {law.question for law in families["permit-holding-period"]} == {FAMILY}
    for family, rows in families.items():
        assert len(rows) == 5, family
        assert len({law.question for law in rows}) == 1, family
        assert len({law.law for law in rows}) == 5, family


@pytest.mark.parametrize("state", sorted(path.stem for path in CORPORA.glob("*.jsonl")))
def test_a_question_of_only_stopwords_returns_nothing(state: str) -> None:
    assert bm25(laws(state), "how can i do it if you would") == []
    assert bm25(laws(state), " ".join(sorted(STOP))) == []
    assert bm25(laws(state), "") == []
