"""`lawindex opensearch upgrade --version V`: a cluster lawindex started, taken to OpenSearch V node by node, as
OpenSearch documents a rolling upgrade, while it serves.

For each node still on another version, in turn: shard allocation limited to primaries (so that the copies on the
node are not rebuilt elsewhere while it is away), a flush, the node stopped; its home made again from V's
distribution with the lawindex plugin built for V (indexer.node.plugin.node_home), its data folder handed over to V
(`data/<old>` renamed `data/<V>`: the same shards, the same cluster state) and its opensearch.yml written as before
(the same cluster, ports and extra settings); started; once it has joined (it answers for itself, on V) allocation
is given back to all and the cluster waited on until green. The pre-flight is indexer.opensearch.cluster.
upgrade_check's (the same rules as `lawindex plugin check --to V`), run before the first node is touched.

An upgrade stopped half-way (a failure, ^C) leaves a cluster of both versions, which serves: `upgrade` again goes on
from the first node not yet on V.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.errors import BadInput, NodeError
from indexer.node import distribution, plugin, record
from indexer.node.cluster import secure_preparer
from indexer.node.host import DEAD_PORT_GRACE_S, HOST, TRANSPORT_OFFSET, wait_port_free, writable_cache
from indexer.node.launch import Cluster, node_settings, start_distribution
from indexer.node.record import ClusterRecord, Member, NodeFolder, port_dir
from indexer.node.state import GREEN_TIMEOUT_S, admin_access, member_state

STOP_TIMEOUT_S = 60.0
# A node of the new version joins once it has started (15-40 s on these machines) and the cluster has recovered
# its copies: each wait gets the start's own budget and the cluster's extra.
JOIN_TIMEOUT_S = GREEN_TIMEOUT_S
RECOVER_TIMEOUT_S = GREEN_TIMEOUT_S + 120.0


@dataclass(frozen=True)
class NodeStep:
    """One node's step: its port, the versions it went from and to, and the seconds it took (stop to green)."""

    port: int
    name: str
    was: str
    now: str
    seconds: float
    skipped: bool = False


Say = Callable[[str], None]


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _Admin:
    """The cluster's REST API as its admin (plain HTTP, or the secured cluster's CA and admin password)."""

    def __init__(self, found: ClusterRecord) -> None:
        self.context, self.headers = admin_access(found)
        self.scheme = "https" if found.secure else "http"

    def call(self, port: int, method: str, path: str, body: Any = None, timeout: float = 30.0) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.scheme}://{HOST}:{port}{path}",
            data=data,
            method=method,
            headers={**self.headers, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.context) as answer:
                return json.loads(answer.read().decode("utf-8") or "null")
        except urllib.error.HTTPError as error:
            if error.code != 408:
                raise
            # A health wait that ran out (`wait_for_status`): the health as it is, not a failure.
            return json.loads(error.read().decode("utf-8") or "null")

    def first(self, ports: list[int], method: str, path: str, body: Any = None, timeout: float = 30.0) -> Any:
        """The answer of the first of `ports` that gives one (a node may be away)."""
        last: Exception | None = None
        for port in ports:
            try:
                return self.call(port, method, path, body, timeout)
            except (OSError, ValueError, urllib.error.URLError) as error:
                last = error
        raise NodeError(f"no node of the cluster answered {method} {path}: {last}")


def _allocation(admin: _Admin, ports: list[int], value: str | None) -> None:
    body = {"persistent": {"cluster.routing.allocation.enable": value}}
    admin.first(ports, "PUT", "/_cluster/settings", body)


def _extra_settings(folder: NodeFolder, port: int, cluster: Cluster) -> dict[str, Any]:
    """The settings the node's opensearch.yml holds beyond those lawindex writes itself (`--setting` at its start):
    written again for the new version."""
    written = folder.config / "opensearch.yml"
    try:
        text = written.read_text(encoding="utf-8")
    except OSError:
        return {}
    ours = node_settings(port, {}, folder, cluster)
    extra: dict[str, Any] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if not sep or line.startswith("#") or key in ours or key == "cluster.initial_cluster_manager_nodes":
            continue
        try:
            extra[key] = json.loads(value)
        except ValueError:
            extra[key] = value
    return extra


