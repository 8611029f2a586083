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
    return bool(listed(client, name))


def listed(client: Any, name: str) -> bool | None:
    """Whether every node of the cluster lists plugin `name` (`_nodes/plugins`, else `_cat/plugins`); None
    where neither can be read (a user without cluster:monitor/nodes/info, as lawindex's least-privilege
    role on a secured cluster)."""
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
        return None
    names = {str(row.get("name")) for row in members or []}
    having = {str(row.get("name")) for row in rows or [] if row.get("component") == name}
    return bool(names) and names <= having


# Where no query of this name is registered, OpenSearch refuses the search body itself with a 400, before it
# resolves an index or the security plugin weighs a permission; past that parse, a name that matches no
# index is a 404, or a 403 for a user whose role does not cover it, or (ignore_unavailable) an empty 200.
PROBE_INDEX = "lawindex-plugin-probe"


def query_parses(client: Any, query: str) -> bool:
    """Whether the node that answers knows the query `query` (a plugin's): a search of size 0 with it on a
    name that holds no index, which needs no cluster permission. It says nothing of the other nodes (see
    `listed`, which does, where the user may read the node list)."""
    from opensearchpy.exceptions import AuthorizationException, NotFoundError, OpenSearchException

    body = {"size": 0, "query": {query: {"question": "probe"}}}
    params = {"ignore_unavailable": "true", "allow_no_indices": "true"}
    try:
        client.transport.perform_request("POST", f"/{PROBE_INDEX}/_search", params=params, body=body)
    except (AuthorizationException, NotFoundError):
        return True
    except OpenSearchException:
        return False
    return True


def knn_missing(url: str, version: str) -> str:
    """The one line `--by meaning` and `--by hybrid` fail with on a cluster without k-NN."""
    return f"OpenSearch at {url} ({version}) has no k-NN plugin ({KNN}), which --by meaning and --by hybrid need"


def knn_missing_hint() -> str:
    """How to get it: a local node takes it with --knn; a cluster of one's own takes the published zip (or the
    lawindex plugin, which ranks by meaning without it)."""
    return (
        f"`lawindex opensearch start --knn` (OpenSearch 3.6.0) installs it; on your own nodes, `bin/opensearch-plugin "
        f"install` the {KNN} zip of their version from Maven Central (or the lawindex plugin, which needs no k-NN); "
        "then `lawindex load` again"
    )
