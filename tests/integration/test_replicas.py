"""Replicas on the shared single node: one wherever there are two data nodes (none here), `--replicas N`
honoured, and a load whose new index cannot be green in time fails (exit 5) with the old alias serving."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
from tests.integration.support import fresh_connection, timed_lawindex

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


@pytest.fixture
def connection(opensearch_url: str) -> Iterator[Connection]:
    with fresh_connection(opensearch_url) as made:
        yield made


def _serving(connection: Connection, state: str) -> str:
    found = connection.client().indices.get_alias(name=alias_of(state, connection.namespace))
    (index,) = found
    return str(index)


def test_a_state_index_auto_expands_one_replica_and_is_green_on_one_node(connection: Connection) -> None:
    load(connection, read_corpora(CORPORA, ["MD"]))
    client = connection.client()
    index = _serving(connection, "MD")
    settings = client.indices.get_settings(index=index)[index]["settings"]["index"]
    assert settings["auto_expand_replicas"] == "0-1"
    assert settings["number_of_shards"] == "1"
    assert client.cluster.health(index=index)["status"] == "green"


def test_a_load_that_cannot_be_green_fails_with_exit_5_and_the_old_alias_serves(
    connection: Connection, tmp_path: Path
) -> None:
    load(connection, read_corpora(CORPORA, ["MD"]))
    before = _serving(connection, "MD")
    changed = tmp_path / "MD.jsonl"
    lines = (CORPORA / "MD.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["title"] = f"{first.get('title', '')} (revised)"
    changed.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    env = {"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace}
    # One node cannot hold a replica: the new index stays yellow.
    code, _out, err, _ = timed_lawindex("load", str(tmp_path), "--replicas", "1", "--green-timeout", "2", env=env)
    assert code == 5, err
    assert "was not green within 2 s" in err and "what served still serves" in err
    assert _serving(connection, "MD") == before
    client = connection.client()
    assert list(client.indices.get(index=f"{connection.namespace}-md-*")) == [before]  # the yellow one is gone
    # With no replica asked for, the same corpus loads.
    code, _out, err, _ = timed_lawindex("load", str(tmp_path), "--state", "MD", "--replicas", "0", env=env)
    assert code == 0, err
    assert _serving(connection, "MD") != before
