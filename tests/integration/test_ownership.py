"""lawindex deletes, swaps out and serves only its own index of a state: an alias of its name pointing
elsewhere is refused (ask exit 4, load exit 5) and nothing that is not lawindex's is ever deleted.

Each case builds the hostile cluster by hand with plain requests, then runs `lawindex` as a process and
checks the cluster afterwards: what was there is still there, with every document.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.opensearch.cluster.connection import Connection, alias_of, index_prefix
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
from tests.integration.support import lawindex

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
PLAIN = {"settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0}}}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for state in ("TX", "MD"):
        shutil.copy(CORPORA / f"{state}.jsonl", tmp_path / f"{state}.jsonl")
    return tmp_path


def run(connection: Connection, *args: str) -> tuple[int, str, str]:
    return lawindex(*args, env={"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace})


def someone_elses(client: OpenSearch, name: str, documents: int = 3) -> None:
    """An index another program made: no lawindex marker, a few documents of its own."""
    client.indices.create(index=name, body=PLAIN)
    for number in range(documents):
        client.index(index=name, id=str(number), body={"note": f"not lawindex's {number}"}, refresh=True)


def every_index(client: OpenSearch, connection: Connection) -> list[str]:
    found = client.indices.get(index=f"{connection.namespace}-*", expand_wildcards="open,closed")
    return sorted(name for name in found if name != f"{connection.namespace}-locks-1")


def test_an_alias_on_someone_elses_index_is_refused_and_that_index_survives(
    connection: Connection, folder: Path
) -> None:
    client = connection.client()
    theirs = f"{connection.namespace}-notes"
    someone_elses(client, theirs)
    alias = alias_of("TX", connection.namespace)
    client.indices.put_alias(index=theirs, name=alias)

    code, out, err = run(connection, "ask", "TX", "fire hydrant")
    assert code == 4, err
    assert out == ""
    (error,) = [line for line in err.splitlines() if line.startswith("error:")]
    assert theirs in error and alias in error and "did not make" in error
    assert "hint:" in err and "remove the alias" in err

    code, out, err = run(connection, "load", str(folder), "--state", "TX")
    assert code == 5, err
    assert theirs in err and "will not replace or delete" in err
    assert client.count(index=theirs)["count"] == 3
    assert sorted(client.indices.get_alias(name=alias)) == [theirs]
    assert every_index(client, connection) == [theirs], "nothing of TX may be built when its alias is not ours"

    # Once the user has moved the alias off, the load goes ahead and their index is still untouched.
    client.indices.delete_alias(index=theirs, name=alias)
    code, _, err = run(connection, "load", str(folder), "--state", "TX")
    assert code == 0, err
    assert client.count(index=theirs)["count"] == 3


def test_an_alias_on_another_states_index_is_refused_and_neither_state_is_touched(
    connection: Connection, folder: Path
) -> None:
    client = connection.client()
    (md,) = load(connection, read_corpora(folder, ["MD"]))
    assert md.index is not None
    tx_alias = alias_of("TX", connection.namespace)
    client.indices.put_alias(index=md.index, name=tx_alias)

    code, out, err = run(connection, "ask", "TX", "fire hydrant")
    assert code == 4, err
    assert out == "" and md.index in err and "MD's laws, not TX's" in err
    # Nor by family, nor by id: MD's rows are never shown as TX's.
    md_law = read_corpora(folder, ["MD"])[0].laws[0]
    for asked in (["ask", "TX", "--family", "permit-holding-period"], ["get", "TX", md_law.id]):
        code, out, err = run(connection, *asked)
        assert code == 4 and out == "", err
        assert "MD's laws, not TX's" in err

    code, _, err = run(connection, "load", str(folder), "--state", "TX")
    assert code == 5, err
    assert md.index in err
    assert client.count(index=md.index)["count"] == md.laws + 1
    assert sorted(client.indices.get_alias(index=md.index)[md.index]["aliases"]) == sorted(
        [tx_alias, alias_of("MD", connection.namespace)]
    )
    assert every_index(client, connection) == [md.index]


def test_an_alias_on_several_indices_is_refused_when_one_is_not_ours(connection: Connection, folder: Path) -> None:
    client = connection.client()
    (tx,) = load(connection, read_corpora(folder, ["TX"]))
    assert tx.index is not None
    theirs = f"{connection.namespace}-tx-backup"
    someone_elses(client, theirs)
    alias = alias_of("TX", connection.namespace)
    client.indices.put_alias(index=theirs, name=alias)

    code, out, err = run(connection, "ask", "TX", "fire hydrant")
    assert code == 4 and out == "", err
    assert theirs in err

    # Changed corpus: the load would rebuild, but one of the alias's indices is not lawindex's.
    (folder / "TX.jsonl").write_text((folder / "TX.jsonl").read_text().splitlines()[0] + "\n")
    code, _, err = run(connection, "load", str(folder), "--state", "TX")
    assert code == 5, err
    assert theirs in err
    assert sorted(client.indices.get_alias(name=alias)) == sorted([tx.index, theirs])
    assert client.count(index=theirs)["count"] == 3
    assert client.count(index=tx.index)["count"] == tx.laws + 1


def test_two_of_our_own_behind_the_alias_are_repaired_by_a_load(connection: Connection, folder: Path) -> None:
    # What two racing loads left before there was a lock: ask refuses, load moves the alias to one new index.
    client = connection.client()
    alias = alias_of("TX", connection.namespace)
    (first,) = load(connection, read_corpora(folder, ["TX"]))
    assert first.index is not None
    pin = f"{connection.namespace}-pin"
    client.indices.put_alias(index=first.index, name=pin)  # kept through the next load
    (folder / "TX.jsonl").write_text("".join((folder / "TX.jsonl").read_text().splitlines(keepends=True)[:-1]))
    (second,) = load(connection, read_corpora(folder, ["TX"]))
    assert second.index is not None
    client.indices.delete_alias(index=first.index, name=pin)
    client.indices.put_alias(index=first.index, name=alias)
    assert sorted(client.indices.get_alias(name=alias)) == sorted([first.index, second.index])

    code, out, err = run(connection, "ask", "TX", "fire hydrant")
    assert code == 4 and out == "", err
    assert "points at 2 indices" in err and "lawindex load" in err

    # --keep 1: neither of the two replaced generations is kept (by default the newer would be, for rollback).
    code, _, err = run(connection, "load", str(folder), "--state", "TX", "--keep", "1")
    assert code == 0, err
    (now,) = client.indices.get_alias(name=alias)
    assert now not in (first.index, second.index)
    assert every_index(client, connection) == [now]
    code, out, err = run(connection, "ask", "TX", "fire hydrant")
    assert code == 0, err


def test_an_index_named_like_the_alias_is_refused_and_survives(connection: Connection, folder: Path) -> None:
    client = connection.client()
    alias = alias_of("TX", connection.namespace)
    someone_elses(client, alias)
    code, out, err = run(connection, "ask", "TX", "fire hydrant")
    assert code == 4 and out == "", err
    assert alias in err
    code, _, err = run(connection, "load", str(folder), "--state", "TX")
    assert code == 5, err
    assert f"an index named {alias}" in err
    assert client.count(index=alias)["count"] == 3
    assert every_index(client, connection) == [alias]


def test_a_replaced_generation_that_another_alias_points_to_is_kept(connection: Connection, folder: Path) -> None:
    client = connection.client()
    (first,) = load(connection, read_corpora(folder, ["TX"]))
    assert first.index is not None
    pinned = f"{connection.namespace}-pinned-by-a-user"
    client.indices.put_alias(index=first.index, name=pinned)
    (folder / "TX.jsonl").write_text("".join((folder / "TX.jsonl").read_text().splitlines(keepends=True)[:-1]))
    (second,) = load(connection, read_corpora(folder, ["TX"]))
    assert second.outcome == "indexed"
    assert client.indices.exists(index=first.index), "an index an alias points to is never deleted"
    assert client.count(index=pinned)["count"] == first.laws + 1
    assert every_index(client, connection) == sorted([first.index, second.index])
    # And the next load does not take it for an orphan either.
    (third,) = load(connection, read_corpora(folder, ["TX"]))
    assert third.outcome == "unchanged"
    assert client.indices.exists(index=first.index)


def test_a_generation_of_another_namespace_or_state_is_never_an_orphan(connection: Connection, folder: Path) -> None:
    client = connection.client()
    # Named as a TX generation of this namespace, but its marker says MD: a copy, not TX's to delete.
    misnamed = index_prefix("TX", connection.namespace) + "4" * 20
    marker = {"owner": "lawindex", "namespace": connection.namespace, "state": "MD", "index": misnamed}
    client.indices.create(index=misnamed, body={**PLAIN, "mappings": {"_meta": {"lawindex": marker}}})
    # A copy of a TX generation (a reindex or clone keeps the _meta): it names another index than its own.
    copied = index_prefix("TX", connection.namespace) + "5" * 20
    marker = {"owner": "lawindex", "namespace": connection.namespace, "state": "TX", "index": misnamed}
    client.indices.create(index=copied, body={**PLAIN, "mappings": {"_meta": {"lawindex": marker}}})
    (loaded,) = load(connection, read_corpora(folder, ["TX"]))
    assert loaded.index is not None
    assert every_index(client, connection) == sorted([misnamed, copied, loaded.index])


def test_a_lock_index_that_is_not_ours_is_refused(connection: Connection, folder: Path) -> None:
    client = connection.client()
    locks = f"{connection.namespace}-locks"
    someone_elses(client, locks)
    code, _, err = run(connection, "load", str(folder), "--state", "TX")
    assert code == 5, err
    assert f"{locks} is not lawindex's lock index" in err
    assert client.count(index=locks)["count"] == 3
    assert every_index(client, connection) == [locks], "theirs survives, and nothing of TX is built"


def test_a_copy_of_a_lawindex_index_is_not_served_as_the_state(connection: Connection, folder: Path) -> None:
    # A clone keeps the mapping's _meta and every document, the statistics included: only the name it
    # carries tells it from the index lawindex made.
    client = connection.client()
    (tx,) = load(connection, read_corpora(folder, ["TX"]))
    assert tx.index is not None
    copy = index_prefix("TX", connection.namespace) + "6" * 20
    client.indices.put_settings(index=tx.index, body={"index.blocks.write": True})
    client.indices.clone(
        index=tx.index, target=copy, body={"settings": {"index.blocks.write": None, "index.number_of_replicas": 0}}
    )
    client.indices.put_settings(index=tx.index, body={"index.blocks.write": None})
    client.cluster.health(index=copy, wait_for_status="green", request_timeout=60)
    alias = alias_of("TX", connection.namespace)
    client.indices.update_aliases(
        body={"actions": [{"remove": {"index": tx.index, "alias": alias}}, {"add": {"index": copy, "alias": alias}}]}
    )

    code, out, err = run(connection, "ask", "TX", "fire hydrant")
    assert code == 4 and out == "", err
    assert f"{copy} is a copy of {tx.index}" in err
    code, _, err = run(connection, "load", str(folder), "--state", "TX")
    assert code == 5, err
    assert every_index(client, connection) == sorted([tx.index, copy])
    assert client.count(index=copy)["count"] == tx.laws + 1
