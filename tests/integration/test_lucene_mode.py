"""The Lucene mode of the reference scorer, held against OpenSearch's own `_score` and `_explain`.

`reference.lucene_score` claims to compute what OpenSearch computes: Lucene's N and average length
(which leave out a ranked law whose words are all stopwords), lengths kept in one byte, float32 per term,
the sum in double cast to float, and the (k1+1) factor of 2.x's LegacyBM25Similarity that 3.x drops. If
it does, bit for bit, on every hit of every question, then the analyzer, the statistics and the
similarity are what lawindex thinks they are — and the window bound of `indexer.opensearch.read.query` rests on them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from opensearchpy import OpenSearch

from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.read.statistics import IndexStatistics
from indexer.opensearch.write.load import load
from indexer.retrieval import fdlibm, reference, scoring
from indexer.retrieval.bound import FLOAT32_SLACK, outside_bound
from indexer.retrieval.corpus import Corpus, Law, read_corpora
from indexer.retrieval.request import Request
from indexer.retrieval.words import words
from tests import synthetic
from tests.integration.support import fresh_connection
from tests.synthetic import corpus_of

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
SAMPLES = ["AL", "MD", "PA", "SC", "WV"]
# A ranked law whose every word is a stopword: it has the field `words` but no terms, so Lucene counts it
# in neither N nor the average length, while the spec counts it in both.
STOPWORD_ONLY = Law(id="TX-STOP", kind="statute", law="It is what it is, and so it was.", question="", concept="it")


def long_corpus() -> Corpus:
    """Texas-shaped: generated laws (a quarter past 40 words, some past 100), the stopword-only law, and
    a few laws of hundreds of words made by joining others."""
    laws = synthetic.generate_corpus("TX", 2500, 11)
    laws.insert(7, STOPWORD_ONLY)
    for n in range(5):
        joined = " ".join(law.law for law in laws[100 + 40 * n : 100 + 40 * n + 10 + 10 * n])
        laws.insert(50 + n * 300, Law(id=f"TX-LONG{n}", kind="handbook", law=joined, question="", concept="long"))
    return corpus_of("TX", laws)


SHORT_LAWS = 300
HYDRANT_EVERY = 10  # every tenth short law has the word


def cancelling_length(legacy: bool) -> tuple[int, int]:
    """(length, tf) of a law whose float32 BM25 for "hydrant" falls short of its real value by more than
    FLOAT32_SLACK, among SHORT_LAWS laws of three words: found with the Lucene mode, which the tests
    above hold bit for bit against the real `_score`. The length is one a byte stores exactly, so only
    float32 (not the length rounding) is left between Lucene's score and the spec's."""
    n_docs = SHORT_LAWS + 1
    df = SHORT_LAWS // HYDRANT_EVERY + 1
    f = 2.2 if legacy else 1.0
    for byte in range(120, 200):
        length = scoring.byte4_to_int(byte)
        if length < 1000 or scoring.byte4_to_int(scoring.int_to_byte4(length)) != length:
            continue
        average = (3 * SHORT_LAWS + length) / n_docs
        for tf in (1, 2, 3):
            spec = scoring.exact_term_score(tf, df, n_docs, length, average)
            lucene = float(scoring.lucene_term_score(tf, df, n_docs, length, average, legacy))
            if spec > (2.2 / f) * (1 + FLOAT32_SLACK) * lucene:
                return length, tf
    raise AssertionError("no length found where float32 cancellation exceeds the relative slack")


def cancelling_corpus(legacy: bool) -> Corpus:
    """Short laws and one of thousands of words: where Lucene's float32 BM25 of the long law loses more
    to cancellation than a fixed relative slack (see bound.outside_bound)."""
    length, tf = cancelling_length(legacy)
    laws = [
        Law(
            id=f"WY-S{i:03d}",
            kind="statute",
            law="hydrant lane" if i % HYDRANT_EVERY == 0 else "curb lane",
            question="",
            concept="signal",
        )
        for i in range(SHORT_LAWS)
    ]
    text = " ".join(["hydrant"] * tf + ["filler"] * (length - tf - 1))
    laws.insert(120, Law(id="WY-LONG", kind="handbook", law=text, question="", concept="handbook"))
    return corpus_of("WY", laws)


@dataclass(frozen=True)
class Served:
    connection: Connection
    client: OpenSearch
    corpora: dict[str, Corpus]
    legacy: bool


@pytest.fixture(scope="module")
def served(opensearch_url: str, opensearch_version: str) -> Iterator[Served]:
    with fresh_connection(opensearch_url) as connection:
        corpora = {corpus.state: corpus for corpus in read_corpora(CORPORA, SAMPLES)}
        corpora["TX"] = long_corpus()
        corpora["WY"] = cancelling_corpus(opensearch_version.startswith(("1.", "2.")))
        load(connection, list(corpora.values()), plugin=False)
        client = connection.client()
        actual = str(client.info()["version"]["number"])
        assert actual == opensearch_version
        yield Served(connection, client, corpora, legacy=int(actual.split(".")[0]) < 3)


def search(served: Served, state: str, terms: list[str], size: int, explain: bool = False) -> list[dict[str, Any]]:
    body: dict[str, Any] = {
        "size": size,
        "_source": ["order"],
        "query": {"bool": {"should": [{"term": {"words": term}} for term in terms]}},
    }
    if explain:
        body["explain"] = True
    response = served.client.search(index=alias_of(state, served.connection.namespace), body=body)
    hits: list[dict[str, Any]] = response["hits"]["hits"]
    return hits


def questions(corpus: Corpus, n: int) -> list[str]:
    """Each law's own question and `n` generated ones (typos, compounds, plurals, unknown words)."""
    own = [law.question for law in corpus.laws if law.question]
    return list(dict.fromkeys([*own[:200], *synthetic.generate_questions(list(corpus.laws), n, 5)]))


