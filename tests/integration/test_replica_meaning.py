"""Every copy of a state on a three-node cluster answers by words, meaning and hybrid as the reference engine does
(issue 28, item 8): each state loaded with two replicas (a copy on every node), then the lawindex plugin's raw
query, sent as any client sends it, asked of each copy in turn (`preference=_only_nodes:<id>`, the hit's `_node`
saying which copy answered) through a node of its own, and compared, ids, order and each hit's exact score and
ranks, to the reference computed in process (indexer.retrieval: the words ranking, and test_plugin_meaning's full
fusion of the two full rankings). A copy that ranked from other vectors, other statistics or another tie order
would differ.

The cluster is the module's own, as test_plugin_cluster's: `lawindex opensearch start --nodes 3` on
LAWINDEX_CLUSTER_PORT (default 9480; transport ports +100), 256m heaps, stopped at the end when started here.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from indexer.node import plugin
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.vectors import plugin_explanation
from indexer.opensearch.verify import default_questions
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpora
from tests import synthetic
from tests.integration.plugin_support import RawClient
from tests.integration.support import drop_namespace, three_nodes, unique_namespace
from tests.integration.test_plugin_meaning import ODD
from tests.integration.test_plugin_meaning import _reference as fused_reference

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
LAWS = 800  # a generated state wide enough that no first window is the whole ranking
ROWS = 50  # rows compared a question (each with its explanation)
# A words hit's explanation gives the spec's float64 score in its description (docs/plugin.md).
EXACT_WORDS = re.compile(r"the spec's BM25 of (\S+) \(float64")


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, Any]]:
    with three_nodes() as urls:
        client = OpenSearch(hosts=urls, timeout=60)
        assert plugin.installed(client), "a node of the cluster has no lawindex plugin"
        laws = synthetic.generate_corpus("TX", LAWS, 31)
        corpora = [*read_corpora(CORPORA, ["AL", "VT"]), synthetic.corpus_of("TX", laws)]
        asked = {corpus.state: default_questions(corpus)[:12] + ODD[:4] for corpus in corpora}
        asked["TX"] = synthetic.generate_questions(laws, 16, 31) + ODD[:4]
        connection = Connection.from_env(",".join(urls), namespace=unique_namespace(), timeout=60.0)
        try:
            load(connection, corpora, replicas=2)  # a copy on each of the three nodes, green before the swap
            # Each node's id and the URL of its own HTTP port (a node answers `_nodes/_local` about itself).
            ids = {url: next(iter(OpenSearch(hosts=[url]).nodes.info(node_id="_local")["nodes"])) for url in urls}
            yield {"urls": urls, "ids": ids, "client": client, "namespace": connection.namespace,
                   "corpora": {corpus.state: corpus for corpus in corpora}, "asked": asked}  # fmt: skip
        finally:
            drop_namespace(client, connection.namespace)


def _words_reference(corpus: Corpus, question: str) -> list[tuple[str, float, int | None, int | None]]:
    """The reference engine's words ranking: (id, score, words rank, no meaning rank) of its first ROWS laws."""
    stats = reference.statistics(corpus.laws)
    _, terms = reference.expand(question, stats)
    hits = reference.top_hits(stats, corpus.laws, terms, ROWS) if terms else []
    return [(corpus.laws[hit.order].id, float(hit.score), rank, None) for rank, hit in enumerate(hits, 1)]


def _rows(raw: RawClient, index: str, question: str, by: str, node: str) -> list[tuple[str, float, Any, Any]]:
    """One request to the copy on `node`: (id, exact float64 score, words rank, meaning rank) of each hit, read
    from its explanation (for words, the rank is the hit's place)."""
    body = {"size": ROWS, "explain": True, "_source": ["id"], "query": {"lawindex": {"question": question, "by": by}}}
    hits = raw.search(index, body, preference=f"_only_nodes:{node}")["hits"]["hits"]  # type: ignore[index]
    assert all(hit["_node"] == node for hit in hits), (node, {hit["_node"] for hit in hits})
    rows: list[tuple[str, float, Any, Any]] = []
    for rank, hit in enumerate(hits, 1):
        explained = plugin_explanation(hit["_explanation"])  # under the alias's filter
        if by == "words":
            exact = EXACT_WORDS.search(explained["description"])
            assert exact is not None, explained["description"]
            rows.append((str(hit["_source"]["id"]), float(exact[1]), rank, None))
            continue
        details = {d["description"].split(":")[0]: d["value"] for d in explained["details"]}
        rows.append((str(hit["_source"]["id"]), float(details["exact score"]), details.get("words rank"),
                     details.get("meaning rank")))  # fmt: skip
    return rows


@pytest.mark.parametrize("by", ["words", "meaning", "hybrid"])
def test_every_copy_gives_the_reference_engines_answer(cluster: dict[str, Any], by: str) -> None:
    urls: list[str] = cluster["urls"]
    ids: dict[str, str] = cluster["ids"]
    client: OpenSearch = cluster["client"]
    raws = {url: RawClient(url) for url in urls}
    through = itertools.cycle(urls)  # the coordinating node varies; the copy asked is named by preference
    asked = 0
    try:
        for state, corpus in cluster["corpora"].items():
            index = alias_of(state, cluster["namespace"])
            shards = client.cat.shards(index=index, format="json", h="node,state,prirep")
            assert len(shards) == 3 and {shard["state"] for shard in shards} == {"STARTED"}, shards
            for question in cluster["asked"][state]:
                want = (
                    _words_reference(corpus, question)
                    if by == "words"
                    else fused_reference(corpus, question, by)[:ROWS]
                )
                for node in ids.values():
                    got = _rows(raws[next(through)], index, question, by, node)
                    assert got == want, (state, question, by, node)
                    asked += 1
    finally:
        for raw in raws.values():
            raw.close()
    assert asked >= 3 * 3 * 16
