"""indexer.opensearch.cluster.failover: which requests may be sent again after a timeout (they may have been applied),
and the pool's rounds of probes when a node is silent."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from opensearchpy.exceptions import ConnectionTimeout

from indexer.opensearch.cluster.failover import ProbingPool, repeatable


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


class _Node:
    """A node's connection as the pool holds it: its probe answers once `speaks` is set (a live node starved
    of CPU answers late; a silent one never does), or times out within the probe's own timeout."""

    def __init__(self, name: str, *, speaks: bool) -> None:
        self.host = f"http://{name}"
        self.name = name
        self.speaks = threading.Event()
        self.answered = threading.Event()
        if speaks:
            self.speaks.set()

    def perform_request(
        self, method: str, url: str, params: object = None, **kwargs: Any
    ) -> tuple[int, dict[str, str], str]:
        if not self.speaks.wait(kwargs.get("timeout") or 30):
            raise ConnectionTimeout("TIMEOUT", "timed out", None)
        self.answered.set()
        return 200, {}, json.dumps({"nodes": {f"id-{self.name}": {"name": self.name}}})


def _pool(*nodes: _Node) -> ProbingPool:
    return ProbingPool([(node, {}) for node in nodes], randomize_hosts=False, dead_timeout=2.0, timeout_cutoff=2)


def test_a_round_of_probes_leaves_the_silent_node_out_and_names_the_others() -> None:
    first, second, silent = _Node("a", speaks=True), _Node("b", speaks=True), _Node("c", speaks=False)
    pool = _pool(first, second, silent)
    try:
        pool.probe_all()
        assert pool.connections == [first, second] or pool.connections == [second, first]
        assert pool.suspects()
        assert pool.live_ids() == ["id-a", "id-b"]  # what `_prefer_nodes` names: the copies on the live nodes
    finally:
        silent.speaks.set()


def test_a_live_node_slow_to_answer_its_probe_is_put_back_with_its_id() -> None:
    # Beside a CPU hog a live node answered its probe after more than the 1 s a probe once had: it was taken
    # out of the rotation, `_prefer_nodes` named only the node left, and a search it coordinated went to the
    # silent node's copy (issue 47 item 4). Its probe now waits, and its answer puts it back.
    fast, slow, silent = _Node("a", speaks=True), _Node("b", speaks=False), _Node("c", speaks=False)
    pool = _pool(fast, slow, silent)
    try:
        waiting = threading.Thread(target=pool.probe_all)
        waiting.start()
        assert fast.answered.wait(30)
        time.sleep(1.5)  # longer than a probe once had; what is asserted below is not a time
        slow.speaks.set()
        waiting.join(30)
        assert slow.answered.wait(30)
        for _ in range(300):  # the probe's thread puts it back just after it answered
            if slow in pool.connections:
                break
            time.sleep(0.01)
        assert sorted(node.name for node in pool.connections) == ["a", "b"]
        assert pool.live_ids() == ["id-a", "id-b"]
    finally:
        silent.speaks.set()


class _Stalling:
    """A node's connection as FailoverTransport holds it: its probe answers at once when it `speaks` (else it
    waits out the probe's timeout, released at the test's end); a search times out on its first `stalls` calls
    (a live node that did not answer one attempt in time), then answers with the node's name and the parameters it
    was sent."""

    released = threading.Event()

    def __init__(self, host: str = "x", *, speaks: bool = True, stalls: int = 1, **_: Any) -> None:
        self.host = f"http://{host}"
        self.name = host
        self.timeout = 10.0
        self.speaks = speaks
        self.stalls = stalls
        self.searched: list[float | None] = []

    def perform_request(
        self, method: str, url: str, params: Any = None, body: Any = None, **kwargs: Any
    ) -> tuple[int, dict[str, str], str]:
        if url == "/_nodes/_local":
            if not self.speaks:
                self.released.wait(kwargs.get("timeout") or 30)
                raise ConnectionTimeout("TIMEOUT", "timed out", None)
            return 200, {}, json.dumps({"nodes": {f"id-{self.name}": {"name": self.name}}})
        self.searched.append(kwargs.get("timeout"))
        if not self.speaks or len(self.searched) <= self.stalls:
            # Longer than the second between two rounds of probes, as any real attempt's share of a timeout.
            time.sleep(1.05)
            raise ConnectionTimeout("TIMEOUT", "timed out", None)
        return 200, {"content-type": "application/json"}, json.dumps({"node": self.name, "params": params})

    def close(self) -> None:
        pass


def _transport(stalls: int) -> Any:
    """A FailoverTransport over nodes a and b, live (each late on its first `stalls` searches), and c, silent."""
    from indexer.opensearch.cluster.failover import FailoverTransport

    return FailoverTransport(
        [{"host": "a", "stalls": stalls}, {"host": "b", "stalls": stalls}, {"host": "c", "speaks": False}],
        connection_class=_Stalling,
        connection_pool_class=ProbingPool,
        randomize_hosts=False,
        dead_timeout=60.0,
        timeout_cutoff=2,
        max_retries=6,
        retry_on_timeout=False,
    )


def test_after_each_live_node_timed_out_once_the_request_goes_back_to_one_not_to_the_silent_node() -> None:
    # CI (stop 51): a request timed out on 9481 and 9482, which had both answered their probes, and its last third
    # went to 9480, the silent node, which was out of the rotation: "no node of the cluster answered". A live node
    # whose one attempt was late is asked again instead; the silent one is never asked.
    transport = _transport(stalls=1)
    try:
        a, b, c = transport.connection_pool.orig_connections
        found = transport.perform_request("POST", "/lawindex-tx/_search", body={}, timeout=30.0)
        assert found["node"] in ("a", "b")
        assert found["params"] == {"preference": "_prefer_nodes:id-a,id-b"}
        assert (len(a.searched), len(b.searched), len(c.searched)) in ((2, 1, 0), (1, 2, 0)), (a, b, c)
    finally:
        _Stalling.released.set()


def test_live_nodes_late_to_the_end_are_named_as_answering_their_probes_and_the_silent_one_never_asked() -> None:
    from indexer.opensearch.cluster.failover import NoNodeAnswered

    transport = _transport(stalls=99)
    try:
        c = transport.connection_pool.orig_connections[2]
        with pytest.raises(NoNodeAnswered) as failed:
            transport.perform_request("POST", "/lawindex-tx/_search", body={}, timeout=4.0)
        told = failed.value.tried
        assert {url for url, _ in told} == {"http://a", "http://b"}, told
        assert all(what.endswith("(it answered its probe)") for _, what in told), told
        assert c.searched == [], c.searched
    finally:
        _Stalling.released.set()
