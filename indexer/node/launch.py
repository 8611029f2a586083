"""Starting one node of the distribution: its folder made from the unpacked distribution, its
opensearch.yml and heap, then `bin/opensearch` launched detached as the node's user (not waited for).

A node's folder, `<cache>/nodes/<port>/`, holds its own home (the distribution, hard-linked, with a
config/ of its own), `data/<version>/` and `logs/`: a multi-node start makes one such folder per node,
and a plugin installs into that node's home alone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.cache import ROOT_CACHE
from indexer.errors import BadInput, NodeError
from indexer.node import distribution, knn, plugin
from indexer.node.host import HOST, TRANSPORT_OFFSET, RunAs, as_user, chown_tree, port_free, run_as
from indexer.node.java import find_java
from indexer.node.record import HEAP_DUMP, OWNER_FILE, Member, NodeFolder, port_dir, single_node_folder
from indexer.node.state import START_MARK

_SETTING_KEY = re.compile(r"^[a-z0-9_]+(\.[a-zA-Z0-9_\-]+)+$")
# Settings lawindex decides itself: the port comes from --port, and the node listens on loopback only.
_OWN_SETTINGS = ("http.port", "network.host", "path.home", "path.data", "path.logs", "node.name")


def parse_settings(pairs: list[str]) -> dict[str, str]:
    """`key=value` strings into node settings; a malformed one, or one lawindex sets itself, is refused."""
    settings: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not _SETTING_KEY.match(key):
            raise BadInput(
                f"not a setting: {pair!r}",
                hint="--setting key.name=value, e.g. indices.query.bool.max_clause_count=4096",
            )
        if key in _OWN_SETTINGS:
            raise BadInput(
                f"{key} is set by lawindex", hint="use --port for the port; the node listens on 127.0.0.1 only"
            )
        settings[key] = value
    return settings


@dataclass(frozen=True)
class Cluster:
    """The cluster a node belongs to: its nodes' HTTP ports (the first names the cluster), and whether it
    bootstraps (a first start: no node has data yet)."""

    ports: tuple[int, ...]
    # Written into each member's folder (`owner`): a folder that another cluster took over is not this one's.
    id: str
    bootstrap: bool = True

    @property
    def name(self) -> str:
        return f"lawindex-{self.ports[0]}"


@dataclass(frozen=True)
class Secured:
    """What securing a node's home added: settings for its opensearch.yml, and where its secrets are."""

    settings: dict[str, Any]
    ca_certs: str
    credentials: str
    admin_credentials: str


# Given a node's fresh folder and its user, adds to its home (the security plugin, certificates).
Prepare = Callable[[NodeFolder, RunAs], Secured]


def node_settings(
    port: int, extra: dict[str, Any], folder: NodeFolder, cluster: Cluster | None = None
) -> dict[str, Any]:
    """A node's opensearch.yml: loopback only, its ports, its paths, then `extra`. Alone (no `cluster`) it
    is a single-node cluster; in a cluster it finds the others by their transport ports."""
    membership: dict[str, Any] = {"discovery.type": "single-node"}
    if cluster is not None and len(cluster.ports) > 1:
        membership = {"discovery.seed_hosts": [f"{HOST}:{p + TRANSPORT_OFFSET}" for p in cluster.ports]}
        if cluster.bootstrap:
            # Only on the very first start: later starts find the cluster in their data.
            membership["cluster.initial_cluster_manager_nodes"] = [f"lawindex-{p}" for p in cluster.ports]
    return {
        "cluster.name": cluster.name if cluster else f"lawindex-{port}",
        "node.name": f"lawindex-{port}",
        "network.host": HOST,
        "http.port": str(port),
        "transport.port": str(port + TRANSPORT_OFFSET),
        **membership,
        "path.data": str(folder.data),
        "path.logs": str(folder.logs),
        # Small laptop and CI disks would otherwise turn indices read-only at 95 % full.
        "cluster.routing.allocation.disk.threshold_enabled": "false",
        **extra,
    }


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def jvm_options(heap: str, folder: NodeFolder) -> str:
    """The node's jvm.options.d/lawindex.options (read after the distribution's jvm.options, so it wins): the
    heap, not touched page by page before the start (OpenSearch's -XX:+AlwaysPreTouch costs a start about 0.3 s
    a 512 MiB heap, twice: bin/opensearch's probe of the options is a JVM with the same heap; a local node's
    heap is touched as it is used), the one bounded heap dump under its logs, and the JVM's fatal-error file."""
    return "".join(
        f"{option}\n"
        for option in (
            f"-Xms{heap}",
            f"-Xmx{heap}",
            "-XX:-AlwaysPreTouch",
            "-XX:+HeapDumpOnOutOfMemoryError",
            f"-XX:HeapDumpPath={folder.logs / HEAP_DUMP}",
            f"-XX:ErrorFile={folder.logs / 'hs_err_pid%p.log'}",
        )
    )


