"""Meaning on OpenSearch: the rows' vectors (`vector_grid` doc values for the lawindex plugin, a graph-free
`knn_vector` for k-NN's windows), and `--by meaning` / `--by hybrid` answered from them, equal to the reference
engine's answers (indexer.retrieval.meaning), ids and order.

Loading. Where every node has the k-NN plugin (cluster/plugins.py) and the load does not build for the
lawindex plugin, `lawindex load` gives each state's new index the field `vector`: a `knn_vector` of 256
dimensions in an index with `index.knn: false` and no `method`, so no graph is built (the window path below
reads the vectors' doc values only, never a graph: an HNSW graph cost the node 2.9x a words-only load's CPU,
benchmarks/RESULTS.md; k-NN's documented "score script only" form, answered by the same `knn_score` script).
Where the load builds for the lawindex plugin, there is no vector field but `vector_grid`, which every index
with vectors has: its base64 is the vector's one copy, in `_source` (the seal and verify read it there,
integrity.source_vector) and in doc values (the plugin ranks from them). With a `knn_vector`, each row's
document carries its vector as the grid's float32 values (indexer.embedding), which JSON carries exactly, and
its grid out of `_source`. Each index's `_meta.lawindex.meaning` has the embedder's model and version, which
the index's fingerprint includes: a load with another model, or a load where k-NN has appeared since,
rebuilds the index (the same alias swap, ownership and seal as ever). The seal covers the vectors: the statistics carry
every row's vector digest beside its law's (indexer/opensearch/trust/integrity.py), and every row the meaning path
re-scores is checked against both, so an altered vector is refused (exit 4) as an altered law is. Where
neither k-NN nor the plugin is there the load is the words-only load it always was.

Asking by meaning. OpenSearch scores every row exactly, by brute force: a `script_score` query with the
k-NN plugin's `knn_score` script (`innerproduct`: 1 + dot for a dot >= 0, 1 / (1 - dot) below), in float32;
there is no graph to consult, so nothing is approximate but the arithmetic. A window of the best W rows
(W = max(WINDOW, limit)) is re-scored exactly from the stored vectors (the float64 dot product, exact on
the grid), sorted by cosine then corpus order, and proven wide enough: OpenSearch returns the W best
float32 scores, so a row left out scores at most the window's lowest, s; its float32 dot product is then at
most d(s) (the script's transform inverted), and its exact one at most d(s) + FLOAT32_DOT_SLACK (the
float32 error of a 256-term dot product of unit vectors, whatever order or FMA Lucene sums in, is at most
γ_256 · Σ|a_i·b_i| <= 256 · 2^-24 / (1 - 256 · 2^-24) ≈ 1.53e-5; 1e-4 is over six of that). When the
limit-th exact cosine in the window is above that bound, no row outside can enter; else the window widens
(x4) and is asked again. A window holding fewer rows than asked for holds every row.

Hybrid. The fusion is of both full rankings (indexer.retrieval.meaning), but its first rows need only the
first W of each: the exact words answer of W laws and the exact meaning answer of W rows (each proven as above),
from which indexer.retrieval.meaning.proven proves the fused first rows exactly (every row outside a window is
bounded by its rank past it), or says the windows are too narrow; W starts at HYBRID_WINDOW (or the limit) and
doubles until they are not (at the latest both rankings whole: the old cost). lawindex fuses them, so the answer
is the reference's, whatever the limit.

The plugin. Where the lawindex plugin ranks a state by meaning (its index has `vector_grid`), one `lawindex`
query answers by meaning or hybrid and each hit's explanation carries its exact score and ranks (docs/fusion.md).

Long: the three ways meaning reaches a row on OpenSearch (the load's vectors, the proven windows, the plugin's
one request) share the checks of an index's meaning and of each row against its seal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from indexer.errors import ClusterRefused, NoMeaning
from indexer.opensearch.cluster import plugins
from indexer.opensearch.cluster.plugin_path import NO_VECTOR, QUERY
from indexer.opensearch.cluster.schema import FETCHED, GRID_FIELD
from indexer.opensearch.cluster.schema import VECTOR_FIELD as VECTOR_FIELD  # the field's name, where meaning lives
from indexer.opensearch.trust import integrity, ownership
from indexer.retrieval.answers import MEANING_WEIGHT, RETRIEVED_LAWS, RRF_K, WORDS_WEIGHT, Answer, Hit, Reached
from indexer.retrieval.corpus import Corpus, state_code
from indexer.retrieval.embedding import GRID_BITS, Embedder, Vectors, default_embedder, identity, row_text

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from indexer.opensearch.read.query import OpenSearchEngine
    from indexer.opensearch.read.statistics import IndexStatistics
    from indexer.retrieval.vector_store import VectorStore

WINDOW = 16
WIDEN = 4
FLOAT32_DOT_SLACK = 1e-4
HYBRID_WINDOW = 64  # each ranking's first window for hybrid, widened by HYBRID_WIDEN until the fusion is proven
HYBRID_WIDEN = 2


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
            "field": VECTOR_FIELD,
            "grid_field": GRID_FIELD,
            "knn": self.knn,
        }
        return body

    def vectors(self, corpus: Corpus) -> Vectors:
        """Every row's vector, in corpus order (the kept ones read back, where there is a store)."""
        texts = [row_text(law) for law in corpus.laws]
        if self.store is None:
            return self.embedder.embed(texts)
        return self.store.vectors(self.embedder, corpus.state, texts)


