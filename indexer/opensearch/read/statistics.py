"""The statistics a question is answered from, per concrete index: read through the state's alias,
verified (lawindex's own index of the state, open, sealed for it; its laws' and vectors' digests carried),
kept until the alias moves, and read once however many questions need them at the same time.

What `ask`, `--explain`, `family`, `get` and the meaning path read before they score or serve a law
(indexer.opensearch.read.query, indexer.opensearch.read.vectors); anything else behind the alias is refused (exit 4,
NotOurs or DamagedIndex) rather than served, since altered statistics would alter every score without a word.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from indexer.errors import ClusterRefused, DamagedIndex, ForeignNoStatistics, NoIndex, NoStatistics, NotOurs
from indexer.opensearch.cluster import stored_lexicon
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.cluster.schema import STATISTICS_ID
from indexer.opensearch.trust import integrity, ownership, sealing
from indexer.retrieval.spelling import Vocabulary

if TYPE_CHECKING:
    from opensearchpy import OpenSearch


@dataclass(frozen=True)
class IndexStatistics:
    """What the query side needs of one concrete index (the spec's `Index`, less the per-law parts)."""

    index: str
    size: int  # the spec's N: ranked laws
    average: float  # the spec's average length over ranked laws
    vocabulary: Mapping[str, int]  # word → df, in the spec's Map order (looked up, never read whole)
    spelling: Vocabulary
    doc_count: int  # Lucene's N for the field: ranked laws with at least one word
    total_length: int  # the sum of the ranked laws' lengths (Lucene's sumTotalTermFreq)
    digests: bytes = field(repr=False)  # every law document's digest, in corpus order (trust/integrity.py)
    vector_digests: bytes | None = field(default=None, repr=False)  # every row's vector's, where it has vectors

    @classmethod
    def of(
        cls, index: str, body: dict[str, Any], fetch: Callable[[list[str]], Mapping[str, Any]] | None = None
    ) -> IndexStatistics:
        """The statistics of `body` (a statistics document's `statistics`); the vocabulary's blocks read on
        first use by `fetch` (the stored fields of the statistics document: indexer.opensearch.cluster.stored_lexicon),
        a block only when a question reaches a word of its length. Nothing is built: a million-word
        vocabulary's blocks are read as they are stored."""
        if fetch is None:
            raise ValueError("the vocabulary is stored in blocks, and nothing is given to read them")
        spelling = Vocabulary(stored_lexicon.read(body["words"], fetch))
        return cls(
            index=index,
            size=int(body["size"]),
            average=float(body["average"]),
            vocabulary=spelling.frequencies,
            spelling=spelling,
            doc_count=int(body["doc_count"]),
            total_length=int(body["total_length"]),
            digests=integrity.unpacked(body["digests"]),
            vector_digests=integrity.unpacked(body["vector_digests"]) if "vector_digests" in body else None,
        )


class StatisticsCache:
    """The verified statistics of each concrete index a state's alias has pointed to, as the spec's WeakMap
    keys its Index by the laws array: a reload makes a new index, so another generation never reads this
    one's counts; the generation an alias leaves is forgotten (its load deletes it)."""

    def __init__(self, connection: Connection, client: Callable[[], OpenSearch]) -> None:
        self.connection = connection
        self._client = client
        self._statistics: dict[str, IndexStatistics] = {}
        # The concrete index each state's alias pointed to when last seen.
        self._serving: dict[str, str] = {}
        self._lock = threading.Lock()
        # The statistics fetch under way per state, and its number among the reads begun: every request that
        # needs them meanwhile waits for it (one fetch, one parse) instead of making its own
        # (benchmarks/first_questions.py), unless it began before the request (`fresh`).
        self._fetching: dict[str, tuple[int, Future[IndexStatistics]]] = {}
        self._begun = 0

    def kept(self) -> list[str]:
        """The concrete indices whose statistics are kept."""
        with self._lock:
            return list(self._statistics)

    def known(self, index: str) -> IndexStatistics | None:
        """The statistics kept of `index`, if any."""
        return self._statistics.get(index)

    def cached(self, state: str) -> IndexStatistics:
        """The statistics of the index `state`'s alias pointed to when last seen, read only when there are none."""
        index = self._serving.get(state)
        if index is not None and index in self._statistics:
            return self._statistics[index]
        return self.fresh(state, cached=True)

    def left(self, state: str) -> bool:
        """Forget which index serves `state` (a search found it gone); True when one was known, so that
        the alias has moved since (else the state was never loaded)."""
        return self._serving.pop(state, None) is not None

    def forget(self, index: str) -> None:
        """Forget `index`'s statistics (found altered): the next question reads them afresh."""
        with self._lock:
            self._statistics.pop(index, None)

    def fresh(self, state: str, cached: bool = False) -> IndexStatistics:
        """The statistics behind `state`'s alias, read whole and verified (`_fetch`), by a read begun after
        this call: a request that comes while they are being read for another, by a read begun since it
        came, waits for that read and shares what it gives (its statistics, or its refusal). A read begun
        before it came may have read the alias before it moved, the very generation a caller asking again
        has just found stale (a search answered by another): it is waited for, never shared, and then read
        again (or a read begun since shared), so a caller waits for at most two reads. `cached`: those
        already kept will do, and so does any read under way (a read that ended between the caller's look
        at the cache and now is not made again)."""
        with self._lock:
            index = self._serving.get(state)
            if cached and index is not None and index in self._statistics:
                return self._statistics[index]
            came = self._begun  # the reads begun before this request
        while True:
            with self._lock:
                under_way = self._fetching.get(state)
                if under_way is None:
                    self._begun += 1
                    mine: Future[IndexStatistics] = Future()
                    self._fetching[state] = (self._begun, mine)
            if under_way is None:
                break
            began, read = under_way
            if cached or began > came:
                return read.result()
            wait([read])  # begun before this request: its end, not its answer
        # Gone from those under way before it answers: a request that waits for its end then finds it gone.
        try:
            fetched = self._fetch(state)
        except BaseException as error:
            with self._lock:
                del self._fetching[state]
            mine.set_exception(error)
            raise
        with self._lock:
            del self._fetching[state]
        mine.set_result(fetched)
        return fetched

    def _fetch(self, state: str) -> IndexStatistics:
        """The statistics behind `state`'s alias, read whole and verified: lawindex's own index of this state,
        open, its statistics sealed for it (sealing.seal_problem). Anything else is refused (exit 4) rather
        than served, since altered statistics would alter every score without a word."""
        from opensearchpy import NotFoundError, TransportError

        alias = alias_of(state, self.connection.namespace)
        try:
            found = self._client().get(index=alias, id=STATISTICS_ID)
        except NotFoundError as error:
            info = error.info if isinstance(error.info, dict) else {}
            if info.get("found") is False and info.get("_index"):  # the index is there, its statistics are not
                index = str(info["_index"])
                missing = f"the statistics document of {index} is missing"
                raise self.refusal(state, index, missing, missing=True) from None
            raise no_index(state, self.connection.namespace) from None
        except TransportError as error:
            if error.status_code == 400:
                raise self._refusal_of(state, error) from None
            raise
        index = str(found["_index"])
        problem = sealing.seal_problem(found.get("_source"), index, state, self.connection.namespace)
        if problem is not None:
            raise self.refusal(state, index, problem)
        if "digests" not in found["_source"]["statistics"]:
            problem = f"the statistics of {index} carry no law digests (loaded by a lawindex before it sealed laws)"
            raise self.refusal(state, index, problem)
        if "words" not in found["_source"]["statistics"]:
            problem = (
                f"the statistics of {index} carry the vocabulary as one list (loaded by a lawindex before schema 4)"
            )
            raise self.refusal(state, index, problem)
        try:
            return self._remember(state, index, found["_source"]["statistics"])
        except (KeyError, TypeError, ValueError):
            raise self.refusal(state, index, f"the statistics of {index} are malformed") from None

    def _refusal_of(self, state: str, error: Exception) -> ClusterRefused:
        """Why a single-document read through the alias was refused (400): the alias points at several
        indices, or at a closed one."""
        from opensearchpy import AuthorizationException

        namespace = self.connection.namespace
        alias = alias_of(state, namespace)
        try:
            names = sorted(self._client().indices.get_alias(name=alias, params=ownership.LOCAL))
        except AuthorizationException:  # a user allowed only the namespace's indices (indexer/node/security.py)
            names = sorted(self._client().indices.get_alias(index=f"{namespace}-*", name=alias, params=ownership.LOCAL))
        if len(names) > 1:
            return self.refusal(state, names, f"{alias} points at {len(names)} indices: {', '.join(names)}")
        index = names[0] if names else alias
        if "index_closed" in str(getattr(error, "error", "")) + str(getattr(error, "info", "")):
            return self.refusal(state, index, f"the index {index} behind {alias} is closed")
        return self.refusal(state, index, f"{index} refused to give its statistics ({getattr(error, 'error', '')})")

    def refusal(self, state: str, indices: str | list[str], problem: str, *, missing: bool = False) -> ClusterRefused:
        """NotOurs when an index behind the alias is not lawindex's own of this state, else DamagedIndex; where its
        statistics document is `missing`, their kinds that say so (ForeignNoStatistics, NoStatistics: HTTP 404)."""
        namespace = self.connection.namespace
        alias = alias_of(state, namespace)
        for index in [indices] if isinstance(indices, str) else indices:
            foreign = ownership.not_ours(ownership.meta_of(self._client(), index), index, state, namespace)
            if foreign is not None:
                return (ForeignNoStatistics if missing else NotOurs)(
                    f"{state} is not served: the alias {alias} points at {index}, which lawindex did not make for "
                    f"{state} ({foreign})",
                    hint=ownership.foreign_hint(alias),
                )
        return (NoStatistics if missing else DamagedIndex)(
            f"{state} is not served: {problem}",
            hint=f"`lawindex load DIR --state {state}` rebuilds it"
            + ("" if isinstance(indices, str) else " and moves the alias off them all"),
        )

    def _remember(self, state: str, index: str, body: dict[str, Any]) -> IndexStatistics:
        with self._lock:
            known = self._statistics.get(index)
            if known is None:
                known = self._statistics[index] = IndexStatistics.of(index, body, self._blocks_of(index))
            replaced = self._serving.get(state)
            self._serving[state] = index
            # The generation the alias left is deleted by the load that moved it: forget its statistics,
            # or a process that lives through many reloads keeps every vocabulary it ever read.
            if replaced is not None and replaced != index:
                self._statistics.pop(replaced, None)
            return known

    def _blocks_of(self, index: str) -> Callable[[list[str]], Mapping[str, Any]]:
        """What reads stored fields of `index`'s statistics document (its vocabulary's blocks)."""

        def fetch(fields: list[str]) -> Mapping[str, Any]:
            from opensearchpy import NotFoundError

            try:
                found = self._client().get(index=index, id=STATISTICS_ID, stored_fields=fields, _source=False)
            except NotFoundError as error:  # the index was deleted by a reload since its statistics were read
                raise Moved(error) from None
            fetched: Mapping[str, Any] = found.get("fields", {})
            return fetched

        return fetch


class Moved(Exception):
    """The alias moved while a question was being answered (`cause`: the failure that showed it)."""

    def __init__(self, cause: Exception | None = None) -> None:
        super().__init__()
        self.cause = cause

    def fail(self, state: str, namespace: str) -> NoReturn:
        """It moved again on the second try: the failure that showed it (to `errors_translated`, which says what
        OpenSearch answered), or a ClusterRefused; never a Moved, which would be a traceback."""
        if self.cause is not None:
            raise self.cause from None
        raise ClusterRefused(
            f"the index behind {alias_of(state, namespace)} changed twice while the question was answered",
            hint="ask again; a load of the state was swapping its index",
        ) from None


def no_index(state: str, namespace: str) -> NoIndex:
    return NoIndex(
        f"no index for {state}: nothing is loaded under {alias_of(state, namespace)}",
        hint=f"load it with `lawindex load corpora --state {state}`",
    )
