"""What a local node needs of this machine: the cache directory, the user the node runs as, free ports.

OpenSearch refuses to run as root. Run as root, lawindex runs the node as the system user `lawindex`
(made on first use), and the default cache is /var/cache/lawindex, not /root/.cache (/root is mode 700
and that user could not reach a node under it).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.cache import default_cache_dir
from indexer.errors import NodeError
from indexer.node import distribution

HOST = "127.0.0.1"
# A node's transport port is its HTTP port + 100 (9200 → 9300), so the ports of several local nodes
# never collide with each other's, and a cluster's seed hosts can be written without asking anyone.
TRANSPORT_OFFSET = 100
SERVICE_USER = "lawindex"
# A JVM killed a moment ago shows as dead (its main thread a zombie) while its other threads still exit
# and hold its ports for a second or two.
DEAD_PORT_GRACE_S = 15.0


def writable_cache(cache_dir: Path | str | None) -> Path:
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


def chown_tree(path: Path, user: RunAs) -> None:
    """`path` and all in it given to `user` (nothing to do when it is the caller)."""
    if user.is_caller:
        return
    os.chown(path, user.uid, user.gid)
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.chown(os.path.join(root, name), user.uid, user.gid, follow_symlinks=False)


def as_user(user: RunAs) -> dict[str, Any]:
    """subprocess keyword arguments that run a child as `user` (nothing when it is the caller)."""
    if user.is_caller:
        return {}
    return {"user": user.uid, "group": user.gid, "extra_groups": []}


def port_free(port: int) -> bool:
    """Whether nothing listens on (or holds) 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def wait_port_free(port: int, timeout: float) -> bool:
    """Whether the port came free within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not port_free(port):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True
