"""`lawindex verify` through typer's runner, against a real OpenSearch: 100% on the samples, exit 7 when
the exact ask disagrees, exit 2 when the file is not what the index was loaded from, exit 4 with no index."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from indexer.cli import app
from indexer.opensearch import verify as verify_module
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
from tests.integration.support import fresh_connection

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
HYDRANT = "how far from a fire hydrant can i park"
runner = CliRunner()


@pytest.fixture(scope="module")
def served(opensearch_url: str) -> Iterator[Connection]:
    with fresh_connection(opensearch_url) as connection:
        load(connection, read_corpora(CORPORA, ["MD", "AL"]), plugin=False)
        yield connection


def run(connection: Connection, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(
        app, ["verify", *args, "--url", connection.url], env={"LAWINDEX_NAMESPACE": connection.namespace}
    )
    return result.exit_code, result.stdout, result.stderr


def test_verify_is_exact_on_the_samples(served: Connection) -> None:
    code, out, err = run(served, "MD", "AL", "--corpora", str(CORPORA), "--json")
    assert code == 0, err
    reports = [json.loads(line) for line in out.splitlines()]
    assert [report["state"] for report in reports] == ["AL", "MD"]
    for report in reports:
        assert report["questions"] > 100
        assert report["exact_identical"] == report["questions"] and report["exact_percent"] == 100.0
        assert report["lucene_max_relative_error"] == 0.0
        assert report["disagreements"] == []
        # Each native difference has a reason; the sample laws over 40 words give "length rounding".
        assert sum(report["native_reasons"].values()) == report["questions"] - report["native_identical"]
        assert "unexplained" not in report["native_reasons"]


def test_verify_prints_a_table_per_state(served: Connection) -> None:
    code, out, err = run(served, "MD", "--corpora", str(CORPORA))
    assert code == 0, err
    assert "MD:" in out and "exact ask" in out and "OpenSearch BM25" in out and "window widened" in out


def test_verify_asks_the_questions_of_a_file(served: Connection, tmp_path: Path) -> None:
    questions = tmp_path / "questions.txt"
    questions.write_text(f"{HYDRANT}\n\nhow far must i be behing a firehydrant\n", encoding="utf-8")
    code, out, err = run(served, "AL", "--corpora", str(CORPORA), "--from", str(questions), "--json")
    assert code == 0, err
    (report,) = [json.loads(line) for line in out.splitlines()]
    assert report["questions"] == 2 and report["exact_identical"] == 2


def changed_maryland(tmp_path: Path) -> Path:
    """A copy of the corpora where Maryland's hydrant law no longer speaks of hydrants."""
    lines = (CORPORA / "MD.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert first["id"] == "MD-S01"
    first.update(law="Headlights at night.", question="When are headlights needed?", concept="headlights-night")
    (tmp_path / "MD.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    return tmp_path


def test_verify_refuses_a_file_the_index_was_not_loaded_from(served: Connection, tmp_path: Path) -> None:
    code, _, err = run(served, "MD", "--corpora", str(changed_maryland(tmp_path)))
    assert code == 2
    assert "was not loaded from" in err and "lawindex load" in err


def test_verify_exits_7_and_shows_both_rankings_when_the_exact_ask_disagrees(
    served: Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The index is Maryland's real file; the reference reads the changed one. With the served-corpus
    # check off, the exact ask (right for its index) disagrees with the reference, as a broken ask would.
    monkeypatch.setattr(verify_module, "check_served", lambda engine, corpus: None)
    questions = tmp_path / "questions.txt"
    questions.write_text(HYDRANT + "\n", encoding="utf-8")
    (tmp_path / "corpora").mkdir()
    corpora = changed_maryland(tmp_path / "corpora")
    code, _, err = run(served, "MD", "--corpora", str(corpora), "--from", str(questions))
    assert code == 7
    assert HYDRANT in err
    assert "reference" in err and "exact ask" in err and "MD-S01" in err
    assert "disagreed" in err


def test_verify_of_a_state_with_no_index_is_exit_4(served: Connection, tmp_path: Path) -> None:
    (tmp_path / "NV.jsonl").write_text(
        json.dumps({"id": "NV-S01", "kind": "statute", "law": "Park.", "question": "", "concept": "parking"}) + "\n",
        encoding="utf-8",
    )
    code, _, err = run(served, "NV", "--corpora", str(tmp_path))
    assert code == 4
    assert "no index for NV" in err
