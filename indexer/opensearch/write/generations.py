"""A state's generations and its alias: which indices the alias points to and whether they are lawindex's own,
whole and unchanged; the swap that moves the alias to a new generation in one `_aliases` call; and the
clean-up of the generations left behind (retired after a swap, orphans of failed loads).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from indexer.errors import LoadFailed
from indexer.opensearch.cluster import plugin_path, stored_lexicon, versions
from indexer.opensearch.cluster.connection import DEFAULT_NAMESPACE, alias_of, index_prefix
from indexer.opensearch.cluster.schema import ALIAS_FILTER, STATISTICS_ID
from indexer.opensearch.trust import ownership, sealing
from indexer.opensearch.write.index_body import fingerprint
from indexer.retrieval.corpus import Corpus

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from indexer.opensearch.cluster.vector_layout import Meaning


def serving(client: OpenSearch, state: str, namespace: str = DEFAULT_NAMESPACE) -> str | None:
    """The concrete index behind a state's alias, or None when the state has none."""
    names = behind(client, alias_of(state, namespace), namespace)
    return names[-1] if names else None


def behind(client: OpenSearch, alias: str, namespace: str = DEFAULT_NAMESPACE) -> list[str]:
    """Every index `alias` points to, sorted; [] when there is no such alias."""
    return sorted(_alias_bodies(client, alias, namespace))


def guarded(client: OpenSearch, state: str, namespace: str) -> bool:
    """Whether the state's alias carries ALIAS_FILTER on every index it points to. One made by an earlier lawindex
    carries none: its index still serves (the statistics are read by id), and the next load adds the filter."""
    alias = alias_of(state, namespace)
    found = _alias_bodies(client, alias, namespace)
    return bool(found) and all(body.get("filter") == ALIAS_FILTER for body in found.values())


def guard(client: OpenSearch, state: str, index: str, namespace: str) -> None:
    """Put ALIAS_FILTER on the state's alias of `index`, where it points already: one `_aliases` add, which
    replaces the alias's definition in place. Called holding the state's lock."""
    from indexer.opensearch.cluster.connection import server_version

    if not guarded(client, state, namespace):
        actions = swap_actions(alias_of(state, namespace), index, None, (), server_version(client))
        client.indices.update_aliases(body={"actions": actions})


def _alias_bodies(client: OpenSearch, alias: str, namespace: str) -> dict[str, dict[str, Any]]:
    """Each index `alias` points to, with the alias's definition there (its `filter`); {} when there is none.

    Asked of every index first, so that an alias of lawindex's name on someone else's index is seen and
    refused. A user allowed only the namespace's indices (the least-privilege role, indexer/node/security.py)
    is refused that (`GET _alias/NAME` resolves `*`), and is asked within the namespace instead: an index
    outside it that carried the alias would refuse that user's every request on the alias anyway."""
    from opensearchpy import AuthorizationException, NotFoundError

    try:
        try:
            found = client.indices.get_alias(name=alias)
        except AuthorizationException:
            found = client.indices.get_alias(index=f"{namespace}-*", name=alias)
    except NotFoundError:
        return {}
    return {name: dict(body.get("aliases", {}).get(alias) or {}) for name, body in found.items()}