def node_environment(folder: NodeFolder, java_home: Path) -> dict[str, str]:
    """What bin/opensearch runs in: nothing of the caller's but PATH and OPENSEARCH_JAVA_OPTS, which bin/opensearch
    puts after jvm.options and lawindex's (the official image honours it too: CI's test nodes run a JVM that
    compiles less with it, -XX:TieredStopAtLevel=1)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        # Nothing of the caller's home: as root that is /root, which the node's user cannot read.
        "HOME": str(folder.root),
        "JAVA_HOME": str(java_home),
        "OPENSEARCH_JAVA_HOME": str(java_home),
        "OPENSEARCH_PATH_CONF": str(folder.config),
        "OPENSEARCH_TMPDIR": str(folder.tmp),
    }
    if os.environ.get("OPENSEARCH_JAVA_OPTS", "").strip():
        env["OPENSEARCH_JAVA_OPTS"] = os.environ["OPENSEARCH_JAVA_OPTS"]
    return env


def prepare_node(folder: NodeFolder, dist: Path, settings: dict[str, str], heap: str, user: RunAs) -> None:
    """Make the node's home from the unpacked distribution and write its config: opensearch.yml with
    `settings`, the heap in jvm.options.d; home/config, data and logs belong to `user`."""
    shutil.rmtree(folder.home, ignore_errors=True)
    # Hard links: a home per node in a moment and no space; config/ is copied, since the node writes there
    # (its keystore) and lawindex rewrites files in it.
    shutil.copytree(dist, folder.home, symlinks=True, copy_function=_link_or_copy,
                    ignore=shutil.ignore_patterns("config", ".lawindex-complete"))  # fmt: skip
    shutil.copytree(dist / "config", folder.config, symlinks=True)
    shutil.rmtree(folder.tmp, ignore_errors=True)
    for directory in (folder.data, folder.logs, folder.tmp):
        directory.mkdir(parents=True, exist_ok=True)
    # bin/opensearch runs from its home, and jvm.options names `logs/gc.log` and a heap dump in `data`,
    # relative: both lead to the node's own folders.
    for name, target in (("logs", folder.logs), ("data", folder.data)):
        shutil.rmtree(folder.home / name, ignore_errors=True)
        (folder.home / name).symlink_to(target)
    lines = [f"{key}: {json.dumps(value)}" for key, value in settings.items()]
    (folder.config / "opensearch.yml").write_text(
        "# Written by lawindex for this node at every start; add settings with --setting key=value.\n"
        + "\n".join(lines) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    options = folder.config / "jvm.options.d"
    options.mkdir(exist_ok=True)
    (options / "lawindex.options").write_text(jvm_options(heap, folder), encoding="utf-8")
    for dump in (folder.root / "data").glob("java_pid*.hprof"):
        dump.unlink(missing_ok=True)  # left in data/ by a node lawindex started before dumps went to logs/
    for path in (folder.root, folder.root / "data"):
        if not user.is_caller:
            os.chown(path, user.uid, user.gid)
    for path in (folder.config, folder.data, folder.logs, folder.tmp):
        chown_tree(path, user)


def reachable(folder: NodeFolder, user: RunAs) -> None:
    """Fail clearly when `user` cannot reach the node's files (a private folder above them, like /root)."""
    if user.is_caller:
        return
    probe = ["sh", "-c", 'test -x "$1" && test -w "$2" && test -w "$3"', "sh",
             str(folder.home / "bin" / "opensearch"), str(folder.data), str(folder.logs)]  # fmt: skip
    done = subprocess.run(probe, capture_output=True, check=False, **as_user(user))
    if done.returncode != 0:
        raise NodeError(
            f"user {user.name}, who runs the node (OpenSearch refuses root), cannot reach {folder.root}: "
            "a folder above it is private (as /root is)",
            hint=f"use a cache it can reach: --cache-dir or LAWINDEX_CACHE, e.g. {ROOT_CACHE} (the default as root)",
        )


