"""Verified before served: a state whose statistics are deleted, altered, malformed or another index's, or
whose index is closed, is refused by `ask` (exit 4, saying what is wrong and that `lawindex load` repairs
it) and rebuilt by `load`, after which `ask` is exactly the reference again. An index missing a law is
rebuilt by `load` too, never called unchanged.

The damage is done by hand, with plain requests, the way a person or another program would do it.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from indexer.opensearch.cluster.connection import Connection, alias_of, index_prefix
from indexer.opensearch.cluster.schema import ALIAS_FILTER, STATISTICS_ID
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import read_corpora, read_corpus
from indexer.retrieval.request import Request
from tests.integration.support import lawindex

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
QUESTIONS = (
    "how far from a fire hydrant can i park",
    "can i use my phone while driving",
    "school bus stopped",
    "how long must i hold my permit",
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for state in ("TX", "MD"):
        shutil.copy(CORPORA / f"{state}.jsonl", tmp_path / f"{state}.jsonl")
    return tmp_path


def _statistics(client: OpenSearch, index: str) -> dict[str, Any]:
    found: dict[str, Any] = client.get(index=index, id=STATISTICS_ID)["_source"]
    return found


def _put(client: OpenSearch, index: str, source: dict[str, Any]) -> None:
    client.index(index=index, id=STATISTICS_ID, body=source, refresh=True)


def deleted(client: OpenSearch, index: str, _other: str) -> None:
    client.delete(index=index, id=STATISTICS_ID, refresh=True)


def average_altered(client: OpenSearch, index: str, _other: str) -> None:
    source = _statistics(client, index)
    source["statistics"]["average"] *= 1.01
    _put(client, index, source)


def df_altered(client: OpenSearch, index: str, _other: str) -> None:
    # The df of one word of the vocabulary, in the stored block of the words of its length (the last four
    # bytes of a block are its last word's df), written back with the sealed statistics unchanged.
    source = _statistics(client, index)
    fields = [f"lexicon.{length}" for length in source["statistics"]["words"]["blocks"]]
    stored = client.get(index=index, id=STATISTICS_ID, stored_fields=fields, _source=False)["fields"]
    blocks = {name.split(".")[1]: values[0] for name, values in stored.items()}
    length = "7"  # the words of 7 letters, which QUESTIONS[0] reads ("hydrant")
    raw = bytearray(base64.b64decode(blocks[length]))
    raw[-4:] = (int.from_bytes(raw[-4:], "little") + 1).to_bytes(4, "little")
    blocks[length] = base64.b64encode(bytes(raw)).decode()
    _put(client, index, {**source, "lexicon": blocks})


def unsealed(client: OpenSearch, index: str, _other: str) -> None:
    source = _statistics(client, index)
    del source["seal"]
    _put(client, index, source)


def malformed(client: OpenSearch, index: str, _other: str) -> None:
    _put(client, index, {"kind": "statistics", "state": "TX", "statistics": {"size": "many"}})


def another_states(client: OpenSearch, index: str, other: str) -> None:
    _put(client, index, _statistics(client, other))


def closed(client: OpenSearch, index: str, _other: str) -> None:
    client.indices.close(index=index)


DAMAGE: dict[str, tuple[Callable[[OpenSearch, str, str], None], str]] = {
    "statistics-deleted": (deleted, "is missing"),
    "average-altered": (average_altered, "checksum does not match"),
    "df-altered": (df_altered, "digest does not match"),
    "seal-removed": (unsealed, "carry no checksum"),
    "malformed": (malformed, "carry no checksum"),
    "another-states-statistics": (another_states, "MD's, not TX's"),
    "index-closed": (closed, "is closed"),
}


def _exact(connection: Connection, folder: Path) -> None:
    """Every question answered exactly as the reference answers it (ids and scores), by a fresh engine."""
    corpus = read_corpus(folder / "TX.jsonl")
    engine = OpenSearchEngine(connection)
    for question in QUESTIONS:
        got = engine.ask(Request("TX", question))
        want = reference.ask(corpus, question)
        assert [(hit.law.id, hit.score) for hit in got.hits] == [(hit.law.id, hit.score) for hit in want.hits]


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damage_is_refused_by_ask_and_repaired_by_load(connection: Connection, folder: Path, damage: str) -> None:
    client = connection.client()
    loaded = {result.state: result for result in load(connection, read_corpora(folder))}
    index, other = loaded["TX"].index, loaded["MD"].index
    assert index is not None and other is not None
    _exact(connection, folder)
    harm, said = DAMAGE[damage]
    harm(client, index, other)
    env = {"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace}

    code, out, err = lawindex("ask", "TX", QUESTIONS[0], env=env)
    assert code == 4, err
    assert out == ""
    (error,) = [line for line in err.splitlines() if line.startswith("error:")]
    assert said in error and index in error
    (hint,) = [line for line in err.splitlines() if line.startswith("hint:")]
    assert "lawindex load" in hint
    # A block of the vocabulary is checked when a question reads it: a family or a law by its id reads none.
    for asked in (["ask", "TX", "--family", "any"], ["get", "TX", "TX-S01"]) if damage != "df-altered" else ():
        code, out, err = lawindex(*asked, env=env)
        assert code == 4 and out == "", err
        assert said in err

    code, out, err = lawindex("load", str(folder), "--state", "TX", "--json", env=env)
    assert code == 0, err
    repaired = json.loads(out)
    assert repaired["outcome"] == "indexed"
    assert repaired["index"] != index
    found = client.indices.get(index=index_prefix("TX", connection.namespace) + "*", expand_wildcards="open,closed")
    assert sorted(found) == [repaired["index"]], "the damaged index is gone"
    _exact(connection, folder)
    # MD was never touched.
    assert client.indices.get_alias(name=alias_of("MD", connection.namespace)) == {
        other: {"aliases": {alias_of("MD", connection.namespace): {"filter": ALIAS_FILTER}}}
    }


def test_a_damaged_index_met_by_a_long_lived_engine_is_refused_on_its_next_reload(
    connection: Connection, folder: Path
) -> None:
    # An engine that read the statistics before the damage keeps its verified copy; a new generation is
    # verified when it is first met.
    client = connection.client()
    (tx,) = load(connection, read_corpora(folder, ["TX"]))
    assert tx.index is not None
    engine = OpenSearchEngine(connection)
    engine.ask(Request("TX", QUESTIONS[0]))
    (folder / "TX.jsonl").write_text("".join((folder / "TX.jsonl").read_text().splitlines(keepends=True)[:-1]))
    (again,) = load(connection, read_corpora(folder, ["TX"]))
    assert again.index is not None
    average_altered(client, again.index, "")
    from indexer.errors import DamagedIndex

    with pytest.raises(DamagedIndex):
        engine.ask(Request("TX", QUESTIONS[0]))


@pytest.mark.parametrize("missing", ["a-law", "the-statistics"])
def test_an_incomplete_index_is_rebuilt_not_called_unchanged(
    connection: Connection, folder: Path, missing: str
) -> None:
    client = connection.client()
    (first,) = load(connection, read_corpora(folder, ["TX"]))
    assert first.index is not None
    victim = "law:" + read_corpus(folder / "TX.jsonl").laws[3].id if missing == "a-law" else STATISTICS_ID
    client.delete(index=first.index, id=victim, refresh=True)
    (again,) = load(connection, read_corpora(folder, ["TX"]))
    assert again.outcome == "indexed"
    # Every law, and the statistics beside them (counted on the index: the alias's filter hides them from queries).
    assert client.count(index=str(again.index))["count"] == first.laws + 1
    assert client.count(index=alias_of("TX", connection.namespace))["count"] == first.laws
    _exact(connection, folder)
