"""The JSON lawindex prints and serves: one set of pydantic models for `--json` and for `lawindex serve`.

The CLI prints `model.json_obj()` with `json.dumps(..., ensure_ascii=False)`, and the service answers with
the very same calls (`dumps`, and `answer_json` below), so a question asked either way gives the same
bytes; the service's OpenAPI schema is generated from these models, never written by hand.

An answer, the line printed most, is written by `answer_json` (indexer.retrieval.answers) straight from the
`Answer`: the same bytes as `dumps(AnswerOut.of(answer, parts).json_obj())` (tests/unit/test_output.py
holds them equal), without a pydantic model per answer and per hit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from indexer.retrieval.answers import answer_json
from indexer.retrieval.corpus import Law
from indexer.retrieval.request import DEFAULT_WAY, FUSION, MAX_QUESTION_CHARS, Way, parameter

if TYPE_CHECKING:
    from indexer.errors import LawindexError
    from indexer.opensearch.read.status import StateStatus
    from indexer.retrieval.answers import Answer
    from indexer.retrieval.explain import Contribution

__all__ = [
    "WAY_DESCRIPTION",
    "AnswerOut",
    "BatchIn",
    "BatchOut",
    "ErrorOut",
    "ExplainPart",
    "FamilyOut",
    "HealthOut",
    "HitOut",
    "Law",
    "QuestionErrorOut",
    "RanksOut",
    "ReadyOut",
    "StateOut",
    "StatesOut",
    "answer_json",
    "dumps",
]


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)

    def json_obj(self) -> dict[str, Any]:
        """The object as printed: an optional part that is absent (None) is left out, not null."""
        return self.model_dump(exclude_none=True)


# What each of a question's parameters is (their checks are contract/request.json's: indexer.retrieval.request).
WAY_DESCRIPTION = (
    "words: the spec's BM25 (the default); meaning: every row by cosine with the question, process rows "
    "included; hybrid: weighted reciprocal-rank fusion of the two full exact rankings (rrf_k, words_weight, "
    "meaning_weight)"
)


DESCRIPTIONS = {
    "by": WAY_DESCRIPTION,
    "limit": "how many laws at most",
    "rrf_k": "the k of the fusion (by=hybrid only)",
    "words_weight": "the words weight of the fusion (by=hybrid only): 0 or a number from 1e-6 to 1e6; the two weights"
    " not both 0",
    "meaning_weight": "the meaning weight of the fusion (by=hybrid only): 0 or a number from 1e-6 to 1e6; the two"
    " weights not both 0",
    "vector": "the question's own vector (by=meaning or hybrid only), from the embedder that made the state's rows' own"
    " vectors: 1 to 4096 finite numbers, each at most 1e150 in magnitude, not all 0 (docs/meaning.md); on GET a JSON"
    " array",
}


def schema_of(name: str) -> dict[str, Any]:
    """The JSON schema of a question's parameter `name` (or `by`), from contract/request.json: its type, default
    and range (a weight's range is 0 or [min, max], which a schema says in its description)."""
    if name == "by":
        return {"type": "string", "enum": [way.value for way in Way], "default": DEFAULT_WAY.value}
    rule = parameter(name)
    if rule["type"] == "vector":
        number = {"type": "number", "minimum": -rule["max_abs"], "maximum": rule["max_abs"]}
        return {"type": "array", "items": number, "minItems": rule["min_length"], "maxItems": rule["max_length"]}
    if rule["type"] == "integer":
        return {"type": "integer", "minimum": rule["min"], "maximum": rule["max"], "default": rule["default"]}
    # A weight is 0 or within [min, max]: the two as alternatives, so that a schema-driven client (schemathesis)
    # never calls 5e-324 valid where every path refuses it.
    within = {"type": "number", "minimum": rule["min"], "maximum": rule["max"]}
    return {"anyOf": [{"type": "number", "enum": [0]}, within], "default": rule["default"]}


class ExplainPart(_Out):
    """One asked word's part of one law's score (`--explain`); the parts of a hit add up to its score."""

    word: str
    tf: int = Field(description="how often the law has the word")
    df: int = Field(description="how many ranked laws have it")
    idf: float = Field(description="log(1 + (N - df + 0.5) / (df + 0.5))")
    length: int = Field(description="the law's length in words after stopwords")
    score: float = Field(description="the spec's term score")

    @classmethod
    def of(cls, part: Contribution) -> ExplainPart:
        return cls(word=part.word, tf=part.tf, df=part.df, idf=part.idf, length=part.length, score=part.score)


class RanksOut(_Out):
    """Where each way ranked a hit (from 1) in its full exact ranking; a way that did not reach it is absent."""

    words: int | None = Field(default=None, description="its rank among every law sharing a word, by BM25")
    meaning: int | None = Field(default=None, description="its rank among every row, by cosine")


class HitOut(_Out):
    """One law a question reached, with its exact score: BM25 by words, the cosine by meaning, the RRF score
    by hybrid."""

    id: str
    kind: str
    score: float
    law: str
    ranks: RanksOut | None = Field(default=None, description="by meaning or hybrid only: each way's rank")
    cosine: float | None = Field(default=None, description="by meaning or hybrid only: its cosine with the question")
    explain: list[ExplainPart] | None = Field(default=None, description="only when explain was asked for")


class WeightsOut(_Out):
    """The weights of a hybrid answer's fusion: each way's part is weight / (rrf_k + rank)."""

    words: float
    meaning: float


class AnswerOut(_Out):
    """What `lawindex ask --json` prints for one question, and `GET /v1/states/{state}/ask` returns."""

    state: str
    question: str
    by: str | None = Field(
        default=None,
        description="absent for words (the default)",
        json_schema_extra={"enum": [way.value for way in Way if way is not DEFAULT_WAY]},
    )
    rrf_k: int | None = Field(default=None, description="by hybrid only: the k of reciprocal-rank fusion")
    weights: WeightsOut | None = Field(default=None, description="by hybrid only: the fusion's weight of each way")
    words: list[str] = Field(description="words(question): the words that survived, in order")
    terms: list[str] = Field(description="the vocabulary words they were expanded to, in scoring order")
    hits: list[HitOut] = Field(description="the laws, best first")

    @classmethod
    def of(cls, answer: Answer, parts: Sequence[Sequence[Contribution]] | None = None) -> AnswerOut:
        reached = answer.reached
        return cls(
            state=answer.state,
            question=answer.question,
            by=None if answer.by == DEFAULT_WAY else answer.by,
            rrf_k=answer.rrf_k,
            weights=None if answer.weights is None else WeightsOut(words=answer.weights[0], meaning=answer.weights[1]),
            words=answer.words,
            terms=answer.terms,
            hits=[
                HitOut(
                    id=hit.law.id,
                    kind=hit.law.kind,
                    score=hit.score,
                    law=hit.law.law,
                    ranks=None
                    if reached is None
                    else RanksOut(words=reached[number].words, meaning=reached[number].meaning),
                    cosine=None if reached is None else reached[number].cosine,
                    explain=None if parts is None else [ExplainPart.of(part) for part in parts[number]],
                )
                for number, hit in enumerate(answer.hits)
            ],
        )


def law_obj(law: Law) -> dict[str, Any]:
    """A law as `lawindex get --json` prints it: its fields, an absent family or source left out."""
    return law.model_dump(exclude_none=True)


class FamilyOut(_Out):
    """The process rows of one family, in corpus order."""

    state: str
    family: str
    laws: list[Law]

    def json_obj(self) -> dict[str, Any]:
        return {"state": self.state, "family": self.family, "laws": [law_obj(law) for law in self.laws]}


class StateOut(_Out):
    """One loaded state, as `lawindex status --json` prints it."""

    state: str
    alias: str
    index: str = Field(description="the concrete index behind the alias")
    laws: int
    ranked: int
    process: int
    documents: int = Field(description="documents in the index: the laws and one of statistics")
    sha256: str = Field(description="the corpus file's fingerprint")
    loaded_at: str
    path: str = Field("window", description="how ask ranks it: plugin (the lawindex query) or window")
    paths: str = Field("window", description="every path it can take on this cluster, comma-separated")
    meaning_path: str = Field(
        "none", description="how ask ranks it by meaning and hybrid: plugin, window (k-NN) or none (no vectors)"
    )

    @classmethod
    def of(cls, row: StateStatus) -> StateOut:
        return cls(
            state=row.state,
            alias=row.alias,
            index=row.index,
            laws=row.laws,
            ranked=row.ranked,
            process=row.process,
            documents=row.documents,
            sha256=row.sha256,
            loaded_at=row.loaded_at,
            path=row.path,
            paths=row.paths,
            meaning_path=row.meaning_path,
        )


class StatesOut(_Out):
    states: list[StateOut]


class ErrorOut(BaseModel):
    """A refusal, with the CLI's own message (and a hint of the fix, when there is one)."""

    error: str
    hint: str | None = None

    @classmethod
    def of(cls, error: LawindexError) -> ErrorOut:
        return cls(error=error.message, hint=error.hint)

    def json_obj(self) -> dict[str, Any]:
        return self.model_dump()


class QuestionErrorOut(ErrorOut):
    """A question of a batch that failed, in its place among the answers."""

    question: str
    status: int = Field(description="the HTTP status the question alone would have had")


class BatchIn(BaseModel):
    """Several questions about one state, answered in order."""

    model_config = ConfigDict(extra="forbid")

    # Each question is checked as `ask` checks it (at most 2,000 characters; one over is an error object in
    # its place, not a refusal of the batch). The other parameters are checked by the contract's rules
    # (indexer.retrieval.request), once for the batch: absent (None) is the default, and a parameter the way
    # does not take is refused.
    questions: list[Annotated[str, Field(json_schema_extra={"maxLength": MAX_QUESTION_CHARS})]] = Field(max_length=1000)
    limit: int | None = Field(default=None, json_schema_extra=schema_of("limit"))
    explain: bool = False
    by: str | None = Field(default=None, description=WAY_DESCRIPTION, json_schema_extra=schema_of("by"))
    rrf_k: int | None = Field(default=None, description=DESCRIPTIONS["rrf_k"], json_schema_extra=schema_of("rrf_k"))
    words_weight: float | None = Field(
        default=None, description=DESCRIPTIONS["words_weight"], json_schema_extra=schema_of("words_weight")
    )
    meaning_weight: float | None = Field(
        default=None, description=DESCRIPTIONS["meaning_weight"], json_schema_extra=schema_of("meaning_weight")
    )
    # Any JSON: the contract's rules check it (indexer.retrieval.request.checked_vector), with their messages.
    vector: Any = Field(default=None, description=DESCRIPTIONS["vector"], json_schema_extra=schema_of("vector"))

    def given(self) -> dict[str, object]:
        """The question's parameters as the contract names them (None: not given)."""
        return {name: getattr(self, name) for name in ("by", "limit", *FUSION, "vector")}

    @field_validator("questions")
    @classmethod
    def _well_formed(cls, questions: list[str]) -> list[str]:
        # JSON carries a lone surrogate (`"school\\ud800bus"`, what JavaScript's JSON.stringify writes for
        # one) that no UTF-8 can: its answer, which repeats the question, could not be encoded, and the
        # whole batch was a 500. Each becomes U+FFFD, as the web's URLSearchParams and TextEncoder make it
        # on the way to a GET's `q`: the batch asks the question a GET asks.
        return [_LONE_SURROGATE.sub("\ufffd", question) for question in questions]


# In a Python str decoded from JSON, a pair of surrogate escapes is already one code point: any left is alone.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class BatchOut(BaseModel):
    answers: list[AnswerOut | QuestionErrorOut]


class HealthOut(BaseModel):
    status: Literal["ok"] = "ok"


class ReadyOut(BaseModel):
    status: Literal["ready"] = "ready"
    states: int = Field(description="how many states are served")


def dumps(obj: dict[str, Any]) -> str:
    """One object as one line of JSON, exactly as the CLI prints it (without the line end)."""
    return json.dumps(obj, ensure_ascii=False)
