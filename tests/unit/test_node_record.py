"""indexer.node.record: node.json as earlier versions of lawindex wrote it reads into the typed record, and
is written back with the same keys and values; what `status` and `stop` make of such files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from indexer.errors import NodeError
from indexer.node import node, record

# Records as lawindex wrote them before the record was typed (the literals of its node.py), one of each shape.
DISTRIBUTION = {
    "version": "3.6.0", "port": 9461, "heap": "512m", "pid": 4194305, "home": "/c/nodes/9461/home",
    "data_dir": "/c/nodes/9461/data/3.6.0", "log": "/c/nodes/9461/logs/lawindex-9461.log",
    "java": "/usr/lib/jvm/temurin-25", "container": None, "runs": "distribution", "image": None, "user": "lawindex",
    "note": "asked for the distribution", "modules_added": [], "started_at": 1764600000.25, "name": "lawindex-9461",
    "transport_port": 9561, "runtime": "distribution", "knn": "opensearch-knn",
}  # fmt: skip
CONTAINER = {
    "version": "3.6.0", "port": 9462, "heap": "512m", "container": "lawindex-opensearch-9462", "live": True,
    "runs": "local image", "image": "lawindex/opensearch:3.6.0", "note": "opensearchproject/opensearch:3.6.0 cannot"
    " be pulled (no registry)", "data_dir": "/c/nodes/9462/data/3.6.0", "log": None, "pid": None, "java": None,
    "home": None, "user": None, "runtime": "docker",
}  # fmt: skip
SECURED_MEMBER = {
    **DISTRIBUTION, "port": 9463, "name": "lawindex-9463", "transport_port": 9563, "note": "a cluster node",
    "scheme": "https", "ca_certs": "/c/nodes/9463/secure/lawindex-ca.pem",
    "credentials": "/c/nodes/9463/secure/credentials.env", "admin_credentials": "/c/nodes/9463/secure/admin.password",
}  # fmt: skip
SECURED = {
    "version": "2.19.4", "heap": "512m", "secure": True, "members": [SECURED_MEMBER], "runs": "distribution",
    "id": "cluster 9463 0123456789abcdef", "java": "/usr/lib/jvm/temurin-25", "user": "lawindex",
    "note": "a secured distribution node", "ca_certs": "/c/nodes/9463/secure/lawindex-ca.pem",
    "credentials": "/c/nodes/9463/secure/credentials.env", "admin_credentials": "/c/nodes/9463/secure/admin.password",
}  # fmt: skip
# A cluster record from before `id` was written, its members from before `runtime`, `name` and `knn` were.
OLD_CLUSTER = {
    "version": "3.6.0", "heap": "256m", "secure": False, "runs": "distribution", "java": "/usr/lib/jvm/j21",
    "user": "lawindex", "note": "2 distribution nodes on ports 9470-9471",
    "members": [
        {"version": "3.6.0", "port": 9470, "heap": "256m", "pid": None, "home": "/c/nodes/9470/home",
         "data_dir": "/c/nodes/9470/data/3.6.0", "log": "/c/nodes/9470/logs/lawindex-9470.log", "container": None},
        {"version": "3.6.0", "port": 9471, "heap": "256m", "pid": None, "home": "/c/nodes/9471/home",
         "data_dir": "/c/nodes/9471/data/3.6.0", "log": "/c/nodes/9471/logs/lawindex-9470.log", "container": None},
    ],
}  # fmt: skip


def _put(cache: Path, port: int, body: Any) -> Path:
    path = cache / "nodes" / str(port) / "node.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "body", [DISTRIBUTION, CONTAINER, SECURED, OLD_CLUSTER], ids=["dist", "docker", "secure", "old"]
)
def test_an_earlier_record_is_written_back_as_it_was_read(tmp_path: Path, body: dict[str, Any]) -> None:
    port = 9461
    path = _put(tmp_path, port, body)
    found = record.read(tmp_path, port)
    assert found is not None
    record.write(tmp_path, port, found)
    assert json.loads(path.read_text(encoding="utf-8")) == body


def test_keys_this_version_does_not_know_are_kept(tmp_path: Path) -> None:
    body = {**DISTRIBUTION, "from_a_later_lawindex": {"a": [1, 2]}}
    path = _put(tmp_path, 9461, body)
    found = record.read(tmp_path, 9461)
    assert isinstance(found, record.Member)
    found.pid = None
    record.write(tmp_path, 9461, found)
    assert json.loads(path.read_text(encoding="utf-8")) == {**body, "pid": None}


def test_the_two_shapes_are_told_apart_by_members(tmp_path: Path) -> None:
    _put(tmp_path, 9461, DISTRIBUTION)
    _put(tmp_path, 9463, SECURED)
    single, cluster = record.read(tmp_path, 9461), record.read(tmp_path, 9463)
    assert isinstance(single, record.Member) and isinstance(cluster, record.ClusterRecord)
    assert record.nodes(single) == [single]
    assert [m.port for m in record.nodes(cluster)] == [9463]
    assert cluster.members[0].scheme == "https" and cluster.secure is True


@pytest.mark.parametrize("text", ["", "{", "[]", '"a"', '{"pid": 3}', '{"port": "not a port"}'])
def test_a_record_that_is_not_one_reads_as_none_and_the_port_as_stopped(tmp_path: Path, text: str) -> None:
    path = tmp_path / "nodes" / "9461" / "node.json"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    assert record.read(tmp_path, 9461) is None
    assert node.status(9461, tmp_path).state == "stopped"


def test_status_of_an_earlier_secured_record(tmp_path: Path) -> None:
    """pid 4194305 is above Linux's pid_max: never a live process, so the node is dead (gone unasked)."""
    _put(tmp_path, 9463, SECURED)
    found = node.status(9463, tmp_path).to_json()
    assert found["state"] == "dead"
    assert found["url"] == "https://127.0.0.1:9463"
    assert (found["version"], found["pid"], found["heap"], found["runs"]) == ("2.19.4", 4194305, "512m", "distribution")
    assert found["ca_certs"] == "/c/nodes/9463/secure/lawindex-ca.pem"
    assert found["credentials"] == "/c/nodes/9463/secure/credentials.env"
    assert found["nodes"] == [
        {"name": "lawindex-9463", "http_port": 9463, "transport_port": 9563, "url": "https://127.0.0.1:9463",
         "pid": 4194305, "state": "dead", "log": "/c/nodes/9461/logs/lawindex-9461.log"},
    ]  # fmt: skip


def test_stop_of_an_earlier_cluster_record_changes_only_the_pids(tmp_path: Path) -> None:
    body = {**OLD_CLUSTER, "members": [{**m, "pid": 4194305} for m in OLD_CLUSTER["members"]]}
    path = _put(tmp_path, 9470, body)
    assert node.stop(9470, tmp_path).state == "stopped"
    assert json.loads(path.read_text(encoding="utf-8")) == OLD_CLUSTER
    # A later node of the cluster: its logs are found through the first port's record.
    with pytest.raises(NodeError, match="lawindex has started no OpenSearch on port 9472"):
        node.logs(9472, 5, tmp_path)
    assert node.logs(9471, 5, tmp_path) == ""
