"""A state's kept generations, its history, and the way back: `lawindex load --keep N`, `lawindex history`,
`lawindex rollback`.

A load used to retire the generation it swapped out at once; a corpus that validated but was wrong (last
week's file) then left nothing to go back to. Now the last `keep` generations stay (default KEEP: the serving
one and the one before), sealed and owned as a load left them, and older ones are retired as before: only
lawindex's own of the state, only with no alias on them (`generations.retire`).

A rollback is the load's swap without the build: under the state's lock, the generation asked for is checked
as a load checks an index it would keep unchanged (named as one of the state's generations, marked as
lawindex's own of this state and namespace and as no copy, open, its statistics sealed for it, nothing
written to it since its load, every block of its vocabulary whole), then the alias moves to it in one
`_aliases` call. Anything else is refused and nothing moves: another state's index, one lawindex did not
make, a copy, one altered.

What happened is kept in the namespace's lock index (a document per state, `history-<state>`, its last
HISTORY_EVENTS events): each swap a load made and each rollback, when, by which host and lawindex, from which
index to which. The generations themselves carry the rest in their `_meta` (loaded at, the corpus's sha256,
counts, lawindex and OpenSearch versions, path, host).
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from indexer.errors import BadInput, DamagedIndex, NotOurs
from indexer.opensearch.cluster import plugin_path, stored_lexicon
from indexer.opensearch.cluster.connection import alias_of, index_prefix, server_version
from indexer.opensearch.cluster.schema import STATISTICS_ID
from indexer.opensearch.trust import ownership, sealing
from indexer.opensearch.write import generations
from indexer.opensearch.write.index_body import lawindex_version
from indexer.opensearch.write.lock import WAIT, StateLock, ensure_locks_index, locks_index
from indexer.opensearch.write.stop import Stop

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

# The serving generation and the one before it: one step back, at the cost of one state's index more.
KEEP = 2
# Events kept a state: years of daily loads would be thousands; an operator asks about the last few.
HISTORY_EVENTS = 200


@dataclass(frozen=True)
class Generation:
    """One kept generation of a state, as its `_meta` says."""

    index: str
    serving: bool
    loaded_at: str
    sha256: str
    laws: int
    ranked: int
    process: int
    lawindex: str
    opensearch: str
    path: str
    source: str
    host: str


@dataclass(frozen=True)
class History:
    """A state's kept generations (newest first) and its recorded events (oldest first)."""

    state: str
    alias: str
    generations: list[Generation]
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Rollback:
    """What `lawindex rollback` did."""

    state: str
    alias: str
    from_index: list[str]
    to_index: str
    seconds: float
    lock: str


def own_generations(client: OpenSearch, state: str, namespace: str) -> dict[str, dict[str, Any]]:
    """lawindex's own generations of the state (by name, oldest first): each one's `_meta.lawindex` and its
    aliases (`"aliases"`), open or closed; an index under the name that is not lawindex's is left out."""
    found = client.indices.get(
        index=index_prefix(state, namespace) + "*",
        ignore_unavailable=True,
        allow_no_indices=True,
        expand_wildcards="open,closed",
        params={"filter_path": "*.aliases,*.mappings._meta"},
    )
    pattern = ownership.generation_pattern(state, namespace)
    own: dict[str, dict[str, Any]] = {}
    for name, body in sorted(found.items()):
        if not pattern.fullmatch(name):
            continue
        meta = (body.get("mappings") or {}).get("_meta", {}).get("lawindex", {})
        if ownership.not_ours(meta, name, state, namespace) is None:
            own[name] = {**meta, "aliases": sorted(body.get("aliases") or {})}
    return own


def tidy(client: OpenSearch, state: str, namespace: str, keep: int, serving: Sequence[str]) -> bool:
    """True when nothing of the state needs cleaning: no half-built generation and at most `keep` kept."""
    own = own_generations(client, state, namespace)
    others = [name for name in own if name not in serving]
    return len(own) <= keep and not any(own[name]["aliases"] for name in others)


def prune(
    client: OpenSearch, state: str, namespace: str, keep: int, serving: str, previous: Sequence[str] = ()
) -> list[str]:
    """Retire lawindex's own generations of the state past `keep` (the serving one always kept, counted
    among them; then `previous`, the ones it replaced, so that a rollback can undo the load even after an
    earlier rollback; then the newest), and any that a rollback would refuse (`check_generation`: a damaged
    index that a load replaced is never kept); return them. Called holding the state's lock. A generation
    with an alias on it is never retired (`generations.retire`): a half-built one is left to
    `generations.remove_orphans`."""
    from indexer.errors import ClusterRefused

    own = own_generations(client, state, namespace)
    others = [name for name in reversed(own) if name != serving and not own[name]["aliases"]]
    others.sort(key=lambda name: name not in previous)  # stable: the replaced ones first, then newest first
    kept = 0
    retired = []
    for name in others:
        if kept < keep - 1:
            try:
                check_generation(client, state, namespace, name)
                kept += 1
                continue
            except (ClusterRefused, BadInput):
                pass  # damaged, or not there any more: not worth keeping
        if generations.retire(client, name):
            retired.append(name)
    return retired


