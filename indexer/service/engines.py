"""The engines a question can be asked of, behind one small interface: `engine(name).ask(request)`.

`reference` is the spec's BM25 in process over the corpus files (indexer.retrieval.reference); `opensearch` is
the same ranking from the laws loaded into OpenSearch (indexer.opensearch.read.engine.OpenSearchEngine, which
takes the same request). The CLI only ever calls `engine()`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from indexer.errors import BadInput, NotFound
from indexer.retrieval.answers import Answer
from indexer.retrieval.corpus import Corpus, Law, parse_corpus, read_bytes, read_corpora, state_code
from indexer.retrieval.request import Request, Way

if TYPE_CHECKING:
    from indexer.opensearch.cluster.connection import Connection
    from indexer.retrieval.embedding import Embedder
    from indexer.retrieval.explain import Contribution
    from indexer.retrieval.stored import StoredState

ENGINES = ("reference", "opensearch")


class Engine(Protocol):
    """Answers a question about one state's laws."""

    def ask(self, request: Request) -> Answer:
        """The best `request.limit` laws of its state for its question, best first (none for a question without
        words), by words (the spec's BM25), meaning or hybrid (indexer.retrieval.meaning)."""
        ...

    def family(self, state: str, key: str) -> list[Law]:
        """The process rows of family `key`, in corpus order: a page row is reached by its family."""
        ...

    def explain(self, answer: Answer) -> list[list[Contribution]]:
        """Per hit of `answer`, each asked word's part of its score (they sum to the score exactly)."""
        ...

    def get(self, state: str, law: str) -> Law:
        """The law of `state` whose id is `law`; BadInput when there is none."""
        ...


class ReferenceEngine:
    """The spec's BM25 over `<corpora>/<STATE>.jsonl`: each state's file read (and checked) once, on its
    first question, and its statistics kept for every question after.

    With `stored` (a directory: the CLI's is `<cache>/reference`), the statistics of a file of
    `stored_from` bytes or more are kept there too, under the file's SHA-256, and a later process asks
    by words from them without counting the file again (indexer.retrieval.stored)."""

    def __init__(
        self,
        corpora: Path,
        stored: Path | None = None,
        stored_from: int | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self._directory = corpora
        self._embedder = embedder  # by meaning: the default embedder's vectors when None
        self._corpora: dict[str, Corpus] = {}
        self._store = stored
        self._stored_from = stored_from
        self._stored: dict[str, StoredState | None] = {}

    def corpus(self, state: str) -> Corpus:
        """The state's corpus, read on first use; BadInput for a bad code, a missing or bad file."""
        code = state_code(state)
        if code not in self._corpora:
            (self._corpora[code],) = read_corpora(self._directory, [code], fingerprint=False)
        return self._corpora[code]

    def ask(self, request: Request) -> Answer:
        """The spec's `bm25` answer, with the words and terms that reached it; or by meaning or hybrid."""
        from indexer.retrieval import reference

        state, question, limit = request.state, request.question, request.limit
        if request.way is Way.words:
            found = self._stored_state(state)
            if found is not None:
                from indexer.retrieval import stored

                try:
                    return found.ask(question, limit)
                except stored.StoredAltered:
                    stored.forget(self._store, found.raw_file)  # type: ignore[arg-type]
                    self._stored[found.state] = None  # built from the file below, and stored again
                    self._store_built(found.state, found.raw_file)
            return reference.ask(self.corpus(state), question, limit)
        from indexer.retrieval import meaning

        return meaning.answer(self.corpus(state), request, self._embedder)

    def _stored_state(self, state: str) -> StoredState | None:
        """The state's stored statistics (read on its first question), or None: too small a file to be
        stored, no directory to store in, or none stored yet (then built and stored now, and this process
        answers from what it built)."""
        from indexer.retrieval import stored

        code = state_code(state)
        if code in self._stored or self._store is None:
            return self._stored.get(code)
        self._stored[code] = None
        path = self._directory / f"{code}.jsonl"
        try:
            size = path.stat().st_size
        except OSError:
            return None  # corpus() says what is wrong with it
        if size < (stored.STORED_FROM if self._stored_from is None else self._stored_from):
            return None
        raw_file = read_bytes(path)
        found = self._stored[code] = stored.open_stored(self._store, code, raw_file)
        if found is None:
            self._store_built(code, raw_file)
        return found

    def _store_built(self, code: str, raw_file: bytes) -> None:
        """The state's statistics built from `raw_file` (its corpus kept for this process) and stored."""
        from indexer.retrieval import reference, stored

        assert self._store is not None
        corpus = self._corpora[code] = parse_corpus(self._directory / f"{code}.jsonl", raw_file, fingerprint=False)
        stored.store(self._store, code, raw_file, reference.statistics(corpus.laws))

    def explain(self, answer: Answer) -> list[list[Contribution]]:
        """Each hit's parts, from the statistics of the state's file."""
        from indexer.retrieval import reference
        from indexer.retrieval.explain import explain

        return explain(answer, reference.statistics(self.corpus(answer.state).laws))

    def family(self, state: str, key: str) -> list[Law]:
        """The process rows of family `key` in the state's file, in corpus order."""
        return [law for law in self.corpus(state).laws if law.kind == "process" and law.family == key]

    def get(self, state: str, law: str) -> Law:
        """The law whose id is `law` in the state's file."""
        for found in self.corpus(state).laws:
            if found.id == law:
                return found
        raise NotFound(f"{state_code(state)} has no law {law!r}")


def engine(
    name: str,
    *,
    corpora: Path = Path("corpora"),
    connection: Connection | None = None,
    embedder: Embedder | None = None,
) -> Engine:
    """The engine called `name` (one of ENGINES); BadInput for any other name.

    `opensearch` talks to `connection` (by default OPENSEARCH_URL, else http://127.0.0.1:9200) and asks each
    index by the embedder it was loaded with (with `embedder` given, refusing an index loaded with another);
    `reference` by meaning with `embedder` (the default's when None).
    """
    if name == "reference":
        from indexer.cache import default_cache_dir

        return ReferenceEngine(corpora, stored=default_cache_dir() / "reference", embedder=embedder)
    if name == "opensearch":
        from indexer.opensearch.cluster.connection import Connection
        from indexer.opensearch.read.engine import OpenSearchEngine

        return OpenSearchEngine(connection or Connection.from_env(), model=None if embedder is None else embedder.model)
    raise BadInput(f"unknown engine {name!r}", hint=f"use one of: {', '.join(ENGINES)}")
