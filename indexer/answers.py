"""What an engine returns for a question: the same shape from the reference scorer and from OpenSearch."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from indexer.corpus import Law

# How many laws a question is answered from: enough that a paraphrase still reaches its law, few
# enough that the model is not reading a chapter. The spec's RETRIEVED_LAWS.
RETRIEVED_LAWS = 8


@dataclass(frozen=True, slots=True)
class Hit:
    """One law an engine returned, with its score, its place in the corpus (which breaks ties), and what
    its exact score was computed from: the count of each scored term it has, and its length in words.
    `--explain` reads them; it never re-tokenizes the law."""

    law: Law
    score: float
    order: int
    counts: Mapping[str, int] = field(default_factory=dict)  # term -> tf, for the terms of Answer.terms it has
    length: int = 0  # the law's length in words after stopwords (0 for a process row)


@dataclass(frozen=True)
class Window:
    """How OpenSearch's candidate window was asked for one question: each size asked, the last proven."""

    sizes: tuple[int, ...]

    @property
    def widened(self) -> bool:
        """True when the first window could not be proven wide enough."""
        return len(self.sizes) > 1


@dataclass(frozen=True)
class Answer:
    """The laws a question reached in one state, best first, and the words that reached them."""

    state: str
    question: str
    words: list[str]  # words(question)
    terms: list[str]  # the expanded, distinct vocabulary words that were scored, in scoring order
    hits: list[Hit] = field(default_factory=list)
    window: Window | None = None  # the OpenSearch engine's story of its window; None from the reference

    def ids(self) -> list[str]:
        """The ids of the hits, best first."""
        return [hit.law.id for hit in self.hits]
