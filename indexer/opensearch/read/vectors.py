"""Meaning on OpenSearch: the rows' vectors (`vector_grid` doc values for the lawindex plugin, a graph-free
`knn_vector` for k-NN's windows), and `--by meaning` / `--by hybrid` answered from them, equal to the reference
engine's answers (indexer.retrieval.meaning), ids and order.

Loading: the vector fields and the index's meaning are cluster/vector_layout.py's (what the load writes and this
reads).

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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from indexer.errors import ClusterRefused, NoMeaning
from indexer.opensearch.cluster import plugins
from indexer.opensearch.cluster.plugin_path import NO_VECTOR, QUERY
from indexer.opensearch.cluster.schema import FETCHED, GRID_FIELD
from indexer.opensearch.cluster.schema import VECTOR_FIELD as VECTOR_FIELD  # the field's name, where meaning lives
from indexer.opensearch.trust import integrity, ownership
from indexer.retrieval.answers import Answer, Hit, Reached
from indexer.retrieval.corpus import state_code
from indexer.retrieval.embedding import DIMENSION, Vectors, default_embedder, identity
from indexer.retrieval.own_vectors import EXTERNAL
from indexer.retrieval.request import DEFAULT_FUSION, Fusion, Request, Way

if TYPE_CHECKING:
    from indexer.opensearch.read.query import Words
    from indexer.opensearch.read.searching import Searcher
    from indexer.opensearch.read.statistics import IndexStatistics

WINDOW = 16
WIDEN = 4
FLOAT32_DOT_SLACK = 1e-4
HYBRID_WINDOW = 64  # each ranking's first window for hybrid, widened by HYBRID_WIDEN until the fusion is proven
HYBRID_WIDEN = 2


# ---------------------------------------------------------------------------------------------------
# Asking.

# Per concrete index (a generation's name is never reused): its `_meta.lawindex.meaning` (or None), how many
# rows it holds, whether it was loaded words only, and whether the plugin ranks it by meaning. Bounded: a
# service asked of many generations starts again past it.
_MEANING_OF: dict[str, tuple[dict[str, Any] | None, int, bool, bool]] = {}
_KEPT = 1024


def _meaning_of(engine: Searcher, stats: IndexStatistics) -> int:
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
    # A user's own vectors, or a model the node cannot run (all-MiniLM-L6-v2): the question comes with its vector,
    # the user's (Request.vector) or the one lawindex's client makes by the index's own model, which
    # indexer.retrieval.embedders.question_vector checks (a model or version lawindex has not: exit 2).
    client = found.get("model") == EXTERNAL or found.get("questions") == "client"
    if not client and (found.get("model"), found.get("version")) != (mine.model, mine.version):
        raise NoMeaning(
            f"{stats.index}'s vectors were made by {found.get('model')}@{found.get('version')}, and this lawindex "
            f"embeds questions with {identity(mine)}",
            hint="`lawindex load` again with this lawindex",
        )
    return rows


def _model_of(stats: IndexStatistics) -> tuple[str | None, int]:
    """The model and dimension of an index's vectors (its `_meta.lawindex.meaning`, read by _meaning_of)."""
    found = _MEANING_OF[stats.index][0] or {}
    dimension = found.get("dimension")
    return found.get("model"), dimension if isinstance(dimension, int) else DIMENSION


def _client_vector(stats: IndexStatistics, question: str) -> tuple[float, ...] | None:
    """The question's vector by the index's own model where its `_meta` says the questions are the client's;
    None where the node (or the road table in this process) embeds it."""
    from indexer.retrieval.embedders import question_vector

    found = _MEANING_OF[stats.index][0] or {}
    return question_vector(found, question)


