"""`lawindex load`: each state's corpus into its own OpenSearch index, behind an alias, swapped atomically.

One index per state, one primary shard: N, df and the average length are that state's alone, as in
the spec ("another state's file never reads this one's counts"). A load builds a new generation
(`lawindex-tx-<generation>`), fills it with the refresh off, refreshes once, checks the count, and
only then moves the alias `lawindex-tx` in one `_aliases` call. Anything that fails before the swap
removes the half-built index and leaves the alias where it was: the index that served still serves.
"""

from __future__ import annotations

import contextlib
import re
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from indexer import mappings
from indexer.corpus import Corpus, Law
from indexer.errors import LoadFailed
from indexer.opensearch import DEFAULT_NAMESPACE, Connection, alias_of, index_prefix, talking
from indexer.schema import LAW_FIELDS, RANKED_FIELD, SCHEMA, STATISTICS_ID, law_id
from indexer.words import ranked, ranked_text

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from indexer.statistics import Counts


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


Progress = Callable[[str, int, int], None]  # state, laws written so far, laws in all


def fingerprint(corpus: Corpus) -> str:
    """What an index was built from: the corpus file, laws.json and the schema; unchanged means equal."""
    return f"{SCHEMA}:{corpus.sha256}:{mappings.fingerprint()}"


def documents(corpus: Corpus, stats: Counts) -> Iterator[dict[str, Any]]:
    """The bulk actions for a state: one document per law, then the statistics document."""
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
        yield {"_id": law_id(law.id), "_source": source}
    yield {
        "_id": STATISTICS_ID,
        "_source": {
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
                # A list, not an object: the vocabulary's order is the spec's Map order, which
                # decides the order expansion returns words in, and so the order scores are summed.
                "vocabulary": [[word, df] for word, df in stats.vocabulary.items()],
            },
        },
    }


def counts(laws: Sequence[Law]) -> tuple[int, int]:
    """How many laws are ranked and how many are process rows."""
    ranked_laws = sum(1 for law in laws if ranked(law))
    return ranked_laws, len(laws) - ranked_laws


def serving(client: OpenSearch, state: str, namespace: str = DEFAULT_NAMESPACE) -> str | None:
    """The concrete index behind a state's alias, or None when the state has none."""
    from opensearchpy import NotFoundError

    try:
        found = client.indices.get_alias(name=alias_of(state, namespace))
    except NotFoundError:
        return None
    names = sorted(found)
    return names[-1] if names else None


def _meta(client: OpenSearch, index: str) -> dict[str, Any]:
    body = client.indices.get_mapping(index=index)
    meta: dict[str, Any] = body[index]["mappings"].get("_meta", {}).get("lawindex", {})
    return meta


def _generation() -> str:
    # Sorts in time order, so the newest of a state's indices is the last by name.
    return datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")


