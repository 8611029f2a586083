"""The OpenSearch engine: one object a question is asked of (`engine.ask(request)`, indexer.retrieval.request), which
chooses the way inside itself: words (read/query.py), meaning or hybrid (read/vectors.py); and a state's rows by key
(read/lookups.py). Every one of them asks the cluster through the engine's own searches (read/searching.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from indexer.opensearch.read import lookups, vectors
from indexer.opensearch.read.query import WINDOW, Words
from indexer.opensearch.read.search_limits import PAGE
from indexer.opensearch.read.searching import Searcher
from indexer.retrieval.request import Way

if TYPE_CHECKING:
    from indexer.opensearch.cluster.connection import Connection
    from indexer.retrieval.answers import Answer
    from indexer.retrieval.corpus import Law
    from indexer.retrieval.explain import Contribution
    from indexer.retrieval.request import Request


class OpenSearchEngine(Searcher):
    """Answers questions from the laws loaded into OpenSearch, exactly as the reference engine answers them."""

    def __init__(
        self, connection: Connection, *, window: int = WINDOW, page: int = PAGE, model: str | None = None
    ) -> None:
        super().__init__(connection, page=page)
        self.words = Words(self, window=window)
        # Each index is asked by the model it was loaded with; `model` (`--embedder` on ask and eval), where
        # given, is the one every index asked by meaning must have been loaded with (NoMeaning otherwise).
        self.model = model

    def ask(self, request: Request) -> Answer:
        """The spec's exact answer by words; or by meaning or hybrid, equal to the reference engine's."""
        if request.way is Way.words:
            return self.words.ask(request.state, request.question, request.limit)
        return vectors.answer(self, self.words, request, self.model)

    def explain(self, answer: Answer) -> list[list[Contribution]]:
        """Each hit's parts, from the statistics the answer was computed from: the engine's cached ones,
        not the statistics document fetched again for every question."""
        from indexer.retrieval.explain import explain

        return explain(answer, self.cached_statistics(answer.state))

    def family(self, state: str, key: str) -> list[Law]:
        """The process rows of family `key`, in corpus order."""
        return lookups.family(self, state, key)

    def get(self, state: str, law: str) -> Law:
        """One law of `state` by its id."""
        return lookups.get(self, state, law)

    def altered_laws(self, state: str) -> list[str]:
        """Every law whose document is not the one loaded, by id (`lawindex verify`)."""
        return lookups.altered_laws(self, state)
