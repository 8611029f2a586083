"""What an engine returns for a question: the same shape from the reference scorer and from OpenSearch,
and the line of JSON it is printed and served as."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from types import MappingProxyType
from typing import NamedTuple

import orjson

from indexer.retrieval.corpus import Law

_NO_COUNTS: Mapping[str, int] = MappingProxyType({})  # a shared default: read-only, so never changed


class Hit(NamedTuple):
    """One law an engine returned, with its score, its place in the corpus (which breaks ties), and what
    its exact score was computed from: the count of each scored term it has, and its length in words.
    `--explain` reads them; it never re-tokenizes the law."""

    # A NamedTuple, not a frozen dataclass: the reference engine makes one per law returned (24,000 for
    # Texas's 3,000 questions), and a frozen dataclass's __init__ sets each field through
    # object.__setattr__, three times the cost: 40 ms of the 1.4 s `ask TX --from FILE --json` took.
    law: Law
    score: float
    order: int
    counts: Mapping[str, int] = _NO_COUNTS  # term -> tf, for the terms of Answer.terms it has
    length: int = 0  # the law's length in words after stopwords (0 for a process row)


@dataclass(frozen=True)
class Window:
    """How OpenSearch's candidate window was asked for one question: each size asked, the last proven."""

    sizes: tuple[int, ...]
    plugin: bool = False  # asked as the lawindex plugin's query (opensearch/cluster/plugin_path.py), not Lucene's BM25

    @property
    def widened(self) -> bool:
        """True when the first window could not be proven wide enough."""
        return len(self.sizes) > 1


class Reached(NamedTuple):
    """How a hit of a meaning or hybrid answer was reached: its rank (from 1) in the full words ranking and
    in the full meaning ranking (None: that way did not reach it), and its cosine with the question."""

    words: int | None
    meaning: int | None
    cosine: float


@dataclass(frozen=True)
class Answer:
    """The laws a question reached in one state, best first, and the words that reached them."""

    state: str
    question: str
    words: list[str]  # words(question)
    terms: list[str]  # the expanded, distinct vocabulary words that were scored, in scoring order
    hits: list[Hit] = field(default_factory=list)
    window: Window | None = None  # the OpenSearch engine's story of its window; None from the reference
    by: str = "words"  # words, meaning or hybrid (indexer.retrieval.meaning)
    rrf_k: int | None = None  # the k of the fusion, for a hybrid answer only
    weights: tuple[float, float] | None = None  # the words and meaning weights of the fusion, hybrid only
    reached: list[Reached] | None = None  # per hit, for a meaning or hybrid answer only

    def ids(self) -> list[str]:
        """The ids of the hits, best first."""
        return [hit.law.id for hit in self.hits]


@dataclass(frozen=True)
class Contribution:
    """One word's part of one law's score (`ask --explain`; indexer.retrieval.explain makes them)."""

    word: str
    tf: int  # how often the law has the word
    df: int  # how many ranked laws have it
    idf: float  # the spec's idf: log(1 + (N - df + 0.5) / (df + 0.5))
    length: int  # the law's length in words after stopwords
    score: float  # the spec's term score: idf · tf · (k1 + 1) / (tf + k1 · (1 - b + b · length / average))


# ---------------------------------------------------------------------------------------------------
# An answer as one line of JSON: `dumps(AnswerOut.of(answer, parts).json_obj())` of indexer.service.output, the
# same bytes (tests/unit/test_output.py holds them equal), written straight from the Answer. Through a
# pydantic model per answer and per hit, printing Texas's 3,000 answers took 190 ms of a 1.4 s
# `ask --from FILE --json`; written directly, less than half of that. Here rather than beside the models,
# so that printing an answer does not build the dozen models of the service's schema (8 ms at start).
def _number(value: float) -> str:
    """A float field as `json.dumps` writes it (after pydantic made it a float): its repr when finite."""
    number = float(value)
    return float.__repr__(number) if math.isfinite(number) else json.dumps(number)


