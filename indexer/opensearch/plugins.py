"""Which plugins a cluster has: the lawindex plugin (`plugin/`, the spec's similarity and query) and k-NN
(`--by meaning`). A path is chosen only where *every* node has its plugin, since a shard may live anywhere."""

from __future__ import annotations

import contextlib
from typing import Any

LAWINDEX = "lawindex"
KNN = "opensearch-knn"


def every_node_has(client: Any, name: str) -> bool:
    """Whether every node of the cluster lists plugin `name` (`_nodes/plugins`, else `_cat/plugins`). False
    where neither can be read (a user without cluster:monitor/nodes/info)."""
    from opensearchpy.exceptions import OpenSearchException

    get = client.transport.perform_request
    with contextlib.suppress(OpenSearchException):
        nodes = (get("GET", "/_nodes/plugins", params={"filter_path": "nodes.*.plugins.name"}) or {}).get("nodes")
        if nodes:
            return all(any(p.get("name") == name for p in (n.get("plugins") or [])) for n in nodes.values())
    try:
        rows = get("GET", "/_cat/plugins", params={"format": "json", "h": "name,component"})
        members = get("GET", "/_cat/nodes", params={"format": "json", "h": "name"})
    except OpenSearchException:
        return False
    names = {str(row.get("name")) for row in members or []}
    having = {str(row.get("name")) for row in rows or [] if row.get("component") == name}
    return bool(names) and names <= having


def knn_missing(url: str, version: str) -> str:
    """The one line `--by meaning` and `--by hybrid` fail with on a cluster without k-NN."""
    return f"OpenSearch at {url} ({version}) has no k-NN plugin ({KNN}), which --by meaning and --by hybrid need"


def knn_missing_hint() -> str:
    """How to get it: the default local node has it; a cluster of one's own takes the published zip."""
    return (
        f"`lawindex opensearch start` (OpenSearch 3.6.0) installs it; on your own nodes, `bin/opensearch-plugin "
        f"install` the {KNN} zip of their version from Maven Central; then `lawindex load` again"
    )
