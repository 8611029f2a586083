"""`lawindex opensearch upgrade`'s parts that need no node (indexer.node.upgrade): what a node's opensearch.yml holds
beyond lawindex's own settings is written again for the new version, and a cluster that is not lawindex's several
distribution nodes is refused before anything is touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexer.errors import BadInput, NodeError
from indexer.node import node, record
from indexer.node.launch import Cluster, node_settings
from indexer.node.record import ClusterRecord, Member, NodeFolder
from indexer.node.upgrade import _extra_settings, upgrade


def test_a_nodes_own_settings_go_with_it(tmp_path: Path) -> None:
    folder = NodeFolder(tmp_path / "9630", "2.19.6")
    folder.config.mkdir(parents=True)
    cluster = Cluster((9630, 9631, 9632), "cluster 9630 x", bootstrap=True)
    written = node_settings(9630, {"thread_pool.write.queue_size": "1", "indices.query.bool.max_clause_count": 4096},
                            folder, cluster)  # fmt: skip
    lines = [f"{key}: {json.dumps(value)}" for key, value in written.items()]
    (folder.config / "opensearch.yml").write_text("# lawindex\n" + "\n".join(lines) + "\n", encoding="utf-8")
    again = Cluster(cluster.ports, cluster.id, bootstrap=False)
    assert _extra_settings(folder, 9630, again) == {
        "thread_pool.write.queue_size": "1",
        "indices.query.bool.max_clause_count": 4096,
    }


@pytest.mark.parametrize("members", [0, 1])
def test_only_a_cluster_of_several_distribution_nodes_is_upgraded(tmp_path: Path, members: int) -> None:
    if members:
        found = ClusterRecord(version="2.19.6", runs="distribution", members=[Member(port=9630, version="2.19.6")])
        record.write(tmp_path, 9630, found)
    with pytest.raises(BadInput, match="no cluster of several distribution nodes"):
        upgrade(9630, "3.6.0", cache_dir=tmp_path)


def test_a_cluster_half_way_through_an_upgrade_is_not_started_as_one_version(tmp_path: Path) -> None:
    members = [Member(port=9630, version="3.6.0"), Member(port=9631, version="2.19.6"), Member(port=9632)]
    record.write(tmp_path, 9630, ClusterRecord(version="2.19.6", runs="distribution", members=members, id="c"))
    with pytest.raises(NodeError, match="half-way through an upgrade") as refused:
        node.start(version="2.19.6", port=9630, nodes=3, cache_dir=tmp_path, runtime="distribution")
    assert refused.value.hint == "finish it: lawindex opensearch upgrade --port 9630 --version 3.6.0"