def _stop(member: Member) -> None:
    if member.pid is not None and member_state(member) == "running":
        os.kill(member.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline and member_state(member) == "running":
            time.sleep(0.2)
        if member_state(member) == "running":
            os.kill(member.pid, signal.SIGKILL)
    member.pid = None
    wait_port_free(member.port, DEAD_PORT_GRACE_S)
    wait_port_free(member.port + TRANSPORT_OFFSET, DEAD_PORT_GRACE_S)


def _wait(what: str, timeout: float, ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if ready():
                return
        except (OSError, ValueError, urllib.error.URLError):
            pass
        time.sleep(1.0)
    raise NodeError(f"{what} within {timeout:.0f} s", hint="lawindex opensearch logs --port PORT --node K")


def _joined(admin: _Admin, member: Member, version: str, count: int) -> bool:
    """The node answers for itself, on `version`, in a cluster of `count` nodes."""
    root = admin.call(member.port, "GET", "/", timeout=5)
    if str(root.get("version", {}).get("number")) != version:
        return False
    health = admin.call(member.port, "GET", f"/_cluster/health?wait_for_nodes={count}&timeout=1s", timeout=5)
    return int(health.get("number_of_nodes", 0)) == count


def _green(admin: _Admin, ports: list[int], count: int) -> bool:
    health = admin.first(ports, "GET", f"/_cluster/health?wait_for_status=green&wait_for_nodes={count}&timeout=5s")
    return health.get("status") == "green" and int(health.get("number_of_nodes", 0)) == count


def preflight(admin: _Admin, ports: list[int], version: str) -> None:
    """NodeError unless the cluster can take the step to `version` (upgrade_check's rules, the cluster green)."""
    from indexer.opensearch.cluster.upgrade_check import step_blockers

    nodes = admin.first(ports, "GET", "/_nodes?filter_path=nodes.*.name,nodes.*.version")
    found = {str(n["name"]): str(n["version"]) for n in (nodes.get("nodes") or {}).values()}
    settings = admin.first(
        ports,
        "GET",
        "/_all/_settings?human=true&expand_wildcards=all&filter_path=*.settings.index.version.created_string",
    )
    indices = {
        name: str(body["settings"]["index"]["version"]["created_string"]) for name, body in (settings or {}).items()
    }
    blockers = step_blockers(found, indices, version)
    if not _green(admin, ports, len(ports)):
        blockers.append("the cluster is not green with all its nodes: a rolling upgrade starts from green")
    if blockers:
        raise NodeError(f"the cluster cannot take the step to OpenSearch {version}: " + "; ".join(blockers))


def _restart_stopped(cache: Path, port: int, found: ClusterRecord, cluster: Cluster, admin: _Admin, say: Say) -> bool:
    """Each node of the cluster that does not run (an upgrade stopped half-way, a node stopped since) started again
    on the version it last ran, from its data, and waited on until it has joined: `upgrade` goes on from there.
    Whether any was."""
    down = [(number, m) for number, m in enumerate(found.members) if member_state(m) != "running"]
    for number, member in down:
        ran = member.version or found.version or ""
        say(f"node {number + 1} ({member.name or member.port}) does not run: started again on OpenSearch {ran}")
        wait_port_free(member.port, DEAD_PORT_GRACE_S)  # a node killed a moment ago holds its ports a while
        wait_port_free(member.port + TRANSPORT_OFFSET, DEAD_PORT_GRACE_S)
        with distribution.locked(cache / "nodes" / f"{port}.lock"):
            folder = NodeFolder(port_dir(cache, member.port).resolve(), ran)
            prepare = secure_preparer(cache, ran, port) if found.secure else None
            heap = str(member.heap or found.heap or "512m")
            started = start_distribution(cache, ran, member.port, heap, _extra_settings(folder, member.port, cluster),
                                         member.note or "a cluster node", cluster, prepare)  # fmt: skip
            found.members[number] = started
            record.write(cache, port, found)
    for number, member in down:
        joined = found.members[number]
        ran = joined.version or ""
        _wait(f"{member.name} did not join again", JOIN_TIMEOUT_S,
              lambda again=joined, on=ran: _joined(admin, again, on, len(found.members)))  # type: ignore[misc]  # fmt: skip
    return bool(down)


def upgrade(port: int, version: str, cache_dir: Path | str | None = None, say: Say = _say) -> list[NodeStep]:
    """Take the cluster lawindex started at `port` to OpenSearch `version`, node by node; each node's step."""
    plugin.check_version(version)
    cache = writable_cache(cache_dir)
    found = record.read(cache, port)
    if not isinstance(found, ClusterRecord) or len(found.members) < 2 or found.runs != "distribution":
        raise BadInput(
            f"port {port} has no cluster of several distribution nodes started by lawindex",
            hint="a rolling upgrade needs nodes to keep serving: lawindex opensearch start --nodes 3 --port PORT",
        )
    ports = [m.port for m in found.members]
    admin = _Admin(found)
    cluster = Cluster(tuple(ports), str(found.id), bootstrap=False)
    _restart_stopped(cache, port, found, cluster, admin, say)
    # An upgrade stopped half-way may have left allocation to primaries, and a node still starting: allocation given
    # back to all, and the cluster given its recovery's time to be green (at once when it is) before the pre-flight.
    _allocation(admin, ports, None)
    with contextlib.suppress(NodeError):
        _wait("green", RECOVER_TIMEOUT_S, lambda: _green(admin, ports, len(ports)))
    preflight(admin, ports, version)
    # The new version's home (its distribution, the plugin built for it) made before the first node stops.
    from indexer.node.java import find_java

    java_home, _major = find_java(version)
    plugin.node_home(version, cache, java_home)
    prepare = secure_preparer(cache, version, port) if found.secure else None
    steps: list[NodeStep] = []
    for number, member in enumerate(list(found.members)):
        was = member.version or found.version or "?"
        name = member.name or f"lawindex-{member.port}"
        if was == version:
            steps.append(NodeStep(member.port, name, was, version, 0.0, skipped=True))
            continue
        began = time.monotonic()
        say(f"node {number + 1} ({name}, port {member.port}): OpenSearch {was} -> {version} ...")
        others = [p for p in ports if p != member.port]
        with distribution.locked(cache / "nodes" / f"{port}.lock"):
            _allocation(admin, ports, "primaries")
            try:
                admin.call(member.port, "POST", "/_flush", timeout=120)
            except (OSError, ValueError, urllib.error.URLError) as error:
                say(f"  flush on {name} failed ({error}); going on: recovery replays what was not flushed")
            _stop(member)
            old = NodeFolder(port_dir(cache, member.port).resolve(), was)
            new = NodeFolder(old.root, version)
            extra = _extra_settings(old, member.port, cluster)
            if old.data.is_dir() and old.data != new.data:
                # A folder of V's left by an earlier cluster on these ports (a new cluster removes only its own
                # version's): this node's data is data/<was>.
                shutil.rmtree(new.data, ignore_errors=True)
                old.data.rename(new.data)
            note = f"upgraded from {was} (lawindex opensearch upgrade)"
            started = start_distribution(cache, version, member.port, str(member.heap or found.heap or "512m"),
                                         extra, note, cluster, prepare)  # fmt: skip
            found.members[number] = started
            record.write(cache, port, found)
        _wait(
            f"{name} did not join the cluster on OpenSearch {version}",
            JOIN_TIMEOUT_S,
            lambda joining=started: _joined(admin, joining, version, len(ports)),  # type: ignore[misc]
        )
        _allocation(admin, [*others, member.port], None)
        _wait("the cluster was not green again", RECOVER_TIMEOUT_S, lambda: _green(admin, ports, len(ports)))
        seconds = time.monotonic() - began
        say(f"  {name} on {version}, cluster green: {seconds:.1f} s")
        steps.append(NodeStep(member.port, name, was, version, seconds))
    with distribution.locked(cache / "nodes" / f"{port}.lock"):
        found.version = version
        found.java = found.members[0].java
        record.write(cache, port, found)
    return steps
