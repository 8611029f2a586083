"""What an engine returns for a question: the same shape from the reference scorer and from OpenSearch."""

from __future__ import annotations

from dataclasses import dataclass, field

from indexer.corpus import Law

# How many laws a question is answered from: enough that a paraphrase still reaches its law, few
# enough that the model is not reading a chapter. The spec's RETRIEVED_LAWS.
RETRIEVED_LAWS = 8


@dataclass(frozen=True)
class Hit:
    """One law an engine returned, with its score and its place in the corpus (which breaks ties)."""

    law: Law
    score: float
    order: int


@dataclass(frozen=True)
class Answer:
    """The laws a question reached in one state, best first, and the words that reached them."""

    state: str
    question: str
    words: list[str]  # words(question)
    terms: list[str]  # the expanded, distinct vocabulary words that were scored, in scoring order
    hits: list[Hit] = field(default_factory=list)

    def ids(self) -> list[str]:
        """The ids of the hits, best first."""
        return [hit.law.id for hit in self.hits]
