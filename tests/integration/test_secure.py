"""The real security plugin: a secured 2.19.4 node of the module's own (`lawindex opensearch start --version
2.19.4 --secure`, port LAWINDEX_SECURE_PORT, default 9490, 256m heap, stopped at the end), and lawindex's
commands over TLS as the least-privileged user `lawindex`.

scripts/test runs this file in a phase of its own; the per-version integration run leaves it out. When the
node cannot be had, the tests fail.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from indexer.errors import LawindexError
from indexer.node import node
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.retrieval.request import Request
from tests.integration.support import timed_lawindex

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
PORT = int(os.environ.get("LAWINDEX_SECURE_PORT", "9490"))
VERSION = "2.19.4"
CANARY = "CANARY-wrong-7f3a9c"


@dataclass(frozen=True)
class Secured:
    url: str
    ca_certs: str
    credentials: dict[str, str]
    logs: Path
    namespace: str
    admin_password: str

    def env(self, **changes: str) -> dict[str, str]:
        return {"OPENSEARCH_URL": self.url, "LAWINDEX_NAMESPACE": self.namespace, **self.credentials, **changes}


OUTPUTS: list[str] = []


def run(secured: Secured, *args: str, **env: str) -> tuple[int, str, str]:
    code, out, err, _ = timed_lawindex(*args, env=secured.env(**env))
    OUTPUTS.extend((out, err))
    return code, out, err


def _empty_namespace(url: str, ca_certs: str, credentials: dict[str, str]) -> None:
    """Delete what an earlier run left in the namespace (a reused node keeps its data), as the user itself:
    the tests count what they load."""
    from opensearchpy import OpenSearch

    client = OpenSearch(
        hosts=[url],
        http_auth=(credentials["OPENSEARCH_USER"], credentials["OPENSEARCH_PASSWORD"]),
        ca_certs=ca_certs,
        verify_certs=True,
    )
    for name in client.indices.get(index="lawindex-*", ignore_unavailable=True, allow_no_indices=True):
        client.indices.delete(index=name)


@pytest.fixture(scope="module")
def secured() -> Iterator[Secured]:
    began = time.monotonic()
    try:
        found = node.start(version=VERSION, port=PORT, heap="256m", secure=True, runtime="distribution")
    except LawindexError as error:
        pytest.fail(f"no secured OpenSearch {VERSION} on port {PORT}: {error} ({error.hint})", pytrace=False)
    print(f"\ntiming: secured {VERSION} node green in {time.monotonic() - began:.1f} s (reused: {found.reused})")
    assert found.ca_certs and found.credentials and found.log
    lines = Path(found.credentials).read_text(encoding="utf-8").splitlines()
    credentials = dict(line.split("=", 1) for line in lines if "=" in line)
    _empty_namespace(found.url, found.ca_certs, credentials)
    try:
        admin = (Path(found.credentials).parent / "admin.password").read_text(encoding="utf-8").strip()
        yield Secured(found.url, found.ca_certs, credentials, Path(found.log).parent, "lawindex", admin)
    finally:
        if not found.reused:
            node.stop(PORT)


def test_status_json_gives_the_ca_and_a_credentials_file_of_the_least_privileged_user(secured: Secured) -> None:
    status = node.status(PORT)
    assert status.url.startswith("https://")
    assert status.credentials is not None
    mode = stat.S_IMODE(os.stat(status.credentials).st_mode)
    assert mode == 0o600
    assert set(secured.credentials) == {"OPENSEARCH_USER", "OPENSEARCH_PASSWORD"}
    assert secured.credentials["OPENSEARCH_USER"] == "lawindex"  # not the admin
    assert len(secured.credentials["OPENSEARCH_PASSWORD"]) >= 16
    code, out, err = (*timed_lawindex("opensearch", "status", "--port", str(PORT), "--json")[:3],)
    OUTPUTS.extend((out, err))
    assert code == 0 and '"ca_certs"' in out and '"credentials"' in out


def test_load_ask_status_verify_as_the_least_privileged_user_over_tls(secured: Secured) -> None:
    ca = ("--ca-certs", secured.ca_certs)
    code, out, err = run(secured, "load", str(CORPORA), "--state", "MD", "--state", "TX", *ca)
    assert code == 0, err
    code, out, err = run(secured, "ask", "TX", "how far from a fire hydrant can i park", *ca)
    assert code == 0, err
    assert out.splitlines()[1].startswith("TX-S01")
    code, out, err = run(secured, "status", "--json", *ca)
    assert code == 0, err
    assert out.count('"state"') == 2
    code, out, err = run(secured, "verify", "MD", "--corpora", str(CORPORA), *ca)
    assert code == 0, err
    code, out, err = run(secured, "get", "TX", "TX-S01", *ca)
    assert code == 0 and "TX-S01" in out, err
    code, out, err = run(secured, "load", str(CORPORA), "--state", "PA", *ca)
    assert code == 0, err
    code, out, err = run(secured, "ask", "PA", "--family", "permit-holding-period", *ca)
    assert code == 0 and out.strip(), err


def test_the_least_privileged_user_loads_and_asks_on_the_plugin_path(secured: Secured) -> None:
    """The role has no cluster:monitor/nodes/info, so the user cannot list the nodes' plugins; the load finds
    the plugin by the node parsing its query, builds the plugin path, and `ask` sends the plugin's query."""
    from opensearchpy import TransportError

    from indexer.opensearch.cluster import plugins

    user = _client(secured, "lawindex", secured.credentials["OPENSEARCH_PASSWORD"])
    for listing in ("/_nodes/plugins", "/_cat/plugins"):
        with pytest.raises(TransportError) as refused:
            user.transport.perform_request("GET", listing)
        assert refused.value.status_code == 403, refused.value.info
    assert plugins.listed(user, plugins.LAWINDEX) is None
    assert plugins.query_parses(user, "lawindex") is True
    assert plugins.query_parses(user, "no_such_query") is False  # the probe can say no

    ca = ("--ca-certs", secured.ca_certs)
    code, out, err = run(secured, "load", str(CORPORA), "--state", "VT", "--force", *ca)
    assert code == 0, err
    code, out, err = run(secured, "status", "--json", *ca)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert {row["state"]: row["path"] for row in rows}.get("VT") == "plugin", rows
    code, out, err = run(secured, "ask", "VT", "how far from a fire hydrant can i park", "--json", *ca)
    assert code == 0, err
    # The raw query as the user sends it returns what ask returned.
    asked = [hit["id"] for hit in json.loads(out.splitlines()[0])["hits"]]
    body = {"size": 8, "_source": ["id"], "query": {"lawindex": {"question": "how far from a fire hydrant can i park"}}}
    raw = user.search(index="lawindex-vt", body=body)
    assert [hit["_source"]["id"] for hit in raw["hits"]["hits"]] == asked


