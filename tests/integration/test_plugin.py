"""The lawindex plugin's query, sent as any client sends it, against the spec's own TypeScript; and the
plugin path of load, ask, status and verify.

The node is the session's (scripts/test: one per pin, started by `lawindex opensearch start`, which
installs the plugin). Corpora are loaded by `lawindex load` (the plugin path: the similarity with the
spec's N and average, sorted by corpus order, one segment); every question then goes to the node as the
raw `lawindex` query of size 8 over http.client, with no lawindex code between, and its ids and order are
held to the spec's bm25 run by Node on the same corpus file: generated laws (typos, compounds, plurals,
exact duplicates, laws past 40 words, stopword-only laws, process rows) and the samples, and a pair of
laws that only float64 tells apart. The 3-node cluster is tests/integration/test_plugin_cluster.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.node import plugin
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.verify import default_questions, verify
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.request import Request
from tests import synthetic
from tests.integration.plugin_support import RawClient, generated, spec_ids, tie_pair_corpus
from tests.integration.support import drop_namespace, lawindex, unique_namespace

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
# A Texas-size share of laws and questions: 2,000 generated questions on 3,000 generated laws, a few
# seconds of the node's time.
GENERATED_LAWS = 3000
GENERATED_QUESTIONS = 2000


@pytest.fixture(scope="module")
def plugged(opensearch_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """The samples, a generated Texas and the float32-tie corpus (as Wyoming), loaded in a namespace of
    their own on the plugin path; the spec's answers to every question of theirs."""
    client = OpenSearch(hosts=[opensearch_url], timeout=60)
    assert plugin.installed(client), f"the node at {opensearch_url} has no lawindex plugin (_cat/plugins)"
    work = tmp_path_factory.mktemp("plugin")
    laws, questions = generated("TX", GENERATED_LAWS, GENERATED_QUESTIONS, seed=21)
    tie_laws, tie_question, tie_ids = tie_pair_corpus()
    corpora = [corpus for corpus in read_corpora(CORPORA) if corpus.state not in ("TX", "WY")]
    corpora.append(synthetic.corpus_of("TX", laws, work / "TX.jsonl"))
    corpora.append(synthetic.corpus_of("WY", tie_laws, work / "WY.jsonl"))
    asked: dict[str, list[str]] = {"TX": questions, "WY": [tie_question]}
    for corpus in corpora:
        if corpus.state not in asked:
            asked[corpus.state] = default_questions(corpus)
    truth = {corpus.state: spec_ids(work, corpus.state, corpus.laws, asked[corpus.state]) for corpus in corpora}
    connection = Connection.from_env(opensearch_url, namespace=unique_namespace(), timeout=60.0)
    load(connection, corpora)
    try:
        yield {
            "url": opensearch_url,
            "client": client,
            "connection": connection,
            "corpora": {corpus.state: corpus for corpus in corpora},
            "asked": asked,
            "truth": truth,
            "tie": (tie_question, tie_ids),
        }
    finally:
        drop_namespace(client, connection.namespace)


def test_the_index_is_built_for_the_plugin(plugged: dict[str, object]) -> None:
    """The similarity with the spec's N (stopword-only laws counted) and average, sorted by corpus order,
    one segment, and `_meta` saying so."""
    client: OpenSearch = plugged["client"]  # type: ignore[assignment]
    connection: Connection = plugged["connection"]  # type: ignore[assignment]
    corpus: Corpus = plugged["corpora"]["TX"]  # type: ignore[index]
    index = next(iter(client.indices.get_alias(name=alias_of("TX", connection.namespace))))
    settings = client.indices.get_settings(index=index)[index]["settings"]["index"]
    similarity = settings["similarity"]["lawindex"]
    ranked = [law for law in corpus.laws if law.kind != "process"]
    # The spec's N counts every ranked law, the stopword-only ones (which Lucene's field statistics miss)
    # included: counted here from the corpus, not from lawindex's statistics.
    assert similarity["type"] == "lawindex_bm25"
    assert int(similarity["ranked"]) == len(ranked)
    assert sum(1 for law in ranked if law.id.endswith("-STOP")) >= 20
    assert float(similarity["average"]) == reference.statistics(corpus.laws).average
    assert settings["sort"]["field"] in ("order", ["order"])
    mapping = client.indices.get_mapping(index=index)[index]["mappings"]
    assert mapping["properties"]["words"]["similarity"] == "lawindex"
    assert mapping["_meta"]["lawindex"]["similarity"] == "lawindex_bm25"
    segments = client.indices.segments(index=index)["indices"][index]["shards"]["0"]
    assert all(len(copy["segments"]) == 1 for copy in segments), segments