def _text(text: str) -> str:
    """`encode_basestring(text)` (json.dumps with ensure_ascii=False), by orjson: the same escapes
    (tests/unit/test_output.py holds them equal on generated Unicode), six times faster on a law's text
    (3 µs a law of 230 characters, a third of printing an answer). A lone surrogate, which orjson refuses
    and a question from the command line can hold, is left to the json module."""
    try:
        return _dumps(text).decode()
    except orjson.JSONEncodeError:
        return encode_basestring(text)


_dumps = orjson.dumps


def _strings(values: Sequence[str]) -> str:
    return f"[{', '.join(map(encode_basestring, values))}]"


def _explained(parts: Sequence[Contribution]) -> str:
    objects = (
        f'{{"word": {encode_basestring(part.word)}, "tf": {int(part.tf)}, "df": {int(part.df)}, '
        f'"idf": {_number(part.idf)}, "length": {int(part.length)}, "score": {_number(part.score)}}}'
        for part in parts
    )
    return f"[{', '.join(objects)}]"


def _reached(reached: Reached) -> str:
    ranks = []
    if reached.words is not None:
        ranks.append(f'"words": {int(reached.words)}')
    if reached.meaning is not None:
        ranks.append(f'"meaning": {int(reached.meaning)}')
    return f', "ranks": {{{", ".join(ranks)}}}, "cosine": {_number(reached.cosine)}'


# A law's JSON but its score, `{"id": ..., "kind": ..., "score": ` and `, "law": ...`, made once and kept,
# by the law's fields: the reference engine returns the same laws again and again (24,000 hits over 5,346
# of a generated Texas's laws for 3,000 questions), and a string keeps its hash, so the look-up is cheap.
# Bounded: past LAW_JSON_KEPT laws (a service asked of many states) it starts again.
LAW_JSON_KEPT = 1 << 14
_LAW_JSON: dict[tuple[str, str, str], tuple[str, str]] = {}


def _law_json(key: tuple[str, str, str]) -> tuple[str, str]:
    law_id, kind, text = key
    if len(_LAW_JSON) >= LAW_JSON_KEPT:
        _LAW_JSON.clear()
    made = _LAW_JSON[key] = (
        f'{{"id": {encode_basestring(law_id)}, "kind": {encode_basestring(kind)}, "score": ',
        f', "law": {_text(text)}',
    )
    return made


def answer_json(answer: Answer, parts: Sequence[Sequence[Contribution]] | None = None) -> str:
    """`answer` as `lawindex ask --json` prints it and the service returns it: one line of JSON (without
    the line end), the bytes of indexer.service.output's `dumps(AnswerOut.of(answer, parts).json_obj())`."""
    hits = []
    kept = _LAW_JSON.get
    for number, hit in enumerate(answer.hits):
        law = hit.law
        key = (law.id, law.kind, law.law)
        head, tail = kept(key) or _law_json(key)
        explained = "" if parts is None else f', "explain": {_explained(parts[number])}'
        if answer.reached is not None:
            explained = _reached(answer.reached[number]) + explained
        hits.append(f"{head}{_number(hit.score)}{tail}{explained}}}")
    way = ""
    if answer.by != "words":
        way = f', "by": {encode_basestring(answer.by)}'
        if answer.rrf_k is not None:
            way += f', "rrf_k": {int(answer.rrf_k)}'
        if answer.weights is not None:
            words_weight, meaning_weight = answer.weights
            way += f', "weights": {{"words": {_number(words_weight)}, "meaning": {_number(meaning_weight)}}}'
    return (
        f'{{"state": {encode_basestring(answer.state)}, "question": {encode_basestring(answer.question)}{way}, '
        f'"words": {_strings(answer.words)}, "terms": {_strings(answer.terms)}, "hits": [{", ".join(hits)}]}}'
    )
