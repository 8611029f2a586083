"""Several distribution nodes started as one cluster on ports port..port+N-1 (the record lives at the
first port), and the secured node (`--secure`): the security plugin, the cluster's own CA, certificates
and users (`indexer.node.security`), made once and kept across restarts.

A stopped cluster starts again from its nodes' data when it is the same cluster (ports, version,
security, and every folder still its own); otherwise it starts anew, bootstrapping once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping
from pathlib import Path

from indexer.errors import NodeError
from indexer.node import distribution, record, security
from indexer.node.host import DEAD_PORT_GRACE_S, HOST, TRANSPORT_OFFSET, RunAs, chown_tree, port_free, wait_port_free
from indexer.node.java import find_java
from indexer.node.launch import Cluster, Prepare, Secured, start_distribution
from indexer.node.record import ClusterRecord, Member, NodeFolder, NodeRecord, folder_owner, nodes, port_dir
from indexer.node.state import GREEN_TIMEOUT_S, NodeStatus, member_state, status_from, wait_green

MAX_NODES = 5
# Each further node of a cluster adds to the time to green: under a load of 15-20 on two cores, a
# three-node cluster took minutes.
CLUSTER_GREEN_EXTRA_S = 120.0


def start_cluster(
    cache: Path,
    version: str,
    port: int,
    heap: str,
    extra: dict[str, str],
    count: int,
    secure: bool,
    homes: Mapping[int, Path] | None = None,
) -> NodeStatus:
    """`count` distribution nodes (secured or not) as one green cluster; the nodes of it still running
    are kept, the others started again from their data. `homes`: a node's own distribution home by its port
    (another build of the plugin: tests/integration/test_plugin_wire.py), else the one every node gets."""
    ports = tuple(range(port, port + count))
    timeout = GREEN_TIMEOUT_S + CLUSTER_GREEN_EXTRA_S * (count - 1)
    with distribution.locked(cache / "nodes" / f"{port}.lock"):
        found = record.read(cache, port)
        if isinstance(found, ClusterRecord):
            half_way(found, port)
        same = isinstance(found, ClusterRecord) and same_cluster(cache, found, ports, version, secure)
        if found is not None and not same and status_from(found, port).state == "running":
            raise NodeError(
                f"port {port} already runs another OpenSearch started by lawindex "
                f"({found.version}, {len(nodes(found))} node(s))",
                hint=f"lawindex opensearch stop --port {port}, or pick another --port",
            )
        if isinstance(found, ClusterRecord) and same:
            cluster_record, bootstrap = found, False
        else:
            for member in ports:
                if not port_free(member) or not port_free(member + TRANSPORT_OFFSET):
                    raise NodeError(
                        f"port {member} or {member + TRANSPORT_OFFSET} on {HOST} is taken",
                        hint="stop what holds it or use another --port",
                    )
                # A new cluster: what an earlier node left on these ports belongs to another cluster.
                shutil.rmtree(NodeFolder(port_dir(cache, member).resolve(), version).data, ignore_errors=True)
            cluster_record = ClusterRecord(
                version=version, heap=heap, secure=secure, members=[], runs="distribution",
                id=f"cluster {port} {uuid.uuid4().hex}",
            )  # fmt: skip
            bootstrap = True
        prepare = secure_preparer(cache, version, port) if secure else None
        cluster = Cluster(ports, str(cluster_record.id), bootstrap=bootstrap)
        old = {m.port: m for m in cluster_record.members}
        members: list[Member] = []
        relaunched = False
        for member in ports:
            known = old.get(member)
            if known is not None and member_state(known) == "running":
                members.append(known)
                continue
            if known is not None:
                wait_port_free(member, DEAD_PORT_GRACE_S)
                wait_port_free(member + TRANSPORT_OFFSET, DEAD_PORT_GRACE_S)
            own = (homes or {}).get(member)
            members.append(
                start_distribution(cache, version, member, heap, extra, "a cluster node", cluster, prepare, dist=own)
            )
            relaunched = True
            # Write as we go: a failure later still leaves a record of what runs, for stop.
            cluster_record.members = members + [old[p] for p in ports if p in old and p > member]
            record.write(cache, port, cluster_record)
        first = members[0]
        cluster_record.members = members
        cluster_record.java = first.java
        cluster_record.user = first.user
        several = f"{count} distribution nodes on ports {ports[0]}-{ports[-1]}"
        cluster_record.note = several if count > 1 else "a secured distribution node"
        for key in ("ca_certs", "credentials", "admin_credentials"):
            if key in first.model_fields_set:
                setattr(cluster_record, key, getattr(first, key))
        record.write(cache, port, cluster_record)
        running = wait_green(cluster_record, port, timeout)
        if running != version:
            raise NodeError(f"asked for OpenSearch {version}, but the cluster on port {port} reports {running}")
        return status_from(cluster_record, port, reused=not relaunched)


def half_way(found: ClusterRecord, port: int) -> None:
    """NodeError for a cluster whose nodes run two versions (`lawindex opensearch upgrade` stopped half-way): started
    as one version, its nodes of the other would start from no data (or, as a new cluster, lose theirs)."""
    ran = {m.version or found.version for m in found.members}
    if len(ran) > 1:
        newest = max(ran, key=lambda v: tuple(int(p) for p in str(v).split(".") if p.isdigit()))
        raise NodeError(
            f"the cluster on port {port} is half-way through an upgrade (nodes on {', '.join(sorted(map(str, ran)))})",
            hint=f"finish it: lawindex opensearch upgrade --port {port} --version {newest}",
        )


def same_cluster(cache: Path, found: NodeRecord | None, ports: tuple[int, ...], version: str, secure: bool) -> bool:
    """Whether `found` (the record at ports[0]) is the cluster asked for, to be started again from its
    nodes' data: the same ports, version and security, and every member folder still its own. Another
    cluster on overlapping ports, started since, took a folder over (and its data): this one cannot form
    again from what is left, and starts anew."""
    return (
        isinstance(found, ClusterRecord)
        and bool(found.id)
        and [m.port for m in found.members] == list(ports)
        and found.version == version
        and bool(found.secure) == secure
        and all(folder_owner(cache, member) == found.id for member in ports)
    )


def secure_preparer(cache: Path, version: str, port: int) -> Prepare:
    """What makes a node secure: the security plugin installed into its home, the cluster's CA and node
    certificates and its users (made once, in <cache>/nodes/<port>/secure/, kept across restarts)."""
    plugin = f"opensearch-security-{version}.0"
    keep = port_dir(cache, port).resolve() / "secure"
    java_home, _major = find_java(version)

    def prepare(folder: NodeFolder, user: RunAs) -> Secured:
        zipped = cache / "dist" / f"{plugin}.zip"
        with distribution.locked(cache / "dist" / f"{plugin}.lock"):
            if not zipped.is_file():
                distribution.download(f"org/opensearch/plugin/opensearch-security/{version}.0/{plugin}.zip", zipped)
        secrets = security.cluster_secrets(keep)
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
        for yml in secrets.config.iterdir():
            shutil.copy2(yml, folder.config / "opensearch-security" / yml.name)
        for path in (folder.config, folder.home / "plugins"):
            chown_tree(path, user)
        return Secured(
            settings=security.node_settings(security.certificates_in(folder.config)),
            ca_certs=str(secrets.ca),
            credentials=str(secrets.credentials),
            admin_credentials=str(secrets.admin_password),
        )

    return prepare