@pytest.mark.parametrize("state", ["TX", "samples"])
def test_the_raw_query_is_the_spec_question_by_question(plugged: dict[str, object], state: str) -> None:
    raw = RawClient(str(plugged["url"]))
    connection: Connection = plugged["connection"]  # type: ignore[assignment]
    asked: dict[str, list[str]] = plugged["asked"]  # type: ignore[assignment]
    truth: dict[str, list[list[str]]] = plugged["truth"]  # type: ignore[assignment]
    states = ["TX"] if state == "TX" else [s for s in asked if s not in ("TX", "WY")]
    total = right = 0
    wrong: list[tuple[str, str, list[str], list[str]]] = []
    for code in states:
        alias = alias_of(code, connection.namespace)
        for question, want in zip(asked[code], truth[code], strict=True):
            got = raw.ids(alias, question)
            total += 1
            if got == want:
                right += 1
            else:
                wrong.append((code, question, want, got))
    raw.close()
    print(f"\nplugin query: {right} of {total} {state} questions exactly the spec's top 8")
    assert total >= (GENERATED_QUESTIONS if state == "TX" else 100)
    assert not wrong, f"{len(wrong)} of {total} differ, first: {wrong[:3]}"


def test_the_float32_tie_is_decided_as_the_spec_decides_it(plugged: dict[str, object]) -> None:
    """Two laws whose float64 scores differ but round to one float32, the later one in corpus order
    higher: Lucene's float and doc-id tie-break would put the earlier first; the query must not."""
    question, (earlier, later) = plugged["tie"]  # type: ignore[misc]
    truth: dict[str, list[list[str]]] = plugged["truth"]  # type: ignore[assignment]
    connection: Connection = plugged["connection"]  # type: ignore[assignment]
    want = truth["WY"][0]
    assert want.index(later) < want.index(earlier), want  # the spec itself says so
    raw = RawClient(str(plugged["url"]))
    body = {"size": 8, "_source": ["id"], "query": {"lawindex": {"question": question, "field": "words"}}}
    hits = raw.search(alias_of("WY", connection.namespace), body)["hits"]["hits"]  # type: ignore[index]
    raw.close()
    assert [hit["_source"]["id"] for hit in hits] == want
    scores = {hit["_source"]["id"]: hit["_score"] for hit in hits}
    assert scores[later] > scores[earlier]


def test_ask_on_the_plugin_path_is_one_query_and_the_reference(plugged: dict[str, object]) -> None:
    connection: Connection = plugged["connection"]  # type: ignore[assignment]
    corpora: dict[str, Corpus] = plugged["corpora"]  # type: ignore[assignment]
    asked: dict[str, list[str]] = plugged["asked"]  # type: ignore[assignment]
    engine = OpenSearchEngine(connection)
    plugin_answers = 0
    for state in ("TX", "WY", "AL"):
        for question in asked[state][:300]:
            want = reference.ask(corpora[state], question)
            got = engine.ask(Request(state, question))
            assert got.ids() == want.ids() and [h.score for h in got.hits] == [h.score for h in want.hits], question
            assert got.terms == want.terms
            if got.window is not None and got.window.plugin:
                plugin_answers += 1
                assert len(got.window.sizes) <= 2
    # Questions that reach no word are answered without a search; every other one by the plugin.
    assert plugin_answers >= 250


def test_ask_prints_the_same_bytes_as_the_reference(plugged: dict[str, object]) -> None:
    connection: Connection = plugged["connection"]  # type: ignore[assignment]
    corpora: dict[str, Corpus] = plugged["corpora"]  # type: ignore[assignment]
    asked: dict[str, list[str]] = plugged["asked"]  # type: ignore[assignment]
    questions = Path(str(corpora["TX"].path)).with_name("questions.txt")
    questions.write_text("".join(q.replace("\n", " ") + "\n" for q in asked["TX"][:200]), encoding="utf-8")
    synthetic.write_corpus(corpora["TX"].path, corpora["TX"].laws)
    env = {"OPENSEARCH_URL": str(plugged["url"]), "LAWINDEX_NAMESPACE": connection.namespace}
    code, plugged_out, err = lawindex("ask", "TX", "--from", str(questions), "--json", env=env)
    assert code == 0, err
    assert "could not be proven" not in err
    code, reference_out, err = lawindex(
        "ask", "TX", "--from", str(questions), "--json", "--engine", "reference", "--corpora", str(questions.parent)
    )
    assert code == 0, err
    assert plugged_out == reference_out


def test_status_and_verify_say_the_plugin_path(plugged: dict[str, object]) -> None:
    connection: Connection = plugged["connection"]  # type: ignore[assignment]
    corpora: dict[str, Corpus] = plugged["corpora"]  # type: ignore[assignment]
    env = {"OPENSEARCH_URL": str(plugged["url"]), "LAWINDEX_NAMESPACE": connection.namespace}
    code, out, err = lawindex("status", "--json", env=env)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert {row["state"] for row in rows} == set(corpora)
    assert {row["path"] for row in rows} == {"plugin"}
    engine = OpenSearchEngine(connection)
    question, _ = plugged["tie"]  # type: ignore[misc]
    reports = [*verify(engine, [corpora["AL"]]), *verify(engine, [corpora["WY"]], [question])]
    for report in reports:
        assert report.plugin_same == report.questions > 0, report.plugin_disagreements[:3]
        assert not report.disagreements
