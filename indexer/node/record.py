"""What `start` started at a port, as `<cache>/nodes/<port>/node.json` says it, and the node folders.

The record is read and written here alone. Two shapes, as lawindex has always written them: a single
node's record is the node itself (`Member`, flat), a cluster's record (`ClusterRecord`) lists its nodes
under `members`. Keys a record holds and these models do not name (a later lawindex's) are kept as they
were, and a record is written back with the keys it was read or made with: node.json files left by
earlier versions read, and are written, as before.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

RECORD_FILE = "node.json"
# A node folder's `owner` file: whose the folder (and its data) is, `node PORT` or a cluster's id.
OWNER_FILE = "owner"
# Where a node's JVM writes a heap dump when it dies of OutOfMemoryError: one file, under its logs. The JVM
# never overwrites a dump file, so this one name keeps at most one dump (about the heap's size) until it is
# removed; `lawindex opensearch status` names it. The distribution's own jvm.options writes a dump per
# death into `data` (java_pid<pid>.hprof): each crash of a 512 MB node left about 600 MB there.
HEAP_DUMP = "heap-dump.hprof"


class _Recorded(BaseModel):
    """The fields a single node's record and a cluster's record share (what `status` reports)."""

    model_config = ConfigDict(extra="allow")

    version: str | None = None
    heap: str | None = None
    java: str | None = None
    # What runs: "distribution", "official image" or "local image"; the image; the user the distribution
    # runs as; why this runtime was chosen over the ones before it.
    runs: str | None = None
    image: str | None = None
    user: str | None = None
    note: str | None = None
    # A secured node's CA, its least-privileged user's credentials file and the admin's password file.
    ca_certs: str | None = None
    credentials: str | None = None
    admin_credentials: str | None = None


class Member(_Recorded):
    """One node: the whole record of a single node, or one of a cluster's `members`."""

    port: int
    pid: int | None = None
    home: str | None = None
    data_dir: str | None = None
    log: str | None = None
    container: str | None = None
    # A container's: whether it was running when last seen by lawindex (stop clears it), so that a gone
    # container is told apart as dead or stopped.
    live: bool | None = None
    # "docker" or "distribution": what created the node (records from before it say it by `container`).
    runtime: str | None = None
    modules_added: list[str] | None = None
    started_at: float | None = None
    name: str | None = None
    transport_port: int | None = None
    knn: str | None = None
    scheme: str | None = None


class ClusterRecord(_Recorded):
    """Several distribution nodes (or one secured node) started together; recorded at the first port."""

    members: list[Member]
    secure: bool | None = None
    # Written into each member's folder as its owner; records from before it have none.
    id: str | None = None


NodeRecord = Member | ClusterRecord


def nodes(record: NodeRecord) -> list[Member]:
    """The nodes of a record: a cluster's members; a single node is its own one member."""
    return record.members if isinstance(record, ClusterRecord) else [record]


def port_dir(cache: Path, port: int) -> Path:
    """The folder of the node at `port`: its record (the cluster's, at its first port), home, data, logs."""
    return cache / "nodes" / str(port)


def read(cache: Path, port: int) -> NodeRecord | None:
    """The record at `port`; None when there is none, or it cannot be read as one."""
    path = port_dir(cache, port) / RECORD_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            return None
        return ClusterRecord.model_validate(data) if "members" in data else Member.model_validate(data)
    except (OSError, ValueError, ValidationError):
        return None


def write(cache: Path, port: int, record: NodeRecord) -> None:
    """Replace the record at `port` at once (a reader never sees half of one)."""
    path = port_dir(cache, port) / RECORD_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    body = record.model_dump(mode="json", exclude_unset=True)
    tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


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

    @property
    def tmp(self) -> Path:
        # OPENSEARCH_TMPDIR: emptied at each start (bin/opensearch would otherwise start a JVM to make one more
        # /tmp/opensearch-N, left there after the node stops).
        return self.root / "tmp"


def folder_owner(cache: Path, port: int) -> str | None:
    """Whose the node folder at `port` is: `node PORT` for a single node, a cluster's id, or None (none yet)."""
    try:
        return (port_dir(cache, port) / OWNER_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None


def single_node_folder(cache: Path, port: int, version: str) -> NodeFolder:
    """The folder of the single node at `port`, whatever runs it. When a cluster took it over since, its
    data holds that cluster's state, which a single node must not start from: it is dropped."""
    folder = NodeFolder(port_dir(cache, port).resolve(), version)
    if folder_owner(cache, port) not in (f"node {port}", None):
        shutil.rmtree(folder.data, ignore_errors=True)
    return folder
