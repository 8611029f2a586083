"""`lawindex ask` through typer's runner, on a small corpus directory made for each test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from indexer.cli import app

LAWS = [
    {"id": "MD-S01", "kind": "statute", "law": "Do not park within 15 feet of a fire hydrant.",
     "question": "How far from a fire hydrant can I park?", "concept": "parking-fire-hydrant"},
    {"id": "MD-S02", "kind": "statute", "law": "Do not park within 20 feet of a fire station driveway.",
     "question": "How close to a fire station can I park?", "concept": "parking-fire-station"},
    {"id": "MD-S03", "kind": "statute", "law": "Use headlights from sunset to sunrise.",
     "question": "When must my headlights be on?", "concept": "headlights-night"},
    {"id": "MD-P1", "kind": "process", "law": "Bring your permit to the road test.",
     "question": "How far ahead must I book the park road test?", "concept": "road-test", "family": "road-test"},
]  # fmt: skip

runner = CliRunner()


@pytest.fixture
def corpora(tmp_path: Path) -> Path:
    (tmp_path / "MD.jsonl").write_text("\n".join(json.dumps(law) for law in LAWS) + "\n", encoding="utf-8")
    return tmp_path


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """`lawindex ask ARGS`, with the reference engine unless ARGS name one (OpenSearch is the default)."""
    engine = [] if "--engine" in args else ["--engine", "reference"]
    result = runner.invoke(app, ["ask", *args, *engine], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_text_output_is_the_spec_main(corpora: Path) -> None:
    code, out, _ = run("MD", "how far from a fire hydrant can i park", "--corpora", str(corpora))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "words: far fire hydrant park"
    assert lines[1] == "MD-S01  Do not park within 15 feet of a fire hydrant."
    assert lines[2].startswith("MD-S02  ")
    assert len(lines) == 3  # no headlights, no process row


def test_json_shape(corpora: Path) -> None:
    code, out, _ = run("md", "behing a firehydrant", "--corpora", str(corpora), "--json", "--engine", "reference")
    assert code == 0
    (line,) = out.splitlines()
    answer = json.loads(line)
    assert set(answer) == {"state", "question", "words", "terms", "hits"}
    assert answer["state"] == "MD" and answer["question"] == "behing a firehydrant"
    assert answer["words"] == ["behing", "firehydrant"]
    assert answer["terms"] == ["fire", "hydrant"]  # "behing" is one edit from nothing here
    assert [hit["id"] for hit in answer["hits"]] == ["MD-S01", "MD-S02"]
    assert set(answer["hits"][0]) == {"id", "kind", "score", "law"}
    assert answer["hits"][0]["score"] > answer["hits"][1]["score"] > 0


def test_from_stdin_answers_every_line(corpora: Path) -> None:
    code, out, _ = run("MD", "--from", "-", "--json", "--corpora", str(corpora), stdin="fire hydrant\n\nheadlights\r\n")
    assert code == 0
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a["question"] for a in answers] == ["fire hydrant", "headlights"]
    assert answers[1]["hits"][0]["id"] == "MD-S03"


def test_from_a_file(corpora: Path, tmp_path: Path) -> None:
    questions = tmp_path / "questions.txt"
    questions.write_text("fire\nsunset\n", encoding="utf-8")
    code, out, _ = run("MD", "--from", str(questions), "--corpora", str(corpora))
    assert code == 0
    assert out.count("words: ") == 2
    assert "MD-S03  Use headlights" in out


def test_json_from_a_file_is_the_models_bytes(corpora: Path, tmp_path: Path) -> None:
    # Answers are written straight from the Answer (indexer.service.output.answer_json); each line is still what
    # the pydantic models print, explained or not.
    from indexer.retrieval import reference
    from indexer.retrieval.corpus import read_corpus
    from indexer.retrieval.explain import explain
    from indexer.service.output import AnswerOut, dumps

    asked = ["how far from a fire hydrant can i park", "behing a firehydrant", "how can i", 'sunset "lights"']
    questions = tmp_path / "questions.txt"
    questions.write_text("".join(question + "\n" for question in asked), encoding="utf-8")
    corpus = read_corpus(corpora / "MD.jsonl")
    for extra in ([], ["--explain"]):
        code, out, _ = run("MD", "--from", str(questions), "--json", "--corpora", str(corpora), *extra)
        assert code == 0
        answers = [reference.ask(corpus, question) for question in asked]
        parts = [explain(answer, reference.statistics(corpus.laws)) if extra else None for answer in answers]
        assert out.splitlines() == [dumps(AnswerOut.of(a, p).json_obj()) for a, p in zip(answers, parts, strict=True)]


def test_limit(corpora: Path) -> None:
    code, out, _ = run("MD", "park", "--limit", "1", "--corpora", str(corpora))
    assert code == 0 and len(out.splitlines()) == 2
    for bad in ("0", "101"):
        code, _, _ = run("MD", "park", "--limit", bad, "--corpora", str(corpora))
        assert code == 2


def test_a_question_over_2000_characters_is_refused(corpora: Path) -> None:
    code, out, err = run("MD", "park " * 401, "--corpora", str(corpora))
    assert code == 2 and out == ""
    assert "question: 2005 characters, more than the 2000 accepted" in err


def test_a_question_of_2000_characters_is_answered(corpora: Path) -> None:
    code, _, _ = run("MD", "park" + " " * 1996, "--corpora", str(corpora))
    assert code == 0


def test_an_empty_question_has_no_hits_and_says_so(corpora: Path) -> None:
    code, out, err = run("MD", "how can i", "--corpora", str(corpora))
    assert code == 0
    assert out.splitlines() == ["words: "]
    assert "no words" in err


def test_an_unknown_state(corpora: Path) -> None:
    code, _, err = run("ZZ", "park", "--corpora", str(corpora))
    assert code == 2 and "not a state code: 'ZZ'" in err


def test_a_state_without_a_file(corpora: Path) -> None:
    code, _, err = run("TX", "park", "--corpora", str(corpora))
    assert code == 2 and "no corpus file for TX" in err


def test_a_bad_corpus_file_names_file_and_line(corpora: Path) -> None:
    path = corpora / "MD.jsonl"
    path.write_text(path.read_text() + '{"id": "MD-S09", "kind": "statute"}\n', encoding="utf-8")
    code, out, err = run("MD", "park", "--corpora", str(corpora))
    assert code == 2 and out == ""
    assert f"{path}:5: field 'law'" in err


def test_opensearch_is_the_default_engine_and_an_absent_one_is_exit_3() -> None:
    # Port 9 (discard) on loopback: nothing listens there, so the connection is refused at once.
    result = runner.invoke(app, ["ask", "MD", "park", "--url", "http://127.0.0.1:9", "--timeout", "2"])
    assert result.exit_code == 3
    assert "http://127.0.0.1:9" in result.stderr and "lawindex opensearch start" in result.stderr


def test_an_unknown_engine_is_a_usage_error(corpora: Path) -> None:
    code, _, _ = run("MD", "park", "--engine", "lucene", "--corpora", str(corpora))
    assert code == 2


def test_question_and_from_together_are_refused(corpora: Path) -> None:
    code, _, err = run("MD", "park", "--from", "-", "--corpora", str(corpora), stdin="fire\n")
    assert code == 2 and "give one of QUESTION, --from FILE or --family KEY" in err


def test_every_option_is_documented() -> None:
    result = runner.invoke(app, ["ask", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for option in ("--engine", "--corpora", "--from", "--json", "--limit"):
        assert option in result.stdout


def test_explain_parts_add_up_to_each_score(corpora: Path) -> None:
    code, out, _ = run("MD", "fire hydrant park", "--corpora", str(corpora), "--json", "--explain")
    assert code == 0
    hits = json.loads(out)["hits"]
    assert [hit["id"] for hit in hits] == ["MD-S01", "MD-S02"]
    # MD-S01 has fire, hydrant and park; MD-S02 only fire and park (hand-read from LAWS above).
    assert [part["word"] for part in hits[0]["explain"]] == ["fire", "hydrant", "park"]
    assert [part["word"] for part in hits[1]["explain"]] == ["fire", "park"]
    for hit in hits:
        total = 0.0
        for part in hit["explain"]:
            total += part["score"]
        assert total == hit["score"]


def test_family_rows_in_corpus_order(corpora: Path) -> None:
    code, out, _ = run("MD", "--family", "road-test", "--corpora", str(corpora))
    assert code == 0 and out.splitlines() == ["MD-P1  Bring your permit to the road test."]
    code, _, err = run("MD", "--family", "no-such-family", "--corpora", str(corpora))
    assert code == 2 and "no-such-family" in err


def test_get_one_law(corpora: Path) -> None:
    result = runner.invoke(app, ["get", "MD", "MD-S03", "--engine", "reference", "--corpora", str(corpora), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["law"] == "Use headlights from sunset to sunrise."
    result = runner.invoke(app, ["get", "MD", "MD-S99", "--engine", "reference", "--corpora", str(corpora)])
    assert result.exit_code == 2 and "MD-S99" in result.stderr