def mapping(dimension: int) -> dict[str, Any]:
    """The `knn_vector` field for the `knn_score` script only: doc values, no `method`, so no graph (in an index
    with `index.knn: false`; k-NN's documented exact-search form since OpenSearch 1.x, tried on 3.6.0)."""
    return {"type": "knn_vector", "dimension": dimension}


def for_cluster(client: OpenSearch, plugin: bool = False) -> Meaning | None:
    """The meaning a load adds where the load builds for the lawindex plugin (which ranks by meaning from
    `vector_grid`: no `knn_vector`, k-NN or not) or every node has k-NN (the window path: a graph-free
    `knn_vector`); None (words only) where neither."""
    if plugin:
        return Meaning(default_embedder(), knn=False)
    return Meaning(default_embedder(), knn=True) if plugins.every_node_has(client, plugins.KNN) else None


def grid_units(vectors: Vectors) -> npt.NDArray[np.int32]:
    """Vectors (a row or a state's rows) as `vector_grid` holds each: 256 little-endian int32, each component times
    2^20 (exact: the vectors are on that grid). A row's bytes are `grid_units(vectors)[row].tobytes()`."""
    units: npt.NDArray[np.int32] = np.rint(vectors.astype(np.float64) * float(1 << GRID_BITS)).astype("<i4")
    return units


# ---------------------------------------------------------------------------------------------------
# Asking.

# Per concrete index (a generation's name is never reused): its `_meta.lawindex.meaning` (or None), how many
# rows it holds, whether it was loaded words only, and whether the plugin ranks it by meaning. Bounded: a
# service asked of many generations starts again past it.
_MEANING_OF: dict[str, tuple[dict[str, Any] | None, int, bool, bool]] = {}
_KEPT = 1024


def _meaning_of(engine: OpenSearchEngine, stats: IndexStatistics) -> int:
    """How many rows the index holds, once its meaning is checked: vectors there, made by this
    lawindex's embedder; else NoMeaning, saying what is missing."""
    if stats.index not in _MEANING_OF:
        if len(_MEANING_OF) > _KEPT:
            _MEANING_OF.clear()
        meta = ownership.meta_of(engine.client, stats.index)
        meaning = meta.get("meaning")
        words_only = meta.get("words_only") is True  # loaded with --no-vectors (indexer.opensearch.write.load)
        from indexer.opensearch.cluster.plugin_path import on_plugin as built_for_plugin

        _MEANING_OF[stats.index] = (
            meaning if isinstance(meaning, dict) else None,
            int(meta.get("laws", 0)),
            words_only,
            built_for_plugin(meta) and isinstance(meaning, dict) and meaning.get("grid_field") == GRID_FIELD,
        )
    found, rows, words_only, _ = _MEANING_OF[stats.index]
    if found is None and words_only:
        raise NoMeaning(
            f"{stats.index} was loaded words only (`lawindex load --no-vectors`): its rows have no vectors to "
            "ask by meaning or hybrid",
            hint="`lawindex load` it again without --no-vectors",
        )
    if found is None:
        from indexer.opensearch.cluster.connection import server_version

        version = server_version(engine.client)
        if not plugins.every_node_has(engine.client, plugins.KNN):
            raise NoMeaning(plugins.knn_missing(engine.connection.url, version), hint=plugins.knn_missing_hint())
        raise NoMeaning(
            f"{stats.index} was loaded without vectors (the cluster had no k-NN plugin then)",
            hint="`lawindex load` again: it rebuilds the index with them",
        )
    mine = default_embedder()
    if (found.get("model"), found.get("version")) != (mine.model, mine.version):
        raise NoMeaning(
            f"{stats.index}'s vectors were made by {found.get('model')}@{found.get('version')}, and this lawindex "
            f"embeds questions with {identity(mine)}",
            hint="`lawindex load` again with this lawindex",
        )
    return rows