def _slack(dimension: int) -> float:
    """FLOAT32_DOT_SLACK for a dot product of `dimension` terms: the 256 terms' bound, grown with the terms."""
    return FLOAT32_DOT_SLACK * max(1.0, dimension / DIMENSION)


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
    engine: Searcher, state: str, stats: IndexStatistics, target: str, question: Vectors, size: int
) -> list[dict[str, Any]]:
    body = _score_query(question)
    found = engine.best_hits(state, target, stats.index, body, size, 1, source=[*FETCHED, VECTOR_FIELD])
    served = _served(engine, state, stats, target, found)
    if served != {stats.index}:
        raise _Stale
    # Every row re-scored, its law and its vector, is the one loaded (the same seal as the words path's):
    # an altered row is refused, exit 4, never ranked (indexer/opensearch/trust/integrity.py).
    engine.refuse_altered(state, stats, found, vectors=True)
    return found


def _served(engine: Searcher, state: str, stats: IndexStatistics, target: str, hits: list[dict[str, Any]]) -> set[str]:
    """Which generation answered a search of `target`: asked of `stats.index` itself, that one (and any other
    a hit names, which the rule forbids); through the alias, every hit says, and with none (a generation
    loaded without vectors has no row to rank) the alias is asked, as the words path does."""
    if target == stats.index:
        return {stats.index, *(str(hit["_index"]) for hit in hits)}
    return {str(hit["_index"]) for hit in hits} if hits else {engine.served_now(state)}


class _Stale(Exception):
    """The alias moved to another generation since its statistics were read."""


def _by_meaning(
    engine: Searcher,
    state: str,
    stats: IndexStatistics,
    target: str,
    question: Vectors,
    limit: int,
    rows: int | None,
    margin: int = 0,
) -> list[_Row]:
    """The best `limit` rows by exact cosine (every row when `rows`, the state's count, is given); the first
    window `margin` rows wider than the limit (a window of exactly `limit` rows can never prove its last)."""
    size = max(WINDOW, limit + margin) if rows is None else max(rows, 1) + 1
    while True:
        found = _window(engine, state, stats, target, question, size)
        ranked = _rescored(found, question)
        if len(found) < size:  # every row is here
            return ranked[: len(ranked) if rows is not None else limit]
        lowest = dot_of_score(float(found[-1]["_score"]))
        if len(ranked) >= limit and ranked[limit - 1].cosine > lowest + _slack(len(question)):
            return ranked[:limit]
        size *= WIDEN


