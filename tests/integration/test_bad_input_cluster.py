"""The bad-input catalogue (docs/bad-input.md) for what needs a server: a state that is not one, a state
with no index yet, a bad URL, a wrong password, an unreachable URL. One clear line, a documented exit
code, never a traceback.

A wrong password, a missing permission and an untrusted certificate are met at the real security plugin,
in tests/integration/test_secure.py.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from indexer.errors import BadInput, ClusterRefused
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.retrieval import reference
from indexer.retrieval.corpus import read_corpus
from indexer.retrieval.request import Request
from tests.integration.support import lawindex

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


def one_line(err: str, *fragments: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, err
    assert all(line.startswith(("error: ", "hint: ", "warning: ")) for line in lines), err
    for fragment in fragments:
        assert fragment in errors[0], (fragment, err)
    return errors[0]


def env_of(connection: Connection) -> dict[str, str]:
    return {"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace}


@pytest.mark.parametrize("state", ["ZZ", "../x", "*", "_all", "tx,md", "TX "])
def test_a_state_that_is_not_one_is_refused_before_any_request(connection: Connection, state: str) -> None:
    with pytest.raises(BadInput, match="not a state code"):
        OpenSearchEngine(connection).ask(Request(state, "fire hydrant"))
    code, _, err = lawindex("ask", state, "fire hydrant", "--engine", "opensearch", env=env_of(connection))
    assert code == 2
    one_line(err, "not a state code")
    code, _, err = lawindex("load", str(CORPORA), "--state", state, env=env_of(connection))
    assert code == 2
    one_line(err, "not a state code")


def test_a_state_with_no_index_yet_is_refused_with_how_to_load_it(connection: Connection) -> None:
    with pytest.raises(ClusterRefused, match="no index for WY"):
        OpenSearchEngine(connection).ask(Request("WY", "fire hydrant"))
    code, _, err = lawindex("ask", "WY", "fire hydrant", "--engine", "opensearch", env=env_of(connection))
    assert code == 4
    one_line(err, "no index for WY")
    assert "lawindex load" in err
    # Another state being loaded changes nothing for WY.
    load_state(connection.client(), read_corpus(CORPORA / "MD.jsonl"), LoadOptions(namespace=connection.namespace))
    code, _, err = lawindex("ask", "WY", "fire hydrant", "--engine", "opensearch", env=env_of(connection))
    assert code == 4
    code, out, err = lawindex("status", env=env_of(connection))
    assert code == 0 and "MD" in out and "WY" not in out


def test_an_empty_cluster_has_no_state_and_says_so(connection: Connection) -> None:
    code, out, err = lawindex("status", env=env_of(connection))
    assert code == 0, err
    assert out == "" and "no state is loaded yet" in err


@pytest.mark.parametrize(
    ("url", "code", "fragment"),
    [
        ("not-a-url", 2, "not an OpenSearch URL"),
        ("http://127.0.0.1:port", 2, "bad port"),
        ("ftp://127.0.0.1:9200", 2, "not an OpenSearch URL"),
        ("http://elastic:changeme@127.0.0.1:9200", 2, "carries credentials"),
    ],
)
def test_a_bad_url_is_refused(url: str, code: int, fragment: str) -> None:
    for command in (("status",), ("ask", "MD", "fire hydrant", "--engine", "opensearch"), ("load", str(CORPORA))):
        got, _, err = lawindex(*command, env={"OPENSEARCH_URL": url})
        assert got == code, (command, got, err)
        one_line(err, fragment)
        assert "changeme" not in err


def test_the_right_host_with_the_wrong_scheme_is_a_tls_error(opensearch_url: str) -> None:
    url = opensearch_url.replace("http://", "https://")
    code, _, err = lawindex("status", "--timeout", "5", env={"OPENSEARCH_URL": url, "LAWINDEX_RETRIES": "0"})
    assert code == 3
    one_line(err, "TLS", url)


def test_a_path_after_the_host_is_answered_by_the_cluster_and_reported(opensearch_url: str) -> None:
    code, _, err = lawindex("status", env={"OPENSEARCH_URL": opensearch_url + "/not/here"})
    assert code in (3, 4), err
    one_line(err, opensearch_url)


def test_an_unreachable_url_is_exit_3() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    for command in (
        ("status",),
        ("load", str(CORPORA), "--state", "MD"),
        ("ask", "MD", "fire", "--engine", "opensearch"),
    ):
        code, _, err = lawindex(*command, env={"OPENSEARCH_URL": url})
        assert code == 3, (command, code, err)
        one_line(err, url, "did not answer")


def test_questions_the_reference_engine_answers_with_nothing_or_refuses_are_the_same_on_opensearch(
    connection: Connection,
) -> None:
    corpus = read_corpus(CORPORA / "MD.jsonl")
    load_state(connection.client(), corpus, LoadOptions(namespace=connection.namespace))
    engine = OpenSearchEngine(connection)
    for question in ("", "how can i do it", "?!...", "כמה רחוק מברז כיבוי אש", "fire\x07hydrant\x1b park\x00"):
        got = engine.ask(Request("MD", question))
        assert got.ids() == reference.ask(corpus, question).ids()
        code, out, err = lawindex(
            "ask", "MD", question.replace("\x00", " "), "--engine", "opensearch", "--json", env=env_of(connection)
        )
        assert code == 0, err
        assert [hit["id"] for hit in json.loads(out)["hits"]] == got.ids()
    longest = " ".join(f"w{n}" for n in range(500))[:2000]
    assert engine.ask(Request("MD", longest)).hits == []
    code, _, err = lawindex("ask", "MD", longest + "x", "--engine", "opensearch", env=env_of(connection))
    assert code == 2
    one_line(err, "question: 2001 characters, more than the 2000 accepted")  # the contract's message