def current(
    client: OpenSearch, corpus: Corpus, namespace: str, meaning: Meaning | None = None, plugin: bool = False
) -> tuple[list[str], bool]:
    """The indices behind the state's alias, every one lawindex's own of this state (else LoadFailed, and
    nothing is touched), and whether they are one whole index built from this very corpus, on the path the
    cluster is for (`plugin`: built for the lawindex plugin; an index of the other path is rebuilt)."""
    state = corpus.state
    alias = alias_of(state, namespace)
    names = behind(client, alias, namespace)
    if not names:
        if client.indices.exists(index=alias):
            raise LoadFailed(
                f"an index named {alias} stands where {state}'s alias goes; lawindex did not make it and will not "
                "delete it",
                hint=f"rename or remove the index {alias}, or give lawindex another LAWINDEX_NAMESPACE",
            )
        return [], False
    metas: dict[str, dict[str, Any]] = {}
    for name in names:
        metas[name] = ownership.meta_of(client, name)
        problem = ownership.not_ours(metas[name], name, state, namespace)
        if problem is not None:
            raise LoadFailed(
                f"the alias {alias} points at {name}, which lawindex will not replace or delete: {problem}",
                hint=ownership.foreign_hint(alias),
            )
    # Several of our own behind the alias (two loads that raced before there was a lock): rebuilt, and
    # the alias moved off all of them at once.
    if len(names) != 1:
        return names, False
    (name,) = names
    if plugin_path.on_plugin(metas[name]) != plugin:
        return names, False
    made = fingerprint(corpus, meaning)
    return names, metas[name].get("fingerprint") == made and intact(client, name, corpus, namespace, meaning)


def intact(client: OpenSearch, index: str, corpus: Corpus, namespace: str, meaning: Meaning | None = None) -> bool:
    """True when `index` is open and holds every law and its statistics, sealed for it and this corpus, and
    nothing was written to it since: a count, one get and one search, so that an index closed, emptied,
    with its statistics damaged or a law altered (`_update`) is rebuilt, not called unchanged."""
    from opensearchpy import ConnectionError, TransportError

    try:
        if client.count(index=index)["count"] != len(corpus.laws) + 1:
            return False
        if written_since(client, index, len(corpus.laws)):
            return False
        found = client.get(index=index, id=STATISTICS_ID)
    except ConnectionError:
        raise
    except TransportError:  # closed (400), the statistics gone (404), a shard lost (503)
        return False
    source = found.get("_source")
    if sealing.seal_problem(source, index, corpus.state, namespace) is not None:
        return False
    if sealing.sealed_fingerprint(source) != fingerprint(corpus, meaning):
        return False
    # The vocabulary's blocks, sealed by their digests outside the statistics' JSON: every one read back.
    return stored_lexicon.whole(
        source["statistics"].get("words"),
        lambda fields: client.get(index=index, id=STATISTICS_ID, stored_fields=fields, _source=False).get("fields", {}),
    )


def written_since(client: OpenSearch, index: str, laws: int) -> bool:
    """True when a document of `index` was written after its load: the load's own writes are its laws and
    the statistics, one operation each, numbered 0..laws on the shard (sequence numbers), so any later
    write (an `_update`, a delete and put) numbers past `laws`. Refreshed first: the index never refreshes
    by itself (refresh_interval -1), and an unrefreshed write is invisible to a search, not to a get.
    (A bulk request the client sent twice would look the same: that state is rebuilt, never wrongly kept.)
    One search of one hit, with read permission only (indexer/node/security.py's role)."""
    client.indices.refresh(index=index)
    body = {"size": 1, "_source": False, "track_total_hits": False, "sort": [{"_seq_no": "desc"}]}
    hits = client.search(index=index, body=body)["hits"]["hits"]
    return not hits or int(hits[0]["sort"][0]) != laws


def generations(client: OpenSearch, state: str, namespace: str) -> list[str]:
    """Every index named as one of the state's generations, open or closed, sorted (names only)."""
    found = client.indices.get_alias(
        index=index_prefix(state, namespace) + "*", allow_no_indices=True, expand_wildcards="open,closed"
    )
    pattern = ownership.generation_pattern(state, namespace)
    return sorted(name for name in found if pattern.fullmatch(name))