def _spawn_detached(command: list[str], cwd: Path, output: Path, env: dict[str, str], user: RunAs) -> int:
    """Start `command` in its own session as `user`, outliving this process and not its child; its pid."""
    # sh backgrounds the node and exits at once, so the node is re-parented (to init or a subreaper)
    # rather than left as our child, which would linger as a zombie after a kill and look alive.
    # bin/opensearch execs the JVM, so the pid is the JVM's.
    # The mark starts this start's part of the console log, so that a failed start shows its own lines.
    # (fd 3 is the pipe that reads the pid; the node does not keep it.)
    script = 'exec 3>&1 0</dev/null >>"$LAWINDEX_NODE_OUT" 2>&1; echo "$LAWINDEX_MARK"; "$@" 3>&- & echo $! >&3'
    mark = f"{START_MARK} {time.strftime('%Y-%m-%dT%H:%M:%S%z')}"
    done = subprocess.run(
        ["sh", "-c", script, "sh", *command], cwd=cwd,
        env={**env, "LAWINDEX_NODE_OUT": str(output), "LAWINDEX_MARK": mark},
        capture_output=True, text=True, start_new_session=True, check=False, **as_user(user),
    )  # fmt: skip
    if done.returncode != 0 or not done.stdout.strip().isdigit():
        raise NodeError(f"could not launch OpenSearch: {done.stderr.strip()}")
    return int(done.stdout.strip())


def start_distribution(
    cache: Path,
    version: str,
    port: int,
    heap: str,
    extra: dict[str, Any],
    note: str,
    cluster: Cluster | None = None,
    prepare: Prepare | None = None,
    with_knn: bool = False,
    dist: Path | None = None,
) -> Member:
    """Launch one distribution node (not waiting for it); its record. `prepare`, given the node's fresh
    folder, secures its home. `with_knn`: the k-NN plugin too (indexer.node.knn), for a cluster asked by meaning
    without the lawindex plugin; a node with the plugin ranks by meaning without it, and does not fetch it.
    `dist`: the home to make the node's from (`plugin.node_home` of other zips), instead of the one every node gets."""
    java_home, _major = find_java(version)
    # The distribution with the plugins every node gets (the lawindex plugin), installed once and cached.
    dist = dist or plugin.node_home(version, cache, java_home)
    user = run_as(cache)
    # A cluster's own start decides for its members' data (`cluster.same_cluster`).
    folder = (
        NodeFolder(port_dir(cache, port).resolve(), version) if cluster else single_node_folder(cache, port, version)
    )
    owner = cluster.id if cluster is not None else f"node {port}"
    settings = node_settings(port, extra, folder, cluster)
    transport = int(settings["transport.port"]) if str(settings["transport.port"]).isdigit() else None
    if transport is not None and not port_free(transport):
        raise NodeError(
            f"transport port {transport} (HTTP port + {TRANSPORT_OFFSET}) on {HOST} is taken",
            hint="use another --port, or --setting transport.port=N",
        )
    prepare_node(folder, dist, settings, heap, user)
    added_knn = knn.install(folder.home, version, cache) if with_knn else knn.NOT_ASKED
    secured = None
    if prepare is not None:
        secured = prepare(folder, user)
        with (folder.config / "opensearch.yml").open("a", encoding="utf-8") as yml:
            yml.write("".join(f"{key}: {json.dumps(value)}\n" for key, value in secured.settings.items()))
        chown_tree(folder.home, user)
    reachable(folder, user)
    env = node_environment(folder, java_home)
    (folder.root / OWNER_FILE).write_text(owner + "\n", encoding="utf-8")
    command = [str(folder.home / "bin" / "opensearch"), "-p", str(folder.root / "opensearch.pid")]
    pid = _spawn_detached(command, folder.root, folder.logs / "stdout.log", env, user)
    member = Member(
        version=version, port=port, heap=heap, pid=pid, home=str(folder.home), data_dir=str(folder.data),
        log=str(folder.logs / f"{settings['cluster.name']}.log"), java=str(java_home), container=None,
        runs="distribution", image=None, user=user.name, note=note, modules_added=distribution.modules_added(dist),
        started_at=time.time(), name=settings["node.name"], transport_port=transport, runtime="distribution",
        knn=added_knn,
    )  # fmt: skip
    if secured is not None:
        member.scheme = "https"
        member.ca_certs = secured.ca_certs
        member.credentials = secured.credentials
        member.admin_credentials = secured.admin_credentials
    return member
