"""A local OpenSearch node: started, found again, stopped, for development and tests.

What runs is the official OpenSearch. Where a Docker engine answers: the official image when the engine
has it or can pull it, else the image `lawindex opensearch image` built here (`lawindex/opensearch`).
Elsewhere, and whenever neither image can be had, the official distribution zip from Maven Central
(`indexer.node.distribution`) started with its own `bin/opensearch`. A start never fails because a pull is
impossible. Each port has one record, `<cache>/nodes/<port>/node.json`, that says what `start` started
there; `stop` ends only that.

A node's folder, `<cache>/nodes/<port>/`, holds its own home (the distribution, hard-linked, with a
config/ of its own), `data/<version>/` and `logs/`: a later multi-node start makes one such folder per
node, and a plugin installs into that node's home alone.

OpenSearch refuses to run as root. Run as root, lawindex runs the node as the system user `lawindex`
(made on first use), and the default cache is /var/cache/lawindex, not /root/.cache (/root is mode 700
and that user could not reach a node under it).

The versions are pinned in `node/versions.env` and nowhere else.

Long: one record a port and the entry points that read and write it (start, stop, status, a cluster),
with the pins, Java, the cache and the three runtimes they choose between; to be split along its
`# ---` sections (a typed node record first), issue 18.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from indexer.errors import BadInput, NodeError
from indexer.node import containers, distribution, knn, plugin

# Re-exported: node.find_java and node.default_cache_dir are what the rest of lawindex (and its tests) call.
from indexer.node.java import (
    JVM_DIR as JVM_DIR,
)
from indexer.node.java import (
    ROOT_CACHE as ROOT_CACHE,
)
from indexer.node.java import (
    default_cache_dir as default_cache_dir,
)
from indexer.node.java import (
    find_java as find_java,
)
from indexer.node.java import (
    java_candidates as java_candidates,
)
from indexer.node.java import (
    java_major as java_major,
)
from indexer.node.java import (
    java_range as java_range,
)

State = Literal["running", "stopped", "dead"]
Runtime = Literal["auto", "docker", "distribution"]
RUNTIMES: tuple[Runtime, ...] = ("auto", "docker", "distribution")

HOST = "127.0.0.1"
# A cached start on these 2-core machines takes 15-25 s; a first start adds the download (~5 s here).
GREEN_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 30.0
DEAD_PORT_GRACE_S = 15.0
# A node's transport port is its HTTP port + 100 (9200 → 9300), so the ports of several local nodes
# never collide with each other's, and a cluster's seed hosts can be written without asking anyone.
TRANSPORT_OFFSET = 100
OFFICIAL_IMAGE = "opensearchproject/opensearch"
LOCAL_IMAGE = "lawindex/opensearch"
SERVICE_USER = "lawindex"
MAX_NODES = 5
# Each further node of a cluster adds to the time to green: under a load of 15-20 on two cores, a
# three-node cluster took minutes.
CLUSTER_GREEN_EXTRA_S = 120.0
_HEAP = re.compile(r"^[1-9][0-9]*[mMgG]$")
_SETTING_KEY = re.compile(r"^[a-z0-9_]+(\.[a-zA-Z0-9_\-]+)+$")
# Settings lawindex decides itself: the port comes from --port, and the node listens on loopback only.
_OWN_SETTINGS = ("http.port", "network.host", "path.home", "path.data", "path.logs", "node.name")


@dataclass(frozen=True)
class NodeStatus:
    """What is (or was) on a port: running, stopped by `stop`, or dead (its process gone unasked)."""

    state: State
    port: int
    url: str
    version: str | None = None
    pid: int | None = None
    data_dir: str | None = None
    heap: str | None = None
    log: str | None = None
    java: str | None = None
    container: str | None = None
    reused: bool = False
    # What runs: "distribution", "official image" or "local image"; the image's name; the user the
    # distribution runs as; why the runtime was chosen over the ones before it.
    runs: str | None = None
    image: str | None = None
    user: str | None = None
    home: str | None = None
    note: str | None = None
    # One object per node of the cluster started at this port (one for a single node): its HTTP and
    # transport ports, name, pid, state and log.
    nodes: list[dict[str, Any]] | None = None
    # A secured node (--secure): the CA to trust, and the file of OPENSEARCH_USER/OPENSEARCH_PASSWORD
    # lines for the least-privileged user (mode 600). Never a password.
    ca_certs: str | None = None
    credentials: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The status as a JSON-ready dict."""
        return asdict(self)

    def describe(self) -> str:
        """One line for people: what runs and as whom."""
        if self.runs in ("official image", "local image"):
            return f"{self.runs} {self.image} (container {self.container})"
        who = f", as user {self.user}" if self.user else ""
        return f"the distribution at {self.home} on Java {self.java}{who} (pid {self.pid})"


# --- the pins -------------------------------------------------------------------------------------