def remove_orphans(
    client: OpenSearch, state: str, keep: Collection[str] | str | None, namespace: str = DEFAULT_NAMESPACE
) -> list[str]:
    """Delete what failed or crashed loads of the state left: lawindex's own indices of this state and
    namespace still behind their own `-filling` alias (a load removes it only in its swap) and no other;
    return them. Never one of `keep`, one not lawindex's, one any other alias points to, or a generation
    kept after its swap, with no alias at all (indexer.opensearch.write.history prunes those past `--keep`).
    Called holding the state's lock, so no live load is filling one (a load whose lock was taken over
    fails at its next bulk chunk, or at its swap)."""
    kept = {keep} if isinstance(keep, str) else set(keep or ())
    prefix = index_prefix(state, namespace)
    found = client.indices.get(
        index=prefix + "*", ignore_unavailable=True, allow_no_indices=True, expand_wildcards="open,closed"
    )
    pattern = ownership.generation_pattern(state, namespace)
    orphans = []
    for name, body in sorted(found.items()):
        if name in kept or not pattern.fullmatch(name):
            continue
        meta = body.get("mappings", {}).get("_meta", {}).get("lawindex", {})
        if ownership.not_ours(meta, name, state, namespace) is not None:
            continue
        if set(body.get("aliases", {})) != {f"{name}-filling"}:
            continue
        client.indices.delete(index=name, ignore_unavailable=True)
        orphans.append(name)
    return orphans


def retire(client: OpenSearch, index: str) -> bool:
    """Delete an index the state's alias has just left (lawindex's own, checked before the swap), unless an
    alias still points to it: someone's own alias on it says it is still wanted."""
    from opensearchpy import NotFoundError

    try:
        found = client.indices.get_alias(index=index)
    except NotFoundError:
        return False
    if found.get(index, {}).get("aliases"):
        return False
    client.indices.delete(index=index, ignore_unavailable=True)
    return True


def swap(client: OpenSearch, state: str, index: str, current: Collection[str], namespace: str) -> None:
    """Move the state's alias from `current` to the new `index`, and remove the index's private alias, in one
    `_aliases` call. When its answer is lost, what the alias points at says whether it was applied: LoadFailed
    when the alias moved under this load (another writer), the lost answer's error when nothing moved."""
    from opensearchpy import ConnectionError, NotFoundError, TransportError

    from indexer.opensearch.cluster.connection import server_version
    from indexer.opensearch.write.index_body import filling

    alias = alias_of(state, namespace)
    actions = swap_actions(alias, index, filling(index), current, server_version(client))
    try:
        client.indices.update_aliases(body={"actions": actions})
    except TransportError as error:
        if not isinstance(error, (NotFoundError, ConnectionError)) and "more than one write index" not in str(error):
            raise
        # The answer may have been lost after the node applied the swap (a dropped connection, a timeout;
        # the client's repeat then finds the old alias gone, 404): what the alias points at says which.
        now = behind(client, alias, namespace)
        if now != [index]:
            if not isinstance(error, ConnectionError) or now != sorted(current):
                raise LoadFailed(
                    f"{state}: the alias {alias} moved while this load ran (another writer?); nothing was swapped",
                    hint="run the load again",
                ) from None
            raise


def swap_actions(
    alias: str, index: str, private: str | None, current: Collection[str], version: str
) -> list[dict[str, Any]]:
    """The one `_aliases` call that moves `alias` from `current` to `index` and drops the index's `private`
    alias (if any: a rollback's target has none), such that a second swap from the same `current` is refused
    whole rather than leaving the alias on two indices: each `remove` with `must_exist` where OpenSearch
    `version` parses it (2.12.0 on), else the new index added as the alias's one write index
    (indexer.opensearch.cluster.versions says why that is as safe). The alias carries ALIAS_FILTER."""
    if versions.has_must_exist(version):
        guard: dict[str, Any] = {"must_exist": True}
        return [
            *({"remove": {"index": old, "alias": alias, **guard}} for old in current),
            {"add": {"index": index, "alias": alias, "filter": ALIAS_FILTER}},
            *([{"remove": {"index": index, "alias": private, **guard}}] if private else []),
        ]
    return [
        *({"remove": {"index": old, "alias": alias}} for old in current),
        {"add": {"index": index, "alias": alias, "is_write_index": True, "filter": ALIAS_FILTER}},
        *([{"remove": {"index": index, "alias": private}}] if private else []),
    ]
