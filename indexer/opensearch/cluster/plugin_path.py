"""The plugin path: a state's index built for the lawindex plugin's similarity and query (plugin/).

Where every node of the cluster has the plugin (`indexer.opensearch.cluster.plugins`), a load creates the state's
index with the similarity `lawindex_bm25` on the ranked field, given the spec's own N and average length
(the statistics the loader counts: a ranked law whose words are all stopwords counts in the spec's N and
not in Lucene's), sorts it by corpus order and merges it to one segment before the swap, so that Lucene's
tie-break (doc id) is the spec's (corpus order). Then one `lawindex` query of size 8, from any client,
returns the spec's top 8. Where the cluster lacks the plugin (a managed service), nothing here applies and
the index is what it always was: `ask` proves a window of Lucene's BM25 wide enough instead.

`_meta.lawindex.similarity` says which path an index is on; `ask`, `status` and `verify` read it there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from indexer.opensearch.cluster.schema import RANKED_FIELD

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from indexer.retrieval.statistics import Counts

# The similarity type the plugin registers, and the name the index settings give it.
SIMILARITY = "lawindex_bm25"
SIMILARITY_NAME = "lawindex"
# The corpus-order field: the index is sorted by it, so that doc ids in its one segment are corpus order.
ORDER_FIELD = "order"
# The query the plugin adds, as any client sends it.
QUERY = "lawindex"
# The plugin's refusal of a question by meaning or hybrid where a live law has no vector (plugin/MeaningRanking.java):
# a 400 that is the index's state, not a sign that the alias moved.
NO_VECTOR = "has no vector_grid"


def cluster_has_plugin(client: OpenSearch) -> bool:
    """True when every node of the cluster has the lawindex plugin; False on a cluster without it. Where
    the user may not list the nodes (lawindex's least-privilege role lacks cluster:monitor/nodes/info, by
    design), the node that answers is asked whether it parses the `lawindex` query (docs/plugin.md)."""
    from indexer.opensearch.cluster.plugins import LAWINDEX, listed, query_parses

    found = listed(client, LAWINDEX)
    return query_parses(client, QUERY) if found is None else found


def wanted(client: OpenSearch, asked: bool | None) -> bool:
    """Whether a load builds for the plugin: as `asked`, by default where every node has it. Asked for and
    missing on a node, it is refused in one line rather than half-built (the index would not open there)."""
    has = cluster_has_plugin(client)
    if asked and not has:
        from indexer.errors import LoadFailed

        raise LoadFailed(
            "--plugin: not every node of the cluster has the lawindex plugin",
            hint="install it on every node (lawindex plugin build, docs/plugin.md), or load without --plugin",
        )
    return has if asked is None else asked


def on_plugin(meta: dict[str, Any]) -> bool:
    """True when an index (its `_meta.lawindex`) was built for the plugin's similarity and query."""
    return meta.get("similarity") == SIMILARITY


def path_of(meta: dict[str, Any]) -> str:
    """Which way `ask` ranks an index: `plugin` (one lawindex query) or `window` (Lucene's BM25, widened)."""
    return "plugin" if on_plugin(meta) else "window"


def for_plugin(body: dict[str, Any], stats: Counts) -> dict[str, Any]:
    """`body` (a create-index request from mappings/laws.json, its `_meta.lawindex` set) made for the
    plugin: the similarity with the spec's N and average, the ranked field scored by it, the index sorted
    by corpus order, and the `_meta` saying so. Changed in place and returned."""
    index = body["settings"]["index"]
    index["similarity"] = {
        SIMILARITY_NAME: {
            "type": SIMILARITY,
            "k1": 1.2,
            "b": 0.75,
            # The spec's N (ranked laws, stopword-only ones included), never below Lucene's own doc count
            # for the field, which OpenSearch's check of a new similarity would otherwise trip on.
            "ranked": max(stats.size, stats.doc_count, 1),
            # repr: the shortest text that reads back as the very double the spec divides by. (0 only
            # where no law has a word, so none is scored; 1 keeps the similarity's own check finite.)
            "average": repr(float(stats.average or 1.0)),
        }
    }
    index["sort.field"] = ORDER_FIELD
    index["sort.order"] = "asc"
    ranked_field = body["mappings"]["properties"][RANKED_FIELD]
    ranked_field["similarity"] = SIMILARITY_NAME
    # Positions: the query orders a misspelt word's expansions as the spec's vocabulary does, by the law
    # each first appears in and, within that law, by the word's first position.
    ranked_field["index_options"] = "positions"
    body["mappings"]["_meta"]["lawindex"]["similarity"] = SIMILARITY
    return body


def merge(client: OpenSearch, index: str, timeout: float) -> None:
    """`index` merged to one segment (every copy of its shard): within one segment of an index sorted by
    `order`, Lucene's doc ids are corpus order, and so is its tie-break."""
    client.indices.forcemerge(index=index, max_num_segments=1, request_timeout=timeout)
