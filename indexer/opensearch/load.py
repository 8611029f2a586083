"""`lawindex load`: each state's corpus into its own OpenSearch index, behind an alias, swapped atomically.

One index per state, one primary shard: N, df and the average length are that state's alone, as in
the spec ("another state's file never reads this one's counts"). A load builds a new generation
(`lawindex-tx-<generation>`), fills it with the refresh off, refreshes once, checks the count, and
only then moves the alias `lawindex-tx` in one `_aliases` call. Anything that fails before the swap
removes the half-built index and leaves the alias where it was: the index that served still serves.

Long: the load is one transaction (new index, bulk fill, checks, swap, clean-up on any failure), read
top to bottom; its body, fill and swap are to be split apart, issue 18.
"""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from indexer.errors import LawindexError, LoadFailed, LoadInterrupted
from indexer.opensearch import integrity, lifecycle, mappings, plugin_path, stored_lexicon
from indexer.opensearch.connection import DEFAULT_NAMESPACE, Connection, alias_of, errors_translated, index_prefix
from indexer.opensearch.schema import LAW_FIELDS, RANKED_FIELD, SCHEMA, STATISTICS_ID, VECTOR_FIELD, law_id
from indexer.retrieval.corpus import Corpus, Law
from indexer.retrieval.lexicon import Lexicon
from indexer.retrieval.words import ranked, ranked_text

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from indexer.opensearch.vectors import Meaning
    from indexer.retrieval.statistics import Counts


@dataclass(frozen=True)
class StateLoad:
    """What a load did with one state."""

    state: str
    laws: int
    ranked: int
    process: int
    outcome: str  # indexed, unchanged; with --dry-run: would index, would be unchanged
    seconds: float
    index: str | None  # the concrete index now behind the alias (None on a dry run that would index)
    # Whether this load moved the alias (read back from the cluster when the swap's answer was lost), and
    # what became of its lock: released, held (its release failed: it runs out with its lease), or none.
    swapped: bool = False
    lock: str = "none"


Progress = Callable[[str, int, int], None]  # state, laws written so far, laws in all


def fingerprint(corpus: Corpus, meaning: Meaning | None = None) -> str:
    """What an index was built from: the corpus file, laws.json and the schema, and the embedder of its
    vectors where it has them (indexer.opensearch.vectors); unchanged means equal."""
    made = f"{SCHEMA}:{corpus.sha256}:{mappings.fingerprint()}"
    return made if meaning is None else f"{made}:meaning={meaning.identity}"


def documents(
    corpus: Corpus,
    stats: Counts,
    *,
    index: str = "",
    namespace: str = DEFAULT_NAMESPACE,
    meaning: Meaning | None = None,
) -> Iterator[dict[str, Any]]:
    """The bulk actions for a state: one document per law (with its vector, given `meaning`), then the
    statistics document, sealed for `index` (its name, state, namespace and fingerprint under a checksum:
    lifecycle.seal), with every law document's digest in it (indexer/opensearch/integrity.py), so that a law
    altered later is never served."""
    embedded = None if meaning is None else meaning.vectors(corpus)
    digests: list[bytes] = []
    vector_digests: list[bytes] = []  # sealed beside the laws' (indexer/opensearch/integrity.py)
    for order, law in enumerate(corpus.laws):
        source: dict[str, Any] = {name: getattr(law, name) for name in LAW_FIELDS}
        source.update(
            state=corpus.state,
            order=order,
            length=stats.lengths[order],
            counts=stats.counts[order],
        )
        # A process row carries no ranked text at all, so that Lucene counts it in neither N nor
        # df nor the average length: the spec's `ranked`.
        if ranked(law):
            source[RANKED_FIELD] = ranked_text(law)
        if embedded is not None:
            source[VECTOR_FIELD] = embedded[order].tolist()  # float32 values, exact as JSON's doubles
            vector_digests.append(integrity.vector_digest(source[VECTOR_FIELD]))
        digests.append(integrity.digest(source))
        yield {"_id": law_id(law.id), "_source": source}
    summary, blocks = stored_lexicon.stored(Lexicon.of(stats.vocabulary))
    sealed = lifecycle.seal(
        {
            "kind": "statistics",
            "state": corpus.state,
            "statistics": {
                "size": stats.size,
                "average": stats.average,
                # Lucene's own N and total length for the field: a ranked law whose words are all
                # stopwords has no terms, so Lucene does not count it while the spec does. The query
                # side needs both to bound how far OpenSearch's scores can stray from the spec's.
                "doc_count": stats.doc_count,
                "total_length": stats.sum_total_term_freq,
                # The vocabulary: a summary sealed here, its blocks (one per word length, each word
                # with its place in the spec's Map order and its df) stored beside it, out of _source,
                # each sealed by its digest in the summary (indexer/opensearch/stored_lexicon.py).
                "words": summary,
                "digests": integrity.pack(digests),
                **({} if embedded is None else {"vector_digests": integrity.pack(vector_digests)}),
            },
        },
        namespace=namespace,
        index=index,
        fingerprint=fingerprint(corpus, meaning),
    )
    yield {"_id": STATISTICS_ID, "_source": {**sealed, stored_lexicon.FIELD: blocks}}