def test_a_changed_corpus_reloads_as_the_least_privileged_user(secured: Secured, tmp_path: Path) -> None:
    # A reload: the orphans of the state looked for, a new generation made, the alias moved from the old
    # one, the old one deleted, all with the role alone.
    ca = ("--ca-certs", secured.ca_certs)
    code, _out, err = run(secured, "load", str(CORPORA), "--state", "MD", *ca)
    assert code == 0, err
    lines = (CORPORA / "MD.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["title"] = f"{first.get('title', '')} (revised)"
    (tmp_path / "MD.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    code, out, err = run(secured, "load", str(tmp_path), "--json", *ca)
    assert code == 0, err
    assert '"outcome": "indexed"' in out
    code, out, err = run(secured, "status", "--json", *ca)
    assert code == 0 and out.count('"state": "MD"') == 1, err


def test_the_user_is_refused_outside_its_namespace(secured: Secured) -> None:
    code, _out, err = run(
        secured, "load", str(CORPORA), "--state", "VT", "--ca-certs", secured.ca_certs, LAWINDEX_NAMESPACE="other"
    )
    assert code == 4, err
    assert "lacks a permission" in err
    assert len(err.strip().splitlines()) <= 2


def _client(secured: Secured, user: str, password: str) -> Any:
    from opensearchpy import OpenSearch

    return OpenSearch(hosts=[secured.url], http_auth=(user, password), ca_certs=secured.ca_certs, timeout=60)


def test_the_user_cannot_change_its_own_password(secured: Secured) -> None:
    from opensearchpy import TransportError

    own = secured.credentials["OPENSEARCH_PASSWORD"]
    user = _client(secured, "lawindex", own)
    body = {"current_password": own, "password": "Changed-by-the-user-1."}
    with pytest.raises(TransportError) as refused:
        user.transport.perform_request("PUT", "/_plugins/_security/api/account", body=body)
    assert refused.value.status_code == 403, refused.value.info
    # The plugin says why: the user is reserved, and only the super admin changes a reserved user.
    assert "reserved" in json.dumps(refused.value.info), refused.value.info
    assert user.info()["version"]["number"] == VERSION  # the password in credentials.env still holds
    with pytest.raises(TransportError):
        _client(secured, "lawindex", "Changed-by-the-user-1.").info()


def test_a_look_alike_index_is_neither_read_nor_deleted_by_the_user(secured: Secured) -> None:
    from opensearchpy import TransportError

    admin = _client(secured, "admin", secured.admin_password)
    user = _client(secured, "lawindex", secured.credentials["OPENSEARCH_PASSWORD"])
    look_alike = "lawindex-staging-tx-1"
    admin.indices.delete(index=look_alike, ignore_unavailable=True)
    admin.index(index=look_alike, id="1", body={"note": "another tool's"}, refresh=True)
    try:
        for request in (
            lambda: user.search(index=look_alike, body={"query": {"match_all": {}}}),
            lambda: user.get(index=look_alike, id="1"),
            lambda: user.indices.delete(index=look_alike),
            lambda: user.indices.get_mapping(index=look_alike),
        ):
            with pytest.raises(TransportError) as refused:
                request()
            assert refused.value.status_code == 403, refused.value.info
        assert admin.count(index=look_alike)["count"] == 1  # still there, untouched
        # lawindex's own commands go on, the look-alike matching their wildcards (`lawindex-*`) or not.
        ca = ("--ca-certs", secured.ca_certs)
        code, _out, err = run(secured, "load", str(CORPORA), "--state", "TX", *ca)
        assert code == 0, err
        code, out, err = run(secured, "status", "--json", *ca)
        assert code == 0 and "staging" not in out, err
        assert admin.count(index=look_alike)["count"] == 1
    finally:
        admin.indices.delete(index=look_alike, ignore_unavailable=True)


def test_http_to_the_tls_port_says_it_looks_like_tls_and_to_use_https(secured: Secured) -> None:
    plain = "http://" + secured.url.removeprefix("https://")
    for command in (("status",), ("ask", "MD", "fire hydrant"), ("load", str(CORPORA), "--state", "MD")):
        code, _out, err = run(secured, *command, "--url", plain)
        assert code == 3, (command, err)
        first, hint = err.splitlines()[:2]
        assert first == f"error: OpenSearch at {plain} closed a plain-HTTP request: the port looks like TLS (https)"
        assert hint.startswith(f"hint: use {secured.url} "), hint


def test_a_wrong_password_or_none_is_exit_4_for_every_command(secured: Secured) -> None:
    ca = ("--ca-certs", secured.ca_certs)
    for command in (("status",), ("load", str(CORPORA), "--state", "MD"), ("ask", "MD", "fire")):
        code, _out, err = run(secured, *command, *ca, OPENSEARCH_PASSWORD=CANARY)
        assert code == 4, (command, err)
        assert err.splitlines()[0] == f"error: OpenSearch at {secured.url} refused the credentials (401)"
        assert "OPENSEARCH_USER and OPENSEARCH_PASSWORD" in err
    code, _out, err = run(secured, "status", *ca, OPENSEARCH_USER="", OPENSEARCH_PASSWORD="")
    assert code == 4 and "401" in err, err


def test_an_untrusted_certificate_is_exit_3_unless_trusted_or_insecure(secured: Secured) -> None:
    for command in (("status",), ("ask", "MD", "fire hydrant"), ("load", str(CORPORA), "--state", "MD")):
        code, _out, err = run(secured, *command, LAWINDEX_RETRIES="0")
        assert code == 3, (command, err)
        first = err.splitlines()[0]
        assert first.startswith(f"error: TLS to {secured.url} failed: ") and "certificate" in first, first
        assert "_ssl.c" not in first
        assert "--ca-certs" in err
    code, _out, err = run(secured, "ask", "MD", "fire hydrant", "--json", "--ca-certs", secured.ca_certs)
    assert code == 0 and "warning" not in err, err
    for command in (("ask", "MD", "fire hydrant", "--json"), ("status",), ("status",)):
        code, _out, err = run(secured, *command, "--insecure")
        assert code == 0, (command, err)
        assert err.count("warning: --insecure") == 1, err


def test_no_credential_reaches_a_log_line_in_process(secured: Secured, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    logging.getLogger("opensearchpy.trace").setLevel(logging.DEBUG)
    secret = secured.credentials["OPENSEARCH_PASSWORD"]
    for password in (secret, CANARY):
        os.environ.update({"OPENSEARCH_USER": "lawindex", "OPENSEARCH_PASSWORD": password})
        try:
            connection = Connection.from_env(secured.url, ca_certs=secured.ca_certs, namespace=secured.namespace)
            assert password not in repr(connection)
            with contextlib.suppress(LawindexError):
                OpenSearchEngine(connection).ask(Request("MD", "fire hydrant"))
        finally:
            os.environ.pop("OPENSEARCH_USER", None)
            os.environ.pop("OPENSEARCH_PASSWORD", None)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert logged, "nothing was logged: the test would prove nothing"
    for word in (secret, CANARY, base64.b64encode(f"lawindex:{secret}".encode()).decode()):
        assert word not in logged


def test_no_password_appears_in_any_output_or_log(secured: Secured) -> None:
    # Last in the module: every command above has run and logged.
    secret = secured.credentials["OPENSEARCH_PASSWORD"]
    assert OUTPUTS, "the tests above ran no command"
    for text in OUTPUTS:
        assert secret not in text
        assert CANARY not in text
    for log in secured.logs.glob("*"):
        if log.is_file():
            content = log.read_text(encoding="utf-8", errors="replace")
            assert secret not in content, log
            assert CANARY not in content, log
