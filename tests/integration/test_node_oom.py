"""A local node that dies of OutOfMemoryError (issue 26): its heap dump goes under its logs, one at most,
never into its data folder, and `lawindex opensearch status` says what it died of.

The node is made to die for real: a 16 MB heap cannot hold OpenSearch's start, and the JVM throws
`java.lang.OutOfMemoryError: Java heap space` (then OpenSearch exits). Each crash of a 512 MB node under
a hostile question left a ~600 MB `java_pid*.hprof` in the data folder before.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer.errors import NodeError
from indexer.node import node
from indexer.node.record import HEAP_DUMP, port_dir
from tests.integration.support import lawindex

OOM_PORT = int(os.environ.get("LAWINDEX_OOM_PORT", "9276"))
HEAP = "16m"


@pytest.fixture
def folder(opensearch_version: str) -> Iterator[Path]:
    """The node folder at OOM_PORT, with a crashed start's leftovers put there the old way (a dump in data/)."""
    found = port_dir(node.default_cache_dir(), OOM_PORT)
    old_dump = found / "data" / "java_pid4242.hprof"
    old_dump.parent.mkdir(parents=True, exist_ok=True)
    (found / "logs" / HEAP_DUMP).unlink(missing_ok=True)
    old_dump.write_bytes(b"JAVA PROFILE 1.0.2\0")
    try:
        yield found
    finally:
        node.stop(OOM_PORT)
        (found / "logs" / HEAP_DUMP).unlink(missing_ok=True)  # 23 MB in a shared cache


def _dumps(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*.hprof") if "home" not in path.relative_to(folder).parts)


def test_a_node_dead_of_out_of_memory_says_so_and_keeps_one_dump_under_its_logs(
    folder: Path, opensearch_version: str
) -> None:
    for start in range(2):
        with pytest.raises(NodeError) as failed:
            node.start(version=opensearch_version, port=OOM_PORT, heap=HEAP)
        assert "exited while starting" in failed.value.message
        assert "died of OutOfMemoryError: Java heap space (heap 16m)" in failed.value.message
        status = node.status(OOM_PORT)
        assert status.state == "dead"
        assert status.died is not None and "OutOfMemoryError: Java heap space" in status.died, status
        # One dump, under the logs: the first crash's; the second could not overwrite it (the bound).
        assert _dumps(folder) == [folder / "logs" / HEAP_DUMP], (start, _dumps(folder))
        assert f"heap dump {folder / 'logs' / HEAP_DUMP}" in status.died
    code, out, _ = lawindex("opensearch", "status", "--port", str(OOM_PORT))
    assert code == 1
    assert "died      lawindex-" in out and "OutOfMemoryError: Java heap space" in out, out
    code, out, _ = lawindex("opensearch", "status", "--port", str(OOM_PORT), "--json")
    assert "OutOfMemoryError" in out
