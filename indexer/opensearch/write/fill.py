"""The bulk fill of a new index: its documents written as bulk `create`s through the index's private alias,
retried where a full write queue refused them, then refreshed once and counted; and the wait for the index
to be green (its replicas copied) before the alias may move.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from indexer.errors import LoadFailed
from indexer.opensearch.cluster import plugin_path
from indexer.opensearch.write.stop import Stop

if TYPE_CHECKING:
    from opensearchpy import OpenSearch


Progress = Callable[[str, int, int], None]  # state, laws written so far, laws in all


def fill(
    client: OpenSearch,
    actions: Iterator[dict[str, Any]],
    filling: str,
    state: str,
    laws: int,
    stop: Stop,
    *,
    progress: Progress | None,
    chunk_size: int,
    max_retries: int,
    initial_backoff: float,
) -> int:
    """Write `actions` into the index behind `filling` as bulk `create`s of at most `chunk_size` documents
    (and 10 MiB); the number written. A document refused for a full write queue (429), or by a node that
    does not know the new index yet (404, see `send`), is sent again with a backoff; a block
    (`cluster_block_exception`: read-only, the disk's flood stage, a write block) ends the load at once, as
    no wait lifts it (a flood-stage block was retried for 644 s). A 409 on a repeat of a chunk whose answer
    was lost is what the first copy wrote: the index and the ids are this load's own."""
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
        # A node whose cluster state is behind (one that was silent and has just come back, an ex-manager
        # among them) does not know the index this load created, nor its alias, and refuses every document
        # 404 (CI met it: "62 of 62 documents were refused"). Where the cluster manager knows the alias, the
        # documents are sent again, with the backoff, for as long as a node may take to apply a state before
        # the cluster removes it (cluster.publish.timeout, 30 s); where it does not, the index was deleted
        # under the load, which ends now.
        unknown_since: float | None = None
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
            unknown: list[tuple[str, str]] = []
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
                elif kind == "index_not_found_exception" and attempt < max_retries:
                    unknown.append((law, lines))
                else:
                    refused.append(f"{law}: {status} {info.get('error')}")
            if unknown:
                now = time.monotonic()
                unknown_since = now if unknown_since is None else unknown_since
                if refused or now - unknown_since > LAGGING_S or not _known(client, filling):
                    refused += [f"{law}: 404 no index behind {filling}" for law, _ in unknown]
                else:
                    again += unknown
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
        head = _json({"create": {"_id": action["_id"]}}, serializer)
        lines = head + "\n" + _json(action["_source"], serializer) + "\n"
        if chunk and (len(chunk) >= chunk_size or size + len(lines) > MAX_CHUNK_BYTES):
            send()
        chunk.append((str(action["_id"]), lines))
        size += len(lines)
    if chunk:
        send()
    return written


# Seconds a new index's alias may be unknown to the node a bulk request reaches (see `send`).
LAGGING_S = 30.0
# The most a bulk request carries (characters of its body, about its bytes).
MAX_CHUNK_BYTES = 10 * 1024 * 1024


def _json(value: Any, serializer: Any) -> str:
    """`value` as JSON, by orjson: the same values as the client's serializer (json.dumps, compact, UTF-8), in a
    tenth of its time; the serializer for what orjson refuses (an integer past 64 bits, a lone surrogate).
    A row's vector is 256 doubles: 2.23 s of a 3,000-law state's 2.47 s of JSON went to them (0.21 s by orjson),
    more than embedding the state."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return str(serializer.dumps(value))


def _known(client: OpenSearch, alias: str) -> bool:
    """Whether the cluster manager knows `alias` (a read of its cluster state, not the asked node's)."""
    from opensearchpy import TransportError

    try:
        return bool(client.indices.exists_alias(name=alias))
    except TransportError:
        return False


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


def settle(client: OpenSearch, state: str, index: str, laws: int, *, plugin: bool = False) -> None:
    """Refresh the filled `index` once (and merge it, for the plugin), then check it holds the `laws` and the
    statistics document: LoadFailed when it does not, or when a copy of it was lost meanwhile."""
    from opensearchpy import TransportError

    from indexer.opensearch.cluster.reasons import short_reason

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
            f"{state}: a copy of the new index {index} was lost while it was built ({short_reason(error)}); "
            "nothing was swapped",
            hint="run the load again once the cluster is green",
        ) from None
    if stored != laws + 1:
        raise LoadFailed(f"{state}: {stored} documents stored, {laws + 1} sent")
