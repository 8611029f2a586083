"""The `lawindex` command end to end on a real OpenSearch: what a user types after `lawindex load`
prints what the reference engine prints over the same corpus files, option for option."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from indexer.cli import app
from tests.integration.support import SAMPLE_QUESTIONS, drop_namespace, unique_namespace

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
runner = CliRunner()

QUESTIONS = SAMPLE_QUESTIONS


@pytest.fixture(scope="module")
def loaded(opensearch_url: str) -> Iterator[dict[str, str]]:
    """The sample corpora loaded through the CLI, in a namespace of their own; the environment to use it."""
    from opensearchpy import OpenSearch

    env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": unique_namespace()}
    result = runner.invoke(app, ["load", str(CORPORA), "--json"], env=env)
    assert result.exit_code == 0, result.stderr
    outcomes = [json.loads(line) for line in result.stdout.splitlines()]
    assert {row["state"] for row in outcomes} == {path.stem for path in CORPORA.glob("*.jsonl")}
    assert {row["outcome"] for row in outcomes} == {"indexed"}
    yield env
    drop_namespace(OpenSearch(opensearch_url), env["LAWINDEX_NAMESPACE"])


def ask(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["ask", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("state", ["MD", "AL", "TX"])
def test_ask_prints_what_the_reference_prints(loaded: dict[str, str], state: str) -> None:
    for question in QUESTIONS:
        for extra in ([], ["--json"], ["--explain"], ["--json", "--explain", "--limit", "3"]):
            code, production, err = ask(loaded, state, question, *extra)
            assert code == 0, err
            code, reference, err = ask(
                loaded, state, question, *extra, "--engine", "reference", "--corpora", str(CORPORA)
            )
            assert code == 0, err
            assert production == reference, (state, question, extra)


def test_the_hydrant_story_on_screen(loaded: dict[str, str]) -> None:
    code, out, _ = ask(loaded, "MD", "how far from a fire hydrant can i park")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "words: far fire hydrant park"
    assert lines[1].startswith("MD-S01  ") and "fire hydrant" in lines[1]
    assert len(lines) == 9


def test_a_batch_from_standard_input(loaded: dict[str, str]) -> None:
    stdin = "\n".join(QUESTIONS) + "\n"
    result = runner.invoke(app, ["ask", "TX", "--from", "-", "--json"], input=stdin, env=loaded)
    assert result.exit_code == 0, result.stderr
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [answer["question"] for answer in answers] == QUESTIONS


def test_family_and_get_match_the_files(loaded: dict[str, str]) -> None:
    code, production, _ = ask(loaded, "PA", "--family", "permit-holding-period")
    assert code == 0 and len(production.splitlines()) == 5
    code, reference, _ = ask(
        loaded, "PA", "--family", "permit-holding-period", "--engine", "reference", "--corpora", str(CORPORA)
    )
    assert production == reference
    result = runner.invoke(app, ["get", "MD", "MD-S01", "--json"], env=loaded)
    assert result.exit_code == 0
    first = json.loads((CORPORA / "MD.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert json.loads(result.stdout) == {key: value for key, value in first.items() if value is not None}


def test_status_lists_every_loaded_state(loaded: dict[str, str]) -> None:
    result = runner.invoke(app, ["status", "--json"], env=loaded)
    assert result.exit_code == 0
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(row["state"] for row in rows) == sorted(path.stem for path in CORPORA.glob("*.jsonl"))
