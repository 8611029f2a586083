"""SIGINT or SIGTERM during a multi-state `lawindex load`: no new state starts, the states under way stop
between bulk chunks and remove what they built, every alias still serves its old index or a complete new
one, the exit is 130 or 143, and one line says which states were loaded and which were not. A second
SIGINT during the clean-up leaves nothing behind either.

A real `lawindex load` process on ten states of 5,000 laws each (a few seconds of loading), signalled as
soon as the cluster shows the first state swapped in; then the cluster itself is checked.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.opensearch.cluster.connection import Connection, alias_of, index_prefix
from indexer.opensearch.cluster.schema import STATISTICS_ID
from indexer.opensearch.trust import sealing
from indexer.opensearch.write.load import load
from indexer.opensearch.write.lock import StateLock, ensure_locks_index, locks_index
from indexer.retrieval.corpus import read_corpora
from tests import synthetic
from tests.integration.support import LAWINDEX

pytestmark = pytest.mark.integration

STATES = ("AK", "AL", "AR", "AZ", "CA", "CO", "CT", "DE", "FL", "GA")
# Each new state two bulk requests of 1,000 laws and more: after the first is swapped in (the signal), nine states
# are left, each a second and more of work. At 5,000 a state, the three signal tests spent 32 CPU s of the node's
# and 10 of the load's (tests/cpu_by_file.py) on laws no assertion reads.
LAWS = 2000
OLD_LAWS = 30


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Ten states' small old corpora, and their big new ones."""
    root = tmp_path_factory.mktemp("signals")
    old, new = root / "old", root / "new"
    old.mkdir()
    new.mkdir()
    laws = synthetic.generate_corpus("TX", LAWS, 9)
    for state in STATES:
        lines = [json.dumps(law.model_dump(exclude_none=True)) + "\n" for law in laws]
        (new / f"{state}.jsonl").write_text("".join(lines))
        (old / f"{state}.jsonl").write_text("".join(lines[:OLD_LAWS]))
    return old, new


def _served(client: OpenSearch, connection: Connection) -> dict[str, str]:
    found = client.indices.get_alias(index=f"{connection.namespace}-*", allow_no_indices=True)
    served = {}
    for index, body in found.items():
        for alias in body.get("aliases", {}):
            if re.fullmatch(re.escape(connection.namespace) + r"-[a-z]{2}", alias):
                served[alias[-2:].upper()] = index
    return served


@pytest.mark.parametrize(
    "signals",
    [[signal.SIGINT], [signal.SIGTERM], [signal.SIGINT, signal.SIGINT]],
    ids=["SIGINT", "SIGTERM", "SIGINT-twice"],
)
def test_a_signal_mid_load_stops_cleanly(
    connection: Connection, folders: tuple[Path, Path], signals: list[signal.Signals]
) -> None:
    old, new = folders
    client = connection.client()
    before = {result.state: result.index for result in load(connection, read_corpora(old))}
    process = subprocess.Popen(
        [*LAWINDEX, "load", str(new)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace},
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if _served(client, connection) != before:
                break  # the first state is swapped in
            time.sleep(0.05)
        assert process.poll() is None, "the load ended before it could be signalled"
        for number in signals:
            # A second SIGINT at once, while the states under way clean up; and once more after a while,
            # when the process may be on its way out: neither may leave debris or a traceback.
            process.send_signal(number)
            time.sleep(0.02)
        if len(signals) > 1:
            time.sleep(0.3)
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = err.decode()
    assert "Traceback" not in text, text
    assert process.returncode == 128 + signals[0], text
    (line,) = [line for line in text.splitlines() if line.strip()]
    said = re.fullmatch(r"error: stopped by (SIG\w+): loaded ([A-Z, ]+|none); not loaded ([A-Z, ]+|none) .*", line)
    assert said, line
    assert said.group(1) == signal.Signals(signals[0]).name
    loaded = set(said.group(2).split(", ")) - {"none"}
    missing = set(said.group(3).split(", ")) - {"none"}
    assert loaded | missing == set(STATES) and not loaded & missing
    assert loaded and missing, "the signal must have come mid-load"
    assert out == b""

    served = _served(client, connection)
    for state in STATES:
        alias = alias_of(state, connection.namespace)
        index = served[state]
        if state in missing:
            assert index == before[state], f"{state} must still serve its old index"
            assert client.count(index=alias)["count"] == OLD_LAWS
        else:
            assert index != before[state]
            assert client.count(index=alias)["count"] == LAWS
        source = client.get(index=alias, id=STATISTICS_ID)["_source"]
        assert sealing.seal_problem(source, index, state, connection.namespace) is None
        # No half-built index, no filling alias, no orphan: the served index per state, and of a reloaded state
        # the generation it replaced, kept for a rollback (load --keep 2).
        found = client.indices.get(index=index_prefix(state, connection.namespace) + "*", expand_wildcards="all")
        assert sorted(found) == sorted({index, before[state]}), f"{state}: {sorted(found)}"
        assert list(found[index]["aliases"]) == [alias]
    locks = locks_index(connection.namespace)
    client.indices.refresh(index=locks)
    # A lock is the document named by its state; the states' histories (`history-<STATE>`) stay.
    held = client.count(index=locks, body={"query": {"ids": {"values": list(STATES)}}})["count"]
    assert held == 0, "every lock is released"


def test_a_signal_while_waiting_for_a_lock_ends_the_wait(connection: Connection, folders: tuple[Path, Path]) -> None:
    old, _ = folders
    client = connection.client()
    ensure_locks_index(client, connection.namespace)
    with StateLock(client, "AK", connection.namespace):
        process = subprocess.Popen(
            [*LAWINDEX, "load", str(old), "--wait", "300"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace},
        )
        try:
            # Every other state loads; AK waits for the lock held here.
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and len(_served(client, connection)) < len(STATES) - 1:
                time.sleep(0.05)
            assert process.poll() is None, "the load must be waiting for AK's lock"
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 130, err.decode()
    (line,) = err.decode().splitlines()
    assert line.startswith("error: stopped by SIGINT: loaded AL, AR, AZ, CA, CO, CT, DE, FL, GA; not loaded AK"), line
    assert out == b""
    assert "AK" not in _served(client, connection)
    assert client.indices.get(index=index_prefix("AK", connection.namespace) + "*", allow_no_indices=True) == {}