def test_the_cluster_is_the_similarity_we_think(served: Served, opensearch_version: str) -> None:
    # 2.x: LegacyBM25Similarity, scores × (k1+1); 3.x: BM25Similarity. Decided from the version alone.
    assert served.legacy == opensearch_version.startswith(("1.", "2."))
    assert OpenSearchEngine(served.connection).legacy() == served.legacy


@pytest.mark.parametrize("state", [*SAMPLES, "TX", "WY"])
def test_every_hit_scores_what_the_lucene_mode_computes(served: Served, state: str) -> None:
    corpus = served.corpora[state]
    stats = reference.statistics(corpus.laws)
    hits_seen = long_seen = 0
    for question in questions(corpus, 300 if state == "TX" else 60):
        _, terms = reference.expand(question, stats)
        if not terms:
            continue
        for hit in search(served, state, terms, 40):
            order = int(hit["_source"]["order"])
            mine = np.float32(reference.lucene_score(terms, stats, order, served.legacy))
            # Bit for bit as float32: `_score` is a Java float printed as its shortest decimal.
            assert mine == np.float32(hit["_score"]), (state, question, corpus.laws[order].id, mine, hit["_score"])
            hits_seen += 1
            long_seen += stats.lengths[order] > 40
    assert hits_seen > 300
    assert long_seen > (20 if state == "TX" else 0)  # lengths that Lucene rounds were among them


def test_a_stopword_only_law_is_left_out_of_lucenes_n_and_average(served: Served) -> None:
    corpus = served.corpora["TX"]
    stats = reference.statistics(corpus.laws)
    place = corpus.laws.index(STOPWORD_ONLY)
    assert stats.lengths[place] == 0 and words(STOPWORD_ONLY.law) == []
    assert stats.doc_count == stats.size - 1  # the spec counts it, Lucene does not
    # It has the field: the document carries `words`, yet no term of it is indexed.
    found = served.client.get(index=alias_of("TX", served.connection.namespace), id="law:TX-STOP")
    assert found["_source"]["words"].startswith("It is what it is")
    hit = search(served, "TX", ["vehicle"], 1, explain=True)[0]
    (first, *_) = term_explanations(hit["_explanation"])
    assert first["N"] == stats.doc_count
    assert np.float32(first["avgdl"]) == np.float32(stats.sum_total_term_freq / stats.doc_count)
    assert np.float32(first["avgdl"]) != np.float32(stats.average)  # the spec's average is not Lucene's


def term_explanations(explanation: dict[str, Any]) -> list[dict[str, float]]:
    """Per matched term, the figures Lucene's BM25 explains: the term's score, boost, idf, n, N, tf,
    freq, dl and avgdl."""
    found = []

    def walk(node: dict[str, Any]) -> None:
        description = str(node["description"])
        if description.startswith("weight(words:"):
            term = description[len("weight(words:") :].split(" ", 1)[0]
            figures: dict[str, Any] = {"term": term, "score": node["value"], "boost": 1.0}

            def collect(part: dict[str, Any]) -> None:
                text = str(part["description"])
                for key, prefix in (
                    ("boost", "boost"),
                    ("idf", "idf, computed"),
                    ("n", "n, number of documents"),
                    ("N", "N, total number of documents"),
                    ("tf", "tf, computed"),
                    ("freq", "freq, occurrences"),
                    ("dl", "dl, length of field"),
                    ("avgdl", "avgdl, average length"),
                ):
                    if text.startswith(prefix):
                        figures[key] = part["value"]
                for child in part.get("details", []):
                    collect(child)

            for child in node.get("details", []):
                collect(child)
            found.append(figures)
            return
        for child in node.get("details", []):
            walk(child)

    walk(explanation)
    return found


