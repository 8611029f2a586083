"""indexer.output: the answer object built directly is the documented model's dump, for every kind of answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexer import reference
from indexer.corpus import read_corpora
from indexer.explain import explain
from indexer.output import AnswerOut, answer_obj, dumps
from tests import synthetic

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
QUESTIONS = [
    "how far from a fire hydrant can i park",
    "the and of",  # only stopwords: no words, no hits
    "firehydrant parkng",  # a compound and a typo, expanded
    "İstanbul ſtop K",  # lowercasing traps
    "",
]


@pytest.mark.parametrize("with_parts", [False, True])
def test_answer_obj_is_the_models_dump_on_every_sample_state(with_parts: bool) -> None:
    checked = 0
    for corpus in read_corpora(CORPORA):
        stats = reference.statistics(corpus.laws)
        generated = synthetic.generate_questions(corpus.laws, 20, 7)
        for question in [*QUESTIONS, *generated]:
            answer = reference.ask(corpus, question, 8)
            parts = explain(answer, stats) if with_parts else None
            built = answer_obj(answer, parts)
            dumped = AnswerOut.of(answer, parts).json_obj()
            assert built == dumped
            # The same bytes, keys in the same order, as the CLI and the service write them.
            assert dumps(built) == dumps(dumped)
            # And valid by the model the OpenAPI schema is generated from.
            assert AnswerOut.model_validate(json.loads(dumps(built))).json_obj() == dumped
            checked += bool(answer.hits)
    assert checked > 100  # most questions reached laws: the hits' part of the object was compared
