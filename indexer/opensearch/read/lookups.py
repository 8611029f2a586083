"""A state's rows read by key rather than ranked: a family's process rows, one law by its id, and every law whose
document is not the one loaded (`lawindex verify`). Each reads only lawindex's own, verified index of the state
(trust/ownership.py), by the concrete index its verified statistics name (whichever node answers, one
generation), and checks every row it returns against the seal."""

from __future__ import annotations

from indexer.errors import ClusterRefused, NotFound
from indexer.opensearch.cluster.connection import alias_of, errors_translated
from indexer.opensearch.cluster.schema import FETCHED, GRID_FIELD, STATISTICS_ID, VECTOR_FIELD, law_id
from indexer.opensearch.read.rescore import law_of
from indexer.opensearch.read.searching import Searcher
from indexer.opensearch.read.statistics import Moved
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
            if attempt:
                stats = searcher.verified(state)  # a reload since: its own statistics, then read again
            try:
                # Every page of the generation itself: a reload between two pages cannot mix two generations.
                rows = searcher.every(state, stats.index, query)
            except Moved as moved:  # deleted under the read
                if attempt:
                    moved.fail(state, namespace)
                continue
            if {str(row["_index"]) for row in rows} - {stats.index}:
                raise AssertionError(f"a search of {stats.index} was answered by another index")
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
        rows = searcher.every(state, stats.index, query, () if vectors is None else (VECTOR_FIELD, GRID_FIELD))
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
        for attempt in range(2):
            if attempt:
                stats = searcher.statistics_cache.fresh(state)  # a reload deleted it: the new index's statistics
            try:
                # Read from the generation the statistics are of, by its own name.
                found = searcher.client.get(index=stats.index, id=law_id(law), _source_includes=list(FETCHED))
            except NotFoundError as error:
                if isinstance(error.info, dict) and error.info.get("found") is False:
                    raise NotFound(f"{state} has no law {law!r}") from None
                continue
            if str(found["_index"]) != stats.index:
                raise AssertionError(f"a read of {stats.index} was answered by another index")
            searcher.refuse_altered(state, stats, [found])
            return law_of(found["_source"])
        raise ClusterRefused(f"the index behind {alias} changed while {law!r} was read", hint="ask again")
