"""Faults a real cluster meets, each made for real (issue 20): a node alive and silent (SIGSTOP), a
flood-stage block set on the index a load is filling, and answers lost after the node applied the request
(a TCP proxy that drops the connection: tests/integration/support.py's DroppingProxy).

The silent node needs three nodes: the module's own cluster on LAWINDEX_CLUSTER_PORT (default 9480, as
tests/integration/test_cluster.py, 256m heaps, stopped at the end when this module started it); the
other tests use its first node as one URL.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import NotFoundError, OpenSearch

from indexer.errors import TimedOut, WriteBlocked
from indexer.node import node
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.verify import default_questions
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import read_corpora
from indexer.retrieval.request import Request
from tests import synthetic
from tests.integration.support import (
    CLUSTER_PORT,
    DroppingProxy,
    block_filling,
    drop_namespace,
    three_nodes,
    timed_lawindex,
    unique_namespace,
)

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
PORT = CLUSTER_PORT


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[str]]:
    with three_nodes() as urls:
        yield urls


@pytest.fixture
def namespace(cluster: list[str]) -> Iterator[str]:
    made = unique_namespace()
    yield made
    drop_namespace(OpenSearch(hosts=[cluster[0]], timeout=60), made)


def _pids() -> list[int]:
    return [int(member["pid"]) for member in node.status(PORT).nodes or []]


def _manager_pid(url: str) -> int:
    """The process id of the elected cluster manager."""
    found = OpenSearch(hosts=[url], timeout=30).nodes.info(node_id="_cluster_manager", metric="process")
    (manager,) = found["nodes"].values()
    return int(manager["process"]["id"])


@pytest.mark.parametrize("which", ["the cluster manager", "a node that is not the manager"])
def test_a_silent_node_is_avoided_and_every_answer_is_exact(cluster: list[str], namespace: str, which: str) -> None:
    # 30 s, a share of 10 s per node: CI once saw a request time out on all three nodes with the default 10 s
    # (3.3 s each) while two of them answered their probes within 20 ms, on a machine running the suite's other
    # parts beside it, and its last third went to the silent node (docs/history/ci-runs.md, stop 51; it now goes
    # to a live node: tests/unit/test_failover.py). 42 runs at load 11 here never did. Code without the failover
    # still fails this test: a request sent to the silent node is not sent again on a timeout.
    connection = Connection.from_env(",".join(cluster), namespace=namespace, timeout=30.0)
    corpora = read_corpora(CORPORA, ["MD", "TX"])
    load(connection, corpora)
    asked = [(corpus, q) for corpus in corpora for q in default_questions(corpus)[:25] if q.strip()]
    manager = _manager_pid(cluster[0])
    victim = manager if which == "the cluster manager" else next(pid for pid in _pids() if pid != manager)
    os.kill(victim, signal.SIGSTOP)
    try:
        # A new engine: its first question reads the index's `_meta`, which once waited on a silent
        # manager (every node timed out; CI met it when the second node happened to be the manager).
        engine = OpenSearchEngine(connection)
        # Before: every third request waited the whole 10 s timeout and failed (TimedOut, exit 3). How
        # long it takes now is benchmarks/cluster.py --hung's to say.
        for corpus, question in asked:
            try:
                found = engine.ask(Request(corpus.state, question)).ids()
            except TimedOut as error:
                raise AssertionError(f"{question!r}: {error.message}\n{_seen(cluster, namespace, victim)}") from None
            assert found == reference.ask(corpus, question).ids(), question
    finally:
        os.kill(victim, signal.SIGCONT)


def _seen(cluster: list[str], namespace: str, victim: int) -> str:
    """What the live nodes say of the cluster while `victim` is stopped: its nodes, the namespace's shard copies
    and each node's tasks under way (for a failure's message: why a live node did not answer)."""
    members = [(member.get("http_port"), member.get("pid")) for member in node.status(PORT).nodes or []]
    said = [f"stopped: pid {victim}; nodes (port, pid): {members}"]
    asked = [f"/_cat/shards/{namespace}-*?v", "/_cat/nodes?v&h=name,http,cluster_manager&local=true"]
    for path in asked:
        for url in cluster:
            try:
                answer = OpenSearch(hosts=[url], timeout=2).transport.perform_request("GET", path)
                said.append(f"{url}{path}:\n{answer}")
                break
            except Exception as error:  # a diagnosis never hides the failure it explains
                said.append(f"{url}{path}: {type(error).__name__}")
    for url in cluster:  # what each node is doing (a live node's search waiting on a shard copy, say)
        try:
            answer = OpenSearch(hosts=[url], timeout=2).transport.perform_request(
                "GET",
                "/_tasks",
                params={
                    "nodes": "_local",
                    "detailed": "true",
                    "filter_path": "nodes.*.tasks.*.action,"
                    "nodes.*.tasks.*.description,nodes.*.tasks.*.running_time_in_nanos",
                },
            )
            said.append(f"{url}/_tasks: {answer}")
        except Exception as error:
            said.append(f"{url}/_tasks: {type(error).__name__}")
    return "\n".join(said)


def test_when_every_node_is_silent_the_error_names_each_url(cluster: list[str], namespace: str) -> None:
    connection = Connection.from_env(",".join(cluster), namespace=namespace, timeout=3.0)
    load(connection, read_corpora(CORPORA, ["MD"]))
    engine = OpenSearchEngine(connection)
    engine.ask(Request("MD", "fire hydrant"))  # the client made and the statistics read while the nodes answer
    pids = _pids()
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.raises(TimedOut) as failed:
            engine.ask(Request("MD", "fire hydrant"))
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    message = failed.value.message
    assert message.startswith("no node of the cluster answered within 3s: "), message
    for url in cluster:
        assert f"{url} did not answer within " in message, message


def test_a_flood_stage_block_mid_load_ends_it_at_once_and_leaves_nothing(cluster: list[str], namespace: str) -> None:
    client = OpenSearch(hosts=[cluster[0]], timeout=60)
    connection = Connection.from_env(cluster[0], namespace=namespace)
    laws = synthetic.generate_corpus("TX", 30000, seed=20)
    corpus = synthetic.corpus_of("TX", laws)
    blocked: list[str] = []

    def block() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not blocked:
            blocked.extend(block_filling(client, namespace))
            time.sleep(0.05)

    blocker = threading.Thread(target=block)
    blocker.start()
    # Before: the block's 429s were retried as a full write queue's (644 s), then the load ended with the
    # documents "refused", not as read-only. The time it takes now: benchmarks/cluster.py --block.
    with pytest.raises(WriteBlocked) as failed:
        load(connection, [corpus], workers=1)
    blocker.join()
    assert blocked, "the block was never set: the test proved nothing"
    error = failed.value
    assert error.exit_code == 5
    assert f"OpenSearch at {cluster[0]} is read-only" in error.message, error.message
    assert "flood-stage" in error.message, error.message
    assert error.hint and "flood-stage watermark" in error.hint
    left = client.indices.get_alias(index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True)
    assert sorted(left) == [f"{namespace}-locks-1"], left  # the half-built index and its -filling alias gone
    with pytest.raises(NotFoundError):
        client.get(index=f"{namespace}-locks", id="TX")  # the lock released


def _env(url: str, namespace: str) -> dict[str, str]:
    return {"OPENSEARCH_URL": url, "LAWINDEX_NAMESPACE": namespace}


def _locks_left_are_histories(client: OpenSearch, namespace: str, states: set[str]) -> None:
    """Every lock released: what the locks index holds is each state's history (`history-<state>`,
    indexer.opensearch.write.history), with the one swap the load made, to the index now behind the alias."""
    locks = f"{namespace}-locks"
    client.indices.refresh(index=locks)
    found = client.search(index=locks, body={"size": 100, "query": {"match_all": {}}})["hits"]["hits"]
    assert {hit["_id"] for hit in found} == {f"history-{state}" for state in states}, found
    for hit in found:
        state = hit["_source"]["state"]
        (event,) = hit["_source"]["events"]  # recorded once, though the answer to a write was lost
        (serving,) = client.indices.get_alias(name=alias_of(state, namespace))
        assert event["kind"] == "load" and event["to"] == serving and event["from"] == [], hit


def test_a_lost_answer_to_a_swap_is_read_back_for_every_state(cluster: list[str], namespace: str) -> None:
    victim = alias_of("SC", namespace).encode()
    with DroppingProxy(cluster[0], lambda method, path, body: path.startswith("/_aliases") and victim in body) as proxy:
        code, out, err, _ = timed_lawindex("load", str(CORPORA), "--json", env=_env(proxy.url, namespace))
        assert proxy.dropped, "no answer was dropped: the test proved nothing"
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert {row["state"] for row in rows} == {"AL", "MD", "PA", "SC", "TX", "VT", "WV"}
    assert all(row["outcome"] == "indexed" and row["swapped"] and row["lock"] == "released" for row in rows), rows
    client = OpenSearch(hosts=[cluster[0]], timeout=60)
    found = client.indices.get_alias(index=f"{namespace}-*")
    generations = sorted(name for name in found if not name.startswith(f"{namespace}-locks"))
    assert len(generations) == 7, generations  # no orphan: one index a state, each behind its alias
    assert all(found[name]["aliases"].keys() == {f"{name[: len(namespace) + 3]}"} for name in generations), found
    _locks_left_are_histories(client, namespace, {row["state"] for row in rows})


@pytest.mark.parametrize(
    ("method", "marker"),
    [("PUT", "op_type=create"), ("PUT", "if_seq_no="), ("DELETE", "if_seq_no=")],
    ids=["create", "renew", "release"],
)
def test_a_lost_answer_to_a_lock_write_is_read_back(
    cluster: list[str], namespace: str, method: str, marker: str
) -> None:
    def drops(sent: str, path: str, _body: bytes) -> bool:
        return sent == method and path.startswith(f"/{namespace}-locks/_doc/MD") and marker in path

    with DroppingProxy(cluster[0], drops) as proxy:
        code, out, err, _ = timed_lawindex(
            "load", str(CORPORA), "--state", "MD", "--json", env=_env(proxy.url, namespace)
        )
        assert proxy.dropped, "no answer was dropped: the test proved nothing"
    assert code == 0, err
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert row["outcome"] == "indexed" and row["swapped"] is True and row["lock"] == "released", row
    _locks_left_are_histories(OpenSearch(hosts=[cluster[0]], timeout=60), namespace, {"MD"})


def test_a_failed_state_is_reported_beside_the_states_loaded(cluster: list[str], namespace: str) -> None:
    # VT's alias on an index lawindex did not make: VT fails, and the summary and --json say what is true
    # of every state (the others loaded and swapped, VT not swapped, its lock released).
    client = OpenSearch(hosts=[cluster[0]], timeout=60)
    client.indices.create(index=f"{namespace}-notes", body={"aliases": {alias_of("VT", namespace): {}}})
    code, out, err, _ = timed_lawindex("load", str(CORPORA), "--json", env=_env(cluster[0], namespace))
    assert code == 5, err
    rows = {row["state"]: row for row in map(json.loads, out.splitlines())}
    assert rows["VT"]["outcome"] == "failed" and rows["VT"]["swapped"] is False, rows
    assert rows["VT"]["exit_code"] == 5
    loaded = [state for state, row in rows.items() if row["outcome"] == "indexed"]
    assert all(rows[state]["swapped"] and rows[state]["lock"] == "released" for state in loaded)
    summary = err.splitlines()[0]
    for state in loaded:
        assert f"{state} indexed" in summary, summary
    assert "VT failed" in summary or "VT not loaded" in summary, summary
