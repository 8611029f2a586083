"""The cases of docs/bad-input.md that need a node (tests.documented.ON_A_NODE), each run as a user runs it against
a real OpenSearch and held to the exit code the row documents; tests/unit/test_documented_exits.py runs the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
from tests.documented import ON_A_NODE, catalogue
from tests.integration.support import lawindex

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
ROWS = {one.key: one for one in catalogue()}


def _exits(connection: Connection, key: str, *args: str) -> tuple[int, str]:
    env = {"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace}
    code, _, err = lawindex(*args, env=env)
    assert code in ROWS[key].exits, (ROWS[key].given, ROWS[key].exits, code, err)
    assert err.startswith("error: "), err
    return code, err


def test_every_case_on_a_node_is_a_row() -> None:
    assert set(ON_A_NODE) <= set(ROWS)


def test_the_documented_cases_on_a_node_exit_as_the_docs_say(connection: Connection) -> None:
    client = connection.client()
    namespace = connection.namespace
    assert _exits(connection, "a state with no index yet", "ask", "WY", "fire hydrant")[0] == 4
    (loaded,) = load(connection, read_corpora(CORPORA, ["TX"]))
    alias = alias_of("TX", namespace)
    key = "`rollback --to` a name that is no index "
    for name in ("", "*", alias, f"{loaded.index},{loaded.index}", "_all"):
        code, err = _exits(connection, key, "rollback", "TX", "--to", name)
        assert code == 2 and f"there is no index {name!r}" in err, (name, err)
    other = f"{namespace}-notes"
    client.indices.create(index=other)
    key = "`rollback --to` an index that is not one"
    code, err = _exits(connection, key, "rollback", "TX", "--to", other)
    assert code == 4 and "is not one of TX's generations" in err, err
    # An index where MD's alias goes: ask refuses it (4), load keeps it and fails (5).
    client.indices.create(index=alias_of("MD", namespace))
    key = "an index named like the alias (`lawindex"
    assert _exits(connection, key, "ask", "MD", "fire hydrant")[0] == 4
    code, err = _exits(connection, key, "load", str(CORPORA), "--state", "MD")
    assert code == 5 and "stands where MD's alias goes" in err, err
