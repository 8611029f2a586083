"""indexer.opensearch.cluster.failover.repeatable: which requests may be sent again after a timeout (they may have been
applied)."""

from __future__ import annotations

import pytest

from indexer.opensearch.cluster.failover import repeatable


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [
        ("GET", "/", None),
        ("HEAD", "/lawindex-tx", None),
        ("POST", "/lawindex-tx/_search", None),
        ("POST", "/lawindex-tx/_count", None),
        ("POST", "/lawindex-tx-20261201000000000000/_refresh", None),
        ("POST", "/_aliases", None),  # must_exist: a repeat of an applied swap fails (404), read back
        ("POST", "/lawindex-tx-20261201000000000000-filling/_bulk", None),  # creates: a repeat is 409s
        ("DELETE", "/lawindex-tx-20261201000000000000", None),
        ("PUT", "/lawindex-tx-20261201000000000000", None),  # a generation's name is one load's
        ("PUT", "/lawindex-locks/_doc/TX", {"op_type": "create"}),
        ("PUT", "/lawindex-locks/_doc/TX", {"if_seq_no": 3, "if_primary_term": 1}),
    ],
)
def test_reads_and_lawindex_s_guarded_writes_are_repeatable(
    method: str, path: str, params: dict[str, object] | None
) -> None:
    assert repeatable(method, path, params)


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [
        ("PUT", "/lawindex-locks/_doc/TX", None),  # an unconditional write would overwrite another's
        ("POST", "/lawindex-tx/_doc", None),  # an auto-id index: a repeat is a second document
        ("POST", "/lawindex-tx/_update/1", None),
        ("PUT", "/_cluster/settings", None),
        ("POST", "/lawindex-tx/_close", None),
    ],
)
def test_other_writes_are_not_repeated(method: str, path: str, params: dict[str, object] | None) -> None:
    assert not repeatable(method, path, params)