def _hybrid(
    engine: Searcher,
    words_path: Words,
    state: str,
    stats: IndexStatistics,
    target: str,
    question: str,
    asked_vector: Vectors,
    worded: bool,
    limit: int,
    fusion: Fusion,
    rows: int,
) -> list[tuple[_Row, float, int | None, int | None]]:
    """The first `limit` rows of the fusion of the two full exact rankings, from windows of each: the exact
    words answer and the exact meaning answer of the first W rows, W widened (x2) until
    indexer.retrieval.meaning.proven proves the fused first rows from them (at the latest when both are whole)."""
    from indexer.retrieval.meaning import proven
    from indexer.retrieval.words import words

    window = max(HYBRID_WINDOW, limit)
    by_words: list[int] = []
    words_whole = not worded  # a question sharing no word: words reach nothing, their ranking is whole
    while True:
        if not words_whole:
            # The exact words answer of the first `window` laws (fewer: every law sharing a word), from the
            # generation the meaning is read from.
            ranked = words_path.answer_from(state, question, words(question), window, stats, target)
            if ranked is None:
                raise _Stale  # the alias moved since the statistics were read
            by_words = [hit.order for hit in ranked.hits]
            words_whole = len(by_words) < window
        whole = rows if window >= rows else None
        by_meaning = _by_meaning(engine, state, stats, target, asked_vector, window, whole, window // 4 + WINDOW)
        fused = proven(by_words, words_whole, [row.order for row in by_meaning], rows, limit, fusion)
        if fused is not None:
            by_order = {row.order: row for row in by_meaning}  # every row proven is in meaning's window
            return [(by_order[one.index], one.score, one.words, one.meaning) for one in fused]
        if words_whole and len(by_meaning) >= rows:  # both whole: proven always answers (tests/unit/test_fusion.py)
            raise AssertionError("the fusion of two whole rankings was not proven")
        window *= HYBRID_WIDEN


def answer(engine: Searcher, words_path: Words, request: Request, expected: str | None = None) -> Answer:
    """The answer by meaning or hybrid from OpenSearch (asked through `engine`'s searches, hybrid's words ranking
    from `words_path`): the reference engine's, ids and order; NoMeaning where `expected` (a model's name) is
    given and the index was loaded with another."""
    from indexer.opensearch.cluster.connection import errors_translated
    from indexer.opensearch.read.rescore import law_of
    from indexer.opensearch.read.statistics import Moved
    from indexer.retrieval.meaning import asked_vector as vector_for
    from indexer.retrieval.words import words

    state, question, limit = state_code(request.state), request.question, request.limit
    fields = request.answer_fields()
    asked_vector: Vectors | None = None  # embedded here only off the plugin path (the node embeds it there)
    with errors_translated(engine.connection):
        for attempt in range(2):
            # The first try from the statistics last seen, through the alias (which shows a move); the second from
            # those read afresh, every search of the generation they name (read/searching.py `target`).
            stats = engine.cached_statistics(state) if attempt == 0 else engine.statistics(state)
            target = engine.target(state, stats, pinned=attempt > 0)
            try:
                rows = _meaning_of(engine, stats)
            except NoMeaning:
                if attempt == 0:
                    continue  # the cached generation may be an old one: asked again of the alias's own
                raise
            try:
                terms = stats.spelling.terms(words(question))
            except Moved as moved:  # a reload deleted the generation these statistics are of: the alias's own, once
                if attempt == 0:
                    continue
                moved.fail(state, engine.connection.namespace)
            if not request.embeddable:  # nothing to embed (indexer.retrieval.request): near no row
                return Answer(state, question, words(question), terms, [], **fields, reached=[])
            model, dimension = _model_of(stats)
            if expected is not None and model != expected:
                raise NoMeaning(
                    f"{stats.index}'s vectors were made by {model}, not by {expected} (--embedder)",
                    hint=f"`lawindex load --embedder {expected}` it, or ask without --embedder",
                )
            if request.vector is None and model != EXTERNAL:
                # An index whose questions are the client's (all-MiniLM-L6-v2): embedded here, once, by its model,
                # and sent as the question's vector (the plugin cannot embed for it; the windows rank it alike).
                asked = _client_vector(stats, question)
                if asked is not None and not any(asked):  # the model makes nothing of it: near no row, as in process
                    return Answer(state, question, words(question), terms, [], **fields, reached=[])
                if asked is not None:
                    request = replace(request, vector=asked)
            if on_plugin(engine, stats):
                # The node embeds the question where it can; the question's own vector, or a model only the client
                # has, is checked here first (the plugin refuses the same, 400).
                if request.vector is not None or model == EXTERNAL:
                    vector_for(request, stats.index, model, dimension)
                try:
                    found = _from_plugin(engine, stats, target, request)
                except Moved as moved:  # the generation was deleted under the question
                    if attempt == 0:
                        continue
                    moved.fail(state, engine.connection.namespace)
                if found is None:
                    continue  # the alias moved since its statistics were read
                hits, reached = [], []
                for source, value, words_rank, meaning_rank, cosine in found:
                    counts_of: dict[str, int] = source["counts"]
                    tfs = {term: counts_of[term] for term in terms if counts_of.get(term)}
                    hits.append(Hit(law_of(source), value, int(source["order"]), tfs, int(source["length"])))
                    reached.append(Reached(words_rank, meaning_rank, cosine))
                return Answer(state, question, words(question), terms, hits, **fields, reached=reached)
            if asked_vector is None:
                asked_vector = vector_for(request, stats.index, model, dimension)
            if not asked_vector.any():
                return Answer(state, question, words(question), terms, [], **fields, reached=[])
            chosen: list[tuple[_Row, float, int | None, int | None]]
            try:
                if request.way is Way.meaning:
                    chosen = [
                        (row, row.cosine, None, rank)
                        for rank, row in enumerate(
                            _by_meaning(engine, state, stats, target, asked_vector, limit, None), 1
                        )
                    ]
                else:
                    chosen = _hybrid(
                        engine,
                        words_path,
                        state,
                        stats,
                        target,
                        question,
                        asked_vector,
                        bool(terms),
                        limit,
                        request.fusion,
                        rows,
                    )
            except _Stale:
                continue
            except Moved as moved:  # the generation was deleted under the question
                if attempt == 0:
                    continue
                moved.fail(state, engine.connection.namespace)
            hits, reached = [], []
            for row, value, words_rank, meaning_rank in chosen:
                counts: dict[str, int] = row.source["counts"]
                tfs = {term: counts[term] for term in terms if counts.get(term)}
                hits.append(Hit(law_of(row.source), value, row.order, tfs, int(row.source["length"])))
                reached.append(Reached(words_rank, meaning_rank, row.cosine))
            return Answer(state, question, words(question), terms, hits, **fields, reached=reached)
    raise ClusterRefused(
        f"the index behind {state}'s alias changed twice while the question was answered", hint="ask again"
    )


def on_plugin(engine: Searcher, stats: IndexStatistics) -> bool:
    """True when the plugin ranks this index by meaning: built for the plugin, with `vector_grid` (a load of this
    lawindex on a cluster with the plugin); an older plugin-path index with k-NN vectors only takes the windows."""
    _meaning_of(engine, stats)  # reads and keeps the index's `_meta` once
    return _MEANING_OF[stats.index][3]


def plugin_meaning_query(
    question: str, size: int, way: Way, fusion: Fusion = DEFAULT_FUSION, vector: Sequence[float] | None = None
) -> dict[str, Any]:
    """The search body of the plugin's query by meaning or hybrid: every row ranked on the node, the first `size`
    returned, each with its explanation (the exact float64 score, cosine and ranks: docs/plugin.md); with the
    question's own `vector` where it has one (the node puts it on the grid as it does a row's)."""
    query: dict[str, Any] = {"question": question, "by": way.value}
    if way is Way.hybrid:
        query.update(fusion.parameters())
    if vector is not None:
        query["vector"] = list(vector)
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


def _law_at(engine: Searcher, index: str, order: int) -> str:
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
    engine: Searcher, stats: IndexStatistics, target: str, request: Request
) -> list[tuple[dict[str, Any], float, int | None, int | None, float]] | None:
    """The first `limit` rows from one plugin request of `target` (the alias or `stats.index`), each (source,
    exact score, words rank, meaning rank, cosine); None when another generation answered (through the alias).
    Every row is checked against the seal (law and vector)."""
    # One request (explain does not page): a limit past the index's result window (10,000) is refused by
    # OpenSearch as for any query; lawindex asks 8, eval at most the state's rows.
    state = state_code(request.state)
    body = plugin_meaning_query(request.question, request.limit, request.way, request.fusion, request.vector)
    from opensearchpy import TransportError

    try:
        response = engine.response(state, target, body, 1)
    except TransportError as error:
        bare = BARE.search(json.dumps(error.info)) if error.status_code == 400 else None
        if bare is None:
            raise
        # A row the plugin could not rank (no vector_grid: altered in place) is refused as an altered law is.
        failed = error.info.get("error", {}).get("failed_shards", []) if isinstance(error.info, dict) else []
        if {str(shard.get("index")) for shard in failed} - {stats.index}:
            return None  # another generation answered
        law = _law_at(engine, stats.index, int(bare.group(1)))
        raise engine.refusal(state, stats.index, integrity.altered_problem(stats.index, law)) from None
    hits: list[dict[str, Any]] = response["hits"]["hits"]
    if _served(engine, state, stats, target, hits) != {stats.index}:
        return None
    engine.refuse_altered(state, stats, hits, vectors=True)
    return [(hit["_source"], *explained(hit)) for hit in hits]