def _score_query(question: Vectors) -> dict[str, Any]:
    """Every row scored by the k-NN plugin's exact script: no graph, every row with a vector."""
    return {
        "script_score": {
            "query": {"exists": {"field": VECTOR_FIELD}},
            "script": {
                "source": "knn_score",
                "lang": "knn",
                "params": {"field": VECTOR_FIELD, "query_value": question.tolist(), "space_type": "innerproduct"},
            },
        }
    }


def dot_of_score(score: float) -> float:
    """The dot product a `knn_score` innerproduct score stands for (its transform inverted)."""
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score


@dataclass(frozen=True)
class _Row:
    source: dict[str, Any]
    cosine: float
    order: int


def _rescored(hits: Sequence[dict[str, Any]], question: Vectors) -> list[_Row]:
    """The window's rows by exact cosine (from their stored vectors), ties in corpus order."""
    if not hits:
        return []
    stored = np.array([hit["_source"][VECTOR_FIELD] for hit in hits], dtype=np.float32)
    exact = stored.astype(np.float64) @ question.astype(np.float64)
    rows = [
        _Row(hit["_source"], float(value), int(hit["_source"]["order"])) for hit, value in zip(hits, exact, strict=True)
    ]
    rows.sort(key=lambda row: (-row.cosine, row.order))
    return rows


def _window(
    engine: OpenSearchEngine, state: str, stats: IndexStatistics, question: Vectors, size: int
) -> list[dict[str, Any]]:
    body = _score_query(question)
    found = engine.best_hits(state, stats.index, body, size, 1, source=[*FETCHED, VECTOR_FIELD])
    # Which generation answered: every hit says; with none (a generation loaded without vectors has no
    # row with the field), ask the alias, as the words path does.
    served = {str(hit["_index"]) for hit in found} if found else {engine.served_now(state)}
    if served != {stats.index}:
        raise _Stale
    # Every row re-scored, its law and its vector, is the one loaded (the same seal as the words path's):
    # an altered row is refused, exit 4, never ranked (indexer/opensearch/trust/integrity.py).
    engine.refuse_altered(state, stats, found, vectors=True)
    return found


class _Stale(Exception):
    """The alias moved to another generation since its statistics were read."""


def _by_meaning(
    engine: OpenSearchEngine,
    state: str,
    stats: IndexStatistics,
    question: Vectors,
    limit: int,
    rows: int | None,
    margin: int = 0,
) -> list[_Row]:
    """The best `limit` rows by exact cosine (every row when `rows`, the state's count, is given); the first
    window `margin` rows wider than the limit (a window of exactly `limit` rows can never prove its last)."""
    size = max(WINDOW, limit + margin) if rows is None else max(rows, 1) + 1
    while True:
        found = _window(engine, state, stats, question, size)
        ranked = _rescored(found, question)
        if len(found) < size:  # every row is here
            return ranked[: len(ranked) if rows is not None else limit]
        lowest = dot_of_score(float(found[-1]["_score"]))
        if len(ranked) >= limit and ranked[limit - 1].cosine > lowest + FLOAT32_DOT_SLACK:
            return ranked[:limit]
        size *= WIDEN