def test_explain_shows_the_lucene_modes_idf_tf_length_and_average(served: Served) -> None:
    corpus = served.corpora["TX"]
    stats = reference.statistics(corpus.laws)
    average = stats.sum_total_term_freq / stats.doc_count
    checked = rounded = 0
    for question in questions(corpus, 40)[-40:]:
        _, terms = reference.expand(question, stats)
        if not terms:
            continue
        for hit in search(served, "TX", terms, 5, explain=True):
            order = int(hit["_source"]["order"])
            length = stats.lengths[order]
            for figures in term_explanations(hit["_explanation"]):
                term = str(figures["term"])
                tf = stats.counts[order][term]
                df = stats.vocabulary[term]
                assert figures["freq"] == tf and figures["n"] == df and figures["N"] == stats.doc_count
                assert figures["boost"] == pytest.approx(2.2 if served.legacy else 1.0)
                idf = np.float32(fdlibm.log(1 + (stats.doc_count - df + 0.5) / (df + 0.5)))
                assert np.float32(figures["idf"]) == idf
                # dl: the length Lucene decoded from one byte, not the law's own.
                dl = scoring.byte4_to_int(scoring.int_to_byte4(length))
                assert figures["dl"] == dl
                rounded += dl != length
                assert np.float32(figures["avgdl"]) == np.float32(average)
                # tf as the explanation computes it: freq / (freq + k1 (1 - b + b dl / avgdl)).
                expected_tf = tf / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / np.float32(average)))
                assert figures["tf"] == pytest.approx(expected_tf, rel=1e-6)
                term_score = scoring.lucene_term_score(tf, df, stats.doc_count, length, average, served.legacy)
                assert np.float32(figures["score"]) == term_score
                checked += 1
    assert checked > 50
    assert rounded > 0  # some of the explained laws were longer than 40 words


def spec_score(stats: reference.Statistics, order: int, terms: list[str]) -> float:
    score = 0.0
    for term in terms:
        tf = stats.counts[order].get(term, 0)
        if tf:
            score += scoring.exact_term_score(
                tf, stats.vocabulary[term], stats.size, stats.lengths[order], stats.average
            )
    return score


def _bound(terms: list[str], stats: IndexStatistics, legacy: bool, lowest: float) -> float:
    """The window bound of `terms` from the statistics the index stores, as `ask` computes it."""
    return outside_bound([stats.vocabulary[term] for term in terms], stats.size, stats.doc_count, legacy, lowest)


@pytest.mark.parametrize("state", ["TX", "MD", "WY"])
def test_the_window_bound_holds_against_every_real_score(served: Served, state: str) -> None:
    """bound.outside_bound: no law's spec score exceeds the bound computed from its own `_score`, so no
    law left out of a window can pass the window's limit-th law."""
    engine = OpenSearchEngine(served.connection)
    corpus = served.corpora[state]
    stats = reference.statistics(corpus.laws)
    index_stats = engine.statistics(state)
    checked = 0
    for question in ["hydrant", *questions(corpus, 40)[-40:]]:
        _, terms = reference.expand(question, stats)
        if not terms:
            continue
        for hit in search(served, state, terms, 100):
            order = int(hit["_source"]["order"])
            bound = _bound(terms, index_stats, served.legacy, float(hit["_score"]))
            assert spec_score(stats, order, terms) <= bound, (question, corpus.laws[order].id)
            checked += 1
    assert checked > 100


def test_float32_cancellation_breaks_a_fixed_relative_slack(served: Served) -> None:
    """The hole the window bound once had: a law thousands of words long among short ones, whose length
    a byte stores exactly, scores by the spec more than (k1+1)/f · (1 + 1e-5) times its real `_score`.
    The bound now allows for it (bound.outside_bound), and the exact ask still gives the spec's answer."""
    corpus = served.corpora["WY"]
    stats = reference.statistics(corpus.laws)
    order = next(i for i, law in enumerate(corpus.laws) if law.id == "WY-LONG")
    (hit,) = [hit for hit in search(served, "WY", ["hydrant"], 100) if int(hit["_source"]["order"]) == order]
    score = float(hit["_score"])
    assert np.float32(score) == np.float32(reference.lucene_score(["hydrant"], stats, order, served.legacy))
    spec = spec_score(stats, order, ["hydrant"])
    f = 2.2 if served.legacy else 1.0
    assert spec > (2.2 / f) * (1 + FLOAT32_SLACK) * score  # the old allowance: broken
    engine = OpenSearchEngine(served.connection)
    assert spec <= _bound(["hydrant"], engine.statistics("WY"), served.legacy, score)  # the present one
    answer = engine.ask(Request("WY", "hydrant", limit=40))
    assert answer.ids() == [hit.law.id for hit in reference.score(corpus.laws, "hydrant", 40)]
