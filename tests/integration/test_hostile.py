"""Hostile questions and names: nothing gets in.

- Index names are made only from validated state codes (and a validated namespace).
- Questions that look like query syntax are words like any others: exactly the reference's answer.
- Credentials never reach stdout, stderr or a log line, whether the command succeeds or fails.
- TLS certificates are verified by default. What a refusing or TLS cluster does (401, an untrusted
  certificate, `--insecure`) is tried on the real security plugin, in tests/integration/test_secure.py.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer.errors import BadInput, ClusterRefused, LawindexError
from indexer.opensearch.cluster.connection import Connection, alias_of, namespace_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpus
from indexer.retrieval.request import Request
from tests.integration.support import fresh_connection, lawindex

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
USER = "canary-user-5e1f"
PASSWORD = "Canary-Pa55-9c1e-do-not-print"

QUERY_SYNTAX = [
    "*",
    "?",
    "AND OR NOT",
    "park AND hydrant OR NOT bus",
    "field:value",
    "words:park^100",
    "law:hydrant kind:process",
    "/regex/",
    "/.*/",
    "/park.*/ hydrant",
    "\\",
    "park\\ hydrant\\",
    '{"query":{"match_all":{}}}',
    '{"query": {"script": {"script": "1"}}} fire hydrant',
    "_id:1",
    "_id:law:MD-S01",
    "_index:lawindex-tx",
    "park~2 hydrant* fire?",
    '"fire hydrant"~5',
    "(park OR stop) AND -bus +crosswalk",
    "park || hydrant && !bus",
    "[1 TO 100] {a TO z}",
    "<script>alert(1)</script> park",
    "'; DROP TABLE laws; -- hydrant",
    "${jndi:ldap://127.0.0.1/x} fire",
    "%00 %2e%2e/ park",
    "statistics",
    "process permit family",
]


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return read_corpus(CORPORA / "MD.jsonl")


@pytest.fixture(scope="module")
def loaded(opensearch_url: str, corpus: Corpus) -> Iterator[Connection]:
    with fresh_connection(opensearch_url) as connection:
        load_state(connection.client(), corpus, LoadOptions(namespace=connection.namespace))
        yield connection


# ---- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["../x", "*", "_all", "tx,md", "TX ", "tx*", "md/_doc", "-tx", "lawindex-tx", ""])
def test_index_names_come_only_from_state_codes(loaded: Connection, state: str) -> None:
    with pytest.raises(BadInput):
        alias_of(state)
    engine = OpenSearchEngine(loaded)
    for call in (
        lambda: engine.ask(Request(state, "fire hydrant")),
        lambda: engine.family(state, "permit"),
        lambda: engine.get(state, "MD-S01"),
    ):
        with pytest.raises(BadInput, match="not a state code"):
            call()


@pytest.mark.parametrize("namespace", ["../x", "*", "_all", "a,b", "A", "ns-x", "", "x" * 41])
def test_namespaces_are_validated_too(namespace: str) -> None:
    with pytest.raises(BadInput):
        namespace_of(namespace)


def test_a_valid_code_reaches_only_its_own_alias(loaded: Connection) -> None:
    assert alias_of("md", loaded.namespace) == f"{loaded.namespace}-md"
    with pytest.raises(ClusterRefused, match="no index for TX"):
        OpenSearchEngine(loaded).ask(Request("TX", "fire hydrant"))


# ---- query syntax is words -------------------------------------------------------------------------


@pytest.mark.parametrize("question", QUERY_SYNTAX)
def test_query_syntax_is_answered_exactly_as_the_reference_answers_it(
    loaded: Connection, corpus: Corpus, question: str
) -> None:
    expected = reference.ask(corpus, question)
    got = OpenSearchEngine(loaded).ask(Request("MD", question))
    assert got.ids() == expected.ids()
    assert got.terms == expected.terms
    assert [hit.score for hit in got.hits] == pytest.approx([hit.score for hit in expected.hits], rel=1e-12)


def test_query_syntax_through_the_command(loaded: Connection, corpus: Corpus, tmp_path: Path) -> None:
    questions = tmp_path / "questions.txt"
    questions.write_text("\n".join(QUERY_SYNTAX) + "\n", encoding="utf-8")
    env = {"OPENSEARCH_URL": loaded.url, "LAWINDEX_NAMESPACE": loaded.namespace}
    code, out, err = lawindex("ask", "MD", "--from", str(questions), "--json", env=env)
    assert code == 0, err
    answers = [json.loads(line) for line in out.splitlines()]
    assert [answer["question"] for answer in answers] == QUERY_SYNTAX
    for answer in answers:
        assert [hit["id"] for hit in answer["hits"]] == reference.ask(corpus, answer["question"]).ids()


# ---- credentials -----------------------------------------------------------------------------------


def test_credentials_never_appear_in_output_errors_or_logs(
    loaded: Connection,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secrets = [PASSWORD, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()]
    env = {
        "OPENSEARCH_USER": USER,
        "OPENSEARCH_PASSWORD": PASSWORD,
        "LAWINDEX_NAMESPACE": loaded.namespace,
        "LAWINDEX_RETRIES": "0",
    }
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{probe.getsockname()[1]}"
    runs = [
        (loaded.url, ("status",), 0),
        (loaded.url, ("status", "--json"), 0),
        (loaded.url, ("ask", "MD", "fire hydrant", "--json"), 0),
        (loaded.url, ("load", str(CORPORA), "--state", "MD", "--dry-run"), 0),
        (loaded.url, ("ask", "TX", "fire hydrant"), 4),
        (nowhere, ("status",), 3),
        (nowhere.replace("http:", "https:"), ("ask", "MD", "fire"), 3),
        (f"http://{USER}:{PASSWORD}@127.0.0.1:9200", ("status",), 2),
    ]
    for url, command, code in runs:
        got, out, err = lawindex(*command, env={**env, "OPENSEARCH_URL": url})
        assert got == code, (command, got, err)
        for secret in secrets:
            assert secret not in out and secret not in err, (command, out, err)

    # In process, with every logger at DEBUG (opensearch-py's request and trace loggers included).
    caplog.set_level(logging.DEBUG)
    logging.getLogger("opensearchpy.trace").setLevel(logging.DEBUG)
    os.environ.update({"OPENSEARCH_USER": USER, "OPENSEARCH_PASSWORD": PASSWORD})
    try:
        for url in (loaded.url, nowhere):
            connection = Connection.from_env(url, namespace=loaded.namespace, retries=0)
            assert PASSWORD not in repr(connection) and PASSWORD not in str(connection)
            try:
                OpenSearchEngine(connection).ask(Request("MD", "fire hydrant"))
                OpenSearchEngine(connection).ask(Request("TX", "fire hydrant"))
            except LawindexError as error:
                assert all(secret not in f"{error.message} {error.hint}" for secret in secrets)
    finally:
        os.environ.pop("OPENSEARCH_USER", None)
        os.environ.pop("OPENSEARCH_PASSWORD", None)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert logged, "nothing was logged: the test would prove nothing"
    for secret in secrets:
        assert secret not in logged


# ---- TLS -------------------------------------------------------------------------------------------


def test_tls_is_verified_by_default(loaded: Connection) -> None:
    # check=False: the client as configured, without its `GET /` (nothing listens on 9200 here).
    pool = Connection.from_env("https://127.0.0.1:9200").client(check=False).transport.get_connection().pool
    assert pool.cert_reqs == "CERT_REQUIRED"
    secure = Connection.from_env("https://127.0.0.1:9200", insecure=True)
    insecure = secure.client(check=False).transport.get_connection().pool
    assert insecure.cert_reqs == "CERT_NONE"