def history(client: OpenSearch, state: str, namespace: str) -> History:
    """The state's kept generations and events."""
    serving = set(generations.behind(client, alias_of(state, namespace), namespace))
    rows = []
    for name, meta in reversed(own_generations(client, state, namespace).items()):
        rows.append(
            Generation(
                index=name,
                serving=name in serving,
                loaded_at=str(meta.get("loaded_at", "")),
                sha256=str(meta.get("sha256", "")),
                laws=int(meta.get("laws", 0)),
                ranked=int(meta.get("ranked", 0)),
                process=int(meta.get("process", 0)),
                lawindex=str(meta.get("lawindex_version", "")),
                opensearch=str(meta.get("opensearch_version", "")),
                path=plugin_path.path_of(meta),
                source=str(meta.get("source", "")),
                host=str(meta.get("loaded_by", "")),
            )
        )
    return History(state, alias_of(state, namespace), rows, events(client, state, namespace))


def _history_id(state: str) -> str:
    return f"history-{state}"


def events(client: OpenSearch, state: str, namespace: str) -> list[dict[str, Any]]:
    """The state's recorded events, oldest first ([] when none was recorded)."""
    from opensearchpy import NotFoundError

    try:
        found = client.get(index=locks_index(namespace), id=_history_id(state))
    except NotFoundError:
        return []
    recorded = found.get("_source", {}).get("events", [])
    return list(recorded) if isinstance(recorded, list) else []


def record(client: OpenSearch, state: str, namespace: str, event: dict[str, Any]) -> None:
    """Add `event` (with when, which host and which lawindex) to the state's history. Called holding the
    state's lock, so no other writer of the state writes it meanwhile."""
    from opensearchpy import ConflictError, NotFoundError

    stamped = {
        "at": datetime.now(UTC).isoformat(timespec="microseconds"),
        "host": socket.gethostname(),
        "lawindex": lawindex_version(),
        **event,
    }
    index = locks_index(namespace)
    for _ in range(5):
        try:
            found = client.get(index=index, id=_history_id(state))
            before = list(found.get("_source", {}).get("events", []))
            conditions = {"if_seq_no": found["_seq_no"], "if_primary_term": found["_primary_term"]}
        except NotFoundError:
            before, conditions = [], {"op_type": "create"}
        body = {"kind": "history", "state": state, "events": [*before, stamped][-HISTORY_EVENTS:]}
        try:
            client.index(index=index, id=_history_id(state), body=body, params={"require_alias": "true", **conditions})
            return
        except ConflictError:
            continue  # a writer of another lawindex (one without the lock's discipline): read again


def check_generation(client: OpenSearch, state: str, namespace: str, index: str) -> dict[str, Any]:
    """The `_meta` of `index` when it is an intact generation of the state that lawindex made; else NotOurs
    (another state's, not lawindex's, a copy) or DamagedIndex (closed, altered, not whole)."""
    from opensearchpy import ConnectionError, NotFoundError, TransportError

    if not ownership.generation_pattern(state, namespace).fullmatch(index):
        if not _an_index(client, index):  # '', '*', the state's alias: no index at all is bad input, not a refusal
            raise BadInput(
                f"there is no index {index!r}",
                hint=f"lawindex history {state} lists {state}'s generations ({index_prefix(state, namespace)}<time>)",
            )
        raise NotOurs(
            f"{index} is not one of {state}'s generations (lawindex names them {index_prefix(state, namespace)}<time>)",
            hint=f"lawindex history {state} lists them",
        )
    try:
        meta = ownership.meta_of(client, index)
    except NotFoundError:
        raise BadInput(f"there is no index {index}", hint=f"lawindex history {state} lists {state}'s") from None
    problem = ownership.not_ours(meta, index, state, namespace)
    if problem is not None:
        raise NotOurs(f"lawindex will not swap {index} in: {problem}", hint=f"lawindex history {state}")
    laws = int(meta.get("laws", -1))
    try:
        counted = int(client.count(index=index)["count"])
        changed = generations.written_since(client, index, laws)
        found = client.get(index=index, id=STATISTICS_ID)
    except ConnectionError:
        raise
    except TransportError as error:  # closed (400), the statistics gone (404), a shard lost (503)
        raise DamagedIndex(
            f"{index} cannot be read whole ({error.status_code}: {error.error})", hint="load the state again"
        ) from None
    source = found.get("_source")
    problem = sealing.seal_problem(source, index, state, namespace)
    if problem is None and counted != laws + 1:
        problem = f"{index} holds {counted - 1} laws, not the {laws} it was loaded with"
    if problem is None and changed:
        problem = f"a document of {index} was written after its load"
    if problem is None and sealing.sealed_fingerprint(source) != meta.get("fingerprint"):
        problem = f"the statistics of {index} were sealed for another corpus than its marker names"
    if problem is None and not stored_lexicon.whole(
        source["statistics"].get("words"),
        lambda fields: client.get(index=index, id=STATISTICS_ID, stored_fields=fields, _source=False).get("fields", {}),
    ):
        problem = f"the vocabulary of {index} is not the one sealed with it"
    if problem is not None:
        raise DamagedIndex(f"lawindex will not swap {index} in: {problem}", hint="load the state again")
    return meta


