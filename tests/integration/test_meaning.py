"""`--by meaning` and `--by hybrid` on a real OpenSearch: the reference engine's answers, ids and order.

Where every node has the k-NN plugin (`lawindex opensearch start --knn` installs it on 3.6.0, the default pin, as
scripts/test and the session's own node start it),
every answer by meaning and hybrid, on the samples and on generated questions over a generated corpus big
enough to widen windows, is held equal to indexer.retrieval.meaning's (ids, order, ranks and cosines to the
bit); the load gives each index a graph-free `knn_vector` (no plugin) or none (the plugin), the embedder in its
fingerprint, and the same swap and ownership. Where the cluster has no k-NN (the 2.19.x min distributions
take none: indexer/node/knn.py) but every node has the lawindex plugin, the plugin answers by meaning and
hybrid itself (issue 28), and the same tests hold its answers equal to the reference's. Only an index a
cluster with neither can rank by meaning (loaded here with `plugin=False` where there is no k-NN) is refused,
by design, with the one line naming the k-NN plugin (exit 8), while words still answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from indexer.errors import NoMeaning
from indexer.node import knn
from indexer.opensearch.cluster import plugin_path
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.cluster.schema import GRID_FIELD, STATISTICS_ID
from indexer.opensearch.cluster.vector_layout import for_cluster
from indexer.opensearch.read import vectors as on_opensearch
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.read.vectors import HYBRID_WINDOW, VECTOR_FIELD
from indexer.opensearch.verify import default_questions
from indexer.opensearch.write.generations import serving
from indexer.opensearch.write.index_body import fingerprint
from indexer.opensearch.write.load import LoadOptions, load, load_state
from indexer.opensearch.write.lock import ensure_locks_index
from indexer.retrieval import meaning as rank
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.embedding import cosines, row_text
from indexer.retrieval.meaning import proven
from indexer.retrieval.request import RRF_K, Fusion, Request, Way
from indexer.service.engines import ReferenceEngine
from tests import synthetic
from tests.integration.support import fresh_connection, lawindex, stored_vector

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
GENERATED = 800  # laws: wide enough that a window of 16 is often not the whole state


@dataclass(frozen=True)
class Served:
    connection: Connection
    engine: OpenSearchEngine
    corpora: dict[str, Corpus]
    knn: bool
    # Whether the served indices answer by meaning: every node has k-NN, or the lawindex plugin (the load
    # builds for it by default where every node has it, and the plugin ranks by meaning itself).
    meaning: bool


@pytest.fixture(scope="module")
def served(opensearch_url: str, opensearch_version: str) -> Iterator[Served]:
    laws = synthetic.generate_corpus("GU", GENERATED, 22)
    corpora = {corpus.state: corpus for corpus in read_corpora(CORPORA)}
    corpora["GU"] = synthetic.corpus_of("GU", laws)
    with fresh_connection(opensearch_url) as connection:
        client = connection.client()
        has = knn.installed(client)
        if opensearch_version == "3.6.0" and not has:
            pytest.fail(
                "OpenSearch 3.6.0 without the k-NN plugin: start the node with `lawindex opensearch start --knn`"
            )
        load(connection, list(corpora.values()))
        yield Served(
            connection, OpenSearchEngine(connection), corpora, has, has or plugin_path.cluster_has_plugin(client)
        )


def _questions(corpus: Corpus) -> list[str]:
    asked = default_questions(corpus)[:40] + synthetic.generate_questions(corpus.laws, 30, 5)
    return [*asked, "", "how can i do it", "firehydrant", "permit expired before my roadtest"]


def _same(served: Served, state: str, question: str, limit: int, by: str) -> None:
    reference = rank.answer(served.corpora[state], Request(served.corpora[state].state, question, Way(by), limit))
    got = served.engine.ask(Request(state, question, Way(by), limit))
    assert got.ids() == reference.ids(), (state, question, limit, by)
    assert got.reached == reference.reached, (state, question, limit, by)
    assert [hit.score for hit in got.hits] == [hit.score for hit in reference.hits]


@pytest.mark.parametrize("by", ["meaning", "hybrid"])
def test_opensearch_answers_as_the_reference_on_the_samples_and_generated_questions(served: Served, by: str) -> None:
    if not served.meaning:
        with pytest.raises(NoMeaning, match=r"has no k-NN plugin \(opensearch-knn\)"):
            served.engine.ask(Request("TX", "fire hydrant", Way(by), 8))
        return
    asked = 0
    for state, corpus in served.corpora.items():
        for number, question in enumerate(_questions(corpus)):
            _same(served, state, question, 8, by)
            asked += 1
            if number % 10 == 0:
                for limit in (1, 3, 20, 100):
                    _same(served, state, question, limit, by)
    assert asked > 500


def test_a_process_row_is_reached_by_meaning_never_by_words(served: Served) -> None:
    question = "my permit expired before i passed the road test what now"
    words = served.engine.ask(Request("PA", question, limit=100))
    assert all(hit.law.kind != "process" for hit in words.hits)
    if not served.meaning:
        return
    by_meaning = served.engine.ask(Request("PA", question, Way.meaning, 8))
    assert by_meaning.hits[0].law.id in {"PA-P06", "PA-P07", "PA-P08", "PA-P10"}
    assert by_meaning.hits[0].law.kind == "process"


def test_the_window_widens_and_stays_exact_on_a_generated_state(served: Served) -> None:
    if not served.meaning:
        return
    laws = served.corpora["GU"].laws
    # A row's own embedded text reaches that row first (a cosine of 1 within the grid), at any limit.
    for law in laws[:: len(laws) // 10]:
        for limit in (1, 8, 100):
            got = served.engine.ask(Request("GU", row_text(law), Way.meaning, limit))
            assert got.hits[0].law.id == law.id
            assert (
                got.ids()
                == rank.answer(
                    served.corpora["GU"], Request(served.corpora["GU"].state, row_text(law), Way.meaning, limit)
                ).ids()
            )


def _full_rankings(corpus: Corpus, question: str) -> tuple[list[int], list[int]]:
    """The two full exact rankings the reference engine fuses (row indexes, best first)."""
    laws = corpus.laws
    stats = reference.statistics(laws)
    _, terms = reference.expand(question, stats)
    words = [hit.order for hit in reference.top_hits(stats, laws, terms, len(laws))] if terms else []
    return words, rank.meaning_order(cosines(rank.vectors(laws), rank.question_vector(question)))


def test_hybrid_windows_widen_and_stay_exact_where_the_ways_disagree_and_near_the_corpus_size(
    served: Served,
) -> None:
    """Hybrid on OpenSearch fuses windows (indexer.retrieval.meaning.proven): on questions whose first windows are
    proven too narrow by the reference's own full rankings (held here, so the widening is exercised), and at
    limits up to past the state's size (every row fused), its answers are the reference's."""
    if not served.meaning:
        return
    corpus = served.corpora["GU"]
    laws = corpus.laws
    mixed = [  # a row's own text with three words of a row far from it: the two ways pull apart
        row_text(laws[i]) + " " + " ".join(row_text(laws[(i + len(laws) // 2) % len(laws)]).split()[:3])
        for i in range(0, len(laws), len(laws) // 8)
    ]
    widened = 0
    for question in [*mixed, *synthetic.generate_questions(laws, 12, 9)]:
        words, meaning = _full_rankings(corpus, question)
        first = HYBRID_WINDOW
        if proven(words[:first], first >= len(words), meaning[:first], len(laws), 8, Fusion(RRF_K)) is None:  # defaults
            widened += 1
        for limit in (1, 8, 50):
            _same(served, "GU", question, limit, "hybrid")
        for rrf_k in (1, 1000):
            assert served.engine.ask(Request("GU", question, Way.hybrid, 8, Fusion(rrf_k))).ids() == (
                rank.answer(corpus, Request(corpus.state, question, Way.hybrid, 8, Fusion(rrf_k))).ids()
            ), (question, rrf_k)
    assert widened >= 3  # the windows really had to widen
    # Limits near and past the state's size (past the service's 100: OpenSearch's own answer, unchecked).
    for question in mixed[:2]:
        for limit in (len(laws) - 100, len(laws) - 1, len(laws), len(laws) + 1):
            asked = _unchecked(Request("GU", question, Way.hybrid), limit)
            got = on_opensearch.answer(served.engine, served.engine.words, asked)
            reference_answer = rank.answer(corpus, _unchecked(Request(corpus.state, question, Way.hybrid), limit))
            assert got.ids() == reference_answer.ids(), limit
            assert got.reached == reference_answer.reached, limit
            assert [hit.score for hit in got.hits] == [hit.score for hit in reference_answer.hits]
    pa = served.corpora["PA"]
    for question in _questions(pa)[:10]:
        for limit in (len(pa.laws) - 1, len(pa.laws), 100):
            _same(served, "PA", question, limit, "hybrid")


def test_the_index_has_a_graph_free_vector_field_and_the_model_in_its_fingerprint(served: Served) -> None:
    client = served.connection.client()
    index = serving(client, "TX", served.connection.namespace)
    assert index is not None
    mapping = client.indices.get_mapping(index=index)[index]["mappings"]
    meta = mapping["_meta"]["lawindex"]
    # Vectors where every node has k-NN, and on the lawindex plugin's path (vector_grid) with or without it.
    meaning = for_cluster(client, plugin_path.on_plugin(meta))
    if meaning is None:
        assert VECTOR_FIELD not in mapping["properties"] and "meaning" not in meta
        assert meta["fingerprint"] == fingerprint(served.corpora["TX"])
        return
    settings = client.indices.get_settings(index=index)[index]["settings"]["index"]
    if meaning.knn:  # the window path: no graph (no method, index.knn false), the knn_score script's doc values
        field = mapping["properties"][VECTOR_FIELD]
        assert field["type"] == "knn_vector" and field["dimension"] == 256 and "method" not in field
        assert settings["knn"] == "false" and GRID_FIELD in mapping["_source"]["excludes"]
    else:  # the plugin's path: no vector field at all, the grid its one copy (in _source and in doc values)
        assert VECTOR_FIELD not in mapping["properties"] and settings.get("knn") is None
        assert GRID_FIELD not in mapping["_source"].get("excludes", [])
    assert mapping["properties"][GRID_FIELD] == {"type": "binary", "doc_values": True}
    assert meta["fingerprint"].endswith(
        f":meaning={meaning.embedder.model}@{meaning.embedder.version}:{meaning.layout}"
    )
    assert meta["meaning"] == {"model": meaning.embedder.model, "version": meaning.embedder.version,
                               "dimension": 256, "field": VECTOR_FIELD, "grid_field": GRID_FIELD,
                               "knn": meaning.knn, "questions": "node"}  # fmt: skip
    # Every row carries its vector, process rows included, as the reference embeds it.
    vectors = rank.vectors(served.corpora["TX"].laws)
    rows = {"bool": {"must_not": {"ids": {"values": [STATISTICS_ID]}}}}
    found = client.search(index=index, body={"size": 100, "query": rows})["hits"]["hits"]
    assert len(found) == len(served.corpora["TX"].laws)
    for hit in found:
        order = int(hit["_source"]["order"])
        # Read back as float32 (3.x derives the field's source from the stored float32 values and prints
        # their shortest decimal), or from the grid where that is the one copy: the very value the reference embeds.
        assert np.array_equal(stored_vector(hit["_source"]), vectors[order])


def test_load_with_vectors_is_unchanged_then_swapped_and_an_index_without_vectors_is_refused(
    opensearch_url: str, served: Served
) -> None:
    corpus = served.corpora["VT"]
    with fresh_connection(opensearch_url) as connection:
        client, namespace = connection.client(), connection.namespace
        meaning = for_cluster(client)
        ensure_locks_index(client, namespace)
        first = load_state(client, corpus, LoadOptions(namespace=namespace, meaning=meaning))
        again = load_state(client, corpus, LoadOptions(namespace=namespace, meaning=meaning))
        assert (first.outcome, again.outcome, again.index) == ("indexed", "unchanged", first.index)
        engine = OpenSearchEngine(connection)
        if meaning is None:
            with pytest.raises(NoMeaning, match=r"has no k-NN plugin"):
                engine.ask(Request("VT", "snow tires", Way.hybrid, 8))
            return
        assert (
            engine.ask(Request("VT", "snow tires", Way.meaning, 8)).ids()
            == rank.answer(corpus, Request(corpus.state, "snow tires", Way.meaning, 8)).ids()
        )
        # The same corpus loaded words-only (as on a cluster without k-NN): another fingerprint, so a new
        # generation swapped in and the old one deleted (keep=1: none kept for a rollback); meaning is then
        # refused for that index, words answer.
        words_only = load_state(client, corpus, LoadOptions(namespace=namespace, meaning=None, keep=1))
        assert words_only.outcome == "indexed" and words_only.index != first.index
        assert not client.indices.exists(index=first.index)
        with pytest.raises(NoMeaning, match=r"was loaded without vectors"):
            engine.ask(Request("VT", "snow tires", Way.meaning, 8))
        assert (
            engine.ask(Request("VT", "snow tires")).ids()
            == ReferenceEngine(CORPORA).ask(Request("VT", "snow tires")).ids()
        )
        # And back: the load with vectors rebuilds it.
        back = load_state(client, corpus, LoadOptions(namespace=namespace, meaning=meaning))
        assert back.outcome == "indexed" and back.index != words_only.index
        assert (
            engine.ask(Request("VT", "snow tires", Way.hybrid, 8)).ids()
            == rank.answer(corpus, Request(corpus.state, "snow tires", Way.hybrid, 8)).ids()
        )


def test_the_cli_says_what_is_missing_in_one_line_with_exit_8(opensearch_url: str, served: Served) -> None:
    env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": served.connection.namespace}
    code, out, err = lawindex("ask", "TX", "fire hydrant", "--by", "meaning", env=env)
    # Answered where the cluster has k-NN or the plugin (the node's own answer, the reference's: issue 28).
    assert served.meaning and code == 0 and out.startswith("words: fire hydrant\nTX-S01  [meaning 1]  "), err
    code, ref, err = lawindex("ask", "TX", "fire hydrant", "--by", "meaning", "--engine", "reference",
                              "--corpora", str(CORPORA))  # fmt: skip
    assert code == 0 and ref == out, err
    if served.knn:
        return
    # Neither k-NN nor the plugin for this index: TX loaded for Lucene's BM25 (plugin=False), words only.
    with fresh_connection(opensearch_url) as connection:
        client, namespace = connection.client(), connection.namespace
        ensure_locks_index(client, namespace)
        options = LoadOptions(namespace=namespace, meaning=for_cluster(client, False), plugin=False)
        assert options.meaning is None
        assert load_state(client, served.corpora["TX"], options).outcome == "indexed"
        env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace}
        code, out, err = lawindex("ask", "TX", "fire hydrant", "--by", "meaning", env=env)
        assert code == 8, err
        lines = err.strip().splitlines()
        assert lines[0].startswith(f"error: OpenSearch at {opensearch_url} (")
        assert lines[0].endswith("has no k-NN plugin (opensearch-knn), which --by meaning and --by hybrid need")
        code, out, _ = lawindex("ask", "TX", "fire hydrant", env=env)
        assert code == 0 and out.startswith("words: fire hydrant\nTX-S01  ")


def test_after_lawindex_load_corpora_a_page_only_meaning_reaches_is_reached_from_the_cli(
    opensearch_url: str, served: Served
) -> None:
    """`lawindex load corpora/` into a namespace of its own, then a question whose one relevant row is an agency
    page: WV's row saying the road skills test may be scheduled online, its id read from corpora/WV.jsonl by its
    text. By meaning it comes first; by words it is never reached (a page has no ranked text), at any limit;
    hybrid reaches it by its meaning rank alone. OpenSearch's answers are the reference engine's."""
    rows = [json.loads(line) for line in (CORPORA / "WV.jsonl").read_text().splitlines() if line.strip()]
    (page,) = [row for row in rows if "schedule the road skills test online" in row["law"]]
    assert page["kind"] == "process"
    question = "can i schedule my road test online"
    with fresh_connection(opensearch_url) as connection:
        env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": connection.namespace}
        code, _out, err = lawindex("load", str(CORPORA), "--json", env=env)
        assert code == 0, err
        code, out, err = lawindex("ask", "WV", question, "--limit", "100", "--json", env=env)
        assert code == 0 and page["id"] not in [hit["id"] for hit in json.loads(out)["hits"]], err
        if not served.meaning:
            code, _out, err = lawindex("ask", "WV", question, "--by", "meaning", env=env)
            assert code == NoMeaning.exit_code == 8, err
            return
        answers = {}
        for by in ("meaning", "hybrid"):
            code, out, err = lawindex("ask", "WV", question, "--by", by, "--json", env=env)
            assert code == 0, err
            answers[by] = json.loads(out)["hits"]
            code, out, err = lawindex("ask", "WV", question, "--by", by, "--json", "--engine", "reference",
                                      "--corpora", str(CORPORA))  # fmt: skip
            assert code == 0 and json.loads(out)["hits"] == answers[by], (by, err)
    assert answers["meaning"][0]["id"] == page["id"] and answers["meaning"][0]["ranks"] == {"meaning": 1}
    (fused,) = [hit for hit in answers["hybrid"] if hit["id"] == page["id"]]
    assert fused["ranks"] == {"meaning": 1}


def _unchecked(request: Request, limit: int) -> Request:
    """`request` with a limit past the service's 100, which no edge builds (asked of the engine's own path)."""
    object.__setattr__(request, "limit", limit)
    return request
