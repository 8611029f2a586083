"""The lawindex plugin's per-segment vectors (plugin/.../GridVectors.java) on a real node: a state's rows decoded
once per segment and kept, their bytes charged to the node's fielddata breaker (`_nodes/stats/breaker`, where
OpenSearch shows its own per-segment field data) while the segment lives, and given back when the index goes.
Counted in bytes, never timed: 1,036 bytes a row (256 int32 grid units, the corpus order, the document id).

Other tests on the same node may move the breaker a little (global ordinals of small keyword fields: kilobytes);
the state here is 1,500 rows, 1.5 MB, so each step is told apart from that by far.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from opensearchpy import OpenSearch

from indexer.node import plugin
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.write.load import load
from tests import synthetic
from tests.integration.plugin_support import RawClient
from tests.integration.support import drop_namespace, unique_namespace

pytestmark = pytest.mark.integration

LAWS = 1500
ROW_BYTES = 4 * 256 + 8 + 4  # GridVectors.ROW_BYTES
# The breaker may move by others' field data between two reads; far below one state's vectors (1.55 MB).
NOISE = 256 * 1024


@pytest.fixture
def loaded(opensearch_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    client = OpenSearch(hosts=[opensearch_url], timeout=120)
    assert plugin.installed(client), f"the node at {opensearch_url} has no lawindex plugin (_cat/plugins)"
    work = tmp_path_factory.mktemp("plugin-vector-cache")
    laws = synthetic.generate_corpus("TX", LAWS, 16)
    corpus = synthetic.corpus_of("TX", laws, work / "TX.jsonl")
    connection = Connection.from_env(opensearch_url, namespace=unique_namespace(), timeout=120.0)
    load(connection, [corpus])
    raw = RawClient(opensearch_url)
    try:
        yield {"client": client, "raw": raw, "connection": connection, "corpus": corpus}
    finally:
        raw.close()
        drop_namespace(client, connection.namespace)


def _fielddata(client: OpenSearch) -> int:
    """The fielddata breaker's estimate, summed over the cluster's nodes (the state's one shard is on one)."""
    nodes = client.nodes.stats(metric="breaker")["nodes"].values()
    return sum(int(node["breakers"]["fielddata"]["estimated_size_in_bytes"]) for node in nodes)


def _ask(raw: RawClient, index: str, by: str, question: str) -> list[str]:
    body = {"size": 5, "_source": ["id"], "query": {"lawindex": {"question": question, "by": by}}}
    return [str(hit["_source"]["id"]) for hit in raw.search(index, body)["hits"]["hits"]]  # type: ignore[index]


def test_the_vectors_are_decoded_once_charged_and_given_back_with_the_index(loaded: dict[str, Any]) -> None:
    client, raw = loaded["client"], loaded["raw"]
    alias = alias_of("TX", loaded["connection"].namespace)
    index = next(iter(client.indices.get_alias(name=alias)))
    rows = int(client.count(index=index)["count"])
    assert rows >= LAWS
    expected = ROW_BYTES * rows  # every row but the statistics document has a vector: within one row of this
    questions = synthetic.generate_questions(loaded["corpus"].laws, 6, 16)

    before = _fielddata(client)
    assert _ask(raw, alias, "meaning", questions[0])
    first = _fielddata(client)
    assert expected - ROW_BYTES - NOISE <= first - before <= expected + NOISE, (before, first, expected)

    for question in questions[1:]:  # the cached segments serve every later question, either way
        assert _ask(raw, alias, "meaning", question)
        assert _ask(raw, alias, "hybrid", question)
    again = _fielddata(client)
    assert abs(again - first) <= NOISE, (first, again)

    client.indices.delete(index=index)
    given_back = _fielddata(client)
    for _ in range(60):  # the shard closes as the node applies the deletion; polled, never timed
        if first - given_back >= expected - ROW_BYTES - NOISE:
            break
        time.sleep(0.5)
        given_back = _fielddata(client)
    assert first - given_back >= expected - ROW_BYTES - NOISE, (first, given_back, expected)
