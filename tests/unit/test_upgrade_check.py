"""`lawindex plugin check`'s rules for a step to another OpenSearch version (indexer.opensearch.cluster.upgrade_check),
and its report, from a cluster's answers given here (no node): which nodes and indices block a rolling upgrade, and
the exit code each verdict gives."""

from __future__ import annotations

from typing import Any

import pytest

from indexer.opensearch.cluster.upgrade_check import CANNOT_STEP_EXIT, PLUGIN_MISMATCH_EXIT, check, step_blockers

OLD = {"a": "2.19.6", "b": "2.19.6", "c": "3.6.0"}


def test_a_cluster_of_the_last_2x_line_steps_to_3x() -> None:
    assert step_blockers(OLD, {"laws": "2.19.6", "older": "2.0.0"}, "3.6.0") == []


@pytest.mark.parametrize(
    ("nodes", "indices", "target", "said"),
    [
        ({"a": "2.18.0"}, {}, "3.6.0", "a runs 2.18.0, which a node of 3.6.0 cannot talk to"),
        ({"a": "3.6.0"}, {}, "2.19.6", "a runs 3.6.0, newer than 2.19.6: OpenSearch has no downgrade"),
        ({"a": "2.19.6"}, {"laws": "1.3.2"}, "3.6.0", "index laws was created on 1.3.2, which 3.6.0 cannot read"),
        ({"a": "2.19.6"}, {}, "3.99.0", "the lawindex plugin has no build for 3.99.0"),
        ({"a": "2.19.6"}, {}, "4.0.0", "lawindex does not know which versions a node of 4.0.0 talks to"),
    ],
    ids=["wire", "downgrade", "index", "no build", "unknown major"],
)
def test_what_blocks_a_step(nodes: dict[str, str], indices: dict[str, str], target: str, said: str) -> None:
    found = step_blockers(nodes, indices, target)
    assert any(said in blocker for blocker in found), found


def test_within_a_major_every_earlier_version_steps() -> None:
    assert step_blockers({"a": "2.11.1", "b": "2.17.0"}, {"laws": "2.11.1"}, "2.19.6") == []


class _Cluster:
    """The three answers `check` reads, as a cluster gives them."""

    def __init__(self, nodes: dict[str, tuple[str, str | None]], status: str = "green") -> None:
        self.nodes, self.status = nodes, status
        self.transport = self

    def perform_request(self, method: str, path: str, params: Any = None) -> Any:
        if path == "/_nodes/plugins":
            return {
                "nodes": {
                    name: {
                        "name": name,
                        "version": version,
                        "plugins": [{"name": "lawindex", "version": built[1:], "opensearch_version": built}]
                        if built
                        else [],
                    }
                    for name, (version, built) in self.nodes.items()
                }
            }
        if path == "/_all/_settings":
            return {"laws": {"settings": {"index": {"version": {"created_string": "2.19.6"}}}}}
        return {"status": self.status}


def test_the_report_of_a_mixed_cluster_names_each_nodes_zip() -> None:
    report = check(_Cluster({"a": ("2.19.6", "~2.19.0"), "b": ("3.6.0", "~3.6.0")}), "3.6.0")
    assert [(n.name, n.needs, n.matches, n.needs_on_target) for n in report.nodes] == [
        ("a", "lawindex-2.19.zip", True, "lawindex-3.6.zip"),
        ("b", "lawindex-3.6.zip", True, "lawindex-3.6.zip"),
    ]
    assert report.can_step and report.exit_code == 0
    assert report.to_json()["indices"] == {"laws": "2.19.6"}
    assert "step to OpenSearch 3.6.0: the cluster can take it node by node" in report.lines()


def test_a_node_with_another_lines_plugin_exits_9() -> None:
    report = check(_Cluster({"a": ("3.6.0", "~2.19.0"), "b": ("3.6.0", None)}))
    assert [n.matches for n in report.nodes] == [False, False]
    assert report.exit_code == PLUGIN_MISMATCH_EXIT
    assert any("does NOT match: install lawindex-3.6.zip" in line for line in report.lines())


def test_a_cluster_that_is_not_green_cannot_step() -> None:
    report = check(_Cluster({"a": ("2.19.6", "~2.19.0")}, status="yellow"), "3.6.0")
    assert report.exit_code == CANNOT_STEP_EXIT
    assert report.blockers == ["the cluster is yellow: a rolling upgrade starts from green"]
    assert report.notes and "outage" in report.notes[0]


@pytest.mark.parametrize("version", ["2.11.1", "2.12.0", "2.13.0", "2.19.6", "3.0.0", "3.6.0", "3.9.2"])
def test_the_zip_named_is_the_one_the_build_makes(version: str) -> None:
    from indexer.node import plugin
    from indexer.opensearch.cluster.upgrade_check import needed_zip

    assert needed_zip(version) == plugin.zip_name(version)
