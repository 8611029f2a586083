"""indexer.service.output: `answer_json`, the answer written straight from the `Answer`, is byte for byte what the
pydantic models print (`dumps(AnswerOut.of(answer, parts).json_obj())`), the schema the service publishes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from indexer.retrieval import reference
from indexer.retrieval.answers import Answer, Hit
from indexer.retrieval.corpus import Corpus, Law, read_corpus
from indexer.retrieval.explain import Contribution, explain
from indexer.service.output import AnswerOut, answer_json, dumps
from tests import synthetic

CORPORA = Path(__file__).resolve().parents[2] / "corpora"

# Questions whose text JSON must escape: quotes, backslashes, control characters, non-ASCII, a lone
# surrogate (the service can be asked one), and a question of stopwords only (no words, no hits).
AWKWARD = [
    'the "fire" hydrant\\park',
    "tab\there, bell\x07 and nul\x00 and esc\x1b[31m",
    "école, Straße, İstanbul, 🚗 speeding, ＦＵＬＬＷＩＤＴＨ",
    "line\u2028separator\u2029and\x7f del",
    "lone \ud800 surrogate",
    "how can i",
    "",
]


def through_models(answer: Answer, parts: list[list[Contribution]] | None) -> str:
    return dumps(AnswerOut.of(answer, parts).json_obj())


@pytest.mark.parametrize("state", ["MD", "TX", "WV"])
def test_every_answer_on_the_samples_is_the_models_bytes(state: str) -> None:
    corpus = read_corpus(CORPORA / f"{state}.jsonl")
    stats = reference.statistics(corpus.laws)
    questions = [*AWKWARD, *(law.question for law in corpus.laws[:200]), *(law.law for law in corpus.laws[:50])]
    for limit in (1, 8, 100):
        for question in questions:
            answer = reference.ask(corpus, question, limit)
            for parts in (None, explain(answer, stats)):
                assert answer_json(answer, parts) == through_models(answer, parts), (question, limit)


def test_every_answer_on_a_generated_corpus_is_the_models_bytes() -> None:
    laws = tuple(synthetic.generate_corpus("TX", 800, 7))
    stats = reference.statistics(laws)
    corpus = Corpus("TX", Path("TX.jsonl"), laws, sha256="")
    answered = 0
    for question in synthetic.generate_questions(laws, 600, 8):
        answer = reference.ask(corpus, question)
        answered += bool(answer.hits)
        parts = explain(answer, stats)
        assert answer_json(answer) == through_models(answer, None), question
        assert answer_json(answer, parts) == through_models(answer, parts), question
    assert answered > 500  # the answers compared have hits, not only empty lists


def test_fields_are_coerced_as_the_models_coerce_them() -> None:
    # An int score is a float in the models (1 -> 1.0); a float tf an int (2.0 -> 2); a NaN or an
    # infinity is what json.dumps writes of it. None of these comes from an engine: the two still agree.
    law = Law(id='MD-"1"', kind="statute", law="Park \\ here.\n", question="", concept="park")
    parts = [[Contribution("park", 2.0, 1, 1, 3, 0.5)]]  # type: ignore[arg-type]
    for score in (1, 0.0, -0.0, 1e-310, 1e22, 2.2742866938551907, math.inf, -math.inf, math.nan):
        answer = Answer("MD", "park", ["park"], ["park"], [Hit(law, score, 0, {"park": 2}, 3)])
        assert answer_json(answer) == through_models(answer, None), score
        assert answer_json(answer, parts) == through_models(answer, parts), score
    explained = json.loads(answer_json(answer, parts))["hits"][0]["explain"][0]
    assert explained == {"word": "park", "tf": 2, "df": 1, "idf": 1.0, "length": 3, "score": 0.5}