# What OpenSearch refuses in an index name (MetadataCreateIndexService.validateIndexOrAliasName): a name with one
# of these, empty, or starting with `_`, `-` or `+` is no index, and is never sent (a `*` or `,` would select many).
_NOT_IN_A_NAME = frozenset('\\/*?"<>| ,#:')


def _an_index(client: OpenSearch, name: str) -> bool:
    """Whether `name` is an index of the cluster (not an alias, not a pattern, not a name no index can have)."""
    from opensearchpy import NotFoundError

    if not name or name != name.lower() or name[0] in "_-+" or name in (".", "..") or _NOT_IN_A_NAME & set(name):
        return False
    try:
        return name in client.indices.get_mapping(index=name, params=ownership.LOCAL)
    except NotFoundError:
        return False


def rollback(
    client: OpenSearch,
    state: str,
    namespace: str,
    to: str | None = None,
    *,
    wait: float = WAIT,
    stop: Stop | None = None,
) -> Rollback:
    """Swap the state's alias back to `to` (by default the newest kept generation older than the serving
    one), under the state's lock, once `to` is checked (`check_generation`); the rollback is recorded.
    NotOurs or DamagedIndex for a generation that may not be swapped in, BadInput when there is none to go to."""
    import time

    from opensearchpy import ConnectionError, NotFoundError, TransportError

    from indexer.errors import LoadFailed

    began = time.perf_counter()
    alias = alias_of(state, namespace)
    ensure_locks_index(client, namespace)
    lock = StateLock(client, state, namespace, wait=wait, stop=stop, ensured=True)
    with lock:
        current = generations.behind(client, alias, namespace)
        for name in current:
            problem = ownership.not_ours(ownership.meta_of(client, name), name, state, namespace)
            if problem is not None:
                raise NotOurs(
                    f"the alias {alias} points at {name}, which lawindex will not swap out: {problem}",
                    hint=ownership.foreign_hint(alias),
                )
        own = own_generations(client, state, namespace)
        if to is None:
            newest = max(current) if current else "~"
            older = [name for name in own if name not in current and not own[name]["aliases"] and name < newest]
            if not older:
                raise BadInput(
                    f"{state} keeps no generation older than {', '.join(current) or 'none'} to roll back to",
                    hint=f"lawindex history {state} lists what is kept; load with --keep 2 or more to keep one",
                )
            to = older[-1]
        if current == [to]:
            raise BadInput(f"{to} already serves {state}", hint=f"lawindex history {state} lists the others")
        check_generation(client, state, namespace, to)
        if own.get(to, {}).get("aliases"):
            raise NotOurs(
                f"lawindex will not swap {to} in: aliases point at it ({', '.join(own[to]['aliases'])}): a load "
                "under way, or someone's own alias",
                hint=f"lawindex history {state}",
            )
        lock.confirm()
        actions = generations.swap_actions(alias, to, None, current, server_version(client))
        try:
            client.indices.update_aliases(body={"actions": actions})
        except TransportError as error:
            # As a load's swap (generations.swap): a lost answer, or a concurrent swap refused whole.
            if not isinstance(error, (NotFoundError, ConnectionError)) and "more than one write index" not in str(
                error
            ):
                raise
            if generations.behind(client, alias, namespace) != [to]:  # the answer lost before it applied
                raise LoadFailed(
                    f"{state}: the alias {alias} did not move to {to}", hint="run the rollback again"
                ) from None
        record(client, state, namespace, {"kind": "rollback", "from": current, "to": to})
    return Rollback(state, alias, current, to, time.perf_counter() - began, lock.outcome())
