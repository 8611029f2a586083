"""A local OpenSearch node: started, found again, stopped, for development and tests.

What runs is the official OpenSearch. Where a Docker engine answers: the official image when the engine
has it or can pull it, else the image `lawindex opensearch image` built here (`lawindex/opensearch`).
Elsewhere, and whenever neither image can be had, the official distribution zip from Maven Central
(`indexer.node.distribution`) started with its own `bin/opensearch`. A start never fails because a pull is
impossible. Each port has one record, `<cache>/nodes/<port>/node.json`, that says what `start` started
there; `stop` ends only that.

The entry points are here (`start`, `stop`, `status`, `logs`), with the few names the CLI and scripts/test
call this module by (its `__all__`); the parts are modules of their own, imported from there: the pins
(`pins`), this machine's user and ports (`host`), Java (`java`), the record and the node folders
(`record`), what runs and the wait for green (`state`), starting the distribution (`launch`), a container
(`docker_node`), a cluster or a secured node (`cluster`). The cache folder is indexer.cache's.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from typing import Literal

from indexer.cache import default_cache_dir
from indexer.errors import BadInput, NodeError
from indexer.node import containers, distribution, record
from indexer.node import knn as knn_plugin
from indexer.node.cluster import MAX_NODES, start_cluster
from indexer.node.docker_node import choose_image, start_container
from indexer.node.host import (
    DEAD_PORT_GRACE_S,
    HOST,
    TRANSPORT_OFFSET,
    port_free,
    wait_port_free,
    writable_cache,
)
from indexer.node.launch import parse_settings, start_distribution
from indexer.node.pins import default_version, pinned_versions
from indexer.node.record import Member, NodeRecord, nodes
from indexer.node.state import NodeStatus, log_path, member_state, status_from, tail, wait_green

# What the CLI, scripts/test and the tests' fixtures call; the parts are modules of their own.
__all__ = [
    "RUNTIMES",
    "STOP_TIMEOUT_S",
    "NodeStatus",
    "Runtime",
    "choose_image",
    "created_runtime",
    "default_cache_dir",
    "default_version",
    "docker_available",
    "logs",
    "parse_settings",
    "pinned_versions",
    "start",
    "status",
    "stop",
]

Runtime = Literal["auto", "docker", "distribution"]
RUNTIMES: tuple[Runtime, ...] = ("auto", "docker", "distribution")

STOP_TIMEOUT_S = 30.0
_HEAP = re.compile(r"^[1-9][0-9]*[mMgG]$")


def docker_available() -> bool:
    """Whether a Docker engine answers (`docker info` succeeds), not merely whether the CLI exists."""
    return containers.docker_available()


def status(port: int = 9200, cache_dir: Path | str | None = None) -> NodeStatus:
    """What `start` left on `port`: running, stopped, or dead (its pid gone without `stop`)."""
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    return status_from(record.read(cache, port), port)


def created_runtime(recorded: NodeRecord | None) -> Runtime | None:
    """What ran the single node recorded at a port, `docker` or `distribution` (None: no such node): the
    runtime `start` runs it with again unless --runtime (or $LAWINDEX_RUNTIME) says otherwise. A record
    from before the field was written says it by its container."""
    if not isinstance(recorded, Member):
        return None
    ran = recorded.runtime or ("docker" if recorded.container else "distribution")
    return "docker" if ran == "docker" else "distribution"


def _runtime(runtime: str | None) -> Runtime:
    chosen = runtime or os.environ.get("LAWINDEX_RUNTIME") or "auto"
    for known in RUNTIMES:
        if chosen == known:
            return known
    raise BadInput(f"not a runtime: {chosen!r}", hint=f"one of {', '.join(RUNTIMES)}")


def start(
    version: str | None = None,
    port: int = 9200,
    heap: str = "512m",
    cache_dir: Path | str | None = None,
    settings: dict[str, str] | None = None,
    runtime: str | None = None,
    nodes: int = 1,
    secure: bool = False,
    knn: bool = False,
) -> NodeStatus:
    """A green single-node OpenSearch on 127.0.0.1:port; the one already running there if `start` made it.

    `runtime` (else $LAWINDEX_RUNTIME, else auto): `auto` uses Docker where an engine answers and an image
    can be had, else the distribution; `docker` insists on an image; `distribution` never uses Docker.
    `settings` are extra static node settings (`thread_pool.write.queue_size=1` for the tests that force
    429s); they apply to a node this call starts, not to one it finds running.

    `nodes` > 1 starts that many distribution nodes as one cluster on ports port..port+nodes-1 (the record
    lives at `port`); `secure` starts nodes with the security plugin, TLS and users (see `indexer.node.security`).

    `knn` installs the k-NN plugin into a distribution node too (for the window path: meaning on a cluster without
    the lawindex plugin); a node made with it keeps it at every later start, since its indices may need it."""
    version = version or default_version()
    how = _runtime(runtime)
    if not _HEAP.match(heap):
        raise NodeError(f"heap {heap!r} is not a JVM size like 512m or 2g")
    if not 1 <= nodes <= MAX_NODES:
        raise BadInput(f"--nodes {nodes}: a local cluster has 1 to {MAX_NODES} nodes")
    if not 1 <= port <= 65535 - TRANSPORT_OFFSET - nodes + 1:
        raise NodeError(f"port {port} is not a TCP port lawindex can use (1 to {65535 - TRANSPORT_OFFSET})")
    cache = writable_cache(cache_dir)
    if nodes > 1 or secure:
        if knn:
            raise BadInput("--knn installs k-NN into a single node", hint="start the cluster without --knn")
        if how == "docker":
            raise BadInput("--runtime docker runs a single node without security", hint="use the distribution")
        return start_cluster(cache, version, port, heap, settings or {}, nodes, secure)
    url = f"http://{HOST}:{port}"
    with distribution.locked(cache / "nodes" / f"{port}.lock"):
        recorded = record.read(cache, port)
        current = status_from(recorded, port)
        if recorded is not None and current.state == "running":
            if recorded.version != version:
                raise NodeError(
                    f"port {port} already runs OpenSearch {recorded.version}, started by lawindex",
                    hint=f"lawindex opensearch stop --port {port}, or pick another --port",
                )
            found = wait_green(recorded, port)
            return status_from(recorded.model_copy(update={"version": found}), port, reused=True)
        if current.state == "dead":
            # A JVM killed a moment ago shows as dead (its main thread a zombie) while its other
            # threads still exit and hold the port for a second or two.
            wait_port_free(port, DEAD_PORT_GRACE_S)
        if not port_free(port):
            raise NodeError(
                f"port {port} on {HOST} is taken by a process lawindex did not start",
                hint=f"stop that process or use another --port (see: ss -ltnp 'sport = :{port}')",
            )
        # Once `lawindex opensearch image` had built an image, `auto` started a node made by the distribution
        # as a container with none of its data: a node keeps its runtime unless told otherwise.
        created = None if runtime or os.environ.get("LAWINDEX_RUNTIME") else created_runtime(recorded)
        with_knn = knn or had_knn(recorded)
        started = _launch(
            cache, version, port, heap, settings or {}, created or how, kept=created is not None, with_knn=with_knn
        )
        record.write(cache, port, started)
        found = wait_green(started, port)
        if found != version:
            raise NodeError(f"asked for OpenSearch {version}, but the node on {url} reports {found}")
        return status_from(started, port)


def had_knn(recorded: NodeRecord | None) -> bool:
    """Whether the single node recorded at a port had the k-NN plugin installed: started again, it gets it again
    (an index with a `knn_vector` field does not open on a node without k-NN)."""
    return isinstance(recorded, Member) and recorded.knn == knn_plugin.NAME


def _launch(
    cache: Path,
    version: str,
    port: int,
    heap: str,
    extra: dict[str, str],
    how: Runtime,
    kept: bool = False,
    with_knn: bool = False,
) -> Member:
    """Start what `how` says. `kept`: `how` is the runtime the node at `port` was created with. `with_knn`: the
    distribution gets the k-NN plugin too (an image has what it has)."""
    created = f"the node on port {port} was created as {'a container' if how == 'docker' else 'the distribution'}"
    if how == "distribution":
        why = f"{created} (--runtime auto chooses again)" if kept else "asked for the distribution"
        return start_distribution(cache, version, port, heap, extra, why, with_knn=with_knn)
    problem = containers.engine_problem()
    keep = f"; {created} (--runtime distribution runs it from the same data)" if kept else ""
    if problem is not None:
        if how == "docker":
            raise NodeError(
                f"no Docker engine answers: {problem}{keep}", hint="start one, or use --runtime distribution"
            )
        return start_distribution(cache, version, port, heap, extra, f"no Docker engine ({problem})", with_knn=with_knn)
    image, runs, note = choose_image(version)
    if image is None:
        if how == "docker":
            raise NodeError(f"no image of OpenSearch {version}: {note}{keep}", hint="lawindex opensearch image")
        return start_distribution(cache, version, port, heap, extra, note, with_knn=with_knn)
    return start_container(cache, image, runs, f"{created}; {note}" if kept else note, version, port, heap, extra)


def _stop_member(member: Member) -> None:
    """Signal one node to end (SIGTERM; the caller waits)."""
    if member.container:
        containers.remove(member.container)
        member.live = False
    elif member.pid is not None and member_state(member) == "running":
        os.kill(member.pid, signal.SIGTERM)


def stop(port: int = 9200, cache_dir: Path | str | None = None, node: int | None = None) -> NodeStatus:
    """End the node(s) `start` started at `port` (by pid or container), and nothing else; the status after.
    `node` (1-based) ends that one node of a cluster alone."""
    cache = writable_cache(cache_dir)
    with distribution.locked(cache / "nodes" / f"{port}.lock"):
        recorded = record.read(cache, port)
        if recorded is None:
            return status_from(None, port)
        members = nodes(recorded)
        if node is not None and not 1 <= node <= len(members):
            raise BadInput(f"--node {node}: the cluster on port {port} has nodes 1 to {len(members)}")
        chosen = members if node is None else [members[node - 1]]
        running = [m for m in chosen if member_state(m) == "running"]
        for member in chosen:
            _stop_member(member)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline and any(member_state(m) == "running" for m in running):
            time.sleep(0.2)
        for member in running:
            if member.pid is not None and member_state(member) == "running":
                os.kill(member.pid, signal.SIGKILL)
        for member in chosen:
            member.pid = None
        record.write(cache, port, recorded)
        return status_from(recorded, port)


def logs(port: int = 9200, lines: int = 50, cache_dir: Path | str | None = None, node: int | None = None) -> str:
    """The last `lines` lines the node on `port` logged (its stdout when the log is empty); of a cluster,
    node `node` (1-based; the first by default), or the node whose HTTP port `port` is."""
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    recorded = record.read(cache, port)
    if recorded is None:
        # A cluster's later node: its record is the first port's.
        for path in (cache / "nodes").glob(f"*/{record.RECORD_FILE}"):
            found = record.read(cache, int(path.parent.name)) if path.parent.name.isdigit() else None
            if isinstance(found, record.ClusterRecord) and port in [m.port for m in found.members]:
                recorded = next(m for m in found.members if m.port == port)
                break
    if recorded is None:
        raise NodeError(
            f"lawindex has started no OpenSearch on port {port}", hint=f"lawindex opensearch start --port {port}"
        )
    members = nodes(recorded)
    if node is not None and not 1 <= node <= len(members):
        raise BadInput(f"--node {node}: the cluster on port {port} has nodes 1 to {len(members)}")
    member = members[(node or 1) - 1]
    if member.container:
        return containers.logs(member.container, lines)
    log = log_path(member)
    if log is None:
        return ""
    # The node's log; before it exists (a JVM that never started), what the JVM printed.
    return tail(log, lines) or tail(log.parent / "stdout.log", lines)
