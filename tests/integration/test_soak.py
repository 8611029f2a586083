"""A day of traffic, compressed to about 75 s (issue 47, item 3; benchmarks/season.py is the 30-minute run): on
the three-node cluster (LAWINDEX_CLUSTER_PORT, as test_cluster's and test_failover's, stopped at the end when
started here), 6 clients ask by words, meaning and hybrid through the plugin's raw query, the library and `lawindex
serve`, while a state's next version is loaded, a node is SIGKILLed and started again (a load made while it is
down), the disk watermarks put past the flood stage until OpenSearch blocks the indices and lowered until it lifts
the block, and the state rolled back. Every answer is held against the reference engine's for the generation that
answered it (a raw hit's `_index`) or for one that served while it was asked: 0 failed, 0 wrong, 0 mixed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import season
from tests.integration.serving import free_port
from tests.integration.support import CLUSTER_PORT, start_cluster, three_nodes

pytestmark = pytest.mark.integration

SECONDS = 75.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[season.Cluster]:
    with three_nodes() as urls:
        yield season.Cluster(urls, CLUSTER_PORT, start_cluster)


def test_a_compressed_season_answers_every_question_exactly(cluster: season.Cluster, tmp_path: Path) -> None:
    versions = season.write_versions(tmp_path, 2, 300)
    questions = season.questions_of(versions, 6)
    # A change every 25 s: a load at 12 s, none while the disk is flooded (45-55 s), a rollback at 62 s; the node
    # killed at 22 s, a load while it is down, started again from 32 s (the steps run late when a start is slow).
    shape = season.Shape(seconds=SECONDS, clients=6, every=25.0, down=10.0, flooded=10.0)
    found = season.run(cluster, versions, questions, shape, free_port())
    season.report(found)
    done = {line.split()[2] for line in found.events}
    # Each step done: loads (one while the node is down), the kill and the heal, the flood and its end, a rollback.
    assert done == {"load", "SIGKILL", "node", "flood", "watermarks", "rollback"}, found.events
    assert found.verdicts.counts == Counter(), found.verdicts.examples
    answered = Counter((one.path, one.way) for one in found.asked)
    assert all(answered[(path, way)] > 0 for path in season.PATHS for way in season.WAYS), answered
    # The raw answers name their generations: both states' first and the loaded ones answered.
    served = {found.timeline.version_of[one.indices[0]] for one in found.asked if one.path == "raw" and one.indices}
    assert len(served) >= 4, served
