"""One writer per state: two loads of one state at once (threads, and two processes) end with the alias on
exactly one whole index and nothing leaked; a held lock makes the loser fail clearly (exit 5) or wait; a
stale lock is taken over, by exactly one of several takers; a load whose lock was taken stops before its
swap.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.errors import LoadBusy, LoadFailed
from indexer.opensearch.cluster.connection import Connection, alias_of, index_prefix
from indexer.opensearch.cluster.schema import ALIAS_FILTER
from indexer.opensearch.write.history import check_generation
from indexer.opensearch.write.load import LoadOptions, StateLoad, load, load_state
from indexer.opensearch.write.lock import StateLock, ensure_locks_index, locks_index
from indexer.retrieval.corpus import Corpus, read_corpus
from tests import synthetic
from tests.integration.support import LAWINDEX, lawindex, run_threads

pytestmark = pytest.mark.integration

STATE = "TX"
LAWS = 1500


def _write(path: Path, seed: int, laws: int = LAWS) -> Corpus:
    path.parent.mkdir(parents=True, exist_ok=True)
    generated = synthetic.generate_corpus(STATE, laws, seed)
    path.write_text("".join(json.dumps(law.model_dump(exclude_none=True)) + "\n" for law in generated))
    return read_corpus(path)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, Corpus]:
    root = tmp_path_factory.mktemp("lock")
    return _write(root / "a" / f"{STATE}.jsonl", 11), _write(root / "b" / f"{STATE}.jsonl", 22)


def generations(client: OpenSearch, connection: Connection) -> list[str]:
    found = client.indices.get(
        index=index_prefix(STATE, connection.namespace) + "*", allow_no_indices=True, expand_wildcards="open,closed"
    )
    return sorted(found)


def assert_whole(client: OpenSearch, connection: Connection, corpus: Corpus) -> str:
    """The alias points at exactly one index, holding every law of `corpus` and nothing else; no other
    generation is left; no lock is left. The index."""
    alias = alias_of(STATE, connection.namespace)
    (index,) = client.indices.get_alias(name=alias)
    hits = client.search(index=alias, body={"size": 10_000, "_source": ["id"], "query": {"match_all": {}}})
    ids = sorted(hit["_source"].get("id") for hit in hits["hits"]["hits"] if hit["_id"] != "statistics")
    assert ids == sorted(law.id for law in corpus.laws)
    # load --keep 2: the generation a load replaced is kept for a rollback, whole; nothing else may be left.
    others = [name for name in generations(client, connection) if name != index]
    assert len(others) <= 1, f"no index may be leaked: {others}"
    for name in others:
        check_generation(client, STATE, connection.namespace, name)
    assert not client.exists(index=locks_index(connection.namespace), id=STATE), "the lock must be released"
    return str(index)


def test_two_loads_of_one_state_at_once_in_threads(connection: Connection, corpora: tuple[Corpus, Corpus]) -> None:
    a, b = corpora
    results: dict[str, StateLoad] = {}
    errors: list[BaseException] = []
    finished: list[str] = []

    def loader(name: str, corpus: Corpus) -> None:
        # A connection, and so a client, of its own: as two loaders on two machines.
        own = Connection.from_env(connection.url, namespace=connection.namespace)
        try:
            (results[name],) = load(own, [corpus])
            finished.append(name)
        except BaseException as error:  # the test fails below, with the error
            errors.append(error)

    run_threads([threading.Thread(target=loader, args=("a", a)), threading.Thread(target=loader, args=("b", b))])
    assert not errors, errors
    assert results["a"].outcome == results["b"].outcome == "indexed"
    last = finished[-1]
    client = connection.client()
    index = assert_whole(client, connection, a if last == "a" else b)
    assert index == results[last].index


def test_a_no_op_load_beside_a_swapping_load_deletes_nothing_it_swapped_in(
    connection: Connection, corpora: tuple[Corpus, Corpus]
) -> None:
    # The no-op load starts while the index it found is whole and current; the other load swaps in a new
    # one meanwhile. Before the lock, the no-op load then took the new index for an orphan and deleted it.
    a, b = corpora
    client = connection.client()
    for round_number in range(3):
        start, change = (a, b) if round_number % 2 == 0 else (b, a)
        load(connection, [start])
        finished: list[tuple[str, StateLoad]] = []
        errors: list[BaseException] = []

        def loader(
            name: str, corpus: Corpus, finished: list[tuple[str, StateLoad]], errors: list[BaseException]
        ) -> None:
            try:
                (result,) = load(Connection.from_env(connection.url, namespace=connection.namespace), [corpus])
                finished.append((name, result))
            except BaseException as error:  # the test fails below, with the error
                errors.append(error)

        run_threads(
            [
                threading.Thread(target=loader, args=("change", change, finished, errors)),
                threading.Thread(target=loader, args=("no-op", start, finished, errors)),
            ]
        )
        assert not errors, errors
        results = dict(finished)
        (served,) = client.indices.get_alias(name=alias_of(STATE, connection.namespace))
        # Whichever load swapped last decides; the index it reported is the one served, whole.
        assert served in (results["change"].index, results["no-op"].index)
        assert_whole(client, connection, change if served == results["change"].index else start)


def test_two_load_processes_of_one_state_at_once(
    connection: Connection, corpora: tuple[Corpus, Corpus], tmp_path: Path
) -> None:
    a, b = corpora
    env = {**os.environ, "OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace}
    processes = [
        subprocess.Popen(
            [*LAWINDEX, "load", str(corpus.path.parent), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for corpus in (a, b)
    ]
    outputs = [process.communicate(timeout=300) for process in processes]
    for process, (out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err.decode()
        assert b"Traceback" not in err
        assert json.loads(out)["outcome"] == "indexed"
    client = connection.client()
    index = client.indices.get_alias(name=alias_of(STATE, connection.namespace))
    (served,) = index
    by_index = {json.loads(out)["index"]: corpus for (out, _), corpus in zip(outputs, (a, b), strict=True)}
    assert served in by_index, "the alias must point at one of the two loads' indices"
    assert_whole(client, connection, by_index[served])


def test_a_held_lock_makes_another_load_fail_clearly_and_write_nothing(
    connection: Connection, corpora: tuple[Corpus, Corpus]
) -> None:
    a, _ = corpora
    client = connection.client()
    with StateLock(client, STATE, connection.namespace):
        code, out, err = lawindex(
            "load",
            str(a.path.parent),
            "--wait",
            "1",
            env={"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace},
        )
        assert code == 5, err
        assert out == ""
        (error,) = [line for line in err.splitlines() if line.startswith("error:")]
        assert "another load holds its lock" in error and f"pid {os.getpid()}" in error
        assert generations(client, connection) == []
        assert not client.indices.exists_alias(name=alias_of(STATE, connection.namespace))
    # Released: the same load goes through.
    (loaded,) = load(connection, [a])
    assert loaded.outcome == "indexed"
    assert_whole(client, connection, a)


def test_a_waiting_load_goes_on_once_the_holder_lets_go(connection: Connection, corpora: tuple[Corpus, Corpus]) -> None:
    a, _ = corpora
    client = connection.client()
    lock = StateLock(client, STATE, connection.namespace)
    lock.acquire()
    waited: list[StateLoad] = []
    loader = threading.Thread(
        target=lambda: waited.append(load_state(client, a, LoadOptions(namespace=connection.namespace)))
    )
    loader.start()
    # The loader is waiting (nothing of TX is built while the lock is held), then goes on when released.
    time.sleep(1.0)
    assert generations(client, connection) == []
    lock.release()
    loader.join(timeout=120)
    assert waited and waited[0].outcome == "indexed"
    assert_whole(client, connection, a)


def _stale_lock(client: OpenSearch, connection: Connection, holder: dict[str, object], lease_until: float) -> None:
    ensure_locks_index(client, connection.namespace)
    client.index(
        index=locks_index(connection.namespace),
        id=STATE,
        body={"state": STATE, "holder": holder, "acquired_at": "2026-01-01T00:00:00+00:00", "lease_until": lease_until},
        refresh=True,
    )


def test_a_lock_whose_lease_ran_out_is_taken_over(connection: Connection, corpora: tuple[Corpus, Corpus]) -> None:
    a, _ = corpora
    client = connection.client()
    _stale_lock(client, connection, {"host": "elsewhere", "machine": "x", "pid": 1, "token": "t"}, time.time() - 5)
    (loaded,) = load(connection, [a], wait=0)
    assert loaded.outcome == "indexed"
    assert_whole(client, connection, a)


def test_a_lock_of_a_process_of_this_machine_that_ended_is_taken_over(
    connection: Connection, corpora: tuple[Corpus, Corpus]
) -> None:
    a, _ = corpora
    client = connection.client()
    gone = subprocess.Popen(["true"])
    gone.wait()
    probe = StateLock(client, STATE, connection.namespace)
    holder = {**probe.holder, "pid": gone.pid, "token": "an-ended-load"}
    _stale_lock(client, connection, holder, time.time() + 600)  # a live lease, but its holder is gone
    (loaded,) = load(connection, [a], wait=0)
    assert loaded.outcome == "indexed"
    assert_whole(client, connection, a)


def test_a_live_lease_of_another_machine_is_not_taken_over(
    connection: Connection, corpora: tuple[Corpus, Corpus]
) -> None:
    a, _ = corpora
    client = connection.client()
    holder = {"host": f"not-{socket.gethostname()}", "machine": "x", "pid": 1, "token": "t"}
    _stale_lock(client, connection, holder, time.time() + 600)
    with pytest.raises(LoadBusy) as refused:
        load(connection, [a], wait=0.5)
    assert f"not-{socket.gethostname()} pid 1" in refused.value.message
    assert generations(client, connection) == []


@pytest.mark.parametrize("takers", [6, 12])
def test_of_several_takers_of_a_stale_lock_exactly_one_wins(connection: Connection, takers: int) -> None:
    client = connection.client()
    clients = [Connection.from_env(connection.url).client() for _ in range(takers)]
    for _ in range(5):  # a race: several rounds, so that a lost one shows
        _stale_lock(client, connection, {"host": "elsewhere", "machine": "x", "pid": 1, "token": "t"}, time.time() - 5)
        won: list[StateLock] = []
        lost: list[BaseException] = []

        def take(own: OpenSearch, won: list[StateLock], lost: list[BaseException]) -> None:
            lock = StateLock(own, STATE, connection.namespace, wait=0, ensured=True)
            try:
                lock.acquire()
                won.append(lock)
            except LoadBusy as error:
                lost.append(error)

        run_threads([threading.Thread(target=take, args=(own, won, lost)) for own in clients])
        assert len(won) == 1 and len(lost) == takers - 1, (won, lost)
        held = client.get(index=locks_index(connection.namespace), id=STATE)["_source"]["holder"]["token"]
        assert held == won[0].token
        won[0].release()
        assert not client.exists(index=locks_index(connection.namespace), id=STATE)


def test_the_holder_renews_its_lease(connection: Connection) -> None:
    client = connection.client()
    with StateLock(client, STATE, connection.namespace, lease=0.6) as lock:
        first = client.get(index=locks_index(connection.namespace), id=STATE)
        for _ in range(50):
            time.sleep(0.1)
            now = client.get(index=locks_index(connection.namespace), id=STATE)
            if now["_seq_no"] != first["_seq_no"]:
                break
        assert now["_seq_no"] > first["_seq_no"]
        assert now["_source"]["lease_until"] > first["_source"]["lease_until"]
        assert now["_source"]["holder"]["token"] == lock.token


def test_a_load_whose_lock_was_taken_over_stops_before_its_swap(
    connection: Connection, corpora: tuple[Corpus, Corpus]
) -> None:
    a, b = corpora
    client = connection.client()
    (first,) = load(connection, [a])
    taken: list[int] = []

    def take_the_lock(state: str, written: int, total: int) -> None:
        # Another loader decided this one's lease had run out, and took the lock.
        if not taken and 0 < written < total:
            client.index(
                index=locks_index(connection.namespace),
                id=STATE,
                body={"state": STATE, "holder": {"host": "elsewhere", "pid": 2, "token": "x"}, "lease_until": 0},
            )
            taken.append(written)

    with pytest.raises(LoadFailed) as failed:
        load(connection, [b], progress=take_the_lock)
    assert taken
    assert "took over this load's lock" in failed.value.message
    assert client.indices.get_alias(name=alias_of(STATE, connection.namespace)) == {
        first.index: {"aliases": {alias_of(STATE, connection.namespace): {"filter": ALIAS_FILTER}}}
    }
    assert generations(client, connection) == [first.index]
    # The taker's lock is not ours to delete: it is still there.
    assert client.exists(index=locks_index(connection.namespace), id=STATE)


def test_a_lease_renewed_after_its_lock_index_is_deleted_creates_nothing(connection: Connection) -> None:
    # A namespace dropped (or the lock index deleted) while a load holds a lock: the renewal fails and the
    # lock counts as lost; it never auto-creates a lock index without lawindex's marker.
    client = connection.client()
    lock = StateLock(client, STATE, connection.namespace, lease=0.3)
    lock.acquire()
    try:
        client.indices.delete(index=f"{connection.namespace}-locks-1")
        time.sleep(1.0)  # three renewals' time
        assert not client.indices.exists(index=locks_index(connection.namespace))
        with pytest.raises(LoadFailed):
            lock.confirm()
    finally:
        lock.release()
    assert not client.indices.exists(index=locks_index(connection.namespace))
    # The next load makes the lock index anew, lawindex's own.
    ensure_locks_index(client, connection.namespace)
