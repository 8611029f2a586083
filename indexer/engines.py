"""The engines a question can be asked of, behind one small interface: `engine(name).ask(...)`.

`reference` is the spec's BM25 in process over the corpus files (indexer.reference); `opensearch` is
plugged in here when the OpenSearch side lands. The CLI only ever calls `engine()`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from indexer.answers import RETRIEVED_LAWS, Answer
from indexer.corpus import Corpus, read_corpora, state_code
from indexer.errors import BadInput

ENGINES = ("reference", "opensearch")

# A question is what a learner types on a phone. Past this it is a pasted document, refused rather
# than cut: a cut question would be answered as a question nobody asked.
MAX_QUESTION_CHARS = 2000
MAX_LIMIT = 100


class Engine(Protocol):
    """Answers a question about one state's laws."""

    def ask(self, state: str, question: str, limit: int = RETRIEVED_LAWS) -> Answer:
        """The best `limit` laws of `state` for `question`, best first (none for a question without words)."""
        ...


def check_question(question: str, limit: int = RETRIEVED_LAWS) -> None:
    """Nothing, or BadInput for a question over MAX_QUESTION_CHARS characters or a limit outside 1..100."""
    if len(question) > MAX_QUESTION_CHARS:
        raise BadInput(
            f"the question has {len(question):,} characters, more than the {MAX_QUESTION_CHARS:,} accepted",
            hint="ask a shorter question; it is not cut for you",
        )
    if not 1 <= limit <= MAX_LIMIT:
        raise BadInput(f"the limit must be 1..{MAX_LIMIT}, got {limit}")


class ReferenceEngine:
    """The spec's BM25 over `<corpora>/<STATE>.jsonl`: each state's file read (and checked) once, on its
    first question, and its statistics kept for every question after."""

    def __init__(self, corpora: Path) -> None:
        self._directory = corpora
        self._corpora: dict[str, Corpus] = {}

    def corpus(self, state: str) -> Corpus:
        """The state's corpus, read on first use; BadInput for a bad code, a missing or bad file."""
        code = state_code(state)
        if code not in self._corpora:
            (self._corpora[code],) = read_corpora(self._directory, [code])
        return self._corpora[code]

    def ask(self, state: str, question: str, limit: int = RETRIEVED_LAWS) -> Answer:
        """The spec's `bm25` answer, with the words and terms that reached it."""
        from indexer import reference

        check_question(question, limit)
        return reference.ask(self.corpus(state), question, limit)


def engine(name: str, *, corpora: Path = Path("corpora")) -> Engine:
    """The engine called `name` (one of ENGINES); BadInput for any other name or one not yet available."""
    if name == "reference":
        return ReferenceEngine(corpora)
    if name == "opensearch":
        raise BadInput("the opensearch engine is not available yet", hint="use --engine reference")
    raise BadInput(f"unknown engine {name!r}", hint=f"use one of: {', '.join(ENGINES)}")