def node_dir() -> Path:
    """The directory holding versions.env: the repo's node/, else the wheel's copy."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parents[1] / "node", here / "_data" / "node"):
        if (candidate / "versions.env").is_file():
            return candidate
    raise NodeError("node/versions.env not found next to the indexer package; is lawindex installed whole?")


def read_pins(path: Path | None = None) -> dict[str, str]:
    """The KEY=VALUE lines of versions.env (comments and blank lines skipped, quotes stripped)."""
    text = (path or node_dir() / "versions.env").read_text(encoding="utf-8")
    pins: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        pins[key.strip()] = value.strip().strip("'\"")
    return pins


def pinned_versions(path: Path | None = None) -> list[str]:
    """The pinned OpenSearch versions, the default (3.x) first."""
    pins = read_pins(path)
    try:
        return [pins["OPENSEARCH_VERSION"], pins["OPENSEARCH_LEGACY_VERSION"]]
    except KeyError as missing:
        raise NodeError(f"node/versions.env has no {missing.args[0]}") from None


def default_version() -> str:
    """The version `start` runs when none is asked for."""
    return pinned_versions()[0]


def official_image(version: str) -> str:
    """The official image of `version` ($LAWINDEX_OFFICIAL_IMAGE names another repository, for mirrors)."""
    return f"{os.environ.get('LAWINDEX_OFFICIAL_IMAGE', OFFICIAL_IMAGE)}:{version}"


def local_image(version: str) -> str:
    """The image `lawindex opensearch image` builds for `version` ($LAWINDEX_LOCAL_IMAGE names another repository)."""
    return f"{os.environ.get('LAWINDEX_LOCAL_IMAGE', LOCAL_IMAGE)}:{version}"


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


# --- Java -----------------------------------------------------------------------------------------


# --- the cache and the service user ---------------------------------------------------------------


def _cache(cache_dir: Path | str | None) -> Path:
    """The cache directory, made and proven writable: an unwritable one is one line, not a traceback."""
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    try:
        (cache / "nodes").mkdir(parents=True, exist_ok=True)
        probe = cache / "nodes" / ".writable"
        probe.touch()
    except OSError as error:
        raise NodeError(
            f"the cache directory {cache} cannot be written: {error.strerror or error}",
            hint="point --cache-dir or LAWINDEX_CACHE at a directory you can write",
        ) from None
    return cache


@dataclass(frozen=True)
class RunAs:
    """The user a distribution node runs as: the caller, or (run as root) the service user."""

    name: str
    uid: int
    gid: int

    @property
    def is_caller(self) -> bool:
        return self.uid == os.geteuid()


def run_as(cache: Path) -> RunAs:
    """The caller; as root, the system user `lawindex` (made here on first use): OpenSearch refuses root."""
    if os.geteuid() != 0:
        entry = pwd.getpwuid(os.geteuid())
        return RunAs(entry.pw_name, entry.pw_uid, entry.pw_gid)
    name = os.environ.get("LAWINDEX_NODE_USER", SERVICE_USER)
    with distribution.locked(cache / "useradd.lock"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            useradd = shutil.which("useradd") or "/usr/sbin/useradd"
            done = subprocess.run(
                [useradd, "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                 "--shell", "/usr/sbin/nologin", "--comment", "lawindex OpenSearch nodes", name],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                raise NodeError(
                    f"could not create the system user {name} to run OpenSearch (it refuses root): "
                    f"{done.stderr.strip()}",
                    hint="create it (useradd --system NAME) or run lawindex as an ordinary user",
                ) from None
            entry = pwd.getpwnam(name)
    if entry.pw_uid == 0:
        raise NodeError(f"LAWINDEX_NODE_USER={name} is root; OpenSearch refuses to run as root")
    return RunAs(entry.pw_name, entry.pw_uid, entry.pw_gid)


def _chown_tree(path: Path, user: RunAs) -> None:
    if user.is_caller:
        return
    os.chown(path, user.uid, user.gid)
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.chown(os.path.join(root, name), user.uid, user.gid, follow_symlinks=False)


def _as_user(user: RunAs) -> dict[str, Any]:
    """subprocess keyword arguments that run a child as `user` (nothing when it is the caller)."""
    if user.is_caller:
        return {}
    return {"user": user.uid, "group": user.gid, "extra_groups": []}


# --- the record of what start started -------------------------------------------------------------


def _port_dir(cache: Path, port: int) -> Path:
    return cache / "nodes" / str(port)


def _read_record(cache: Path, port: int) -> dict[str, Any] | None:
    path = _port_dir(cache, port) / "node.json"
    try:
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record


def _write_record(cache: Path, port: int, record: dict[str, Any]) -> None:
    path = _port_dir(cache, port) / "node.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def _is_our_node(pid: int, home: str) -> bool:
    """Whether `pid` is alive and is the node whose home is `home`: its bin/opensearch, or the JVM that
    script becomes (exec, same pid) — not a recycled pid."""
    with contextlib.suppress(ChildProcessError, OSError):
        # Reap it if this very process started it and it died: a zombie still answers kill(pid, 0).
        os.waitpid(pid, os.WNOHANG)
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] == "Z":
        return False
    return f"-Dopensearch.path.home={home}".encode() in cmdline or f"{home}/bin/opensearch".encode() in cmdline


def _member_state(record: dict[str, Any]) -> State:
    pid = record.get("pid")
    container = record.get("container")
    if container:
        return "running" if containers.running(container) else ("dead" if record.get("live") else "stopped")
    if pid is None:
        return "stopped"
    return "running" if _is_our_node(int(pid), str(record.get("home"))) else "dead"


def _members(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-node records of a cluster record; a single node's record is its own one member."""
    members: list[dict[str, Any]] = record.get("members") or [record]
    return members


