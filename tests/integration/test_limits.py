"""OpenSearch's own limits never cut an answer the reference gives (indexer/opensearch/read/search_limits.py).

Each limit is set small on the test node or index, so that the case is cheap and certain to be met:
`indices.query.bool.max_clause_count` to 8 (a dynamic cluster setting, put back after the module; a node
of the module's own where the version has it static), and
`index.max_result_window` of the loaded index to 20. Every answer is compared, ids and scores, with the
reference engine's for the same corpus; a raw request proves the limit was in force.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch, RequestError

from indexer.node import node
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.cluster.schema import terms_query
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.answers import Answer
from indexer.retrieval.corpus import Corpus, Law
from indexer.retrieval.request import Request
from indexer.service.engines import ReferenceEngine
from tests.integration.support import drop_namespace, lawindex, unique_namespace

CLAUSES = 8
RESULT_WINDOW = 20


def corpus_of(state: str, laws: list[Law]) -> Corpus:
    digest = hashlib.sha256("\n".join(law.model_dump_json() for law in laws).encode()).hexdigest()
    return Corpus(state, Path(f"{state}.jsonl"), tuple(laws), digest)


def law(state: str, number: int, text: str, kind: str = "statute", family: str | None = None) -> Law:
    return Law(id=f"{state}-{number:05d}", kind=kind, law=text, question="", concept="made-up", family=family)


def made_up_laws(state: str, count: int, seed: int) -> tuple[list[Law], list[str]]:
    """Laws of made-up words, from 3 to 90 words long (many past 40, where Lucene's lengths round), and
    the vocabulary they draw from; common words are drawn more often, so df varies."""
    rng = random.Random(seed)
    vocabulary = [f"w{rng.randrange(10**6):06d}" for _ in range(150)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    laws = [
        law(state, number, " ".join(rng.choices(vocabulary, weights, k=rng.randint(3, 90)))) for number in range(count)
    ]
    return laws, vocabulary


LIMITS_PORT = int(os.environ.get("LAWINDEX_LIMITS_PORT", "9272"))
CLAUSE_SETTING = "indices.query.bool.max_clause_count"


@pytest.fixture(scope="module")
def limited_url(opensearch_url: str, opensearch: OpenSearch, opensearch_version: str) -> Iterator[str]:
    """A node whose clause limit is CLAUSES: the session's, through the dynamic cluster setting (put back
    after the module), or, where the setting is static (older versions), a node of this module's own on
    LAWINDEX_LIMITS_PORT started with it."""
    try:
        opensearch.cluster.put_settings(body={"transient": {CLAUSE_SETTING: CLAUSES}})
    except RequestError:
        started = node.start(version=opensearch_version, port=LIMITS_PORT, settings={CLAUSE_SETTING: str(CLAUSES)})
        try:
            yield started.url
        finally:
            if not started.reused:
                node.stop(LIMITS_PORT)
        return
    try:
        yield opensearch_url
    finally:
        opensearch.cluster.put_settings(body={"transient": {CLAUSE_SETTING: None}})


@pytest.fixture
def client(limited_url: str) -> OpenSearch:
    return OpenSearch(hosts=[limited_url], timeout=60)


@pytest.fixture
def connection(limited_url: str, client: OpenSearch) -> Iterator[Connection]:
    connection = Connection.from_env(limited_url, namespace=unique_namespace())
    try:
        yield connection
    finally:
        drop_namespace(client, connection.namespace)


def same(answer: Answer, truth: Answer) -> None:
    assert answer.terms == truth.terms
    assert [(hit.law.id, hit.score) for hit in answer.hits] == [(hit.law.id, hit.score) for hit in truth.hits]


def limit_result_window(opensearch: OpenSearch, connection: Connection, state: str) -> None:
    opensearch.indices.put_settings(
        index=alias_of(state, connection.namespace), body={"index": {"max_result_window": RESULT_WINDOW}}
    )


def test_questions_past_the_clause_limit_get_the_references_answer(client: OpenSearch, connection: Connection) -> None:
    laws, vocabulary = made_up_laws("TX", 400, 13)
    corpus = corpus_of("TX", laws)
    load(connection, [corpus])
    rng = random.Random(7)
    # From 9 terms (one past the limit) to 60 (eight groups); some words misspelled, which expand to
    # the laws' words one edit away, and some that no law has.
    questions = [" ".join(rng.sample(vocabulary, k)) for k in (9, 12, 17, 25, 40, 60)]
    questions += [" ".join(word[:-1] + "x" for word in rng.sample(vocabulary, 30)) for _ in range(3)]
    engine = OpenSearchEngine(connection)
    for question in questions:
        truth = reference.ask(corpus, question)
        assert len(truth.terms) > CLAUSES, question
        with pytest.raises(RequestError, match="maxClauseCount"):  # the node refuses them whole
            client.search(index=alias_of("TX", connection.namespace), body={"query": terms_query(truth.terms)})
        for limit in (1, 8, 30):
            same(engine.words.ask("TX", question, limit), reference.ask(corpus, question, limit))


def test_ties_wider_than_the_result_window_get_the_references_answer(
    client: OpenSearch, connection: Connection
) -> None:
    # 70 laws that score the same for "hydrant" (the same words), among laws that score otherwise: the
    # window cannot be proven until it holds every tie, three times the index's result window.
    rng = random.Random(3)
    texts = ["hydrant curb"] * 70 + [f"hydrant {'curb ' * rng.randint(0, 4)}park{n}" for n in range(30)]
    rng.shuffle(texts)
    laws = [law("MD", number, text) for number, text in enumerate(texts)]
    corpus = corpus_of("MD", laws)
    load(connection, [corpus])
    limit_result_window(client, connection, "MD")
    with pytest.raises(RequestError, match="Result window is too large"):
        client.search(index=alias_of("MD", connection.namespace), body={"size": RESULT_WINDOW + 1})
    engine = OpenSearchEngine(connection)
    for question, limit in (("hydrant", 8), ("hydrant", 100), ("curb", 8), ("hydrant curb park3", 50)):
        answer = engine.words.ask("MD", question, limit)
        same(answer, reference.ask(corpus, question, limit))
        assert answer.window is not None
    assert max(engine.ask(Request("MD", "hydrant", limit=8)).window.sizes) > RESULT_WINDOW  # type: ignore[union-attr]


def test_past_both_limits_at_once(client: OpenSearch, connection: Connection) -> None:
    laws, vocabulary = made_up_laws("PA", 300, 29)
    # Ties: forty copies of one short law.
    laws += [law("PA", 1000 + n, " ".join(vocabulary[:3])) for n in range(40)]
    corpus = corpus_of("PA", laws)
    load(connection, [corpus])
    limit_result_window(client, connection, "PA")
    engine = OpenSearchEngine(connection)
    rng = random.Random(11)
    for question in [" ".join(vocabulary[:3] + rng.sample(vocabulary[3:], 14)), " ".join(vocabulary[:12])]:
        for limit in (8, 60):
            same(engine.words.ask("PA", question, limit), reference.ask(corpus, question, limit))


def test_a_family_longer_than_a_page_is_returned_whole(
    client: OpenSearch, connection: Connection, tmp_path: Path
) -> None:
    rows = [law("VT", n, f"page row {n}", kind="process", family="long") for n in range(2500)]
    laws = [law("VT", 90000, "park by the hydrant"), *rows, law("VT", 90001, "a short row", "process", "short")]
    corpus = corpus_of("VT", laws)
    load(connection, [corpus])
    (tmp_path / "VT.jsonl").write_text("\n".join(row.model_dump_json(exclude_none=True) for row in laws) + "\n")
    truth = [row.id for row in ReferenceEngine(tmp_path).family("VT", "long")]
    assert len(truth) == 2500
    assert [row.id for row in OpenSearchEngine(connection).family("VT", "long")] == truth
    # Pages of 1,000 rows, against a result window of 20: the engine pages within it.
    limit_result_window(client, connection, "VT")
    assert [row.id for row in OpenSearchEngine(connection).family("VT", "long")] == truth
    assert [row.id for row in OpenSearchEngine(connection).family("VT", "short")] == ["VT-90001"]
    # And the command prints every row, as the reference engine does.
    code, out, err = lawindex(
        "ask", "VT", "--family", "long", "--url", connection.url, env={"LAWINDEX_NAMESPACE": connection.namespace}
    )
    assert code == 0, err
    reference_code, reference_out, _ = lawindex("ask", "VT", "--family", "long", "--engine", "reference",
                                                "--corpora", str(tmp_path))  # fmt: skip
    assert reference_code == 0
    assert out == reference_out
    assert len(out.splitlines()) == 2500


def test_a_batch_past_the_clause_limit_answers_every_question(connection: Connection, tmp_path: Path) -> None:
    """The command, as a user runs it: a `--from` batch of questions past the limit (they ended the batch
    with an `indexer.opensearch.read.statistics.Moved` traceback) prints exactly what the reference engine prints."""
    laws, vocabulary = made_up_laws("SC", 200, 5)
    corpus = corpus_of("SC", laws)
    load(connection, [corpus])
    (tmp_path / "SC.jsonl").write_text("\n".join(row.model_dump_json(exclude_none=True) for row in laws) + "\n")
    rng = random.Random(17)
    questions = "".join(" ".join(rng.sample(vocabulary, 20)) + "\n" for _ in range(5))
    env = {"LAWINDEX_NAMESPACE": connection.namespace}
    code, out, err = lawindex("ask", "SC", "--from", "-", "--json", "--url", connection.url, env=env,
                              stdin=questions.encode())  # fmt: skip
    assert code == 0, err
    want_code, want, _ = lawindex("ask", "SC", "--from", "-", "--json", "--engine", "reference", "--corpora",
                                  str(tmp_path), stdin=questions.encode())  # fmt: skip
    assert want_code == 0
    assert out == want
    assert len(out.splitlines()) == 5
