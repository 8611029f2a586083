"""indexer.service.engines without a cluster: the checks every engine makes of a question, the choice of
engine, and the reference engine over the sample corpora (the laws read from the files themselves)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexer.errors import BadInput, NotFound
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.retrieval.request import MAX_LIMIT, MAX_QUESTION_CHARS, Request
from indexer.service.engines import ReferenceEngine, engine

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


def rows(state: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (CORPORA / f"{state}.jsonl").read_text(encoding="utf-8").splitlines() if line]


def test_a_question_up_to_2000_characters_and_a_limit_of_1_to_100_pass() -> None:
    assert (MAX_QUESTION_CHARS, MAX_LIMIT) == (2000, 100)
    Request("TX", "x" * 2000)
    Request("TX", "fire hydrant", limit=1)
    Request("TX", "fire hydrant", limit=100)


def test_a_longer_question_or_a_limit_outside_1_to_100_is_refused() -> None:
    with pytest.raises(BadInput, match="question: 2001 characters, more than the 2000 accepted"):
        Request("TX", "x" * 2001)
    for limit in (0, -1, 101):
        with pytest.raises(BadInput, match=f"limit: must be an integer from 1 to 100, not {limit}"):
            Request("TX", "fire hydrant", limit=limit)


def test_an_engine_is_chosen_by_name() -> None:
    assert isinstance(engine("reference", corpora=CORPORA), ReferenceEngine)
    # Made without a request: nothing listens on the discard port, and nothing is asked yet.
    assert isinstance(engine("opensearch", connection=Connection(url="http://127.0.0.1:9")), OpenSearchEngine)
    with pytest.raises(BadInput, match="unknown engine 'lucene'") as refused:
        engine("lucene")
    assert refused.value.hint == "use one of: reference, opensearch"


def test_the_reference_engine_answers_what_the_readme_shows() -> None:
    question = "how far from a fire hydrant can i park"
    answer = ReferenceEngine(CORPORA).ask(Request("TX", question))
    shown = ["TX-S01", "TX-S02", "TX-S03", "TX-S05", "TX-S06", "TX-S09", "TX-S07", "TX-S04"]
    assert [hit.law.id for hit in answer.hits] == shown
    assert [hit.law.id for hit in ReferenceEngine(CORPORA).ask(Request("TX", question, limit=2)).hits] == shown[:2]


def test_the_reference_engine_is_asked_a_checked_question_before_it_reads_a_file() -> None:
    with pytest.raises(BadInput, match="2001 characters"):
        ReferenceEngine(Path("/nonexistent")).ask(Request("TX", "x" * 2001))


def test_a_law_by_id_and_a_family_in_corpus_order() -> None:
    reference = ReferenceEngine(CORPORA)
    (md_s01,) = [row for row in rows("MD") if row["id"] == "MD-S01"]
    law = reference.get("MD", "MD-S01")
    assert (law.law, law.concept, law.source) == (md_s01["law"], md_s01["concept"], md_s01["source"])
    key = "permit-holding-period"
    family = [row["id"] for row in rows("PA") if row["kind"] == "process" and row.get("family") == key]
    assert family == ["PA-P01", "PA-P02", "PA-P03", "PA-P04", "PA-P05"]
    assert [law.id for law in reference.family("PA", "permit-holding-period")] == family
    assert reference.family("PA", "no-such-family") == []


def test_a_missing_law_a_bad_state_or_a_state_without_a_file_is_refused() -> None:
    reference = ReferenceEngine(CORPORA)
    with pytest.raises(NotFound, match="MD has no law 'MD-S99'"):
        reference.get("md", "MD-S99")
    with pytest.raises(BadInput, match="not a state code"):
        reference.ask(Request("ZZ", "fire hydrant"))
    with pytest.raises(BadInput, match="no corpus file for WY"):
        reference.ask(Request("WY", "fire hydrant"))


def test_the_explained_parts_add_up_to_each_score() -> None:
    reference = ReferenceEngine(CORPORA)
    answer = reference.ask(Request("AL", "how far must i be behing a firehydrant", limit=2))
    parts = reference.explain(answer)
    assert len(parts) == len(answer.hits) == 2
    for hit, contributions in zip(answer.hits, parts, strict=True):
        total = 0.0
        for part in contributions:
            total += part.score
        assert total == hit.score
    # The README's figures: AL-S01 13.7025 over far, must, fire, hydrant; AL-S02 4.8849 from fire alone.
    assert [part.word for part in parts[0]] == ["far", "must", "fire", "hydrant"]
    assert round(answer.hits[0].score, 4) == 13.7025 and round(answer.hits[1].score, 4) == 4.8849