def _node_view(member: dict[str, Any]) -> dict[str, Any]:
    port = int(member["port"])
    return {
        "name": member.get("name") or f"lawindex-{port}",
        "http_port": port,
        "transport_port": member.get("transport_port"),
        "url": f"{member.get('scheme', 'http')}://{HOST}:{port}",
        "pid": member.get("pid"),
        "state": _member_state(member),
        "log": member.get("log"),
    }


def _status_from(record: dict[str, Any] | None, port: int, *, reused: bool = False) -> NodeStatus:
    if record is None:
        return NodeStatus(state="stopped", port=port, url=f"http://{HOST}:{port}")
    views = [_node_view(member) for member in _members(record)]
    first = _members(record)[0]
    # A cluster runs while any of its nodes does (it may still serve); each node says its own state.
    states = {view["state"] for view in views}
    state: State = "running" if "running" in states else ("dead" if "dead" in states else "stopped")
    pid = first.get("pid")
    return NodeStatus(
        state=state,
        port=port,
        url=",".join(view["url"] for view in views),
        version=record.get("version"),
        pid=int(pid) if pid is not None else None,
        data_dir=first.get("data_dir"),
        heap=record.get("heap"),
        log=first.get("log"),
        java=record.get("java"),
        container=first.get("container"),
        reused=reused,
        runs=record.get("runs"),
        image=record.get("image"),
        user=record.get("user"),
        home=first.get("home"),
        note=record.get("note"),
        nodes=views,
        ca_certs=record.get("ca_certs"),
        credentials=record.get("credentials"),
    )


def status(port: int = 9200, cache_dir: Path | str | None = None) -> NodeStatus:
    """What `start` left on `port`: running, stopped, or dead (its pid gone without `stop`)."""
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    return _status_from(_read_record(cache, port), port)


# --- HTTP -----------------------------------------------------------------------------------------


def _get_json(
    url: str, timeout: float = 2.0, context: Any = None, headers: dict[str, str] | None = None
) -> dict[str, Any] | None:
    try:
        request = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            body: dict[str, Any] = json.loads(response.read().decode("utf-8"))
            return body
    except (OSError, ValueError, urllib.error.URLError):
        return None


