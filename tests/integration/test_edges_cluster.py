"""Edges of a real cluster: blocks, and an index that goes away under a long-lived engine.

- A cluster-wide read-only block (`cluster.blocks.read_only`, or the disk flood-stage's
  `read_only_allow_delete`) is named as a block, not as a missing permission (a 403 with
  `cluster_block_exception` is not one); a load it stops exits 5, writes nothing, and the alias still
  serves what it served before. A block on reads makes `ask` exit 4 naming the block.
- Whatever happens to the index behind a state while an engine lives, what reaches the caller is a
  LawindexError with a message (an `indexer.opensearch.read.statistics.Moved` once escaped as a traceback).

Blocks are cluster-wide: each test lifts its own in `finally`, whatever happened.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.errors import LawindexError
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpus
from indexer.retrieval.request import Request
from tests.integration.support import drop_namespace, lawindex, unique_namespace

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
NEW_LAW = '{"id": "TX-NEW", "kind": "statute", "law": "A zebracrossing rule.", "question": "", "concept": "new"}\n'


@pytest.fixture
def loaded(opensearch_url: str, opensearch: OpenSearch) -> Iterator[Connection]:
    """TX loaded from the sample corpus in a namespace of its own."""
    connection = Connection.from_env(opensearch_url, namespace=unique_namespace())
    load(connection, [read_corpus(CORPORA / "TX.jsonl")])
    try:
        yield connection
    finally:
        drop_namespace(opensearch, connection.namespace)


def changed_corpora(tmp_path: Path) -> Path:
    """The sample TX corpus with one more law: a load of it must build a new index."""
    folder = tmp_path / "corpora"
    folder.mkdir(parents=True)
    (folder / "TX.jsonl").write_text((CORPORA / "TX.jsonl").read_text() + NEW_LAW)
    return folder


def indices(opensearch: OpenSearch, connection: Connection) -> set[str]:
    return set(opensearch.indices.get(index=f"{connection.namespace}-*", allow_no_indices=True))


@pytest.mark.parametrize("block", ["cluster.blocks.read_only", "cluster.blocks.read_only_allow_delete"])
def test_a_read_only_cluster_stops_a_load_with_exit_5_and_the_old_index_serves(
    opensearch: OpenSearch, loaded: Connection, tmp_path: Path, block: str
) -> None:
    env = {"LAWINDEX_NAMESPACE": loaded.namespace}
    before = indices(opensearch, loaded)
    _, served_before, _ = lawindex("ask", "TX", "fire hydrant", "--url", loaded.url, env=env)
    opensearch.cluster.put_settings(body={"persistent": {block: True}})
    try:
        code, _, err = lawindex("load", str(changed_corpora(tmp_path)), "--state", "TX", "--url", loaded.url, env=env)
        errors = [line for line in err.splitlines() if line.startswith("error: ")]
        assert code == 5, err
        assert len(errors) == 1 and "read-only" in errors[0] and "permission" not in err, err
        # Reads go on under the block: the index that served still serves, and nothing was added.
        code, served, err = lawindex("ask", "TX", "fire hydrant", "--url", loaded.url, env=env)
        assert code == 0, err
        assert served == served_before
        assert indices(opensearch, loaded) == before
    finally:
        opensearch.cluster.put_settings(body={"persistent": {block: None}})
    # Lifted, the same load goes through.
    code, _, err = lawindex("load", str(changed_corpora(tmp_path / "again")), "--state", "TX", "--url", loaded.url,
                            env=env)  # fmt: skip
    assert code == 0, err


def test_a_block_on_reads_is_named_as_a_block_and_exits_4(opensearch: OpenSearch, loaded: Connection) -> None:
    env = {"LAWINDEX_NAMESPACE": loaded.namespace}
    alias = alias_of("TX", loaded.namespace)
    opensearch.indices.put_settings(index=alias, body={"index.blocks.read": True})
    try:
        code, _, err = lawindex("ask", "TX", "fire hydrant", "--url", loaded.url, env=env)
    finally:
        opensearch.indices.put_settings(index=alias, body={"index.blocks.read": None})
    assert code == 4, err
    assert "cluster block" in err and "index read" in err and "permission" not in err


def test_an_index_closed_under_a_long_lived_engine_is_a_lawindex_error(
    opensearch: OpenSearch, loaded: Connection
) -> None:
    engine = OpenSearchEngine(loaded)
    assert engine.ask(Request("TX", "fire hydrant")).hits  # statistics cached, the index known
    served = next(iter(opensearch.indices.get_alias(name=alias_of("TX", loaded.namespace))))
    opensearch.indices.close(index=served)
    try:
        for question in ("fire hydrant", "school bus"):
            with pytest.raises(LawindexError) as failed:
                engine.ask(Request("TX", question))
            assert failed.value.message
        with pytest.raises(LawindexError):
            engine.family("TX", "anything")
    finally:
        opensearch.indices.open(index=served)


def test_an_index_deleted_under_a_long_lived_engine_is_no_index(opensearch: OpenSearch, loaded: Connection) -> None:
    engine = OpenSearchEngine(loaded)
    assert engine.ask(Request("TX", "fire hydrant")).hits
    opensearch.indices.delete(index=f"{loaded.namespace}-tx-*")
    with pytest.raises(LawindexError, match="no index for TX"):
        engine.ask(Request("TX", "fire hydrant"))
