"""The window path's vectors without a graph (issue 28, item 6): where a state is loaded for Lucene's BM25 on a
cluster with k-NN, its `knn_vector` has no `method` in an index with `index.knn: false` (no HNSW graph is built:
it cost the node 2.9x a words-only load's CPU and nothing read it), and the `knn_score` script's windows over its
doc values still give the reference engine's answers by meaning and hybrid, ids, order, ranks and scores; status
says the window path. Where the build is for the lawindex plugin there is no `knn_vector` at all (test_meaning)."""

from __future__ import annotations

import pytest

from indexer.opensearch.cluster import plugins
from indexer.opensearch.cluster.schema import GRID_FIELD
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.read.status import status
from indexer.opensearch.read.vectors import VECTOR_FIELD
from indexer.opensearch.write.generations import serving
from indexer.opensearch.write.load import load
from indexer.retrieval import meaning as rank
from indexer.retrieval.request import Request, Way
from tests import synthetic
from tests.integration.support import fresh_connection

pytestmark = pytest.mark.integration

LAWS = 600  # wider than the first window (16) and the first hybrid window (64), so both widen


def test_the_window_path_answers_from_a_graph_free_knn_vector(opensearch_url: str) -> None:
    corpus = synthetic.corpus_of("GU", synthetic.generate_corpus("GU", LAWS, 28))
    with fresh_connection(opensearch_url) as connection:
        client = connection.client()
        (result,) = load(connection, [corpus], plugin=False)
        assert result.outcome == "indexed"
        index = serving(client, "GU", connection.namespace)
        assert index is not None
        properties = client.indices.get_mapping(index=index)[index]["mappings"]["properties"]
        (row,) = status(connection)
        if not plugins.every_node_has(client, plugins.KNN):  # no k-NN, no plugin build: words only
            assert VECTOR_FIELD not in properties and row.meaning_path == "none"
            return
        field = properties[VECTOR_FIELD]
        assert (field["type"], field["dimension"], "method" in field) == ("knn_vector", 256, False)
        assert client.indices.get_settings(index=index)[index]["settings"]["index"]["knn"] == "false"
        assert properties[GRID_FIELD] == {"type": "binary", "doc_values": True}
        assert (row.path, row.meaning_path) == ("window", "window")
        engine = OpenSearchEngine(connection)
        questions = [*synthetic.generate_questions(corpus.laws, 12, 7), "", "permit expired before my road test"]
        for by in ("meaning", "hybrid"):
            for number, question in enumerate(questions):
                for limit in (8, 100) if number % 4 == 0 else (8,):
                    want = rank.answer(corpus, Request(corpus.state, question, Way(by), limit))
                    got = engine.ask(Request("GU", question, Way(by), limit))
                    assert got.ids() == want.ids(), (by, question, limit)
                    assert got.reached == want.reached, (by, question, limit)
                    assert [hit.score for hit in got.hits] == [hit.score for hit in want.hits], (by, question)