def _hybrid(
    engine: OpenSearchEngine,
    state: str,
    stats: IndexStatistics,
    question: str,
    asked_vector: Vectors,
    worded: bool,
    limit: int,
    fusion: tuple[int, float, float],
    rows: int,
) -> list[tuple[_Row, float, int | None, int | None]]:
    """The first `limit` rows of the fusion of the two full exact rankings, from windows of each: the exact
    words answer and the exact meaning answer of the first W rows, W widened (x2) until
    indexer.retrieval.meaning.proven proves the fused first rows from them (at the latest when both are whole)."""
    from indexer.retrieval.meaning import proven

    window = max(HYBRID_WINDOW, limit)
    by_words: list[int] = []
    words_whole = not worded  # a question sharing no word: words reach nothing, their ranking is whole
    while True:
        if not words_whole:
            # The exact words answer of the first `window` laws (fewer: every law sharing a word).
            by_words = [hit.order for hit in engine.ask(state, question, window).hits]
            words_whole = len(by_words) < window
            if engine.cached_statistics(state).index != stats.index:
                raise _Stale  # the words came from a newer generation than the meaning
        whole = rows if window >= rows else None
        by_meaning = _by_meaning(engine, state, stats, asked_vector, window, whole, window // 4 + WINDOW)
        fused = proven(by_words, words_whole, [row.order for row in by_meaning], rows, limit, *fusion)
        if fused is not None:
            by_order = {row.order: row for row in by_meaning}  # every row proven is in meaning's window
            return [(by_order[one.index], one.score, one.words, one.meaning) for one in fused]
        if words_whole and len(by_meaning) >= rows:  # both whole: proven always answers (tests/unit/test_fusion.py)
            raise AssertionError("the fusion of two whole rankings was not proven")
        window *= HYBRID_WIDEN


def answer(
    engine: OpenSearchEngine,
    state: str,
    question: str,
    limit: int = RETRIEVED_LAWS,
    by: str = "meaning",
    rrf_k: int = RRF_K,
    words_weight: float = WORDS_WEIGHT,
    meaning_weight: float = MEANING_WEIGHT,
) -> Answer:
    """The answer by meaning or hybrid from OpenSearch: the reference engine's, ids and order."""
    from indexer.opensearch.cluster.connection import errors_translated
    from indexer.opensearch.read.rescore import law_of
    from indexer.retrieval.meaning import fusion_of, question_vector
    from indexer.retrieval.words import words

    state = state_code(state)
    fusion = fusion_of(by, rrf_k, words_weight, meaning_weight)
    asked_vector: Vectors | None = None  # embedded here only off the plugin path (the node embeds it there)
    with errors_translated(engine.connection):
        for attempt in range(2):
            stats = engine.cached_statistics(state) if attempt == 0 else engine.statistics(state)
            try:
                rows = _meaning_of(engine, stats)
            except NoMeaning:
                if attempt == 0:
                    continue  # the cached generation may be an old one: asked again of the alias's own
                raise
            terms = stats.spelling.terms(words(question))
            if on_plugin(engine, stats):
                found = _from_plugin(engine, state, stats, question, limit, by, rrf_k, words_weight, meaning_weight)
                if found is None:
                    continue  # the alias moved since its statistics were read
                hits, reached = [], []
                for source, value, words_rank, meaning_rank, cosine in found:
                    counts_of: dict[str, int] = source["counts"]
                    tfs = {term: counts_of[term] for term in terms if counts_of.get(term)}
                    hits.append(Hit(law_of(source), value, int(source["order"]), tfs, int(source["length"])))
                    reached.append(Reached(words_rank, meaning_rank, cosine))
                return Answer(state, question, words(question), terms, hits, by=by, **fusion, reached=reached)
            if asked_vector is None:
                asked_vector = question_vector(question)
            if not asked_vector.any():
                return Answer(state, question, words(question), terms, [], by=by, **fusion, reached=[])
            chosen: list[tuple[_Row, float, int | None, int | None]]
            try:
                if by == "meaning":
                    chosen = [
                        (row, row.cosine, None, rank)
                        for rank, row in enumerate(_by_meaning(engine, state, stats, asked_vector, limit, None), 1)
                    ]
                else:
                    weighted = (rrf_k, words_weight, meaning_weight)
                    chosen = _hybrid(engine, state, stats, question, asked_vector, bool(terms), limit, weighted, rows)
            except _Stale:
                continue
            hits, reached = [], []
            for row, value, words_rank, meaning_rank in chosen:
                counts: dict[str, int] = row.source["counts"]
                tfs = {term: counts[term] for term in terms if counts.get(term)}
                hits.append(Hit(law_of(row.source), value, row.order, tfs, int(row.source["length"])))
                reached.append(Reached(words_rank, meaning_rank, row.cosine))
            return Answer(state, question, words(question), terms, hits, by=by, **fusion, reached=reached)
    raise ClusterRefused(
        f"the index behind {state}'s alias changed twice while the question was answered", hint="ask again"
    )


def on_plugin(engine: OpenSearchEngine, stats: IndexStatistics) -> bool:
    """True when the plugin ranks this index by meaning: built for the plugin, with `vector_grid` (a load of this
    lawindex on a cluster with the plugin); an older plugin-path index with k-NN vectors only takes the windows."""
    _meaning_of(engine, stats)  # reads and keeps the index's `_meta` once
    return _MEANING_OF[stats.index][3]


def plugin_meaning_query(
    question: str,
    size: int,
    by: str,
    rrf_k: int,
    words_weight: float = WORDS_WEIGHT,
    meaning_weight: float = MEANING_WEIGHT,
) -> dict[str, Any]:
    """The search body of the plugin's query by meaning or hybrid: every row ranked on the node, the first `size`
    returned, each with its explanation (the exact float64 score, cosine and ranks: docs/plugin.md)."""
    query: dict[str, Any] = {"question": question, "by": by}
    if by == "hybrid":
        query.update(rrf_k=rrf_k, words_weight=words_weight, meaning_weight=meaning_weight)
    return {
        "size": size,
        "track_total_hits": False,
        "explain": True,
        "_source": [*FETCHED, VECTOR_FIELD, GRID_FIELD],
        "query": {QUERY: query},
    }


# The plugin refuses a question (400) where a live law has no `vector_grid` (an `_update` that removed it; or, in an
# index loaded before the grid was kept in `_source`, any `_update` of the row): it cannot be ranked by meaning,
# and its absence would move every row after it. Its message names the law's corpus order after this marker.
BARE = re.compile(r"the law of corpus order \[(-?\d+)\] " + re.escape(NO_VECTOR))


def _law_at(engine: OpenSearchEngine, index: str, order: int) -> str:
    """The id of the law at corpus order `order` of `index` (its document's `id`), for a refusal's message; the
    order itself where no document has it."""
    found = engine.client.search(index=index, body={"size": 1, "query": {"term": {"order": order}}, "_source": ["id"]})[
        "hits"
    ]["hits"]
    return str(found[0]["_source"].get("id") or found[0]["_id"]) if found else f"corpus order {order}"


def explained(hit: dict[str, Any]) -> tuple[float, int | None, int | None, float]:
    """A plugin hit's exact score, words rank, meaning rank and cosine, from its explanation's details."""
    details = {
        str(d["description"]).split(":")[0]: d["value"] for d in plugin_explanation(hit["_explanation"])["details"]
    }
    words_rank = details.get("words rank")
    return (
        float(details["exact score"]),
        None if words_rank is None else int(words_rank),
        int(details["meaning rank"]),
        float(details["cosine"]),
    )


def plugin_explanation(explanation: dict[str, Any]) -> dict[str, Any]:
    """The lawindex query's own explanation of a hit: the top one on an index; through a state's alias, the first
    detail of the bool ("sum of:") that the alias's filter (schema.ALIAS_FILTER) wraps the query in."""
    while explanation.get("description") == "sum of:" and explanation.get("details"):
        explanation = explanation["details"][0]
    return explanation


def _from_plugin(
    engine: OpenSearchEngine,
    state: str,
    stats: IndexStatistics,
    question: str,
    limit: int,
    by: str,
    rrf_k: int,
    words_weight: float,
    meaning_weight: float,
) -> list[tuple[dict[str, Any], float, int | None, int | None, float]] | None:
    """The first `limit` rows from one plugin request, each (source, exact score, words rank, meaning rank,
    cosine); None when another generation answered. Every row is checked against the seal (law and vector)."""
    # One request (explain does not page): a limit past the index's result window (10,000) is refused by
    # OpenSearch as for any query; lawindex asks 8, eval at most the state's rows.
    body = plugin_meaning_query(question, limit, by, rrf_k, words_weight, meaning_weight)
    from opensearchpy import TransportError

    try:
        response = engine._response(state, body, 1)
    except TransportError as error:
        bare = BARE.search(json.dumps(error.info)) if error.status_code == 400 else None
        if bare is None:
            raise
        # A row the plugin could not rank (no vector_grid: altered in place) is refused as an altered law is.
        failed = error.info.get("error", {}).get("failed_shards", []) if isinstance(error.info, dict) else []
        if {str(shard.get("index")) for shard in failed} - {stats.index}:
            return None  # another generation answered
        law = _law_at(engine, stats.index, int(bare.group(1)))
        raise engine.statistics_cache.refusal(state, stats.index, integrity.altered_problem(stats.index, law)) from None
    hits: list[dict[str, Any]] = response["hits"]["hits"]
    # Which generation answered: every hit says; with none (a generation loaded without vectors has no row
    # to rank), ask the alias, as the windows do.
    served = {str(hit["_index"]) for hit in hits} if hits else {engine.served_now(state)}
    if served != {stats.index}:
        return None
    engine.refuse_altered(state, stats, hits, vectors=True)
    return [(hit["_source"], *explained(hit)) for hit in hits]
