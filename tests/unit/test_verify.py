"""indexer.opensearch.verify without a cluster: the questions it asks (each law's own, and a learner's typo,
compound and plural of it), the questions read from a file, and the report. Asking them against a real
node is tests/integration/test_verify.py."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from indexer.errors import BadInput
from indexer.opensearch.verify import StateReport, default_questions, read_questions, typo, variants
from indexer.retrieval.corpus import read_corpus
from tests.unit.laws import row

QUESTION = "How far from a fire hydrant can I park?"


def one_edit_apart(a: str, b: str) -> bool:
    """Whether `b` is `a` with exactly one letter changed, added or dropped."""
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = sorted((a, b), key=len)
    if len(long) - len(short) != 1:
        return False
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def test_a_question_s_variants_are_a_typo_a_compound_and_plurals() -> None:
    typed, compound, plural = variants(QUESTION, "seed")
    # The longest word (hydrant) takes the typo, its first letter kept.
    words = typed.split()
    assert words[:5] + words[6:] == ["how", "far", "from", "a", "fire", "can", "i", "park"]
    assert words[5] != "hydrant" and words[5][0] == "h" and one_edit_apart("hydrant", words[5])
    # The one pair of neighbours of four letters or more is run together.
    assert compound == "how far from a firehydrant can i park"
    # Every word of three letters or more that does not end in s takes one.
    assert plural == "hows fars froms a fires hydrants cans i parks"


def test_variants_are_the_same_for_a_seed_and_never_the_question_itself() -> None:
    assert variants(QUESTION, "lawindex/verify/TX/TX-S01") == variants(QUESTION, "lawindex/verify/TX/TX-S01")
    # Nothing to make plural, no pair, no word of five letters: no variant at all.
    assert variants("is as", "seed") == []
    # A variant equal to the question (lowered) is left out.
    assert "parks" not in variants("parks", "seed")


def test_a_typo_is_one_edit_at_or_after_first() -> None:
    rng = random.Random(7)
    for _ in range(500):
        changed = typo(rng, "hydrant", first=1)
        assert changed[0] == "h"
        assert changed == "hydrant" or one_edit_apart("hydrant", changed)  # a letter changed to itself
    assert {len(typo(rng, "park")) for _ in range(200)} == {3, 4, 5}


def test_default_questions_are_each_ranked_law_s_own_then_its_variants(tmp_path: Path) -> None:
    lines = [
        row(id="TX-1", question=QUESTION),
        row(id="TX-2", question=QUESTION),  # the same question: asked once
        row(id="TX-3", kind="process", family="f", question="How do I book a road test?"),  # never ranked
        row(id="TX-4", question="School bus"),
    ]
    (tmp_path / "TX.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    corpus = read_corpus(tmp_path / "TX.jsonl")
    questions = default_questions(corpus)
    # In corpus order, each string once: TX-2's own question is TX-1's, its typo (another seed) is its own.
    shown = [QUESTION, *variants(QUESTION, "lawindex/verify/TX/TX-1"), QUESTION]
    shown += [*variants(QUESTION, "lawindex/verify/TX/TX-2"), "School bus"]
    shown += variants("School bus", "lawindex/verify/TX/TX-4")
    assert questions == list(dict.fromkeys(shown))
    assert questions[0] == QUESTION and questions.count(QUESTION) == 1
    assert not any("road test" in question for question in questions)


def test_questions_from_a_file_one_a_line(tmp_path: Path) -> None:
    path = tmp_path / "questions.txt"
    path.write_text("  fire hydrant \n\n\nschool bus\n   \n", encoding="utf-8")
    assert read_questions(path) == ["fire hydrant", "school bus"]


def test_a_questions_file_that_cannot_be_read_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"missing\.txt: cannot be read: No such file"):
        read_questions(tmp_path / "missing.txt")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(BadInput, match=r"latin1\.txt:1: not UTF-8"):
        read_questions(tmp_path / "latin1.txt")


def test_the_report_counts_and_says_its_path() -> None:
    report = StateReport("TX", questions=4, exact_same=3, native_same=2)
    assert (report.exact_percent, report.native_percent) == (75.0, 50.0)
    assert StateReport("TX").exact_percent == 100.0  # no question: nothing differed
    shown = report.as_json()
    assert (shown["state"], shown["exact_identical"], shown["exact_percent"]) == ("TX", 3, 75.0)
    assert (shown["native_identical"], shown["native_percent"]) == (2, 50.0)
    assert shown["path"] == "window" and shown["plugin_identical"] is None
    assert StateReport("TX", questions=1, plugin_same=1).as_json()["path"] == "plugin"