def remove_orphans(client: OpenSearch, state: str, keep: str | None, namespace: str = DEFAULT_NAMESPACE) -> list[str]:
    """Delete the state's indices that no alias points to (a crashed or failed load's); return them."""
    prefix = index_prefix(state, namespace)
    found = client.indices.get(index=prefix + "*", ignore_unavailable=True, allow_no_indices=True)
    generation = re.compile(re.escape(prefix) + r"\d{20}")
    orphans = sorted(name for name in found if name != keep and generation.fullmatch(name))
    for name in orphans:
        client.indices.delete(index=name, ignore_unavailable=True)
    return orphans


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
) -> StateLoad:
    """Load one state; on any failure its half-built index is removed and the alias is untouched."""
    from opensearchpy.helpers import streaming_bulk

    # Only what is stored (counts, lengths, vocabulary, N, average), built afresh: no cache, which is
    # not for threads (load() runs states side by side), and a load reads each corpus once.
    from indexer.statistics import count

    began = time.perf_counter()
    state = corpus.state
    ranked_laws, process = counts(corpus.laws)
    current = serving(client, state, namespace)
    wanted = fingerprint(corpus)
    same = current is not None and _meta(client, current).get("fingerprint") == wanted

    def done(outcome: str, index: str | None) -> StateLoad:
        return StateLoad(state, len(corpus.laws), ranked_laws, process, outcome, time.perf_counter() - began, index)

    if dry_run:
        return done("would be unchanged" if same else "would index", current if same else None)
    remove_orphans(client, state, current, namespace)
    if same:
        return done("unchanged", current)

    stats = count(corpus.laws)
    index = index_prefix(state, namespace) + _generation()
    body = mappings.laws_index()
    # No periodic refresh, ever: the index is written once, here, and refreshed once at the end; a
    # reload builds a new index rather than writing to this one. (Setting it back after the load cost a
    # request a state and bought nothing; a node's restart refreshes after replaying the translog.)
    body["settings"]["index"]["refresh_interval"] = "-1"
    body["mappings"]["_meta"] = {
        "lawindex": {
            "state": state,
            "fingerprint": wanted,
            "sha256": corpus.sha256,
            "source": str(corpus.path),
            "laws": len(corpus.laws),
            "ranked": ranked_laws,
            "process": process,
            "loaded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "loaded_by": socket.gethostname(),
        }
    }
    # Bulk requests go to a private alias of the new index with require_alias: if the index vanishes
    # mid-load (another load of the state took it for an orphan), they fail instead of auto-creating a
    # namesake with dynamic mappings and no analyzer, which a count check cannot tell from the real one.
    filling = f"{index}-filling"
    body["aliases"] = {filling: {}}
    client.indices.create(index=index, body=body)
    try:
        written = failed = 0
        first_failure: str | None = None
        for ok, item in streaming_bulk(
            client,
            documents(corpus, stats),
            index=filling,
            require_alias=True,
            chunk_size=chunk_size,
            max_chunk_bytes=10 * 1024 * 1024,
            raise_on_error=False,
            max_retries=max_retries,
            initial_backoff=initial_backoff,  # type: ignore[arg-type]  # typed int, used as seconds
            max_backoff=30,
            request_timeout=WRITE_TIMEOUT,
        ):
            if ok:
                written += 1
            else:
                failed += 1
                if first_failure is None:
                    ((_, info),) = item.items()
                    first_failure = f"{info.get('_id')}: {info.get('status')} {info.get('error')}"
            if progress is not None and written % 200 == 0:
                progress(state, min(written, len(corpus.laws)), len(corpus.laws))
        if failed:
            raise LoadFailed(f"{state}: {failed} of {len(corpus.laws) + 1} documents were refused ({first_failure})")
        client.indices.refresh(index=index, request_timeout=WRITE_TIMEOUT)
        stored = client.count(index=index)["count"]
        if stored != len(corpus.laws) + 1:
            raise LoadFailed(f"{state}: {stored} documents stored, {len(corpus.laws) + 1} sent")
        alias = alias_of(state, namespace)
        actions: list[dict[str, Any]] = [
            {"add": {"index": index, "alias": alias}},
            {"remove": {"index": index, "alias": filling}},
        ]
        if current is not None:
            actions.insert(0, {"remove": {"index": current, "alias": alias}})
        client.indices.update_aliases(body={"actions": actions})
    except BaseException:
        # Best effort: when the cluster itself is gone this fails too, and the next load removes it.
        # Never the index the alias now points to: an `_aliases` call that timed out on our side may
        # have been applied, and deleting its index would leave the state with nothing to serve.
        with contextlib.suppress(Exception):
            if serving(client, state, namespace) != index:
                client.indices.delete(index=index, ignore_unavailable=True)
        raise
    if progress is not None:
        progress(state, len(corpus.laws), len(corpus.laws))
    if current is not None:
        client.indices.delete(index=current, ignore_unavailable=True)
    return done("indexed", index)


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
) -> list[StateLoad]:
    """Load every corpus (already validated, all of them, before anything is written); one result each,
    in the order of `corpora`. States load concurrently; each one's swap is its own and atomic. On the
    first failure no further state is started, the ones under way finish, and that failure is raised."""
    client = connection.client()
    with talking(connection):
        client.info()
        if workers <= 1 or len(corpora) <= 1:
            return [
                load_state(client, corpus, dry_run=dry_run, progress=progress, namespace=connection.namespace)
                for corpus in corpora
            ]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="lawindex-load") as pool:
            futures = [
                pool.submit(
                    load_state, client, corpus, dry_run=dry_run, progress=progress, namespace=connection.namespace
                )
                for corpus in corpora
            ]
            wait(futures, return_when=FIRST_EXCEPTION)
            for future in futures:
                future.cancel()  # those not started yet; a state under way runs to its end or its failure
            wait(futures)
            return [future.result() for future in futures]


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


def status(connection: Connection) -> list[StateStatus]:
    """Every state served under a lawindex alias, sorted by state."""
    client = connection.client()
    with talking(connection):
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
                    )
                )
        return sorted(rows, key=lambda row: row.state)
