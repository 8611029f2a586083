"""A state moved with OpenSearch's own snapshot and restore (an `fs` repository) into another node, of the same
version and of a newer one (2.19.6 to 3.6.0: OpenSearch restores into the same or a newer version): recognised
by `lawindex status`, answering exactly as the reference, refused once altered, and adopted by the next
`lawindex load` as lawindex's own (kept and listed by `lawindex history`, never refused as foreign).

Nodes of its own, on LAWINDEX_SNAPSHOT_PORT (the older source), +1 (the target, the newest pin) and +2 (a
source of the target's version), each started with `path.repo` (docs/nodes.md shows the same commands);
the nodes this module started are stopped at its end."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opensearchpy import OpenSearch

from indexer.errors import DamagedIndex, LawindexError
from indexer.node import node
from indexer.node.pins import pinned_versions
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.cluster.schema import law_id
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import read_corpora
from indexer.retrieval.request import Request
from tests.integration.support import lawindex, unique_namespace

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
PORT = int(os.environ.get("LAWINDEX_SNAPSHOT_PORT", "9474"))
NEWEST, OLDER = pinned_versions()


@pytest.fixture(scope="module")
def repo() -> Iterator[Path]:
    """The snapshot repositories' folder, writable by the nodes' own user (they refuse to run as root):
    LAWINDEX_SNAPSHOT_REPO, the `path.repo` of nodes already running on the ports, else a new one."""
    given = os.environ.get("LAWINDEX_SNAPSHOT_REPO")
    made = Path(given) if given else Path(tempfile.mkdtemp(prefix="lawindex-snapshots-"))
    made.chmod(0o777)
    yield made


def _node(version: str, port: int, repo: Path) -> Iterator[str]:
    try:
        found = node.start(
            version=version, port=port, heap="256m", settings={"path.repo": str(repo)}, runtime="distribution"
        )
    except LawindexError as error:
        pytest.fail(f"no OpenSearch {version} on port {port}: {error} ({error.hint})", pytrace=False)
    try:
        yield found.url
    finally:
        if not found.reused:
            node.stop(port)


@pytest.fixture(scope="module")
def target(repo: Path) -> Iterator[str]:
    yield from _node(NEWEST, PORT + 1, repo)


@pytest.fixture(scope="module", params=[OLDER, NEWEST], ids=["newer", "same"])
def source(request: pytest.FixtureRequest, repo: Path) -> Iterator[tuple[str, str]]:
    version = str(request.param)
    for url in _node(version, PORT if version == OLDER else PORT + 2, repo):
        yield version, url


def _put(url: str, path: str, body: dict[str, object]) -> dict[str, object]:
    answer = httpx.request("PUT" if "_restore" not in path else "POST", url + path, json=body, timeout=300)
    assert answer.status_code == 200, answer.text
    found: dict[str, object] = answer.json()
    return found


def _plugins(url: str) -> set[str]:
    return {row["component"] for row in httpx.get(url + "/_cat/plugins?format=json", timeout=60).json()}


def _index_kind(url: str) -> tuple[bool, bool]:
    """What a load builds on the node at `url`: (for the lawindex plugin, with vectors). Where the lawindex plugin
    runs the index is the same whether k-NN is there or not (vector_grid, no knn_vector); without it, k-NN alone
    adds a knn_vector."""
    plugins = _plugins(url)
    return "lawindex" in plugins, "lawindex" in plugins or "opensearch-knn" in plugins


def test_a_restored_state_is_recognised_exact_refused_when_altered_and_adopted(
    source: tuple[str, str], target: str, repo: Path
) -> None:
    version, source_url = source
    namespace = unique_namespace()
    corpora = read_corpora(CORPORA, ["TX", "MD"])
    loaded = {done.state: done.index for done in load(Connection.from_env(source_url, namespace=namespace), corpora)}
    location = str(repo / namespace)
    indices = f"{namespace}-tx-*,{namespace}-md-*"
    # As docs/nodes.md: a repository on each node, the snapshot on the source, the restore on the target.
    _put(source_url, f"/_snapshot/{namespace}", {"type": "fs", "settings": {"location": location}})
    made = _put(
        source_url,
        f"/_snapshot/{namespace}/moved?wait_for_completion=true",
        {"indices": indices, "include_global_state": False},
    )
    assert made["snapshot"]["state"] == "SUCCESS"  # type: ignore[index]
    _put(target, f"/_snapshot/{namespace}", {"type": "fs", "settings": {"location": location, "readonly": True}})
    _put(target, f"/_snapshot/{namespace}/moved/_restore?wait_for_completion=true", {"indices": indices})
    env = {"OPENSEARCH_URL": target, "LAWINDEX_NAMESPACE": namespace}
    client = OpenSearch(hosts=[target], timeout=60)
    try:
        # Recognised: the same indices behind the same aliases, lawindex's own.
        code, out, err = lawindex("status", "--json", env=env)
        assert code == 0, err
        rows = {row["state"]: row for row in map(json.loads, out.splitlines())}
        assert {state: row["index"] for state, row in rows.items()} == loaded
        assert all(row["documents"] == row["laws"] + 1 for row in rows.values())
        # Exact: every law's own question, the reference's top 8, ids and scores.
        engine = OpenSearchEngine(Connection.from_env(target, namespace=namespace))
        for corpus in corpora:
            for law in corpus.laws:
                expected = [(hit.law.id, hit.score) for hit in reference.ask(corpus, law.question).hits]
                got = [(hit.law.id, hit.score) for hit in engine.ask(Request(corpus.state, law.question)).hits]
                assert got == expected, (corpus.state, law.question)
        # Refused once altered: a law of TX changed in place is never served.
        (texas,) = [corpus for corpus in corpora if corpus.state == "TX"]
        first = texas.laws[0]
        altered = {"doc": {"law": "altered"}}
        client.update(index=str(loaded["TX"]), id=law_id(first.id), body=altered, params={"refresh": "true"})
        with pytest.raises(DamagedIndex):
            OpenSearchEngine(Connection.from_env(target, namespace=namespace)).ask(Request("TX", first.question))
        # Adopted: the next load rebuilds the altered TX, keeps MD (unchanged where both nodes carry the same
        # plugins: a node with k-NN adds vectors, so MD is then rebuilt too), and refuses neither.
        code, out, err = lawindex("load", str(CORPORA), "--state", "TX", "--state", "MD", "--json", env=env)
        assert code == 0, err
        outcomes = {row["state"]: row["outcome"] for row in map(json.loads, out.splitlines())}
        assert outcomes["TX"] == "indexed"
        assert outcomes["MD"] == ("unchanged" if _index_kind(source_url) == _index_kind(target) else "indexed"), version
        code, out, err = lawindex("history", "MD", "--json", env=env)
        assert code == 0, err
        kept = [row["index"] for row in map(json.loads, out.splitlines()) if row["kind"] == "generation"]
        assert loaded["MD"] in kept
        code, out, err = lawindex("ask", "TX", first.question, "--json", env=env)
        assert code == 0, err
    finally:
        for url in (source_url, target):
            httpx.request("DELETE", f"{url}/{namespace}-*", timeout=60)
            httpx.request("DELETE", f"{url}/_snapshot/{namespace}", timeout=60)
