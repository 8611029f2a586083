"""`lawindex eval` says what is real: paired randomization and t tests (indexer.evaluation.significance) on
constructed cases whose p-values are worked out by hand, `--split`, graded judgements, and `--against`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexer.errors import BadInput, CorpusError
from indexer.evaluation.evaluate import Asked, Judged, Report, against, of_split, read_judged
from indexer.evaluation.significance import paired
from tests.integration.support import lawindex

ROOT = Path(__file__).resolve().parents[2]


def test_the_randomization_test_on_a_constructed_case() -> None:
    # 8 questions: the first way better by 1 on six, equal on two. With 2^8 = 256 sign flips (fewer than the
    # resamples asked, so scipy enumerates them all: exact), a mean difference as far from 0 as 6/8 needs
    # all six nonzero differences of one sign: 2 signs x 2^2 flips of the zeros = 8 of 256 = 0.03125.
    first = [1.0] * 6 + [0.5, 0.0]
    second = [0.0] * 6 + [0.5, 0.0]
    found = paired("a", "b", "recall@8", first, second)
    assert found.randomization_p == 0.03125
    assert found.significant
    assert found.difference == 0.75
    # Paired t: d = six 1s and two 0s, mean 0.75, sd sqrt(1.5 / 7) = 0.4629, t = 0.75 / (0.4629 / sqrt 8)
    # = 4.583 on 7 degrees of freedom: two-sided p = 0.0025 (a t table: 0.002 at t = 4.785, 0.005 at 3.999).
    assert 0.002 < found.t_p < 0.005


def test_no_difference_is_never_significant() -> None:
    found = paired("a", "b", "nDCG@8", [0.5, 1.0, 0.0], [0.5, 1.0, 0.0])
    assert (found.randomization_p, found.t_p, found.significant) == (1.0, 1.0, False)
    # One question of five better: every one of the 2^5 sign flips keeps |mean difference| at 1/5: p = 1.
    assert paired("a", "b", "recall@8", [1.0, 0, 0, 0, 0], [0.0] * 5).randomization_p == 1.0


def _report(values: dict[str, list[float]]) -> Report:
    judged = [Judged(f"q{n}", "TX", "question", ("TX-S01",)) for n in range(len(next(iter(values.values()))))]
    asked = {way: [Asked([], {"R@8": v, "RR@8": v, "nDCG@8": v}) for v in column] for way, column in values.items()}
    overall = {
        way: {name: sum(column) / len(column) for name in ("R@8", "RR@8", "nDCG@8")} for way, column in values.items()
    }
    return Report(tuple(values), judged, asked, overall, {})


def test_a_report_tests_each_pair_of_ways() -> None:
    report = _report({"words": [0.0] * 6 + [1.0, 1.0], "meaning": [1.0] * 8})
    found = report.significance("words", "meaning", "R@8")
    assert (found.first, found.second, found.measure) == ("words", "meaning", "recall@8")
    assert found.randomization_p == 0.03125 and found.difference == -0.75


def test_against_an_earlier_run_pairs_the_questions_by_id(tmp_path: Path) -> None:
    report = _report({"hybrid": [1.0] * 8})
    earlier = tmp_path / "before.jsonl"
    lines = [
        {"kind": "question", "id": f"q{n}", "ways": {"hybrid": {"recall@8": v, "MRR@8": v, "nDCG@8": v}}}
        for n, v in enumerate([0.0] * 6 + [1.0, 1.0])
    ]
    earlier.write_text("\n".join(map(json.dumps, [*lines[::-1], {"kind": "summary"}])) + "\n")
    found = against(report, earlier)
    assert [one.measure for one in found] == ["recall@8", "MRR@8", "nDCG@8"]
    assert found[0].randomization_p == 0.03125 and found[0].difference == 0.75
    (tmp_path / "other.jsonl").write_text(json.dumps({"kind": "question", "id": "zz", "ways": {}}) + "\n")
    with pytest.raises(BadInput, match="no question and way in common"):
        against(report, tmp_path / "other.jsonl")


def test_splits_and_grades_are_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "judged.jsonl"
    path.write_text(
        '{"id": "a", "state": "TX", "question": "q", "split": "tuning",'
        ' "relevant": [{"id": "TX-S01", "grade": 2}, "TX-S02"]}\n'
        '{"id": "b", "state": "TX", "question": "q", "split": "held-out", "relevant": ["TX-S03"]}\n'
        '{"id": "c", "state": "TX", "question": "q", "relevant": ["TX-S03"]}\n'
    )
    judged = read_judged(path)
    assert judged[0].relevant == ("TX-S01", "TX-S02") and judged[0].grades == (2, 1)
    assert [one.id for one in of_split(judged, "held-out")] == ["b"]
    assert len(of_split(judged, None)) == 3
    with pytest.raises(BadInput, match="unknown split"):
        of_split(judged, "test")
    path.write_text('{"state": "TX", "question": "q", "split": "dev", "relevant": ["TX-S01"]}\n')
    with pytest.raises(CorpusError, match="split"):
        read_judged(path)
    path.write_text('{"state": "TX", "question": "q", "relevant": [{"id": "TX-S01", "grade": 0}]}\n')
    with pytest.raises(CorpusError, match="grade"):
        read_judged(path)


def test_the_handbook_set_is_split_once_in_two_halves() -> None:
    judged = read_judged(ROOT / "eval" / "handbook.jsonl")
    assert len(judged) >= 100
    halves = {split: [one for one in judged if one.split == split] for split in ("tuning", "held-out")}
    assert len(halves["tuning"]) + len(halves["held-out"]) == len(judged)
    assert abs(len(halves["tuning"]) - len(halves["held-out"])) <= 1
    corpus = (ROOT / "eval" / "corpora" / "OH.jsonl").read_text().splitlines()
    assert len(corpus) >= 300


def test_eval_prints_the_paired_tests_of_a_split(tmp_path: Path) -> None:
    code, out, err = lawindex(
        "eval", str(ROOT / "eval" / "handbook.jsonl"), "--split", "held-out", "--by", "words", "--by", "meaning",
        "--engine", "reference", "--corpora", str(ROOT / "eval" / "corpora"), "--json",
    )  # fmt: skip
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    questions, summary = lines[:-1], lines[-1]
    assert {line["split"] for line in questions} == {"held-out"}
    assert summary["questions"] == len(questions)
    assert [(one["first"], one["second"], one["measure"]) for one in summary["significance"]] == [
        ("words", "meaning", "recall@8"), ("words", "meaning", "MRR@8"), ("words", "meaning", "nDCG@8")
    ]  # fmt: skip
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text(out)
    code, out, err = lawindex(
        "eval", str(ROOT / "eval" / "handbook.jsonl"), "--split", "held-out", "--by", "words",
        "--engine", "reference", "--corpora", str(ROOT / "eval" / "corpora"), "--against", str(earlier),
    )  # fmt: skip
    assert code == 0, err
    assert "paired tests against" in out
    assert "words (this run) vs words (earlier.jsonl) on recall@8: " in out  # the same figures: p = 1
    assert "(+0.000), p = 1.0000 (randomization), 1.0000 (t)" in out
