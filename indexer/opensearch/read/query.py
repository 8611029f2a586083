"""`ask` on OpenSearch: the spec's exact ranking, from a real cluster.

words(question) → spelled_as() against the state's vocabulary (stored with its index) → one `term`
query per distinct word on the ranked field `words`, summed by a bool query → a window of candidates
by OpenSearch's own BM25 → each candidate re-scored with the spec's float64 arithmetic from the
statistics the indexer stored → the window proven wide enough, or widened and asked again.

Why the window is needed: OpenSearch's BM25 is the spec's formula with other arithmetic
(docs/exactness.md): Lucene keeps a law's length in one byte, rounded down above 40 words; it computes in
float32; 2.x multiplies by (k1+1) and 3.x does not; and Lucene's N and average length leave out a
ranked law whose words are all stopwords, which the spec counts. So OpenSearch ranks the right laws
near the top but not always in the spec's order. Why the window is enough: indexer/retrieval/bound.py,
also for a question whose terms pass OpenSearch's clause limit and are asked in groups (the
limits themselves, and the pages a window wider than the result window is read in: read/search_limits.py).

The learner's text never reaches a query parser: it becomes `term` queries on words the vocabulary
already holds, or nothing.

Long: the engine's windowed ask, the plugin's path, `family` and `get`, each a few requests to the cluster
in one class; the exact re-scoring and the proofs apart (read/rescore.py), the statistics apart
(read/statistics.py), the bound's arithmetic apart (indexer.retrieval.bound).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from indexer.errors import ClusterRefused, NotFound
from indexer.opensearch.cluster import plugin_path, stored_lexicon
from indexer.opensearch.cluster.connection import Connection, alias_of, errors_translated, server_version
from indexer.opensearch.cluster.fast_search import FastSearch
from indexer.opensearch.cluster.schema import (
    FETCHED,
    GRID_FIELD,
    RANKED_FIELD,
    STATISTICS_ID,
    VECTOR_FIELD,
    law_id,
    terms_query,
)
from indexer.opensearch.read import search_limits
from indexer.opensearch.read.rescore import hit_of, law_of, plugin_proven, rescored, union, window_proven
from indexer.opensearch.read.search_limits import PAGE, Candidates, TooManyClauses, WindowTooLarge
from indexer.opensearch.read.statistics import IndexStatistics, Moved, StatisticsCache, no_index
from indexer.opensearch.trust import integrity, ownership
from indexer.retrieval.answers import Answer, Window
from indexer.retrieval.corpus import Law, state_code
from indexer.retrieval.request import RETRIEVED_LAWS
from indexer.retrieval.words import words

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

# The first window asked for: wide enough that the spec's top 8 is almost always inside it, narrow
# enough that fetching it costs little more than fetching 8. On a Texas-size generated corpus
# (benchmarks/ask.py, 1,000 questions) 16 widened 6 questions and 32 widened 2, while 32 cost 0.4 ms a
# question more at p50 (1.5x a raw search of size 8, against 1.2x): the fetch of each extra document
# is most of a window's price. A window that cannot be proven wide enough is widened by WIDEN.
WINDOW = 16
WIDEN = 4


class OpenSearchEngine:
    """Answers questions from the laws loaded into OpenSearch, ranked exactly as the spec ranks them."""

    def __init__(self, connection: Connection, *, window: int = WINDOW, page: int = PAGE) -> None:
        self.connection = connection
        self.window = window
        self.page = page  # rows a request of a family asks for
        self._client: OpenSearch | None = None
        self._fast_search: FastSearch | None = None
        # The verified statistics of each concrete index (indexer.opensearch.read.statistics).
        self.statistics_cache = StatisticsCache(connection, lambda: self.client)
        self._legacy: bool | None = None
        self._lock = threading.Lock()
        # OpenSearch's limits as its refusals told them (indexer.opensearch.read.search_limits): the most term clauses a
        # request may carry (cluster-wide), and each concrete index's result window.
        self._clauses: int | None = None
        self._result_window: dict[str, int] = {}
        # Per concrete index: built for the lawindex plugin (its `_meta`, read once; cluster/plugin_path.py).
        self._on_plugin: dict[str, bool] = {}

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

    def ask(self, state: str, question: str, limit: int = RETRIEVED_LAWS) -> Answer:
        """The laws of `state` that best answer `question`, best first; exactly the reference's answer."""
        state = state_code(state)
        asked = words(question)
        with errors_translated(self.connection):
            # A search that races a reload can meet the old index as it is deleted: ask again, once,
            # and the alias has moved by then. A second time is not a race: it is said, never raised as
            # Moved (a --from batch goes on past it).
            for attempt in range(2):
                try:
                    return self._ask(state, question, asked, limit)
                except Moved as moved:
                    if attempt:
                        moved.fail(state, self.connection.namespace)
        raise AssertionError("unreachable")

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

    def _expand(self, state: str, asked: list[str], stats: IndexStatistics) -> list[str]:
        """`_expand`, with a block of the vocabulary that does not match its sealed digest refused (the
        state's statistics forgotten, so that a load that repairs it is read afresh)."""
        try:
            return _expand(asked, stats)
        except stored_lexicon.AlteredBlock as altered:
            self.statistics_cache.forget(stats.index)
            raise self.statistics_cache.refusal(
                state, stats.index, f"the statistics of {stats.index} were altered: {altered}"
            ) from None

    def refuse_altered(
        self, state: str, stats: IndexStatistics, hits: list[dict[str, Any]], vectors: bool = False
    ) -> None:
        """Refuse the state (DamagedIndex, naming the law) when a law document of `stats.index` among
        `hits` is not the one loaded: its digest (and, with `vectors`, its vector's) is not the one sealed
        with the statistics."""
        sealed = None
        if vectors:
            if stats.vector_digests is None:
                raise self.statistics_cache.refusal(state, stats.index, integrity.unsealed_vectors_problem(stats.index))
            sealed = stats.vector_digests
        for hit in hits:
            if integrity.altered(str(hit["_id"]), hit["_source"], stats.digests, sealed):
                law = hit["_source"].get("id") or hit["_id"]
                raise self.statistics_cache.refusal(state, stats.index, integrity.altered_problem(stats.index, law))

    def _ask(self, state: str, question: str, asked: list[str], limit: int) -> Answer:
        stats = self.statistics_cache.cached(state)
        if self._plugin_index(stats.index):
            answered = self._ask_plugin(state, question, asked, limit, stats)
            if answered is not None:
                return answered
        for _ in range(2):
            terms = self._expand(state, asked, stats)
            size = max(self.window, limit)
            sizes: list[int] = []
            while True:
                sizes.append(size)
                windows = self._windows(state, stats.index, terms, size) if terms else []
                laws = union(windows)
                # Which concrete index answered: every hit says; with none, ask the alias (a question that
                # reaches nothing must still see a reload, whose vocabulary may know its words).
                served = {str(law["_index"]) for law in laws} if laws else {self.served_now(state)}
                if served != {stats.index}:
                    break  # the alias moved since the vocabulary was read: expand again with the new one
                self.refuse_altered(state, stats, laws)  # every law re-scored: its counts decide the ranking
                ranked_hits = rescored(laws, terms, stats)
                # Every window held fewer laws than asked for: every law that shares a word is here.
                complete = all(window.complete for window in windows)
                if complete or window_proven(ranked_hits, windows, stats, limit, self._is_legacy()):
                    hits = [hit_of(scored, terms) for scored in ranked_hits[:limit]]
                    return Answer(state, question, asked, terms, hits, window=Window(tuple(sizes)))
                size *= WIDEN
            stats = self.statistics_cache.fresh(state)
        raise Moved

    def _plugin_index(self, index: str) -> bool:
        """True when `index` was built for the lawindex plugin (its `_meta`, read once per concrete index)."""
        known = self._on_plugin.get(index)
        if known is None:
            known = plugin_path.on_plugin(ownership.meta_of(self.client, index))
            with self._lock:
                if len(self._on_plugin) > 4 * len(self.statistics_cache.kept()) + 64:  # generations long deleted
                    self._on_plugin.clear()
                self._on_plugin[index] = known
        return known

    def _ask_plugin(
        self, state: str, question: str, asked: list[str], limit: int, stats: IndexStatistics
    ) -> Answer | None:
        """The answer from the plugin's own query, re-scored exactly and proven (`plugin_proven`); None
        when the window path must answer: no word to ask, the alias moved (the window path reads the new
        statistics), or the plugin's answer could not be proven (said on stderr; never expected).

        limit + 1 laws first: the law just past the last returned one proves the boundary. Only laws tied
        with the limit-th (a duplicate law, or one differing past float32's precision) need more: they are
        read on in pages of PLUGIN_PAGE by `_score` then corpus order (`search_limits.pages`), until a page ends
        below the tie or the matches end, never all at once. (12,000 exact ties were handed to the window
        path, which asked for 16,384 laws in one request.)"""
        terms = self._expand(state, asked, stats)
        if not terms:
            return None
        query = plugin_query(question, limit + 1)

        def batches() -> Iterator[tuple[list[dict[str, Any]], int, bool]]:
            """Each answer of the plugin's query, how many laws it asked for, and whether it is the first of
            a reading (the pages start again from the best law: the first request had the collector's order)."""
            if limit + 1 <= search_limits.PAGE:
                yield self._search(state, query, len(terms)), limit + 1, True
            tied = search_limits.pages(lambda body: self._search(state, body, len(terms)), query["query"], PLUGIN_PAGE)
            for number, page in enumerate(tied):
                yield page, PLUGIN_PAGE, number == 0

        sizes: list[int] = []
        read: list[dict[str, Any]] = []
        why = ""
        try:
            for page, requested, fresh in batches():
                read = page if fresh else read + page
                sizes.append(len(read))
                if page and {str(hit["_index"]) for hit in page} != {stats.index}:
                    return None
                self.refuse_altered(state, stats, page)  # a law altered after its load is refused, never served
                ranked_hits = rescored(read, terms, stats)
                # The plugin's own order must already be the spec's: anything else is a plugin not doing
                # what it promises, and its scores are not trusted for the bound either.
                spec_order = [law_id(str(h.source["id"])) for h in ranked_hits[:limit]]
                if [str(hit["_id"]) for hit in read[:limit]] != spec_order:
                    why = "its order is not the spec's"
                    break
                if len(page) < requested or plugin_proven(ranked_hits, page[-1], limit):
                    found = [hit_of(scored, terms) for scored in ranked_hits[:limit]]
                    return Answer(state, question, asked, terms, found, window=Window(tuple(sizes), plugin=True))
                why = "ties at the boundary"
        except (TooManyClauses, WindowTooLarge) as refused:
            why = f"refused ({refused})"
        _log.warning(
            "lawindex: %s: the plugin's answer to %r could not be proven (%s); answered by the window path",
            state,
            question,
            why,
        )
        return None

    def _windows(self, state: str, index: str, terms: list[str], size: int) -> list[Candidates]:
        """OpenSearch's best `size` laws for `terms`, a window per group of terms that the clause limit
        allows in one request (one group below it), each read in pages where the result window is smaller
        than `size`. A refusal by either limit is learnt from and the windows asked again."""
        while True:
            try:
                return [self._window(state, index, group, size) for group in search_limits.groups(terms, self._clauses)]
            except TooManyClauses as refused:
                if refused.sent <= 1:
                    raise ClusterRefused("OpenSearch refused a query of one term (its clause limit)") from None
                self._clauses = refused.smaller()
            except WindowTooLarge as refused:
                if refused.limit < 1 or refused.limit >= size or self._result_window.get(index) == refused.limit:
                    raise ClusterRefused(
                        f"OpenSearch refused a window of {size} laws (result window {refused.limit})"
                    ) from None
                self._result_window[index] = refused.limit

    def _window(self, state: str, index: str, terms: list[str], size: int) -> Candidates:
        hits = self.best_hits(state, index, terms_query(terms), size, len(terms))
        return Candidates(terms, hits, complete=len(hits) < size)

    def best_hits(
        self, state: str, index: str, body: dict[str, Any], size: int, clauses: int, source: list[str] | None = None
    ) -> list[dict[str, Any]]:
        """The best `size` hits of the search `body` (`clauses` term clauses) of the state's alias, `index`
        behind it: read in pages where the index's result window, as learnt, is smaller than `size`; with
        `source`, only those fields of each hit's source."""
        return search_limits.best(
            lambda request: self._search(state, request if source is None else {**request, "_source": source}, clauses),
            body,
            size,
            self._result_window.get(index),
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

    def _search(self, state: str, body: dict[str, Any], clauses: int) -> list[dict[str, Any]]:
        """The hits of one search request of the state's alias (`clauses` term clauses in its query)."""
        hits: list[dict[str, Any]] = self._response(state, body, clauses)["hits"]["hits"]
        return hits

    def _response(self, state: str, body: dict[str, Any], clauses: int) -> dict[str, Any]:
        """The whole response to one search request of the state's alias (`clauses` term clauses in its query).

        Measured on a Texas-size corpus (benchmarks/ask.py), against a raw search of size 8 at 1.5 ms:
        `track_total_hits` cost 1.1 ms (every match counted, no skipping), and `_source` filtering 0.6 ms
        more than sending each document whole (the node parses and rewrites every source it filters). So
        neither: whether the window holds every match is told by its being less than full.
        """
        from opensearchpy import NotFoundError, TransportError

        try:
            result = self.fast_search.search(alias_of(state, self.connection.namespace), body)
        except NotFoundError as error:
            if self.statistics_cache.left(state):
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
            if error.status_code in (400, 404, 503) and self.statistics_cache.left(state):
                raise Moved(error) from None
            raise
        response: dict[str, Any] = result
        return response

    def legacy(self) -> bool:
        """True where the cluster's BM25 multiplies by (k1+1) (OpenSearch 2.x); asked once."""
        with errors_translated(self.connection):
            return self._is_legacy()

    def _is_legacy(self) -> bool:
        """True where OpenSearch's BM25 multiplies by (k1+1): 2.x's LegacyBM25Similarity; 3.x drops it."""
        if self._legacy is None:
            major = int(server_version(self.client).split(".")[0])
            self._legacy = major < 3
        return self._legacy

    def family(self, state: str, key: str) -> list[Law]:
        """The process rows of one family, in corpus order (a page row is reached by its family, not by
        words): every row, however many pages they take, all from one index."""
        state = state_code(state)
        stats = self.verified(state)  # only lawindex's own, verified index of the state (trust/ownership.py)
        query = {"bool": {"filter": [{"term": {"family": key}}, {"term": {"kind": "process"}}]}}
        with errors_translated(self.connection):
            for attempt in range(2):
                try:
                    rows = self._every(state, query)
                except Moved as moved:
                    if attempt:
                        moved.fail(state, self.connection.namespace)
                    continue
                # A reload between two pages would mix two generations' rows: read them again.
                if len({str(row["_index"]) for row in rows}) <= 1:
                    if rows and str(rows[0]["_index"]) != stats.index:
                        stats = self.verified(state)  # a reload since: its own statistics, then read again
                        continue
                    self.refuse_altered(state, stats, rows)
                    return [law_of(row["_source"]) for row in rows]
            raise ClusterRefused(
                f"the index behind {alias_of(state, self.connection.namespace)} changed while the family was read",
                hint="ask again",
            )

    def _every(self, state: str, query: dict[str, Any], more: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        """Every hit of `query` on the state's alias (FETCHED and `more` of each), in corpus order, in pages
        within the result window."""
        page = self.page
        while True:
            try:
                return search_limits.every(lambda body: self._search(state, body, 2), query, [*FETCHED, *more], page)
            except WindowTooLarge as refused:
                if refused.limit < 1 or refused.limit >= page:
                    raise ClusterRefused(f"OpenSearch refused a page of {page} rows") from None
                page = refused.limit
            except TooManyClauses:
                raise ClusterRefused("OpenSearch refused a query of two terms (its clause limit)") from None

    def altered_laws(self, state: str) -> list[str]:
        """Every law of the index now behind `state`'s alias whose document is not the one loaded (its
        digest is not the one sealed with the statistics), by id, in corpus order; a law whose document is
        gone is named `<missing: N laws>`. All documents are read: `lawindex verify` calls this."""
        state = state_code(state)
        stats = self.statistics(state)
        query = {"bool": {"must_not": [{"ids": {"values": [STATISTICS_ID]}}]}}
        vectors = stats.vector_digests
        with errors_translated(self.connection):
            rows = self._every(state, query, () if vectors is None else (VECTOR_FIELD, GRID_FIELD))
        found = [str(row["_source"].get("id") or row["_id"]) for row in rows if row["_index"] == stats.index and
                 integrity.altered(str(row["_id"]), row["_source"], stats.digests, vectors)]  # fmt: skip
        missing = len(stats.digests) // integrity.SIZE - len(rows)
        return found + ([f"<missing: {missing} laws>"] if missing > 0 else [])

    def get(self, state: str, law: str) -> Law:
        """One law of `state` by its id."""
        state = state_code(state)
        stats = self.verified(state)  # only lawindex's own, verified index of the state (trust/ownership.py)
        from opensearchpy import NotFoundError

        with errors_translated(self.connection):
            try:
                found = self.client.get(
                    index=alias_of(state, self.connection.namespace), id=law_id(law), _source_includes=list(FETCHED)
                )
            except NotFoundError as error:
                if isinstance(error.info, dict) and error.info.get("found") is False:
                    raise NotFound(f"{state} has no law {law!r}") from None
                raise no_index(state, self.connection.namespace) from None
            if str(found["_index"]) != stats.index:  # a reload since: the new index's statistics
                stats = self.statistics_cache.fresh(state)
            if str(found["_index"]) == stats.index:
                self.refuse_altered(state, stats, [found])
            else:
                raise ClusterRefused(
                    f"the index behind {alias_of(state, self.connection.namespace)} changed while {law!r} was read",
                    hint="ask again",
                )
        return law_of(found["_source"])


_log = logging.getLogger("lawindex.query")

# Rows a page of the plugin's ties holds (search_limits.pages): a generated Texas's duplicates come in twos and
# threes, so one page nearly always ends the tie; 12,000 exact ties take 47 requests of at most 256 laws.
PLUGIN_PAGE = 256


def plugin_query(question: str, size: int) -> dict[str, Any]:
    """The search body of the plugin's query (cluster/plugin_path.py): the question as the learner typed it,
    analysed and expanded on the node, `size` laws by the spec's score."""
    return {
        "size": size,
        "track_total_hits": False,
        "query": {plugin_path.QUERY: {"question": question, "field": RANKED_FIELD}},
    }


def _expand(asked: list[str], stats: IndexStatistics) -> list[str]:
    """The spec's `[...new Set(words(question).flatMap(spelledAs))]`, in its order. Nothing is built for it
    (indexer/retrieval/spelling.py): the blocks a word reaches are read, once, and checked against their
    sealed digests; a block that does not match is stored_lexicon.AlteredBlock."""
    return stats.spelling.terms(asked)