def counts(laws: Sequence[Law]) -> tuple[int, int]:
    """How many laws are ranked and how many are process rows."""
    ranked_laws = sum(1 for law in laws if ranked(law))
    return ranked_laws, len(laws) - ranked_laws


def serving(client: OpenSearch, state: str, namespace: str = DEFAULT_NAMESPACE) -> str | None:
    """The concrete index behind a state's alias, or None when the state has none."""
    names = behind(client, alias_of(state, namespace), namespace)
    return names[-1] if names else None


def behind(client: OpenSearch, alias: str, namespace: str = DEFAULT_NAMESPACE) -> list[str]:
    """Every index `alias` points to, sorted; [] when there is no such alias.

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
        return []
    return sorted(found)


def _meta(client: OpenSearch, index: str) -> dict[str, Any]:
    return lifecycle.meta_of(client, index)


def new_generation() -> str:
    """The generation part of a new index's name (`lawindex-tx-<generation>`): the time to the microsecond,
    20 digits, so that the newest of a state's indices is the last by name."""
    return datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")


def _current(
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
        metas[name] = _meta(client, name)
        problem = lifecycle.not_ours(metas[name], name, state, namespace)
        if problem is not None:
            raise LoadFailed(
                f"the alias {alias} points at {name}, which lawindex will not replace or delete: {problem}",
                hint=lifecycle.foreign_hint(alias),
            )
    # Several of our own behind the alias (two loads that raced before there was a lock): rebuilt, and
    # the alias moved off all of them at once.
    if len(names) != 1:
        return names, False
    (name,) = names
    if plugin_path.on_plugin(metas[name]) != plugin:
        return names, False
    made = fingerprint(corpus, meaning)
    return names, metas[name].get("fingerprint") == made and _intact(client, name, corpus, namespace, meaning)


def _intact(client: OpenSearch, index: str, corpus: Corpus, namespace: str, meaning: Meaning | None = None) -> bool:
    """True when `index` is open and holds every law and its statistics, sealed for it and this corpus, and
    nothing was written to it since: a count, one get and one search, so that an index closed, emptied,
    with its statistics damaged or a law altered (`_update`) is rebuilt, not called unchanged."""
    from opensearchpy import ConnectionError, TransportError

    try:
        if client.count(index=index)["count"] != len(corpus.laws) + 1:
            return False
        if _written_since(client, index, len(corpus.laws)):
            return False
        found = client.get(index=index, id=STATISTICS_ID)
    except ConnectionError:
        raise
    except TransportError:  # closed (400), the statistics gone (404), a shard lost (503)
        return False
    source = found.get("_source")
    if lifecycle.seal_problem(source, index, corpus.state, namespace) is not None:
        return False
    if lifecycle.sealed_fingerprint(source) != fingerprint(corpus, meaning):
        return False
    # The vocabulary's blocks, sealed by their digests outside the statistics' JSON: every one read back.
    return stored_lexicon.whole(
        source["statistics"].get("words"),
        lambda fields: client.get(index=index, id=STATISTICS_ID, stored_fields=fields, _source=False).get("fields", {}),
    )


def _written_since(client: OpenSearch, index: str, laws: int) -> bool:
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


def _generations(client: OpenSearch, state: str, namespace: str) -> list[str]:
    """Every index named as one of the state's generations, open or closed, sorted (names only)."""
    found = client.indices.get_alias(
        index=index_prefix(state, namespace) + "*", allow_no_indices=True, expand_wildcards="open,closed"
    )
    pattern = lifecycle.generation_pattern(state, namespace)
    return sorted(name for name in found if pattern.fullmatch(name))


def remove_orphans(
    client: OpenSearch, state: str, keep: Collection[str] | str | None, namespace: str = DEFAULT_NAMESPACE
) -> list[str]:
    """Delete what failed or crashed loads of the state left: lawindex's own indices of this state and
    namespace that no alias points to but their own `-filling` one; return them. Never one of `keep`, one
    not lawindex's, or one any other alias points to. Called holding the state's lock, so no live load is
    filling one (a load whose lock was taken over fails at its next bulk chunk, or at its swap)."""
    kept = {keep} if isinstance(keep, str) else set(keep or ())
    prefix = index_prefix(state, namespace)
    found = client.indices.get(
        index=prefix + "*", ignore_unavailable=True, allow_no_indices=True, expand_wildcards="open,closed"
    )
    pattern = lifecycle.generation_pattern(state, namespace)
    orphans = []
    for name, body in sorted(found.items()):
        if name in kept or not pattern.fullmatch(name):
            continue
        meta = body.get("mappings", {}).get("_meta", {}).get("lawindex", {})
        if lifecycle.not_ours(meta, name, state, namespace) is not None:
            continue
        if set(body.get("aliases", {})) - {f"{name}-filling"}:
            continue
        client.indices.delete(index=name, ignore_unavailable=True)
        orphans.append(name)
    return orphans


def _retire(client: OpenSearch, index: str) -> bool:
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


def load_state(
    client: OpenSearch,
    corpus: Corpus,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    namespace: str = DEFAULT_NAMESPACE,
    chunk_size: int = 1000,
    max_retries: int = 8,
    initial_backoff: float = 0.5,
    wait: float = lifecycle.WAIT,
    stop: lifecycle.Stop | None = None,
    locks_ensured: bool = False,
    replicas: int | None = None,
    green_timeout: float | None = None,
    failures: dict[str, dict[str, Any]] | None = None,
    meaning: Meaning | None = None,
    plugin: bool | None = None,
    force: bool = False,
) -> StateLoad:
    """Load one state, holding its lock; on any failure its half-built index is removed and the alias is
    untouched. An alias that points at what lawindex did not make for this state is LoadFailed, and
    nothing is written or deleted. `replicas` fixes the new index's replicas (default: mappings/laws.json's
    auto_expand_replicas 0-1); the alias moves only once the index is green, within `green_timeout` seconds
    (GREEN_TIMEOUT by default). `plugin`: build for the lawindex plugin (indexer.opensearch.plugin_path); by default,
    where every node of the cluster has it. `force` rebuilds the state even when its index is
    intact."""
    began = time.perf_counter()
    if plugin is None:
        plugin = plugin_path.cluster_has_plugin(client)
    ranked_laws, process = counts(corpus.laws)

    def done(outcome: str, index: str | None, lock: lifecycle.StateLock | None = None) -> StateLoad:
        return StateLoad(
            corpus.state,
            len(corpus.laws),
            ranked_laws,
            process,
            outcome,
            time.perf_counter() - began,
            index,
            swapped=outcome == "indexed",
            lock="none" if lock is None else lock.outcome(),
        )

    # Read first, without the lock: an index that is whole and built from this very corpus, with nothing
    # else of the state's to clean up, is left alone without a write (the lock is two writes, each one
    # flushed to the translog: 4.7x the time of an unchanged 7-state load when it was taken every time).
    stop = stop or lifecycle.Stop()
    lock = lifecycle.StateLock(client, corpus.state, namespace, wait=wait, stop=stop, ensured=locks_ensured)
    made: list[str] = []  # the index this load creates, once it does
    try:
        current, intact = _current(client, corpus, namespace, meaning, plugin)
        intact = intact and not force
        if dry_run:
            return done("would be unchanged" if intact else "would index", current[0] if intact else None)
        if intact and _generations(client, corpus.state, namespace) == current:
            return done("unchanged", current[0])
        with lock:
            # Read under the lock: what the alias points to cannot move until we let go.
            current, intact = _current(client, corpus, namespace, meaning, plugin)
            intact = intact and not force
            remove_orphans(client, corpus.state, current, namespace)
            if intact:
                unchanged = current[0]
            else:
                unchanged = None
                index = _build(
                    client,
                    corpus,
                    current,
                    lock,
                    stop,
                    made,
                    progress=progress,
                    namespace=namespace,
                    chunk_size=chunk_size,
                    max_retries=max_retries,
                    initial_backoff=initial_backoff,
                    replicas=replicas,
                    green_timeout=green_timeout,
                    meaning=meaning,
                    plugin=plugin,
                )
                for old in current:
                    _retire(client, old)
    except BaseException:
        # What is true of this state once it failed, for the summary and --json: read from the cluster.
        if failures is not None:
            failures[corpus.state] = _after_failure(client, corpus, namespace, lock, made)
        raise
    if unchanged is not None:
        return done("unchanged", unchanged, lock)
    return done("indexed", index, lock)


def _after_failure(
    client: OpenSearch, corpus: Corpus, namespace: str, lock: lifecycle.StateLock, made: list[str]
) -> dict[str, Any]:
    """Whether a failed state's alias points at one of this load's indices (swapped), and its lock's end."""
    try:
        names = behind(client, alias_of(corpus.state, namespace), namespace)
    except Exception:  # the cluster gone: nothing can be read, and nothing is claimed
        names = None
    swapped: bool | None = None if names is None else any(name in made for name in names)
    return {"outcome": "failed", "swapped": swapped, "index": names[-1] if names else None, "lock": lock.outcome()}


def _build(
    client: OpenSearch,
    corpus: Corpus,
    current: list[str],
    lock: lifecycle.StateLock,
    stop: lifecycle.Stop,
    made: list[str],
    *,
    progress: Progress | None,
    namespace: str,
    chunk_size: int,
    max_retries: int,
    initial_backoff: float,
    replicas: int | None,
    green_timeout: float | None,
    meaning: Meaning | None = None,
    plugin: bool = False,
) -> str:
    """A new generation of the state's index, filled, refreshed, counted and swapped in for `current`."""
    from opensearchpy import ConnectionError, NotFoundError, RequestError, TransportError

    from indexer.opensearch.reasons import _reason

    # Only what is stored (counts, lengths, vocabulary, N, average), built afresh: no cache, which is
    # not for threads (load() runs states side by side), and a load reads each corpus once.
    from indexer.retrieval.statistics import count

    state = corpus.state
    stop.check(state)
    ranked_laws, process = counts(corpus.laws)
    stats = count(corpus.laws)
    index = index_prefix(state, namespace) + new_generation()
    body = mappings.laws_index()
    # No periodic refresh, ever: the index is written once, here, and refreshed once at the end; a
    # reload builds a new index rather than writing to this one. (Setting it back after the load cost a
    # request a state and bought nothing; a node's restart refreshes after replaying the translog.)
    body["settings"]["index"]["refresh_interval"] = "-1"
    if replicas is not None:
        body["settings"]["index"].pop("auto_expand_replicas", None)
        body["settings"]["index"]["number_of_replicas"] = replicas
    body["mappings"]["_meta"] = {
        "lawindex": {
            **lifecycle.marker(namespace, state, index),
            "fingerprint": fingerprint(corpus, meaning),
            "sha256": corpus.sha256,
            "source": str(corpus.path),
            "laws": len(corpus.laws),
            "ranked": ranked_laws,
            "process": process,
            "loaded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "loaded_by": socket.gethostname(),
        }
    }
    if plugin:
        plugin_path.for_plugin(body, stats)
    # Bulk requests go to a private alias of the new index with require_alias: if the index vanishes
    # mid-load (another load of the state took it for an orphan), they fail instead of auto-creating a
    # namesake with dynamic mappings and no analyzer, which a count check cannot tell from the real one.
    if meaning is not None:
        meaning.extend(body)  # the vector field, for --by meaning and hybrid (indexer.opensearch.vectors)
    filling = f"{index}-filling"
    body["aliases"] = {filling: {}}
    alias = alias_of(state, namespace)
    try:
        client.indices.create(index=index, body=body)
    except RequestError as error:
        # A create whose node died after creating it, sent again by the client to another node: the
        # generation's name is this load's alone, so the index that exists is the one asked for.
        if error.error != "resource_already_exists_exception":
            raise
    made.append(index)
    try:
        _fill(
            client,
            documents(corpus, stats, index=index, namespace=namespace, meaning=meaning),
            filling,
            state,
            len(corpus.laws),
            stop,
            progress=progress,
            chunk_size=chunk_size,
            max_retries=max_retries,
            initial_backoff=initial_backoff,
        )
        try:
            client.indices.refresh(index=index, request_timeout=WRITE_TIMEOUT)
            if plugin:
                plugin_path.merge(client, index, WRITE_TIMEOUT)
            stored = client.count(index=index)["count"]
        except TransportError as error:
            # A copy of the new index lost with its node (node_not_connected, node_disconnected: a 5xx) fails
            # this state's load, not the cluster's answer: nothing was swapped, and loading again rebuilds it.
            if not isinstance(error.status_code, int) or error.status_code < 500:
                raise
            raise LoadFailed(
                f"{state}: a copy of the new index {index} was lost while it was built ({_reason(error)}); "
                "nothing was swapped",
                hint="run the load again once the cluster is green",
            ) from None
        if stored != len(corpus.laws) + 1:
            raise LoadFailed(f"{state}: {stored} documents stored, {len(corpus.laws) + 1} sent")
        wait_green(client, state, index, GREEN_TIMEOUT if green_timeout is None else green_timeout)
        stop.check(state)
        lock.confirm()
        # must_exist: a remove of an alias already gone fails the whole call instead of passing in
        # silence, so a swap can never leave the alias on two indices (OpenSearch 3.0 and later).
        actions: list[dict[str, Any]] = [{"remove": {"index": old, "alias": alias, **_MUST_EXIST}} for old in current]
        actions += [
            {"add": {"index": index, "alias": alias}},
            {"remove": {"index": index, "alias": filling, **_MUST_EXIST}},
        ]
        try:
            client.indices.update_aliases(body={"actions": actions})
        except (NotFoundError, ConnectionError) as error:
            # The answer may have been lost after the node applied the swap (a dropped connection, a timeout;
            # the client's repeat then finds the old alias gone, 404): what the alias points at says which.
            now = behind(client, alias, namespace)
            if now != [index]:
                if isinstance(error, NotFoundError) or now != sorted(current):
                    raise LoadFailed(
                        f"{state}: the alias {alias} moved while this load ran (another writer?); nothing was swapped",
                        hint="run the load again",
                    ) from None
                raise
    except BaseException:
        # Best effort: when the cluster itself is gone this fails too, and the next load removes it.
        # Never the index the alias now points to: an `_aliases` call that timed out on our side may
        # have been applied, and deleting its index would leave the state with nothing to serve.
        with contextlib.suppress(Exception):
            if index not in behind(client, alias, namespace):
                client.indices.delete(index=index, ignore_unavailable=True)
        raise
    if progress is not None:
        progress(state, len(corpus.laws), len(corpus.laws))
    return index


_MUST_EXIST = {"must_exist": True}


def _fill(
    client: OpenSearch,
    actions: Iterator[dict[str, Any]],
    filling: str,
    state: str,
    laws: int,
    stop: lifecycle.Stop,
    *,
    progress: Progress | None,
    chunk_size: int,
    max_retries: int,
    initial_backoff: float,
) -> int:
    """Write `actions` into the index behind `filling` as bulk `create`s of at most `chunk_size` documents
    (and 10 MiB); the number written. A document refused for a full write queue (429) is sent again with
    a backoff; a block (`cluster_block_exception`: read-only, the disk's flood stage, a write block) ends
    the load at once, as no wait lifts it (a flood-stage block was retried for 644 s). A 409 on a repeat of
    a chunk whose answer was lost is what the first copy wrote: the index and the ids are this load's own."""
    from opensearchpy import TransportError

    serializer = client.transport.serializer
    written = 0
    chunk: list[tuple[str, str]] = []
    size = 0

    def send() -> None:
        nonlocal written, size
        pending = chunk[:]
        chunk.clear()
        size = 0
        pause = initial_backoff
        refused: list[str] = []
        for attempt in range(max_retries + 1):
            body = "".join(lines for _, lines in pending)
            try:
                answer = client.bulk(body=body, index=filling, require_alias=True, request_timeout=WRITE_TIMEOUT)
            except TransportError as error:
                if error.status_code != 429 or _blocked(error.info) or attempt == max_retries:
                    raise
                stop.wait(pause)
                pause = min(pause * 2, 30.0)
                continue
            again = []
            for (law, lines), item in zip(pending, answer["items"], strict=True):
                ((_, info),) = item.items()
                status = info.get("status")
                kind = (info.get("error") or {}).get("type") if isinstance(info.get("error"), dict) else None
                if kind == "cluster_block_exception":
                    raise TransportError(status, kind, {"error": info["error"], "status": status})
                if isinstance(status, int) and (200 <= status < 300 or status == 409):
                    written += 1
                elif status == 429 and attempt < max_retries:
                    again.append((law, lines))
                else:
                    refused.append(f"{law}: {status} {info.get('error')}")
            if refused:
                raise LoadFailed(f"{state}: {len(refused)} of {laws + 1} documents were refused ({refused[0]})")
            if not again:
                break
            pending = again
            stop.wait(pause)
            pause = min(pause * 2, 30.0)
        # Items come a chunk at a time: a stop is seen between bulk requests, never inside one.
        stop.check(state)
        if progress is not None:
            progress(state, min(written, laws), laws)

    for action in actions:
        lines = serializer.dumps({"create": {"_id": action["_id"]}}) + "\n" + serializer.dumps(action["_source"]) + "\n"
        if chunk and (len(chunk) >= chunk_size or size + len(lines) > MAX_CHUNK_BYTES):
            send()
        chunk.append((str(action["_id"]), lines))
        size += len(lines)
    if chunk:
        send()
    return written


# The most a bulk request carries (characters of its body, about its bytes).
MAX_CHUNK_BYTES = 10 * 1024 * 1024


def _blocked(info: object) -> bool:
    return "cluster_block_exception" in str(info)


def wait_green(client: OpenSearch, state: str, index: str, timeout: float) -> None:
    """Return once `index` is green (its primary and every replica assigned and started); LoadFailed,
    with what is missing, when it is not within `timeout` seconds."""
    # A wait that times out is answered 408 with the health in the body: read, not raised.
    health = client.cluster.health(
        index=index,
        wait_for_status="green",
        timeout=f"{max(round(timeout * 1000), 1)}ms",
        request_timeout=timeout + 30,
        ignore=408,
    )
    if health.get("status") != "green":
        raise LoadFailed(
            f"{state}: the new index {index} was not green within {timeout:g} s (status {health.get('status')}, "
            f"{health.get('unassigned_shards')} shard copies unassigned, {health.get('number_of_data_nodes')} "
            "data nodes); the alias was not moved, what served still serves",
            hint="fewer --replicas than data nodes, or a longer --green-timeout",
        )


# Seconds a load waits for a new index to be green (its replicas copied) before the alias moves. A copy
# of a state's index is seconds; a cluster that has just lost a node may take a minute to reallocate.
GREEN_TIMEOUT = 120.0

# Seconds a bulk request or the final refresh may take. A question's --timeout (10 s by default) is for
# a cluster that does not answer; a busy cluster writing a thousand laws may take longer than that, and
# a request that times out is not retried, so a load would fail on a slow moment.
WRITE_TIMEOUT = 120.0

# States loaded at once. One state at a time leaves the cluster idle while Python builds a state's
# statistics and bulk bodies, and Python idle while the cluster creates and refreshes an index and
# moves its alias (a fifth of a second a state on an idle two-core node). On 10 states and 20,000 laws
# there, one worker took 8-18 s, two 2.4-7.7 s, three 2.2-5.8 s, four 4.5-5.9 s: more only queue on the
# cluster's indexing threads.
WORKERS = 3


def load(
    connection: Connection,
    corpora: Sequence[Corpus],
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    workers: int = WORKERS,
    wait: float = lifecycle.WAIT,
    stop: lifecycle.Stop | None = None,
    replicas: int | None = None,
    green_timeout: float | None = None,
    plugin: bool | None = None,
    force: bool = False,
) -> list[StateLoad]:
    """Load every corpus (already validated, all of them, before anything is written); one result each,
    in the order of `corpora`. States load concurrently; each one's swap is its own and atomic. On the
    first failure no further state is started, the ones under way finish, and that failure is raised.

    A `stop` (lifecycle.stopping_on_signals) starts no further state and stops the ones under way between
    bulk chunks, removing what they built; then LoadInterrupted names the states loaded and not.

    `plugin`: build every index for the lawindex plugin (True; refused where a node lacks it) or for
    Lucene's BM25 (False); by default the plugin where every node has it (indexer.opensearch.plugin_path). `force`
    rebuilds every state, intact or not."""
    client = connection.client()
    stop = stop or lifecycle.Stop()
    failures: dict[str, dict[str, Any]] = {}
    finished: list[StateLoad] = []
    with errors_translated(connection):
        from indexer.opensearch.vectors import for_cluster

        meaning = for_cluster(client)  # vectors too where every node has k-NN
        plugin = plugin_path.wanted(client, plugin)  # asked once for every state

    def one(corpus: Corpus) -> StateLoad:
        stop.check(corpus.state)  # no state starts after a stop
        return load_state(
            client,
            corpus,
            dry_run=dry_run,
            progress=progress,
            namespace=connection.namespace,
            wait=wait,
            stop=stop,
            locks_ensured=True,
            replicas=replicas,
            green_timeout=green_timeout,
            failures=failures,
            meaning=meaning,
            plugin=plugin,
            force=force,
        )

    try:
        return _loading(connection, client, corpora, one, stop, dry_run, workers, finished)
    except LawindexError as error:
        raise _reported(error, corpora, finished, failures) from None


def _reported(
    error: LawindexError,
    corpora: Sequence[Corpus],
    finished: Sequence[StateLoad],
    failures: dict[str, dict[str, Any]],
) -> LawindexError:
    """`error`, its message saying what is true of every state (loaded, failed with or without its swap,
    not started), and those states on it (`error.loads`, `error.failures`) for the CLI's --json."""
    done = {result.state: result for result in finished}
    said = []
    for corpus in corpora:
        if corpus.state in done:
            said.append(f"{corpus.state} {done[corpus.state].outcome}")
        elif corpus.state in failures:
            failed = failures[corpus.state]
            swapped = {True: "swapped", False: "not swapped", None: "swap unknown"}[failed["swapped"]]
            said.append(f"{corpus.state} failed ({swapped}, lock {failed['lock']})")
        else:
            said.append(f"{corpus.state} not loaded")
    if len(corpora) > 1 and not isinstance(error, LoadInterrupted):
        error.message = f"{error.message} [{'; '.join(said)}]"
    error.loads = list(finished)  # type: ignore[attr-defined]
    error.failures = dict(failures)  # type: ignore[attr-defined]
    return error


def _loading(
    connection: Connection,
    client: OpenSearch,
    corpora: Sequence[Corpus],
    one: Callable[[Corpus], StateLoad],
    stop: lifecycle.Stop,
    dry_run: bool,
    workers: int,
    finished: list[StateLoad],
) -> list[StateLoad]:
    with errors_translated(connection):
        client.info()
        if not dry_run:
            lifecycle.ensure_locks_index(client, connection.namespace)
        if workers <= 1 or len(corpora) <= 1:
            for corpus in corpora:
                try:
                    finished.append(one(corpus))
                except LoadInterrupted:
                    raise _interrupted(corpora, finished, stop) from None
            return finished
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="lawindex-load") as pool:
            futures = [pool.submit(one, corpus) for corpus in corpora]
            wait_for(futures, return_when=FIRST_EXCEPTION)
            for future in futures:
                future.cancel()  # those not started yet; a state under way runs to its end or its failure
            wait_for(futures)
            finished += [f.result() for f in futures if not f.cancelled() and f.exception() is None]
            if stop.is_set():
                raise _interrupted(corpora, finished, stop)
            return [future.result() for future in futures]


def _interrupted(corpora: Sequence[Corpus], finished: Sequence[StateLoad], stop: lifecycle.Stop) -> LoadInterrupted:
    """The one line a stopped load ends with: what was loaded and what was not."""
    loaded = [result.state for result in finished]
    missing = [corpus.state for corpus in corpora if corpus.state not in loaded]
    return LoadInterrupted(
        f"stopped by {stop.name}: loaded {', '.join(loaded) or 'none'}; not loaded {', '.join(missing) or 'none'}"
        " (each still serves what it served before)",
        stop.signal_number or signal.SIGINT,
    )


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


def status(connection: Connection) -> list[StateStatus]:
    """Every state served under a lawindex alias, sorted by state."""
    client = connection.client()
    with errors_translated(connection):
        namespace = connection.namespace
        found = client.indices.get_alias(index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True)
        served = re.compile(re.escape(namespace) + r"-([a-z]{2})")
        rows = []
        for index, body in sorted(found.items()):
            for alias in body.get("aliases", {}):
                if not served.fullmatch(alias):
                    continue
                meta = _meta(client, index)
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
                    )
                )
        return sorted(rows, key=lambda row: row.state)
