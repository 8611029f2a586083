"""What every way of reading a state's index shares: the client, the verified statistics of the index behind the
alias, the seal's check of every row read, and one search within OpenSearch's limits: of the alias, or of the
concrete index a question's statistics name (`Searcher.target`).

`Searcher` is the part of the engine that talks to the cluster; the words path (read/query.py), meaning and hybrid
(read/vectors.py) and the lookups (read/lookups.py) each ask through it, and the engine (read/engine.py) is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from indexer.errors import ClusterRefused
from indexer.opensearch.cluster import plugin_path
from indexer.opensearch.cluster.connection import Connection, alias_of, errors_translated, server_version
from indexer.opensearch.cluster.fast_search import FastSearch
from indexer.opensearch.cluster.schema import ALIAS_FILTER, FETCHED, STATISTICS_ID
from indexer.opensearch.read import search_limits
from indexer.opensearch.read.search_limits import PAGE, TooManyClauses, WindowTooLarge
from indexer.opensearch.read.statistics import IndexStatistics, Moved, StatisticsCache, no_index
from indexer.opensearch.trust import integrity
from indexer.retrieval.corpus import state_code

if TYPE_CHECKING:
    from opensearchpy import OpenSearch


class Searcher:
    """One cluster's client, its statistics cache and its searches of a state's alias."""

    def __init__(self, connection: Connection, *, page: int = PAGE) -> None:
        self.connection = connection
        self.page = page  # rows a request of a family asks for
        self._client: OpenSearch | None = None
        self._fast_search: FastSearch | None = None
        # The verified statistics of each concrete index (indexer.opensearch.read.statistics).
        self.statistics_cache = StatisticsCache(connection, lambda: self.client)
        self._legacy: bool | None = None
        # OpenSearch's limits as its refusals told them (indexer.opensearch.read.search_limits): the most term clauses a
        # request may carry (cluster-wide), and each concrete index's result window.
        self.clauses: int | None = None
        self.result_window: dict[str, int] = {}

    @property
    def client(self) -> OpenSearch:
        if self._client is None:
            self._client = self.connection.client()
        return self._client

    @property
    def fast_search(self) -> FastSearch:
        """The searches of a question's window (and a family's pages), on their lighter path."""
        if self._fast_search is None:
            self._fast_search = FastSearch(self.connection, self.client)
        return self._fast_search

    def cached_statistics(self, state: str) -> IndexStatistics:
        """The statistics the last question about `state` was answered from (fetched only when there are
        none): what `--explain` reads, without a request a question."""
        state = state_code(state)
        with errors_translated(self.connection):
            return self.statistics_cache.cached(state)

    def statistics(self, state: str) -> IndexStatistics:
        """The statistics of the index now behind `state`'s alias (fetched once per concrete index)."""
        state = state_code(state)
        with errors_translated(self.connection):
            return self.statistics_cache.fresh(state)

    def verified(self, state: str) -> IndexStatistics:
        """The statistics of the index behind `state`'s alias now, verified once per concrete index: what
        `family` and `get` check before they read, so that they too serve only lawindex's own whole index of
        the state (a cheap read of which index that is, then the statistics only when it is new)."""
        from opensearchpy import ConnectionError, TransportError

        state = state_code(state)
        with errors_translated(self.connection):
            try:
                found = self.client.get(
                    index=alias_of(state, self.connection.namespace), id=STATISTICS_ID, _source=False
                )
                known = self.statistics_cache.known(str(found["_index"]))
                if known is not None:
                    return known
            except ConnectionError:
                raise
            except TransportError:
                pass  # missing, closed, several indices: the full read below says which
            return self.statistics_cache.fresh(state)

    def refusal(self, state: str, index: str, problem: str) -> ClusterRefused:
        """The refusal of `state` for `problem` found in `index`: NotOurs or DamagedIndex (read/statistics.py)."""
        return self.statistics_cache.refusal(state, index, problem)

    def refuse_altered(
        self, state: str, stats: IndexStatistics, hits: list[dict[str, Any]], vectors: bool = False
    ) -> None:
        """Refuse the state (DamagedIndex, naming the law) when a law document of `stats.index` among
        `hits` is not the one loaded: its digest (and, with `vectors`, its vector's) is not the one sealed
        with the statistics."""
        sealed = None
        if vectors:
            if stats.vector_digests is None:
                raise self.refusal(state, stats.index, integrity.unsealed_vectors_problem(stats.index))
            sealed = stats.vector_digests
        for hit in hits:
            if integrity.altered(str(hit["_id"]), hit["_source"], stats.digests, sealed):
                law = hit["_source"].get("id") or hit["_id"]
                raise self.refusal(state, stats.index, integrity.altered_problem(stats.index, law))

    def target(self, state: str, stats: IndexStatistics, pinned: bool) -> str:
        """What a question's searches ask: the state's alias on its first try, from the statistics last seen
        (the alias is what shows that it moved, to a new generation or back to a kept one); once `pinned`,
        after the question found the alias moved and read the statistics again, the concrete index those
        name, whichever node coordinates and however late it applies the alias's change: the rest of the
        question is answered from that one generation, or from none (deleted since: Moved)."""
        return stats.index if pinned else alias_of(state, self.connection.namespace)

    def best_hits(
        self,
        state: str,
        target: str,
        index: str,
        body: dict[str, Any],
        size: int,
        clauses: int,
        source: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        """The best `size` hits of the search `body` (`clauses` term clauses) of `target` (the alias or a
        generation: `target`), `index` the generation asked: read in pages where the index's result window,
        as learnt, is smaller than `size`; with `source`, only those fields of each hit's source."""
        return search_limits.best(
            lambda request: self.search(
                state, target, request if source is None else {**request, "_source": source}, clauses
            ),
            body,
            size,
            self.result_window.get(index),
        )

    def served_now(self, state: str) -> str:
        """The concrete index behind the state's alias now (its statistics document, without its body)."""
        from opensearchpy import NotFoundError

        try:
            found = self.client.get(index=alias_of(state, self.connection.namespace), id=STATISTICS_ID, _source=False)
        except NotFoundError:
            if self.statistics_cache.left(state):
                raise Moved from None
            raise no_index(state, self.connection.namespace) from None
        return str(found["_index"])

    def search(self, state: str, target: str, body: dict[str, Any], clauses: int) -> list[dict[str, Any]]:
        """The hits of one search request of `target`, the state's alias or a generation of it (`clauses` term
        clauses in its query)."""
        hits: list[dict[str, Any]] = self.response(state, target, body, clauses)["hits"]["hits"]
        return hits

    def response(self, state: str, target: str, body: dict[str, Any], clauses: int) -> dict[str, Any]:
        """The whole response to one search request of `target` (`clauses` term clauses in its query): the
        state's alias, or a concrete generation of it (`target` says which), asked with the alias's own filter
        (schema.ALIAS_FILTER) so that the same Lucene query runs, the same hits and scores, and the statistics
        document stays out as it does through the alias. A generation deleted under the question (404, or its
        shards gone) is Moved, as the alias's is.

        Measured on a Texas-size corpus (benchmarks/ask.py), against a raw search of size 8 at 1.5 ms:
        `track_total_hits` cost 1.1 ms (every match counted, no skipping), and `_source` filtering 0.6 ms
        more than sending each document whole (the node parses and rewrites every source it filters). So
        neither: whether the window holds every match is told by its being less than full.
        """
        from opensearchpy import NotFoundError, TransportError

        pinned = target != alias_of(state, self.connection.namespace)
        if pinned:
            # What OpenSearch makes of a filtered alias: the query a MUST clause, the filter a FILTER clause.
            body = {**body, "query": {"bool": {"must": [body["query"]], "filter": [ALIAS_FILTER]}}}
        try:
            result = self.fast_search.search(target, body)
        except NotFoundError as error:
            if self.statistics_cache.left(state) or pinned:
                raise Moved(error) from None
            raise no_index(state, self.connection.namespace) from None
        except TransportError as error:
            # One of OpenSearch's limits: learnt from, and asked again within it (read/search_limits.py).
            refused = search_limits.limit_refused(error, clauses, int(body.get("size", 0)))
            if refused is not None:
                raise refused from None
            # A search that reached an index as a reload deleted it fails on its shards.
            if error.status_code == 400 and plugin_path.NO_VECTOR in str(error.info):
                raise  # the plugin's refusal of a law without a vector: read/vectors.py names the law
            if error.status_code in (400, 404, 503) and (self.statistics_cache.left(state) or pinned):
                raise Moved(error) from None
            raise
        response: dict[str, Any] = result
        return response

    def every(self, state: str, target: str, query: dict[str, Any], more: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        """Every hit of `query` on `target` (the alias or a generation: `target`; FETCHED and `more` of each),
        in corpus order, in pages within the result window."""
        page = self.page
        while True:
            try:
                return search_limits.every(
                    lambda body: self.search(state, target, body, 2), query, [*FETCHED, *more], page
                )
            except WindowTooLarge as refused:
                if refused.limit < 1 or refused.limit >= page:
                    raise ClusterRefused(f"OpenSearch refused a page of {page} rows") from None
                page = refused.limit
            except TooManyClauses:
                raise ClusterRefused("OpenSearch refused a query of two terms (its clause limit)") from None

    def legacy(self) -> bool:
        """True where the cluster's BM25 multiplies by (k1+1) (OpenSearch 2.x); asked once."""
        with errors_translated(self.connection):
            return self.is_legacy()

    def is_legacy(self) -> bool:
        """True where OpenSearch's BM25 multiplies by (k1+1): 2.x's LegacyBM25Similarity; 3.x drops it (asked of
        the cluster once, within the caller's translation of errors)."""
        if self._legacy is None:
            major = int(server_version(self.client).split(".")[0])
            self._legacy = major < 3
        return self._legacy
