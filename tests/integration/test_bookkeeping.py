"""lawindex's own documents never reach a raw query on a state's alias (issue 44.6): the statistics document lives in
the state's index beside the laws, and the alias carries a filter (schema.ALIAS_FILTER) that no query gets past.

Before, `must_not` and `boosting` queries returned the statistics document to a raw client as if it were a law.
Here every kind of query a raw client may send through the alias is tried, on a real node; the statistics are still
read by id through the alias (what the query side does), and an alias made by an earlier lawindex, without the
filter, still serves and is given the filter by the next load without a rebuild."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.cluster.schema import ALIAS_FILTER, STATISTICS_ID
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.generations import behind, guarded
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.request import Request
from tests.integration.support import lawindex
from tests.synthetic import generate_corpus, write_corpus

pytestmark = pytest.mark.integration

LAWS = 40

# Raw queries a client may send through the alias; none may return, count or bucket the statistics document.
QUERIES: dict[str, dict[str, Any]] = {
    "match_all": {"query": {"match_all": {}}},
    "must_not": {"query": {"bool": {"must_not": [{"term": {"words": "zzzz"}}]}}},
    "must_not of what only it lacks": {"query": {"bool": {"must_not": [{"exists": {"field": "order"}}]}}},
    "boosting": {
        "query": {"boosting": {"positive": {"match_all": {}}, "negative": {"exists": {"field": "words"}},
                               "negative_boost": 0.1}}
    },
    "ids": {"query": {"ids": {"values": [STATISTICS_ID]}}},
    "term on _id": {"query": {"term": {"_id": STATISTICS_ID}}},
    "exists on a statistics field": {"query": {"exists": {"field": "statistics"}}},
    "query_string *": {"query": {"query_string": {"query": "*"}}},
    "function_score": {"query": {"function_score": {"query": {"match_all": {}}, "random_score": {}}}},
    "constant_score of a must_not": {
        "query": {"constant_score": {"filter": {"bool": {"must_not": [{"exists": {"field": "law"}}]}}}}
    },
}  # fmt: skip


def _corpus(directory: Path, seed: int = 7) -> Corpus:
    directory.mkdir(parents=True, exist_ok=True)
    write_corpus(directory / "TX.jsonl", generate_corpus("TX", LAWS, seed))
    (corpus,) = read_corpora(directory, ["TX"])
    return corpus


def _ranked(hits: Any) -> list[tuple[str, float]]:
    return [(hit.law.id, hit.score) for hit in hits]


def _never_seen(client: OpenSearch, alias: str) -> None:
    for name, body in QUERIES.items():
        found = client.search(index=alias, body={**body, "size": 1000, "_source": False, "track_total_hits": True})
        ids = [hit["_id"] for hit in found["hits"]["hits"]]
        assert STATISTICS_ID not in ids, name
        assert found["hits"]["total"]["value"] == len(ids) <= LAWS, name
        counted = client.count(index=alias, body={"query": body["query"]})["count"]
        assert counted == len(ids), name
    assert client.count(index=alias)["count"] == LAWS
    aggregations = {
        "ids": {"terms": {"field": "_id", "size": 1000}},
        "all": {"value_count": {"field": "_id"}},
        "without_order": {"missing": {"field": "order"}},  # the statistics document has no place in the corpus
    }
    aggregated = client.search(index=alias, body={"size": 0, "aggs": aggregations})["aggregations"]
    assert STATISTICS_ID not in {bucket["key"] for bucket in aggregated["ids"]["buckets"]}
    assert aggregated["all"]["value"] == LAWS and aggregated["without_order"]["doc_count"] == 0
    searches = client.msearch(body=[{"index": alias}, {"query": {"match_all": {}}, "size": 1000}])["responses"]
    assert STATISTICS_ID not in [hit["_id"] for hit in searches[0]["hits"]["hits"]]
    scrolled = client.search(index=alias, body={"size": 5, "query": {"match_all": {}}}, params={"scroll": "1m"})
    seen = [hit["_id"] for hit in scrolled["hits"]["hits"]]
    while scrolled["hits"]["hits"]:
        scrolled = client.scroll(scroll_id=scrolled["_scroll_id"], params={"scroll": "1m"})
        seen += [hit["_id"] for hit in scrolled["hits"]["hits"]]
    client.clear_scroll(scroll_id=scrolled["_scroll_id"])
    assert len(seen) == LAWS and STATISTICS_ID not in seen


def test_no_raw_query_on_the_alias_sees_the_statistics(connection: Connection, tmp_path: Path) -> None:
    client = connection.client()
    corpus = _corpus(tmp_path / "1")
    (done,) = load(connection, [corpus])
    alias = alias_of("TX", connection.namespace)
    body = client.indices.get_alias(name=alias)
    assert body == {str(done.index): {"aliases": {alias: {"filter": ALIAS_FILTER}}}}
    _never_seen(client, alias)
    # On the index itself (not the alias) the statistics are there, and read by id through the alias as ever.
    assert client.count(index=str(done.index))["count"] == LAWS + 1
    assert client.get(index=alias, id=STATISTICS_ID)["found"]
    # The answers are still the reference's.
    engine = OpenSearchEngine(connection)
    for law in corpus.laws[:10]:
        served = engine.ask(Request("TX", law.question)).hits
        assert _ranked(served) == _ranked(reference.ask(corpus, law.question).hits)


def test_an_alias_without_the_filter_serves_and_the_next_load_adds_it(connection: Connection, tmp_path: Path) -> None:
    """An alias an earlier lawindex made (no filter) still serves; the next load of the same corpus puts the filter
    on it, leaving the index as it is (no rebuild, the same name); a rollback onto a generation adds it too."""
    client = connection.client()
    first = _corpus(tmp_path / "1")
    (done,) = load(connection, [first])
    alias = alias_of("TX", connection.namespace)
    index = str(done.index)
    client.indices.update_aliases(body={"actions": [{"add": {"index": index, "alias": alias}}]})  # as before
    assert not guarded(client, "TX", connection.namespace)
    question = first.laws[0].question
    served = OpenSearchEngine(connection).ask(Request("TX", question)).hits
    assert _ranked(served) == _ranked(reference.ask(first, question).hits)
    (again,) = load(connection, [first])
    assert again.outcome == "unchanged" and str(again.index) == index and behind(client, alias) == [index]
    assert guarded(client, "TX", connection.namespace)
    _never_seen(client, alias)
    # A second generation, its alias stripped of the filter, then a rollback to the first: filtered again.
    (second,) = load(connection, [_corpus(tmp_path / "2", 8)])
    client.indices.update_aliases(body={"actions": [{"add": {"index": str(second.index), "alias": alias}}]})
    env = {"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace}
    code, _, err = lawindex("rollback", "TX", "--to", index, env=env)
    assert code == 0, err
    assert behind(client, alias) == [index] and guarded(client, "TX", connection.namespace)
    _never_seen(client, alias)
