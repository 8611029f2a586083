"""Hostile questions and names: nothing gets in.

- Index names are made only from validated state codes (and a validated namespace).
- Questions that look like query syntax are words like any others: exactly the reference's answer.
- Credentials never reach stdout, stderr or a log line, whether the command succeeds or fails.
- TLS certificates are verified by default; `--insecure` warns every time it is used. The HTTPS side is a
  TLS-terminating proxy in front of the real node, with a self-signed certificate made in the test.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import ipaddress
import json
import logging
import os
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from indexer import reference
from indexer.corpus import Corpus, read_corpus
from indexer.errors import BadInput, ClusterRefused, LawindexError
from indexer.load import load_state
from indexer.opensearch import Connection, alias_of, namespace_of
from indexer.query import OpenSearchEngine
from tests.integration.support import fresh_connection, lawindex
from tests.integration.test_bad_input_cluster import refusing_url  # noqa: F401  (a fixture)

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
        load_state(connection.client(), corpus, namespace=connection.namespace)
        yield connection


# ---- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["../x", "*", "_all", "tx,md", "TX ", "tx*", "md/_doc", "-tx", "lawindex-tx", ""])
def test_index_names_come_only_from_state_codes(loaded: Connection, state: str) -> None:
    with pytest.raises(BadInput):
        alias_of(state)
    engine = OpenSearchEngine(loaded)
    for call in (
        lambda: engine.ask(state, "fire hydrant"),
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
        OpenSearchEngine(loaded).ask("TX", "fire hydrant")


# ---- query syntax is words -------------------------------------------------------------------------


@pytest.mark.parametrize("question", QUERY_SYNTAX)
def test_query_syntax_is_answered_exactly_as_the_reference_answers_it(
    loaded: Connection, corpus: Corpus, question: str
) -> None:
    expected = reference.ask(corpus, question)
    got = OpenSearchEngine(loaded).ask("MD", question)
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
    refusing_url: str,  # noqa: F811
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
        (refusing_url, ("status",), 4),
        (refusing_url, ("ask", "MD", "fire hydrant"), 4),
        (refusing_url, ("load", str(CORPORA), "--state", "MD"), 4),
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
        for url in (loaded.url, refusing_url, nowhere):
            connection = Connection.from_env(url, namespace=loaded.namespace, retries=0)
            assert PASSWORD not in repr(connection) and PASSWORD not in str(connection)
            try:
                OpenSearchEngine(connection).ask("MD", "fire hydrant")
                OpenSearchEngine(connection).ask("TX", "fire hydrant")
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


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lawindex test cluster")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@pytest.fixture
def tls_proxy(opensearch_url: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS URL whose TLS is terminated here and whose bytes go to the real node; and its certificate."""
    cert, key = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    host, port = opensearch_url.removeprefix("http://").split(":")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    stop = threading.Event()

    def pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                raw.settimeout(None)
                secure = context.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError):
                raw.close()  # a client that refused our certificate: what the test wants to see
                continue
            upstream = socket.create_connection((host, int(port)))
            threading.Thread(target=pipe, args=(secure, upstream), daemon=True).start()
            threading.Thread(target=pipe, args=(upstream, secure), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.getsockname()[1]}", cert
    stop.set()
    thread.join()
    server.close()


def test_tls_is_verified_by_default(loaded: Connection) -> None:
    # check=False: the client as configured, without its `GET /` (nothing listens on 9200 here).
    pool = Connection.from_env("https://127.0.0.1:9200").client(check=False).transport.get_connection().pool
    assert pool.cert_reqs == "CERT_REQUIRED"
    secure = Connection.from_env("https://127.0.0.1:9200", insecure=True)
    insecure = secure.client(check=False).transport.get_connection().pool
    assert insecure.cert_reqs == "CERT_NONE"


def test_a_self_signed_certificate_is_refused_unless_trusted_or_insecure(
    loaded: Connection, tls_proxy: tuple[str, Path]
) -> None:
    url, cert = tls_proxy
    env = {"OPENSEARCH_URL": url, "LAWINDEX_NAMESPACE": loaded.namespace, "LAWINDEX_RETRIES": "0"}
    for command in (("status",), ("ask", "MD", "fire hydrant"), ("load", str(CORPORA), "--state", "MD")):
        code, out, err = lawindex(*command, env=env)
        assert code == 3, (command, code, err)
        first = err.splitlines()[0]
        assert first.startswith(f"error: TLS to {url} failed: ") and "certificate" in first, first
        assert "_ssl.c" not in first, first  # the reason for people, not OpenSSL's source line
        assert "--ca-certs" in err
    # Trusted with --ca-certs: answered, and no warning.
    code, out, err = lawindex("ask", "MD", "fire hydrant", "--json", "--ca-certs", str(cert), env=env)
    assert code == 0, err
    assert json.loads(out)["hits"][0]["id"] == "MD-S01"
    assert "warning" not in err
    # --insecure: answered, with a warning on every use, of every command.
    for command in (("ask", "MD", "fire hydrant", "--json"), ("status",), ("ask", "MD", "school bus"), ("status",)):
        code, out, err = lawindex(*command, "--insecure", env=env)
        assert code == 0, (command, err)
        assert err.count("warning: --insecure") == 1, err
