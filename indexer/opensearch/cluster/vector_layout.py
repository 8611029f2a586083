"""How a state's rows carry their vectors in an index: the fields (`vector_grid` doc values for the lawindex plugin,
a graph-free `knn_vector` for k-NN's windows), the index's `_meta.lawindex.meaning`, and each row's grid bytes.
What the load writes (the write wing) and what asking by meaning reads (read/vectors.py) both follow it, so neither
imports the other.

Loading. Where every node has the k-NN plugin (cluster/plugins.py) and the load does not build for the
lawindex plugin, `lawindex load` gives each state's new index the field `vector`: a `knn_vector` of 256
dimensions in an index with `index.knn: false` and no `method`, so no graph is built (the window path below
reads the vectors' doc values only, never a graph: an HNSW graph cost the node 2.9x a words-only load's CPU,
benchmarks/RESULTS.md; k-NN's documented "score script only" form, answered by the same `knn_score` script).
Where the load builds for the lawindex plugin, there is no vector field but `vector_grid`, which every index
with vectors has: its base64 is the vector's one copy, in `_source` (the seal and verify read it there,
integrity.source_vector) and in doc values (the plugin ranks from them). With a `knn_vector`, each row's
document carries its vector as the grid's float32 values (indexer.retrieval.embedding), which JSON carries exactly, and
its grid out of `_source`. Each index's `_meta.lawindex.meaning` has the embedder's model and version, which
the index's fingerprint includes: a load with another model, or a load where k-NN has appeared since,
rebuilds the index (the same alias swap, ownership and seal as ever). The seal covers the vectors: the statistics carry
every row's vector digest beside its law's (indexer/opensearch/trust/integrity.py), and every row the meaning path
re-scores is checked against both, so an altered vector is refused (exit 4) as an altered law is. Where
neither k-NN nor the plugin is there the load is the words-only load it always was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from indexer.opensearch.cluster import plugins
from indexer.opensearch.cluster.schema import GRID_FIELD, VECTOR_FIELD
from indexer.retrieval.embedding import GRID_BITS, Embedder, Vectors, default_embedder, identity, row_text

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from indexer.retrieval.corpus import Corpus
    from indexer.retrieval.vector_store import VectorStore


@dataclass(frozen=True)
class Meaning:
    """What a load adds to a state's index for meaning: the embedder, and what it makes of a corpus."""

    embedder: Embedder
    # Vectors kept by the digest of their text (indexer.retrieval.vector_store): a law whose text did not
    # change is not embedded again. None: every row embedded.
    store: VectorStore | None = None
    # A `knn_vector` field (every node has k-NN and the plugin does not rank the index: the window path);
    # without it the vector is kept in _source only, and the plugin ranks from `vector_grid`, which every
    # index with vectors has.
    knn: bool = True

    @property
    def identity(self) -> str:
        """What the index's fingerprint records: `model@version`."""
        return identity(self.embedder)

    @property
    def layout(self) -> str:
        """Which vector fields the index has, in its fingerprint: a load where k-NN came or went rebuilds."""
        return "knn+grid" if self.knn else "grid"

    def extend(self, body: dict[str, Any]) -> dict[str, Any]:
        """`body` (a create-index request, its `_meta.lawindex` set) with the vector fields: changed, returned."""
        if self.knn:
            # No graph (index.knn false, no method): the window path reads doc values only. False, not left out:
            # an index template giving `index.knn: true` would otherwise build one, on faiss by default.
            body["settings"]["index"]["knn"] = False
            body["mappings"]["properties"][VECTOR_FIELD] = mapping(self.embedder.dimension)
            body["mappings"]["_source"]["excludes"].append(GRID_FIELD)  # the floats are _source's copy
        # Without a knn_vector the grid is the vector's one copy: in _source (the seal's digest reads it there,
        # integrity.source_vector) and in doc values (the plugin ranks from them). A row's floats as JSON text
        # were 2.8 kB, twice the grid's base64, in every request, _source and merge.
        body["mappings"]["properties"][GRID_FIELD] = {"type": "binary", "doc_values": True}
        body["mappings"]["_meta"]["lawindex"]["meaning"] = {
            "model": self.embedder.model,
            "version": self.embedder.version,
            "dimension": self.embedder.dimension,
            # Who embeds a question: the node (the plugin has the table), or the client, which sends its vector.
            "questions": "node" if self.embedder.questions_on_node else "client",
            "field": VECTOR_FIELD,
            "grid_field": GRID_FIELD,
            "knn": self.knn,
        }
        return body

    def vectors(self, corpus: Corpus) -> Vectors:
        """Every row's vector, in corpus order (the kept ones read back, where there is a store; the rows' own, on
        the grid, where the corpus carries them: indexer.retrieval.own_vectors)."""
        from indexer.retrieval.own_vectors import OwnVectors

        if isinstance(self.embedder, OwnVectors):
            return self.embedder.grid()
        texts = [row_text(law) for law in corpus.laws]
        if self.store is None:
            return self.embedder.embed(texts)
        return self.store.vectors(self.embedder, corpus.state, texts)


def for_corpus(meaning: Meaning | None, corpus: Corpus) -> Meaning | None:
    """The meaning a load gives `corpus`'s index: the cluster's (`meaning`), but for a corpus whose rows carry their
    own vectors, whose index carries those (model external, questions asked with their own vectors)."""
    if meaning is None or corpus.vectors is None:
        return meaning
    from dataclasses import replace

    from indexer.retrieval.own_vectors import OwnVectors

    return replace(meaning, embedder=OwnVectors(corpus.vectors), store=None)


def mapping(dimension: int) -> dict[str, Any]:
    """The `knn_vector` field for the `knn_score` script only: doc values, no `method`, so no graph (in an index
    with `index.knn: false`; k-NN's documented exact-search form since OpenSearch 1.x, tried on 3.6.0)."""
    return {"type": "knn_vector", "dimension": dimension}


def for_cluster(client: OpenSearch, plugin: bool = False, embedder: Embedder | None = None) -> Meaning | None:
    """The meaning a load adds where the load builds for the lawindex plugin (which ranks by meaning from
    `vector_grid`: no `knn_vector`, k-NN or not) or every node has k-NN (the window path: a graph-free
    `knn_vector`); None (words only) where neither. Its rows embedded by `embedder` (`lawindex load --embedder`,
    indexer.retrieval.embedders), the default embedder's when None."""
    chosen = embedder or default_embedder()
    if plugin:
        return Meaning(chosen, knn=False)
    return Meaning(chosen, knn=True) if plugins.every_node_has(client, plugins.KNN) else None


def grid_units(vectors: Vectors) -> npt.NDArray[np.int32]:
    """Vectors (a row or a state's rows) as `vector_grid` holds each: one little-endian int32 a dimension, each
    component times 2^20 (exact: the vectors are on that grid). A row's bytes: `grid_units(vectors)[row].tobytes()`."""
    units: npt.NDArray[np.int32] = np.rint(vectors.astype(np.float64) * float(1 << GRID_BITS)).astype("<i4")
    return units
