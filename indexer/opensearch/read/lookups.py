"""A state's rows read by key rather than ranked: a family's process rows, one law by its id, and every law whose
document is not the one loaded (`lawindex verify`). Each reads only lawindex's own, verified index of the state
(trust/ownership.py) and checks every row it returns against the seal."""

from __future__ import annotations

from indexer.errors import ClusterRefused, NotFound
from indexer.opensearch.cluster.connection import alias_of, errors_translated
from indexer.opensearch.cluster.schema import FETCHED, GRID_FIELD, STATISTICS_ID, VECTOR_FIELD, law_id
from indexer.opensearch.read.rescore import law_of
from indexer.opensearch.read.searching import Searcher
from indexer.opensearch.read.statistics import Moved, no_index
from indexer.opensearch.trust import integrity
from indexer.retrieval.corpus import Law, state_code


def family(searcher: Searcher, state: str, key: str) -> list[Law]:
    """The process rows of one family, in corpus order (a page row is reached by its family, not by
    words): every row, however many pages they take, all from one index."""
    state = state_code(state)
    stats = searcher.verified(state)  # only lawindex's own, verified index of the state (trust/ownership.py)
    query = {"bool": {"filter": [{"term": {"family": key}}, {"term": {"kind": "process"}}]}}
    namespace = searcher.connection.namespace
    with errors_translated(searcher.connection):
        for attempt in range(2):
            try:
                rows = searcher.every(state, query)
            except Moved as moved:
                if attempt:
                    moved.fail(state, namespace)
                continue
            # A reload between two pages would mix two generations' rows: read them again.
            if len({str(row["_index"]) for row in rows}) <= 1:
                if rows and str(rows[0]["_index"]) != stats.index:
                    stats = searcher.verified(state)  # a reload since: its own statistics, then read again
                    continue
                searcher.refuse_altered(state, stats, rows)
                return [law_of(row["_source"]) for row in rows]
        raise ClusterRefused(
            f"the index behind {alias_of(state, namespace)} changed while the family was read", hint="ask again"
        )


def altered_laws(searcher: Searcher, state: str) -> list[str]:
    """Every law of the index now behind `state`'s alias whose document is not the one loaded (its
    digest is not the one sealed with the statistics), by id, in corpus order; a law whose document is
    gone is named `<missing: N laws>`. All documents are read: `lawindex verify` calls this."""
    state = state_code(state)
    stats = searcher.statistics(state)
    query = {"bool": {"must_not": [{"ids": {"values": [STATISTICS_ID]}}]}}
    vectors = stats.vector_digests
    with errors_translated(searcher.connection):
        rows = searcher.every(state, query, () if vectors is None else (VECTOR_FIELD, GRID_FIELD))
    found = [str(row["_source"].get("id") or row["_id"]) for row in rows if row["_index"] == stats.index and
             integrity.altered(str(row["_id"]), row["_source"], stats.digests, vectors)]  # fmt: skip
    missing = len(stats.digests) // integrity.SIZE - len(rows)
    return found + ([f"<missing: {missing} laws>"] if missing > 0 else [])


def get(searcher: Searcher, state: str, law: str) -> Law:
    """One law of `state` by its id."""
    state = state_code(state)
    stats = searcher.verified(state)  # only lawindex's own, verified index of the state (trust/ownership.py)
    from opensearchpy import NotFoundError

    alias = alias_of(state, searcher.connection.namespace)
    with errors_translated(searcher.connection):
        try:
            found = searcher.client.get(index=alias, id=law_id(law), _source_includes=list(FETCHED))
        except NotFoundError as error:
            if isinstance(error.info, dict) and error.info.get("found") is False:
                raise NotFound(f"{state} has no law {law!r}") from None
            raise no_index(state, searcher.connection.namespace) from None
        if str(found["_index"]) != stats.index:  # a reload since: the new index's statistics
            stats = searcher.statistics_cache.fresh(state)
        if str(found["_index"]) == stats.index:
            searcher.refuse_altered(state, stats, [found])
        else:
            raise ClusterRefused(f"the index behind {alias} changed while {law!r} was read", hint="ask again")
    return law_of(found["_source"])
