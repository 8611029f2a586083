"""Loads that do not wait on the embedder (issue 28, item 6), on a real node: `lawindex load --no-vectors` loads
words only and meaning asked of it is refused saying so; a load with vectors keeps them by their text's digest
under the cache folder, and a rebuild embeds nothing again, with the same vectors in the index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.errors import NoMeaning
from indexer.opensearch.cluster import plugin_path, plugins
from indexer.opensearch.cluster.schema import STATISTICS_ID
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
from indexer.retrieval.embedding import default_embedder, row_text
from indexer.retrieval.vector_store import VectorStore
from tests.integration.support import fresh_connection, lawindex, stored_vector

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


def test_words_only_then_vectors_kept_by_their_texts_digest(opensearch_url: str, tmp_path: Path) -> None:
    with fresh_connection(opensearch_url) as connection:
        client = connection.client()
        # Vectors where every node has k-NN (the window path) or the lawindex plugin (it ranks by meaning itself).
        meaning = plugins.every_node_has(client, plugins.KNN) or plugin_path.cluster_has_plugin(client)
        env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": connection.namespace,
               "LAWINDEX_CACHE": str(tmp_path / "cache")}  # fmt: skip
        code, _, err = lawindex("load", str(CORPORA), "--state", "VT", "--no-vectors", env=env)
        assert code == 0, err
        code, out, err = lawindex("ask", "VT", "snow tires", "--by", "meaning", env=env)
        assert code == NoMeaning.exit_code == 8, out + err
        assert "was loaded words only (`lawindex load --no-vectors`)" in err and len(err.strip().splitlines()) <= 2
        assert not list((tmp_path / "cache").glob("vectors/*/VT.vectors")), "a words-only load embeds nothing"
        code, out, err = lawindex("ask", "VT", "snow tires", env=env)
        assert code == 0 and out.startswith("words: snow tire"), err
        if not meaning:
            code, _, err = lawindex("load", str(CORPORA), "--state", "VT", "--vectors", env=env)
            assert code == 8 and "--vectors:" in err, err
            return
        code, _, err = lawindex("load", str(CORPORA), "--state", "VT", env=env)  # vectors: the index is rebuilt
        assert code == 0, err
        assert list((tmp_path / "cache").glob("vectors/*/VT.vectors"))
        code, out, err = lawindex("ask", "VT", "snow tires", "--by", "meaning", env=env)
        assert code == 0, err
        # Every state rebuilt, the store kept: nothing embedded, and the index's vectors are the embedder's.
        (corpus,) = read_corpora(CORPORA, ["VT"])
        store = VectorStore(tmp_path / "cache" / "vectors")
        (result,) = load(connection, [corpus], force=True, store=store)
        assert result.outcome == "indexed"
        assert (store.last["VT"].found, store.last["VT"].embedded) == (len(corpus.laws), 0)
        # Every row but the statistics (on the plugin's path the vector is in _source only: nothing to `exists`).
        rows = {"bool": {"must_not": {"ids": {"values": [STATISTICS_ID]}}}}
        hits = client.search(index=result.index, body={"size": 1000, "query": rows})
        stored = {hit["_source"]["order"]: stored_vector(hit["_source"]) for hit in hits["hits"]["hits"]}
        assert len(stored) == len(corpus.laws)
        made = default_embedder().embed([row_text(law) for law in corpus.laws])
        for order, vector in stored.items():
            assert np.array_equal(vector, made[order])
