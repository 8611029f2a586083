"""`lawindex status`: every state served under one of lawindex's aliases, read from the cluster."""

from __future__ import annotations

import re
from dataclasses import dataclass

from indexer.opensearch.cluster import plugin_path, versions
from indexer.opensearch.cluster.connection import Connection, errors_translated
from indexer.opensearch.trust import ownership


@dataclass(frozen=True)
class StateStatus:
    """What `lawindex status` shows of one state."""

    state: str
    alias: str
    index: str
    laws: int
    ranked: int
    process: int
    documents: int
    sha256: str
    loaded_at: str
    path: str = "window"  # how `ask` ranks it: `plugin` (the lawindex query) or `window` (opensearch.plugin_path)
    paths: str = "window"  # every path it can take on this cluster (cluster/versions.py's ClusterFit.paths)
    # How `ask --by meaning` and `--by hybrid` rank it: `plugin` (the lawindex query ranks every row by its
    # vector_grid), `window` (k-NN windows, indexer.opensearch.read.vectors) or `none` (loaded without vectors).
    meaning_path: str = "none"


def meaning_path_of(meta: dict[str, object]) -> str:
    """Which way an index (its `_meta.lawindex`) is asked by meaning and hybrid: plugin, window or none."""
    meaning = meta.get("meaning")
    if not isinstance(meaning, dict):
        return "none"
    if plugin_path.on_plugin(meta) and meaning.get("grid_field"):
        return "plugin"
    return "window" if meaning.get("knn", True) else "none"


def status(connection: Connection, fit: versions.ClusterFit | None = None) -> list[StateStatus]:
    """Every state served under a lawindex alias, sorted by state; `fit` (the cluster's, asked when not given)
    says which paths each can take."""
    client = connection.client()
    with errors_translated(connection):
        fit = fit or versions.cluster_fit(client)
        namespace = connection.namespace
        found = client.indices.get_alias(index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True)
        served = re.compile(re.escape(namespace) + r"-([a-z]{2})")
        rows = []
        for index, body in sorted(found.items()):
            for alias in body.get("aliases", {}):
                if not served.fullmatch(alias):
                    continue
                meta = ownership.meta_of(client, index)
                rows.append(
                    StateStatus(
                        state=str(meta.get("state", alias[-2:].upper())),
                        alias=alias,
                        index=index,
                        laws=int(meta.get("laws", 0)),
                        ranked=int(meta.get("ranked", 0)),
                        process=int(meta.get("process", 0)),
                        documents=int(client.count(index=index)["count"]),
                        sha256=str(meta.get("sha256", "")),
                        loaded_at=str(meta.get("loaded_at", "")),
                        path=plugin_path.path_of(meta),
                        paths=", ".join(fit.paths(plugin_path.path_of(meta) == "plugin", "meaning" in meta)),
                        meaning_path=meaning_path_of(meta),
                    )
                )
        return sorted(rows, key=lambda row: row.state)
