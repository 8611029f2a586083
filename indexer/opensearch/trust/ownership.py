"""Ownership: every index lawindex makes says so in its mapping's `_meta.lawindex`: the marker `owner:
lawindex`, its namespace, its state, its own name and the schema. lawindex deletes, swaps out and serves only
an index whose marker names the state and namespace at hand (`not_ours`). A copy of one of its indices (a
reindex, a clone) names another index than its own, and is not lawindex's either."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from indexer.opensearch.cluster.connection import index_prefix
from indexer.opensearch.cluster.schema import SCHEMA

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

OWNER = "lawindex"


def marker(namespace: str, state: str, index: str) -> dict[str, Any]:
    """What an index lawindex makes says of itself in `_meta.lawindex` (with the load's own fields)."""
    return {"owner": OWNER, "namespace": namespace, "state": state, "index": index, "schema": SCHEMA}


# A generation's name is its time to the microsecond: `%Y%m%d%H%M%S%f`, 20 digits (index_body.new_generation).
GENERATION_DIGITS = 20


def generation_pattern(state: str, namespace: str) -> re.Pattern[str]:
    """The names a load gives a state's indices: `lawindex-tx-<20 digits>`."""
    return re.compile(re.escape(index_prefix(state, namespace)) + rf"\d{{{GENERATION_DIGITS}}}")


def not_ours(meta: Mapping[str, Any] | None, index: str, state: str, namespace: str) -> str | None:
    """Why `index` (whose `_meta.lawindex` is `meta`) is not lawindex's index of `state` in `namespace`;
    None when it is."""
    if not meta:
        return f"{index} carries no lawindex marker: lawindex did not make it"
    if "owner" not in meta:
        # An index of the first schema, before the marker: lawindex's by its name and its state.
        if meta.get("state") == state and generation_pattern(state, namespace).fullmatch(index):
            return None
        return f"{index} carries no lawindex marker: lawindex did not make it"
    if meta.get("owner") != OWNER:
        return f"{index} is marked as {meta.get('owner')!r}'s, not lawindex's"
    if meta.get("namespace") != namespace:
        return f"{index} belongs to the lawindex namespace {meta.get('namespace')!r}, not {namespace!r}"
    if meta.get("state") != state:
        return f"{index} holds {meta.get('state')}'s laws, not {state}'s"
    if meta.get("index") != index:
        return f"{index} is a copy of {meta.get('index')}, not an index lawindex made"
    return None


# A read of the cluster state answered by the node asked, not the cluster manager: what the serving path
# reads (an index's `_meta`, an alias's indices) must not wait on a manager that went silent, which held
# every new engine's first question until the cluster elected another (30 s and more).
LOCAL = {"local": "true"}


def meta_of(client: OpenSearch, index: str) -> dict[str, Any]:
    """The `_meta.lawindex` of an index's mapping ({} when it has none); readable on a closed index too.
    `LOCAL`: `_meta` is written when the index is created and never changed."""
    body = client.indices.get_mapping(index=index, params=LOCAL)
    mapping = body.get(index, {}).get("mappings", {})
    found = mapping.get("_meta", {}).get("lawindex", {})
    return found if isinstance(found, dict) else {}


def foreign_hint(alias: str) -> str:
    """How to fix an alias of lawindex's name that points at what lawindex did not make."""
    return (
        f"lawindex serves, replaces and deletes only its own index of the state; remove the alias {alias} from "
        "that index (POST _aliases with a remove action), or give lawindex another LAWINDEX_NAMESPACE"
    )
