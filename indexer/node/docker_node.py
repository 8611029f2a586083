"""Starting a single node as a container: the official image when the engine has it or can pull it,
else the image `lawindex opensearch image` built here, else none (the distribution runs instead).

The node folder's data/<version> is mounted as the container's path.data: a container's indices live
where the distribution's do, and survive `stop` + `start` (the container is removed at stop).
"""

from __future__ import annotations

import os
from pathlib import Path

from indexer.errors import NodeError
from indexer.node import containers
from indexer.node.host import HOST, RunAs, chown_tree
from indexer.node.pins import local_image, official_image
from indexer.node.record import OWNER_FILE, Member, single_node_folder

# Where the official image and lawindex/opensearch keep path.data.
CONTAINER_DATA = "/usr/share/opensearch/data"


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


def _data_for_image(data: Path, image: str) -> None:
    """`data` made writable by the user the image runs OpenSearch as (uid 1000 in both images); the
    distribution gives it back to its own user at its next start."""
    uid, gid = containers.image_user(image)
    if os.geteuid() == 0:
        chown_tree(data, RunAs("image", uid, gid))
    elif data.stat().st_uid != uid:
        why = containers.chown(image, str(data), uid, gid)
        if why is not None:
            raise NodeError(f"could not give {data} to uid {uid}, who runs OpenSearch in {image}: {why}")


def start_container(
    cache: Path, image: str, runs: str, note: str, version: str, port: int, heap: str, extra: dict[str, str]
) -> Member:
    """The image, bound to 127.0.0.1 only; security off because nothing but loopback reaches it. Its
    data is the node folder's, as the distribution's is, under the same cluster and node names."""
    name = f"lawindex-opensearch-{port}"
    containers.remove(name)
    folder = single_node_folder(cache, port, version)
    folder.data.mkdir(parents=True, exist_ok=True)
    _data_for_image(folder.data, image)
    (folder.root / OWNER_FILE).write_text(f"node {port}\n", encoding="utf-8")
    env = [
        f"cluster.name=lawindex-{port}",
        f"node.name=lawindex-{port}",
        "discovery.type=single-node",
        "DISABLE_SECURITY_PLUGIN=true",
        "DISABLE_INSTALL_DEMO_CONFIG=true",
        "cluster.routing.allocation.disk.threshold_enabled=false",
        # The caller's OPENSEARCH_JAVA_OPTS after the heap, as for a distribution node (launch.node_environment).
        f"OPENSEARCH_JAVA_OPTS=-Xms{heap} -Xmx{heap} {os.environ.get('OPENSEARCH_JAVA_OPTS', '')}".strip(),
        *(f"{key}={value}" for key, value in extra.items()),
    ]
    said = containers.run_detached(name, image, f"{HOST}:{port}:9200", f"{folder.data}:{CONTAINER_DATA}", env)
    if said is not None:
        raise NodeError(f"docker could not start {image}: {said}")
    return Member(
        version=version, port=port, heap=heap, container=name, live=True, runs=runs, image=image, note=note,
        data_dir=str(folder.data), log=None, pid=None, java=None, home=None, user=None, runtime="docker",
    )  # fmt: skip
