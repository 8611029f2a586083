"""The TypeScript client's own tests (`node --test`, clients/typescript/test), as part of this suite.

Here: the sample corpora loaded in a namespace of their own, the spec's TypeScript extracted from
../shared/spec/retrieve.md (as tests/unit/test_spec_oracle.py extracts it, beside its corpus.ts), and the questions
written: every law's own question with its typo, compound and plural variants (`lawindex verify`'s), and
generated ones. The node tests then start `lawindex serve`, and hold the client's ids to the spec's own
bm25() in the same Node process; test/plugin.test.ts sends the plugin's raw query through Node's own fetch
straight to the node (no lawindex in the path) and holds it to the same bm25(). The client is type-checked
first (tsc --noEmit). npm installs the pinned devDependencies from the lockfile when they are missing;
without node it fails, never skips.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.node import plugin
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.verify import default_questions
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
from tests import synthetic
from tests.integration.serving import free_port
from tests.integration.support import LAWINDEX, drop_namespace, unique_namespace
from tests.spec_oracle.oracle import ORACLE, extract_spec, spec_path

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "typescript"
CORPORA = ROOT / "corpora"


def _npm_ci() -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm are needed for the TypeScript client's tests")
    if not (CLIENT / "node_modules" / ".bin" / "tsx").exists():
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=CLIENT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, f"npm ci in clients/typescript failed: {done.stderr[-1000:]}"


# Ids a URL path cannot carry as they are: a WHATWG URL removes the segments `..` and `.` (and `%2E%2E`).
ODD_IDS = ["..", ".", "%2E%2E", "NV-S01/..", "a b?c#d"]


@pytest.fixture(scope="module")
def loaded(opensearch_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    namespace = unique_namespace()
    connection = Connection.from_env(opensearch_url, namespace=namespace)
    load(connection, read_corpora(CORPORA))
    odd = tmp_path_factory.mktemp("odd-ids") / "NV.jsonl"
    odd.write_text(
        "".join(
            json.dumps({"id": law, "kind": "statute", "law": f"A law numbered {number}.", "question": "Which law?",
                        "concept": "odd-ids"}) + "\n"
            for number, law in enumerate(ODD_IDS)
        ),
        encoding="utf-8",
    )  # fmt: skip
    load(connection, read_corpora(odd.parent))
    yield {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace, "LAWINDEX_ODD_IDS": f"NV={odd}"}
    drop_namespace(connection.client(), namespace)


def test_the_typescript_client_is_typed() -> None:
    _npm_ci()
    done = subprocess.run(
        [str(CLIENT / "node_modules" / ".bin" / "tsc"), "--noEmit", "-p", str(CLIENT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _spec_and_questions(tmp_path: Path) -> dict[str, str]:
    """The spec's TypeScript in a folder of its own and the questions file: every law's own question with
    its typo, compound and plural variants, generated ones and a few fixed; the variables naming them."""
    spec = spec_path()
    assert spec.is_file(), f"no spec at {spec} (set LAWINDEX_SPEC)"
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "retrieve.ts").write_text(extract_spec(spec.read_text(encoding="utf-8")), encoding="utf-8")
    shutil.copy(ORACLE / "corpus.ts", spec_dir / "corpus.ts")

    corpora = read_corpora(CORPORA)
    questions = {
        corpus.state: default_questions(corpus)
        + synthetic.generate_questions(corpus.laws, 40, 11)
        + ["how far from a fire hydrant can i park", "how far must i be behing a firehydrant", "", "how can i do it"]
        for corpus in corpora
    }
    assert sum(len(asked) for asked in questions.values()) >= 700
    questions_file = tmp_path / "questions.json"
    questions_file.write_text(json.dumps(questions), encoding="utf-8")
    return {
        "LAWINDEX_SPEC_DIR": str(spec_dir),
        "LAWINDEX_CORPORA": str(CORPORA),
        "LAWINDEX_QUESTIONS": str(questions_file),
    }


def _node_test(test_file: str, env: dict[str, str]) -> str:
    """`node --test` on one of the client's test files; its report."""
    done = subprocess.run(
        ["node", "--import", "tsx", "--test", "--test-reporter=spec", test_file],
        cwd=CLIENT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    print(done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "# fail 0" in done.stdout or "✖" not in done.stdout
    return done.stdout


def test_the_typescript_client_returns_the_specs_bm25(loaded: dict[str, str], tmp_path: Path) -> None:
    _npm_ci()
    env = {
        **loaded,
        **_spec_and_questions(tmp_path),
        "LAWINDEX_COMMAND": json.dumps(LAWINDEX),
        "LAWINDEX_SERVE_PORT": str(free_port()),
    }
    _node_test("test/client.test.ts", env)


def test_the_plugin_query_through_fetch_returns_the_specs_bm25(
    loaded: dict[str, str], opensearch_url: str, tmp_path: Path
) -> None:
    """The raw `{"lawindex": {"question": ...}}` query sent by Node's fetch straight to the node (no
    lawindex in the path), against the spec's bm25 in the same Node process (test/plugin.test.ts)."""
    assert plugin.installed(OpenSearch(hosts=[opensearch_url], timeout=60)), f"no lawindex plugin at {opensearch_url}"
    _npm_ci()
    report = _node_test("test/plugin.test.ts", {**loaded, **_spec_and_questions(tmp_path)})
    assert report.count("plugin query via fetch,") == len(read_corpora(CORPORA)), report[-2000:]


def test_the_cluster_client_by_words_returns_the_specs_bm25(
    loaded: dict[str, str], opensearch_url: str, tmp_path: Path
) -> None:
    """The package's ClusterClient (clients/typescript/src/cluster.ts) asks the node itself, no `lawindex serve`:
    by words, every question's laws and order are the spec's bm25() in the same Node process."""
    assert plugin.installed(OpenSearch(hosts=[opensearch_url], timeout=60)), f"no lawindex plugin at {opensearch_url}"
    _npm_ci()
    report = _node_test("test/cluster.test.ts", {**loaded, **_spec_and_questions(tmp_path)})
    assert report.count("cluster client by words,") == len(read_corpora(CORPORA)), report[-2000:]