def _wait_green(url: str, alive: Callable[[], bool], log: Path | None, timeout: float = GREEN_TIMEOUT_S) -> str:
    """Poll until the cluster is green; the node's version. Fails early when `alive()` turns false."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        health = _get_json(f"{url}/_cluster/health?wait_for_status=green&timeout=1s", timeout=5)
        if health and health.get("status") == "green":
            root = _get_json(url) or {}
            return str(root.get("version", {}).get("number", "unknown"))
        if not alive():
            raise NodeError(
                f"the OpenSearch node on {url} exited while starting" + _log_tail_note(log),
                hint=f"see {log}" if log else None,
            )
        time.sleep(0.5)
    raise NodeError(f"the OpenSearch node on {url} was not green after {timeout:.0f} s" + _log_tail_note(log))


def _log_tail_note(log: Path | None, lines: int = 10) -> str:
    if log is None:
        return ""
    # stdout.log has what the node logged on its console (every log line) and what the JVM said before
    # any log existed (a bad JVM option, a missing class); the log file alone misses the latter.
    tail = _tail(log.parent / "stdout.log", lines) or _tail(log, lines)
    return f"; last lines of its logs:\n{tail}" if tail else ""


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _port_free(port: int) -> bool:
    """Whether nothing listens on (or holds) 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def _wait_port_free(port: int, timeout: float) -> bool:
    """Whether the port came free within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not _port_free(port):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


# --- Docker ---------------------------------------------------------------------------------------


def docker_available() -> bool:
    """Whether a Docker engine answers (`docker info` succeeds), not merely whether the CLI exists."""
    return containers.docker_available()


def choose_image(version: str) -> tuple[str | None, str, str]:
    """(image or None, what runs, why): the official image when present or pullable, else the local one
    built by `lawindex opensearch image`, else None (the distribution runs)."""
    official = official_image(version)
    if containers.image_present(official):
        return official, "official image", f"{official} is present"
    why = containers.pull(official)
    if why is None:
        return official, "official image", f"{official} pulled"
    local = local_image(version)
    if containers.image_present(local):
        return local, "local image", f"{official} cannot be pulled ({why})"
    return (
        None,
        "distribution",
        (f"{official} cannot be pulled ({why}) and {local} is not built (lawindex opensearch image)"),
    )


# Where the official image and lawindex/opensearch keep path.data. The node folder's data/<version> is
# mounted there: a container's indices live where the distribution's do, and survive `stop` + `start`
# (the container is removed at stop; before, its data went with it).
CONTAINER_DATA = "/usr/share/opensearch/data"


def _data_for_image(data: Path, image: str) -> None:
    """`data` made writable by the user the image runs OpenSearch as (uid 1000 in both images); the
    distribution gives it back to its own user at its next start."""
    uid, gid = containers.image_user(image)
    if os.geteuid() == 0:
        _chown_tree(data, RunAs("image", uid, gid))
    elif data.stat().st_uid != uid:
        why = containers.chown(image, str(data), uid, gid)
        if why is not None:
            raise NodeError(f"could not give {data} to uid {uid}, who runs OpenSearch in {image}: {why}")


def _start_container(
    cache: Path, image: str, runs: str, note: str, version: str, port: int, heap: str, extra: dict[str, str]
) -> dict[str, Any]:
    """The image, bound to 127.0.0.1 only; security off because nothing but loopback reaches it. Its
    data is the node folder's, as the distribution's is, under the same cluster and node names."""
    name = f"lawindex-opensearch-{port}"
    containers.remove(name)
    folder = _single_node_folder(cache, port, version)
    folder.data.mkdir(parents=True, exist_ok=True)
    _data_for_image(folder.data, image)
    (folder.root / OWNER_FILE).write_text(f"node {port}\n", encoding="utf-8")
    command = [
        "docker", "run", "-d", "--name", name,
        "-p", f"{HOST}:{port}:9200",
        "-v", f"{folder.data}:{CONTAINER_DATA}",
        "-e", f"cluster.name=lawindex-{port}",
        "-e", f"node.name=lawindex-{port}",
        "-e", "discovery.type=single-node",
        "-e", "DISABLE_SECURITY_PLUGIN=true",
        "-e", "DISABLE_INSTALL_DEMO_CONFIG=true",
        "-e", "cluster.routing.allocation.disk.threshold_enabled=false",
        "-e", f"OPENSEARCH_JAVA_OPTS=-Xms{heap} -Xmx{heap}",
        *(part for key, value in extra.items() for part in ("-e", f"{key}={value}")),
        image,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise NodeError(f"docker could not start {image}: {done.stderr.strip()}")
    return {
        "version": version, "port": port, "heap": heap, "container": name, "live": True, "runs": runs,
        "image": image, "note": note, "data_dir": str(folder.data), "log": None, "pid": None,
        "java": None, "home": None, "user": None, "runtime": "docker",
    }  # fmt: skip


# --- the distribution -----------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeFolder:
    """One node's files: its own home (the distribution hard-linked, config/ its own), data and logs."""

    root: Path
    version: str

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def config(self) -> Path:
        return self.home / "config"

    @property
    def data(self) -> Path:
        # Per version: a 2.19 node cannot read the cluster state a 3.x node left (Lucene 10 files), and
        # the two pinned versions take turns on the test ports.
        return self.root / "data" / self.version

    @property
    def logs(self) -> Path:
        return self.root / "logs"


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def prepare_node(folder: NodeFolder, dist: Path, settings: dict[str, str], heap: str, user: RunAs) -> None:
    """Make the node's home from the unpacked distribution and write its config: opensearch.yml with
    `settings`, the heap in jvm.options.d; home/config, data and logs belong to `user`."""
    shutil.rmtree(folder.home, ignore_errors=True)
    # Hard links: a home per node in a moment and no space; config/ is copied, since the node writes there
    # (its keystore) and lawindex rewrites files in it.
    shutil.copytree(dist, folder.home, symlinks=True, copy_function=_link_or_copy,
                    ignore=shutil.ignore_patterns("config", ".lawindex-complete"))  # fmt: skip
    shutil.copytree(dist / "config", folder.config, symlinks=True)
    for directory in (folder.data, folder.logs):
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
    (options / "lawindex.options").write_text(f"-Xms{heap}\n-Xmx{heap}\n", encoding="utf-8")
    for path in (folder.root, folder.root / "data"):
        if not user.is_caller:
            os.chown(path, user.uid, user.gid)
    for path in (folder.config, folder.data, folder.logs):
        _chown_tree(path, user)


def _reachable(folder: NodeFolder, user: RunAs) -> None:
    """Fail clearly when `user` cannot reach the node's files (a private folder above them, like /root)."""
    if user.is_caller:
        return
    probe = ["sh", "-c", 'test -x "$1" && test -w "$2" && test -w "$3"', "sh",
             str(folder.home / "bin" / "opensearch"), str(folder.data), str(folder.logs)]  # fmt: skip
    done = subprocess.run(probe, capture_output=True, check=False, **_as_user(user))
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
    script = 'exec 0</dev/null; "$@" >>"$LAWINDEX_NODE_OUT" 2>&1 & echo $!'
    done = subprocess.run(
        ["sh", "-c", script, "sh", *command], cwd=cwd, env={**env, "LAWINDEX_NODE_OUT": str(output)},
        capture_output=True, text=True, start_new_session=True, check=False, **_as_user(user),
    )  # fmt: skip
    if done.returncode != 0 or not done.stdout.strip().isdigit():
        raise NodeError(f"could not launch OpenSearch: {done.stderr.strip()}")
    return int(done.stdout.strip())


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


OWNER_FILE = "owner"


