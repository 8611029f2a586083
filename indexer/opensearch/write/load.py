"""`lawindex load`: each state's corpus into its own OpenSearch index, behind an alias, swapped atomically.

One index per state, one primary shard: N, df and the average length are that state's alone, as in
the spec ("another state's file never reads this one's counts"). A load builds a new generation
(`lawindex-tx-<generation>`), fills it with the refresh off, refreshes once, checks the count, and
only then moves the alias `lawindex-tx` in one `_aliases` call. Anything that fails before the swap
removes the half-built index and leaves the alias where it was: the index that served still serves.

The steps are each their own module: the index's body and documents (indexer.opensearch.write.index_body), the
bulk fill (indexer.opensearch.write.fill), the alias and the generations (indexer.opensearch.write.generations); here is
the transaction that runs them, top to bottom, under the state's lock, and the states loaded side by side.

Long: one transaction read top to bottom (check, build, fill, swap, keep or retire), and the options that shape
it (the cluster's version, vectors or words only, the generations kept).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from indexer.errors import LawindexError, LoadInterrupted, NoMeaning
from indexer.opensearch.cluster import plugin_path, plugins, versions
from indexer.opensearch.cluster.connection import (
    DEFAULT_NAMESPACE,
    Connection,
    alias_of,
    errors_translated,
    index_prefix,
    server_version,
)
from indexer.opensearch.write import generations, history, index_body
from indexer.opensearch.write.fill import GREEN_TIMEOUT, Progress, fill, settle, wait_green
from indexer.opensearch.write.history import KEEP
from indexer.opensearch.write.lock import WAIT, StateLock, ensure_locks_index
from indexer.opensearch.write.stop import Stop
from indexer.retrieval.corpus import Corpus

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from indexer.opensearch.cluster.vector_layout import Meaning
    from indexer.retrieval.embedding import Embedder
    from indexer.retrieval.vector_store import VectorStore


@dataclass(frozen=True)
class LoadOptions:
    """How a state is loaded (`load_state`); the defaults are `lawindex load`'s.

    `replicas` fixes the new index's replicas (default: mappings/laws.json's auto_expand_replicas 0-1); the
    alias moves only once the index is green, within `green_timeout` seconds (GREEN_TIMEOUT by default).
    `plugin`: build for the lawindex plugin (indexer.opensearch.cluster.plugin_path); by default, where every node of
    the cluster has it. `meaning`: the embedder whose vectors the index carries (cluster/vector_layout.py),
    none by default; `words_only` says in the index that it was loaded without them by choice (`--no-vectors`),
    so that meaning asked of it is refused saying so. `force` rebuilds the state even when its index is intact.
    `chunk_size`, `max_retries` and `initial_backoff` shape the bulk fill (indexer.opensearch.write.fill); `wait` is
    how long the state's lock is waited for, and `locks_ensured` says the locks' index was made already
    (StateLock). `keep`: the generations kept after a swap, the serving one among
    them (indexer.opensearch.write.history)."""

    namespace: str = DEFAULT_NAMESPACE
    dry_run: bool = False
    chunk_size: int = 1000
    max_retries: int = 8
    initial_backoff: float = 0.5
    wait: float = WAIT
    locks_ensured: bool = False
    replicas: int | None = None
    green_timeout: float | None = None
    meaning: Meaning | None = None
    plugin: bool | None = None
    force: bool = False
    words_only: bool = False
    keep: int = KEEP


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


def load_state(
    client: OpenSearch,
    corpus: Corpus,
    options: LoadOptions = LoadOptions(),
    *,
    progress: Progress | None = None,
    stop: Stop | None = None,
    failures: dict[str, dict[str, Any]] | None = None,
) -> StateLoad:
    """Load one state, holding its lock; on any failure its half-built index is removed and the alias is
    untouched. An alias that points at what lawindex did not make for this state is LoadFailed, and
    nothing is written or deleted. `progress` is told of the laws written; a `stop` ends the load between
    bulk chunks; `failures` receives, on failure, what is true of the state (for the CLI's --json)."""
    began = time.perf_counter()
    if options.plugin is None:
        options = replace(options, plugin=plugin_path.cluster_has_plugin(client))
    plugin = bool(options.plugin)
    # A corpus whose rows carry their own vectors is loaded with those (cluster/vector_layout.for_corpus).
    from indexer.opensearch.cluster.vector_layout import for_corpus

    options = replace(options, meaning=for_corpus(options.meaning, corpus))
    namespace, meaning = options.namespace, options.meaning
    ranked_laws, process = index_body.counts(corpus.laws)

    def done(outcome: str, index: str | None, lock: StateLock | None = None) -> StateLoad:
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
    stop = stop or Stop()
    lock = StateLock(client, corpus.state, namespace, wait=options.wait, stop=stop, ensured=options.locks_ensured)
    made: list[str] = []  # the index this load creates, once it does
    try:
        current, intact = generations.current(client, corpus, namespace, meaning, plugin)
        intact = intact and not options.force
        if options.dry_run:
            return done("would be unchanged" if intact else "would index", current[0] if intact else None)
        if (
            intact
            and history.tidy(client, corpus.state, namespace, options.keep, current)
            and generations.guarded(client, corpus.state, namespace)
        ):
            return done("unchanged", current[0])
        with lock:
            # Read under the lock: what the alias points to cannot move until we let go.
            current, intact = generations.current(client, corpus, namespace, meaning, plugin)
            intact = intact and not options.force
            generations.remove_orphans(client, corpus.state, current, namespace)
            if intact:
                unchanged = current[0]
                generations.guard(client, corpus.state, unchanged, namespace)
                history.prune(client, corpus.state, namespace, options.keep, unchanged)
            else:
                unchanged = None
                index = _build(client, corpus, current, lock, stop, made, options, progress=progress)
                _recorded(client, corpus.state, namespace, {"kind": "load", "from": current, "to": index,
                                                            "sha256": corpus.sha256})  # fmt: skip
                history.prune(client, corpus.state, namespace, options.keep, index, current)
    except BaseException:
        # What is true of this state once it failed, for the summary and --json: read from the cluster.
        if failures is not None:
            failures[corpus.state] = _after_failure(client, corpus, namespace, lock, made)
        raise
    if unchanged is not None:
        return done("unchanged", unchanged, lock)
    return done("indexed", index, lock)


def _recorded(client: OpenSearch, state: str, namespace: str, event: dict[str, Any]) -> None:
    """The swap recorded in the state's history; a failure to record it is said, and the load stands (the
    generation's own `_meta` still tells when and from what it was loaded)."""
    import logging

    try:
        history.record(client, state, namespace, event)
    except Exception as error:
        logging.getLogger("lawindex.load").warning(
            "lawindex: %s: the load was not recorded in its history: %s", state, error
        )


def _after_failure(
    client: OpenSearch, corpus: Corpus, namespace: str, lock: StateLock, made: list[str]
) -> dict[str, Any]:
    """Whether a failed state's alias points at one of this load's indices (swapped), and its lock's end."""
    try:
        names = generations.behind(client, alias_of(corpus.state, namespace), namespace)
    except Exception:  # the cluster gone: nothing can be read, and nothing is claimed
        names = None
    swapped: bool | None = None if names is None else any(name in made for name in names)
    return {"outcome": "failed", "swapped": swapped, "index": names[-1] if names else None, "lock": lock.outcome()}


def _build(
    client: OpenSearch,
    corpus: Corpus,
    current: list[str],
    lock: StateLock,
    stop: Stop,
    made: list[str],
    options: LoadOptions,
    *,
    progress: Progress | None,
) -> str:
    """A new generation of the state's index, filled, refreshed, counted and swapped in for `current`."""
    from opensearchpy import RequestError

    # Only what is stored (counts, lengths, vocabulary, N, average), built afresh: no cache, which is
    # not for threads (load() runs states side by side), and a load reads each corpus once.
    from indexer.retrieval.statistics import count

    state, namespace, meaning, plugin = corpus.state, options.namespace, options.meaning, bool(options.plugin)
    stop.check(state)
    stats = count(corpus.laws)
    index = index_prefix(state, namespace) + index_body.new_generation()
    body = index_body.body(
        corpus, stats, index, namespace=namespace, replicas=options.replicas, meaning=meaning, plugin=plugin,
        opensearch=server_version(client),
    )  # fmt: skip
    if options.words_only:
        body["mappings"]["_meta"]["lawindex"]["words_only"] = True  # read by indexer.opensearch.read.vectors
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
        fill(
            client,
            index_body.documents(corpus, stats, index=index, namespace=namespace, meaning=meaning),
            index_body.filling(index),
            state,
            len(corpus.laws),
            stop,
            progress=progress,
            chunk_size=options.chunk_size,
            max_retries=options.max_retries,
            initial_backoff=options.initial_backoff,
        )
        settle(client, state, index, len(corpus.laws), plugin=plugin)
        wait_green(client, state, index, GREEN_TIMEOUT if options.green_timeout is None else options.green_timeout)
        stop.check(state)
        lock.confirm()
        generations.swap(client, state, index, current, namespace)
    except BaseException:
        # Best effort: when the cluster itself is gone this fails too, and the next load removes it.
        # Never the index the alias now points to: an `_aliases` call that timed out on our side may
        # have been applied, and deleting its index would leave the state with nothing to serve.
        with contextlib.suppress(Exception):
            if index not in generations.behind(client, alias, namespace):
                client.indices.delete(index=index, ignore_unavailable=True)
        raise
    if progress is not None:
        progress(state, len(corpus.laws), len(corpus.laws))
    return index


# States loaded at once. One state at a time leaves the cluster idle while Python builds a state's
# statistics and bulk bodies, and Python idle while the cluster creates and refreshes an index and
# moves its alias (a fifth of a second a state on an idle two-core node). On 10 states and 20,000 laws
# there, one worker took 8-18 s, two 2.4-7.7 s, three 2.2-5.8 s, four 4.5-5.9 s: more only queue on the
# cluster's indexing threads.
WORKERS = 3
# Laws under way at once across the states loading side by side: the client holds a state's laws, their counts
# and, with vectors, their texts and vectors while it loads it. The three largest of 50 generated states (51,781,
# 32,624 and 23,570 laws) loading at once took the client to 1,078 MB. A state larger than this loads alone.
LAWS_AT_ONCE = 80_000


class NotStarted(Exception):
    """A state that waited for room while another state failed: not started (as a state not yet taken up)."""


class LawsAtOnce:
    """At most `most` laws under way at once (a state larger than that alone, once none is under way)."""

    def __init__(self, most: int = LAWS_AT_ONCE) -> None:
        self.most = most
        self.under_way = 0
        self._changed = threading.Condition()

    @contextlib.contextmanager
    def held(self, laws: int, stop: Stop, state: str, failed: threading.Event) -> Iterator[None]:
        """Room for `laws` laws while the block runs. Waiting for it ends at a stop (LoadInterrupted) or once
        another state `failed` (NotStarted): a load that fails starts no state after its failure."""
        share = min(laws, self.most)
        with self._changed:
            while True:
                stop.check(state)
                if failed.is_set():
                    raise NotStarted(state)
                if not self.under_way or self.under_way + share <= self.most:
                    break
                self._changed.wait(0.25)
            self.under_way += share
        try:
            yield
        finally:
            with self._changed:
                self.under_way -= share
                self._changed.notify_all()


def load(
    connection: Connection,
    corpora: Sequence[Corpus],
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    workers: int = WORKERS,
    wait: float = WAIT,
    stop: Stop | None = None,
    replicas: int | None = None,
    green_timeout: float | None = None,
    plugin: bool | None = None,
    force: bool = False,
    vectors: bool | None = None,
    store: VectorStore | None = None,
    keep: int = KEEP,
    embedder: Embedder | None = None,
) -> list[StateLoad]:
    """Load every corpus (already validated, all of them, before anything is written; one put down after its
    check, read_corpora(kept=False), is read again as its turn comes, refused if its file changed); one result each,
    in the order of `corpora`. States load concurrently; each one's swap is its own and atomic. On the
    first failure no further state is started, the ones under way finish, and that failure is raised.

    A `stop` (stopping_on_signals) starts no further state and stops the ones under way between
    bulk chunks, removing what they built; then LoadInterrupted names the states loaded and not.

    `plugin`: build every index for the lawindex plugin (True; refused where a node lacks it) or for
    Lucene's BM25 (False); by default the plugin where every node has it (cluster/plugin_path.py). `force`
    rebuilds every state, intact or not. `vectors`: give every row its vector for meaning and hybrid (True;
    NoMeaning where the cluster cannot ask by meaning), words only (False: meaning asked of these states is
    refused, saying so), or by default where the cluster can. `store` keeps the vectors by their text's digest
    (indexer.retrieval.vector_store), so that a law whose text did not change is not embedded again. `embedder`
    makes the rows' vectors (indexer.retrieval.embedders; the default embedder's when None)."""
    client = connection.client()
    stop = stop or Stop()
    failures: dict[str, dict[str, Any]] = {}
    finished: list[StateLoad] = []
    with errors_translated(connection):
        from indexer.opensearch.cluster.vector_layout import for_cluster

        check_supported(connection, client)  # before anything is written
        plugin = plugin_path.wanted(client, plugin)  # asked once for every state
        # Vectors too where every node has k-NN, or the plugin (which ranks by meaning itself).
        meaning = None if vectors is False else for_cluster(client, bool(plugin), embedder)
        if vectors and meaning is None:
            raise NoMeaning(
                f"--vectors: OpenSearch at {connection.url} cannot ask by meaning, so the vectors would not be used",
                hint="load without --vectors (words only), or give the cluster what meaning needs: "
                + plugins.knn_missing_hint(),
            )
        if meaning is not None and store is not None:
            meaning = replace(meaning, store=store)

    options = LoadOptions(
        namespace=connection.namespace,
        dry_run=dry_run,
        wait=wait,
        locks_ensured=True,
        replicas=replicas,
        green_timeout=green_timeout,
        meaning=meaning,
        plugin=plugin,
        force=force,
        words_only=vectors is False,
        keep=keep,
    )

    room, failed = LawsAtOnce(), threading.Event()

    def one(corpus: Corpus) -> StateLoad:
        # No state starts after a stop or a failure (held's own checks).
        # A corpus put down after its check (read_corpora(kept=False)) is read again here: only the states
        # under way hold their laws, and no more of them than LAWS_AT_ONCE.
        with room.held(corpus.size, stop, corpus.state, failed):
            try:
                return load_state(client, corpus.with_laws(), options, progress=progress, stop=stop, failures=failures)
            except BaseException:
                failed.set()
                raise

    try:
        return _loading(connection, client, corpora, one, stop, dry_run, workers, finished)
    except LawindexError as error:
        raise _reported(error, corpora, finished, failures) from None


def check_supported(connection: Connection, client: OpenSearch) -> None:
    """ClusterRefused, naming the cluster's version and the supported range, when lawindex does not support
    the OpenSearch that answers (indexer.opensearch.cluster.versions)."""
    from indexer.errors import ClusterRefused
    from indexer.opensearch.cluster.connection import redacted, server_version

    version = server_version(client)
    why = versions.unsupported(version)
    if why is not None:
        raise ClusterRefused(
            f"{redacted(connection.url)}: {why}; nothing was written",
            hint=f"run lawindex against OpenSearch {versions.RANGE}",
        )


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
    stop: Stop,
    dry_run: bool,
    workers: int,
    finished: list[StateLoad],
) -> list[StateLoad]:
    with errors_translated(connection):
        client.info()
        if not dry_run:
            ensure_locks_index(client, connection.namespace)
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
            # The failure itself, in the corpora's order: not a state that gave up waiting for room after it.
            for future in futures:
                if not future.cancelled() and not isinstance(future.exception(), NotStarted):
                    future.result()
            return [future.result() for future in futures]


def _interrupted(corpora: Sequence[Corpus], finished: Sequence[StateLoad], stop: Stop) -> LoadInterrupted:
    """The one line a stopped load ends with: what was loaded and what was not."""
    loaded = [result.state for result in finished]
    missing = [corpus.state for corpus in corpora if corpus.state not in loaded]
    return LoadInterrupted(
        f"stopped by {stop.name}: loaded {', '.join(loaded) or 'none'}; not loaded {', '.join(missing) or 'none'}"
        " (each still serves what it served before)",
        stop.signal_number or signal.SIGINT,
    )