def _single_node_folder(cache: Path, port: int, version: str) -> NodeFolder:
    """The folder of the single node at `port`, whatever runs it. When a cluster took it over since, its
    data holds that cluster's state, which a single node must not start from: it is dropped."""
    folder = NodeFolder(_port_dir(cache, port).resolve(), version)
    if folder_owner(cache, port) not in (f"node {port}", None):
        shutil.rmtree(folder.data, ignore_errors=True)
    return folder


def folder_owner(cache: Path, port: int) -> str | None:
    """Whose the node folder at `port` is: `node PORT` for a single node, a cluster's id, or None (none yet)."""
    try:
        return (_port_dir(cache, port) / OWNER_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None


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


def _start_distribution(
    cache: Path,
    version: str,
    port: int,
    heap: str,
    extra: dict[str, Any],
    note: str,
    cluster: Cluster | None = None,
    prepare: Callable[[NodeFolder, RunAs], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Launch one distribution node (not waiting for it). `prepare`, given the node's fresh folder, adds
    to its home (a plugin, certificates) and returns settings and record fields (keys with a dot are settings)."""
    java_home, _major = find_java(version)
    # The distribution with the plugins every node gets (the lawindex plugin), installed once and cached.
    dist = plugin.node_home(version, cache, java_home)
    user = run_as(cache)
    # A cluster's own start decides for its members' data (`_same_cluster`).
    folder = (
        NodeFolder(_port_dir(cache, port).resolve(), version) if cluster else _single_node_folder(cache, port, version)
    )
    owner = cluster.id if cluster is not None else f"node {port}"
    settings = node_settings(port, extra, folder, cluster)
    transport = int(settings["transport.port"]) if str(settings["transport.port"]).isdigit() else None
    if transport is not None and not _port_free(transport):
        raise NodeError(
            f"transport port {transport} (HTTP port + {TRANSPORT_OFFSET}) on {HOST} is taken",
            hint="use another --port, or --setting transport.port=N",
        )
    prepare_node(folder, dist, settings, heap, user)
    added: dict[str, Any] = {"knn": knn.install(folder.home, version, cache)}  # what --by meaning needs
    if prepare is not None:
        added |= prepare(folder, user)
        more = {k: v for k, v in added.items() if "." in k}
        added = {k: v for k, v in added.items() if "." not in k}
        with (folder.config / "opensearch.yml").open("a", encoding="utf-8") as yml:
            yml.write("".join(f"{key}: {json.dumps(value)}\n" for key, value in more.items()))
        _chown_tree(folder.home, user)
    _reachable(folder, user)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        # Nothing of the caller's home: as root that is /root, which the node's user cannot read.
        "HOME": str(folder.root),
        "JAVA_HOME": str(java_home),
        "OPENSEARCH_JAVA_HOME": str(java_home),
        "OPENSEARCH_PATH_CONF": str(folder.config),
    }
    (folder.root / OWNER_FILE).write_text(owner + "\n", encoding="utf-8")
    command = [str(folder.home / "bin" / "opensearch"), "-p", str(folder.root / "opensearch.pid")]
    pid = _spawn_detached(command, folder.root, folder.logs / "stdout.log", env, user)
    return {
        "version": version, "port": port, "heap": heap, "pid": pid, "home": str(folder.home),
        "data_dir": str(folder.data), "log": str(folder.logs / f"{settings['cluster.name']}.log"),
        "java": str(java_home), "container": None, "runs": "distribution", "image": None, "user": user.name,
        "note": note, "modules_added": distribution.modules_added(dist), "started_at": time.time(),
        "name": settings["node.name"], "transport_port": transport, "runtime": "distribution", **added,
    }  # fmt: skip


# --- the entry points -----------------------------------------------------------------------------


def created_runtime(record: dict[str, Any] | None) -> Runtime | None:
    """What ran the single node recorded at a port, `docker` or `distribution` (None: no such node): the
    runtime `start` runs it with again unless --runtime (or $LAWINDEX_RUNTIME) says otherwise. A record
    from before the field was written says it by its container."""
    if record is None or "members" in record:
        return None
    ran = record.get("runtime") or ("docker" if record.get("container") else "distribution")
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
) -> NodeStatus:
    """A green single-node OpenSearch on 127.0.0.1:port; the one already running there if `start` made it.

    `runtime` (else $LAWINDEX_RUNTIME, else auto): `auto` uses Docker where an engine answers and an image
    can be had, else the distribution; `docker` insists on an image; `distribution` never uses Docker.
    `settings` are extra static node settings (`thread_pool.write.queue_size=1` for the tests that force
    429s); they apply to a node this call starts, not to one it finds running.

    `nodes` > 1 starts that many distribution nodes as one cluster on ports port..port+nodes-1 (the record
    lives at `port`); `secure` starts nodes with the security plugin, TLS and users (see `indexer.node.security`)."""
    version = version or default_version()
    how = _runtime(runtime)
    if not _HEAP.match(heap):
        raise NodeError(f"heap {heap!r} is not a JVM size like 512m or 2g")
    if not 1 <= nodes <= MAX_NODES:
        raise BadInput(f"--nodes {nodes}: a local cluster has 1 to {MAX_NODES} nodes")
    if not 1 <= port <= 65535 - TRANSPORT_OFFSET - nodes + 1:
        raise NodeError(f"port {port} is not a TCP port lawindex can use (1 to {65535 - TRANSPORT_OFFSET})")
    cache = _cache(cache_dir)
    if nodes > 1 or secure:
        if how == "docker":
            raise BadInput("--runtime docker runs a single node without security", hint="use the distribution")
        return _start_cluster(cache, version, port, heap, settings or {}, nodes, secure)
    url = f"http://{HOST}:{port}"
    with distribution.locked(cache / "nodes" / f"{port}.lock"):
        record = _read_record(cache, port)
        current = _status_from(record, port)
        if record is not None and current.state == "running":
            if record.get("version") != version:
                raise NodeError(
                    f"port {port} already runs OpenSearch {record.get('version')}, started by lawindex",
                    hint=f"lawindex opensearch stop --port {port}, or pick another --port",
                )
            found = _wait_green(url, lambda: status(port, cache).state == "running", _log_path(record))
            return _status_from({**record, "version": found}, port, reused=True)
        if current.state == "dead":
            # A JVM killed a moment ago shows as dead (its main thread a zombie) while its other
            # threads still exit and hold the port for a second or two.
            _wait_port_free(port, DEAD_PORT_GRACE_S)
        if not _port_free(port):
            raise NodeError(
                f"port {port} on {HOST} is taken by a process lawindex did not start",
                hint=f"stop that process or use another --port (see: ss -ltnp 'sport = :{port}')",
            )
        # Once `lawindex opensearch image` had built an image, `auto` started a node made by the distribution
        # as a container with none of its data: a node keeps its runtime unless told otherwise.
        created = None if runtime or os.environ.get("LAWINDEX_RUNTIME") else created_runtime(record)
        record = _launch(cache, version, port, heap, settings or {}, created or how, kept=created is not None)
        _write_record(cache, port, record)
        found = _wait_green(url, lambda: status(port, cache).state == "running", _log_path(record))
        if found != version:
            raise NodeError(f"asked for OpenSearch {version}, but the node on {url} reports {found}")
        return _status_from(record, port)


def _start_cluster(
    cache: Path, version: str, port: int, heap: str, extra: dict[str, str], count: int, secure: bool
) -> NodeStatus:
    ports = tuple(range(port, port + count))
    timeout = GREEN_TIMEOUT_S + CLUSTER_GREEN_EXTRA_S * (count - 1)
    with distribution.locked(cache / "nodes" / f"{port}.lock"):
        record = _read_record(cache, port)
        same = _same_cluster(cache, record, ports, version, secure)
        if record is not None and not same and _status_from(record, port).state == "running":
            raise NodeError(
                f"port {port} already runs another OpenSearch started by lawindex "
                f"({record.get('version')}, {len(_members(record))} node(s))",
                hint=f"lawindex opensearch stop --port {port}, or pick another --port",
            )
        if record is None or not same:
            for member in ports:
                if not _port_free(member) or not _port_free(member + TRANSPORT_OFFSET):
                    raise NodeError(
                        f"port {member} or {member + TRANSPORT_OFFSET} on {HOST} is taken",
                        hint="stop what holds it or use another --port",
                    )
                # A new cluster: what an earlier node left on these ports belongs to another cluster.
                shutil.rmtree(NodeFolder(_port_dir(cache, member).resolve(), version).data, ignore_errors=True)
            record = {
                "version": version, "heap": heap, "secure": secure, "members": [], "runs": "distribution",
                "id": f"cluster {port} {uuid.uuid4().hex}",
            }  # fmt: skip
            bootstrap = True
        else:
            assert record is not None
            bootstrap = False
        prepare = _secure_preparer(cache, version, port) if secure else None
        cluster = Cluster(ports, str(record["id"]), bootstrap=bootstrap)
        old = {int(m["port"]): m for m in record.get("members", [])}
        members: list[dict[str, Any]] = []
        relaunched = False
        for member in ports:
            known = old.get(member)
            if known is not None and _member_state(known) == "running":
                members.append(known)
                continue
            if known is not None:
                _wait_port_free(member, DEAD_PORT_GRACE_S)
                _wait_port_free(member + TRANSPORT_OFFSET, DEAD_PORT_GRACE_S)
            members.append(_start_distribution(cache, version, member, heap, extra, "a cluster node", cluster, prepare))
            relaunched = True
            # Write as we go: a failure later still leaves a record of what runs, for stop.
            record = {**record, "members": members + [old[p] for p in ports if p in old and p > member]}
            _write_record(cache, port, record)
        first = members[0]
        record = {
            **record, "members": members, "java": first.get("java"), "user": first.get("user"),
            "note": (f"{count} distribution nodes on ports {ports[0]}-{ports[-1]}" if count > 1
                     else "a secured distribution node"),
            **{k: first[k] for k in ("ca_certs", "credentials", "admin_credentials") if k in first},
        }  # fmt: skip
        _write_record(cache, port, record)
        found = wait_cluster_green(cache, port, timeout)
        if found != version:
            raise NodeError(f"asked for OpenSearch {version}, but the cluster on port {port} reports {found}")
        return _status_from(record, port, reused=not relaunched)


def _same_cluster(
    cache: Path, record: dict[str, Any] | None, ports: tuple[int, ...], version: str, secure: bool
) -> bool:
    """Whether `record` (at ports[0]) is the cluster asked for, to be started again from its nodes' data:
    the same ports, version and security, and every member folder still its own. Another cluster on
    overlapping ports, started since, took a folder over (and its data): this one cannot form again from
    what is left, and starts anew."""
    return (
        record is not None
        and "members" in record
        and bool(record.get("id"))
        and [int(m["port"]) for m in _members(record)] == list(ports)
        and record.get("version") == version
        and bool(record.get("secure")) == secure
        and all(folder_owner(cache, member) == record.get("id") for member in ports)
    )


def _admin_access(record: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """The SSL context and headers that reach a secured record's nodes as admin (none for a plain one)."""
    if not record.get("secure"):
        return None, {}
    import base64
    import ssl

    context = ssl.create_default_context(cafile=str(record["ca_certs"]))
    secret = Path(str(record["admin_credentials"])).read_text(encoding="utf-8").strip()
    token = base64.b64encode(f"admin:{secret}".encode()).decode()
    return context, {"Authorization": f"Basic {token}"}


def wait_cluster_green(cache: Path, port: int, timeout: float = GREEN_TIMEOUT_S) -> str:
    """Poll the cluster recorded at `port` until all its nodes joined and it is green; its version."""
    record = _read_record(cache, port)
    if record is None:
        raise NodeError(f"lawindex has started no OpenSearch on port {port}")
    members = _members(record)
    context, headers = _admin_access(record)
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        views = [_node_view(m) for m in members]
        if not any(v["state"] == "running" for v in views):
            log = _log_path(members[0])
            raise NodeError(
                f"the OpenSearch nodes on port {port}.. exited while starting" + _log_tail_note(log),
                hint=f"see {log}" if log else None,
            )
        # Every node asked on its own port: a node just relaunched answers only once it has started and
        # joined, while the others may still report the node it replaces (stopped a moment ago) as a
        # member of a green cluster. Returning on their word let a rolling restart stop a second node
        # while the first was still down, and the cluster lost its quorum.
        answers = [
            _get_json(
                f"{view['url']}/_cluster/health?wait_for_status=green&wait_for_nodes={len(members)}&timeout=1s",
                timeout=5,
                context=context,
                headers=headers,
            )
            if view["state"] == "running"
            else None
            for view in views
        ]
        for health in answers:
            if health:
                seen = f"{health.get('status')}, {health.get('number_of_nodes')} node(s)"
        if all(
            health and health.get("status") == "green" and health.get("number_of_nodes") == len(members)
            for health in answers
        ):
            root = _get_json(views[0]["url"], context=context, headers=headers) or {}
            return str(root.get("version", {}).get("number", "unknown"))
        time.sleep(1.0)
    raise NodeError(
        f"the OpenSearch cluster on port {port} was not green with {len(members)} node(s) after {timeout:.0f} s"
        + (f" (last: {seen})" if seen else "")
        + _log_tail_note(_log_path(members[0]))
    )


def _secure_preparer(cache: Path, version: str, port: int) -> Callable[[NodeFolder, RunAs], dict[str, Any]]:
    """What makes a node secure: the security plugin installed into its home, the cluster's CA and node
    certificates and its users (made once, in <cache>/nodes/<port>/secure/, kept across restarts)."""
    from indexer.node import security

    plugin = f"opensearch-security-{version}.0"
    keep = _port_dir(cache, port).resolve() / "secure"
    java_home, _major = find_java(version)

    def prepare(folder: NodeFolder, user: RunAs) -> dict[str, Any]:
        zipped = cache / "dist" / f"{plugin}.zip"
        with distribution.locked(cache / "dist" / f"{plugin}.lock"):
            if not zipped.is_file():
                distribution.download(f"org/opensearch/plugin/opensearch-security/{version}.0/{plugin}.zip", zipped)
        keep.mkdir(parents=True, exist_ok=True)
        credentials = keep / "credentials.env"
        admin_file = keep / "admin.password"
        if not (keep / "lawindex-ca.pem").is_file() or not credentials.is_file() or not admin_file.is_file():
            security.make_certificates(keep)
            admin, own = security.password(), security.password()
            security._write_private(admin_file, (admin + "\n").encode())
            security._write_private(
                credentials, f"OPENSEARCH_USER={security.ROLE_NAME}\nOPENSEARCH_PASSWORD={own}\n".encode()
            )
            security.write_config(keep / "opensearch-security", security.security_config(admin, own))
        done = subprocess.run(
            [str(folder.home / "bin" / "opensearch-plugin"), "install", "--batch", zipped.resolve().as_uri()],
            capture_output=True, text=True, check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "JAVA_HOME": str(java_home),
                 "OPENSEARCH_JAVA_HOME": str(java_home), "OPENSEARCH_PATH_CONF": str(folder.config),
                 "HOME": str(folder.root)},
        )  # fmt: skip
        if done.returncode != 0:
            raise NodeError(f"installing {plugin} failed: {(done.stderr or done.stdout).strip()[-500:]}")
        for pem in keep.glob("*.pem"):
            shutil.copy2(pem, folder.config / pem.name)
        for yml in (keep / "opensearch-security").iterdir():
            shutil.copy2(yml, folder.config / "opensearch-security" / yml.name)
        for path in (folder.config, folder.home / "plugins"):
            _chown_tree(path, user)
        certificates = security.Certificates(
            directory=folder.config, ca=folder.config / "lawindex-ca.pem", node=folder.config / "lawindex-node.pem",
            node_key=folder.config / "lawindex-node-key.pem", admin=folder.config / "lawindex-admin.pem",
            admin_key=folder.config / "lawindex-admin-key.pem", node_dn=security._NODE_DN, admin_dn=security._ADMIN_DN,
        )  # fmt: skip
        return {
            **security.node_settings(certificates), "scheme": "https", "ca_certs": str(keep / "lawindex-ca.pem"),
            "credentials": str(credentials), "admin_credentials": str(admin_file),
        }  # fmt: skip

    return prepare


def _launch(
    cache: Path, version: str, port: int, heap: str, extra: dict[str, str], how: Runtime, kept: bool = False
) -> dict[str, Any]:
    """Start what `how` says. `kept`: `how` is the runtime the node at `port` was created with."""
    created = f"the node on port {port} was created as {'a container' if how == 'docker' else 'the distribution'}"
    if how == "distribution":
        why = f"{created} (--runtime auto chooses again)" if kept else "asked for the distribution"
        return _start_distribution(cache, version, port, heap, extra, why)
    problem = containers.engine_problem()
    keep = f"; {created} (--runtime distribution runs it from the same data)" if kept else ""
    if problem is not None:
        if how == "docker":
            raise NodeError(
                f"no Docker engine answers: {problem}{keep}", hint="start one, or use --runtime distribution"
            )
        return _start_distribution(cache, version, port, heap, extra, f"no Docker engine ({problem})")
    image, runs, note = choose_image(version)
    if image is None:
        if how == "docker":
            raise NodeError(f"no image of OpenSearch {version}: {note}{keep}", hint="lawindex opensearch image")
        return _start_distribution(cache, version, port, heap, extra, note)
    return _start_container(cache, image, runs, f"{created}; {note}" if kept else note, version, port, heap, extra)


def _log_path(record: dict[str, Any]) -> Path | None:
    log = record.get("log")
    return Path(log) if log else None


def _stop_member(member: dict[str, Any]) -> None:
    """Signal one node to end (SIGTERM; the caller waits)."""
    if member.get("container"):
        containers.remove(str(member["container"]))
        member["live"] = False
    elif _member_state(member) == "running":
        os.kill(int(member["pid"]), signal.SIGTERM)


def stop(port: int = 9200, cache_dir: Path | str | None = None, node: int | None = None) -> NodeStatus:
    """End the node(s) `start` started at `port` (by pid or container), and nothing else; the status after.
    `node` (1-based) ends that one node of a cluster alone."""
    cache = _cache(cache_dir)
    with distribution.locked(cache / "nodes" / f"{port}.lock"):
        record = _read_record(cache, port)
        if record is None:
            return _status_from(None, port)
        members = _members(record)
        if node is not None and not 1 <= node <= len(members):
            raise BadInput(f"--node {node}: the cluster on port {port} has nodes 1 to {len(members)}")
        chosen = members if node is None else [members[node - 1]]
        running = [m for m in chosen if _member_state(m) == "running"]
        for member in chosen:
            _stop_member(member)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline and any(_member_state(m) == "running" for m in running):
            time.sleep(0.2)
        for member in running:
            if _member_state(member) == "running":
                os.kill(int(member["pid"]), signal.SIGKILL)
        for member in chosen:
            member["pid"] = None
        _write_record(cache, port, record)
        return _status_from(record, port)


def logs(port: int = 9200, lines: int = 50, cache_dir: Path | str | None = None, node: int | None = None) -> str:
    """The last `lines` lines the node on `port` logged (its stdout when the log is empty); of a cluster,
    node `node` (1-based; the first by default), or the node whose HTTP port `port` is."""
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    record = _read_record(cache, port)
    if record is None:
        # A cluster's later node: its record is the first port's.
        for path in (cache / "nodes").glob("*/node.json"):
            found = _read_record(cache, int(path.parent.name)) if path.parent.name.isdigit() else None
            if found and "members" in found and port in [int(m["port"]) for m in found["members"]]:
                record = next(m for m in found["members"] if int(m["port"]) == port)
                break
    if record is None:
        raise NodeError(
            f"lawindex has started no OpenSearch on port {port}", hint=f"lawindex opensearch start --port {port}"
        )
    members = _members(record)
    if node is not None and not 1 <= node <= len(members):
        raise BadInput(f"--node {node}: the cluster on port {port} has nodes 1 to {len(members)}")
    record = members[(node or 1) - 1]
    if record.get("container"):
        done = subprocess.run(["docker", "logs", "--tail", str(lines), str(record["container"])],
                              capture_output=True, text=True, check=False)  # fmt: skip
        return done.stdout + done.stderr
    log = _log_path(record)
    if log is None:
        return ""
    # The node's log; before it exists (a JVM that never started), what the JVM printed.
    return _tail(log, lines) or _tail(log.parent / "stdout.log", lines)
