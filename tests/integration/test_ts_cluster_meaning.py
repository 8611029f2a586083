"""The package's ClusterClient (clients/typescript/test/cluster-meaning.test.ts) asks the node by meaning and by
hybrid (the defaults, k 60 and 10, and weights other than the defaults) with no lawindex in the path, held to the
reference engine's answers (indexer.retrieval.meaning.answer: ids, order, and each score as the float32 the
engine's `_score` is, raised only where the plugin keeps a row above the next) on the sample corpora's own
questions and generated ones.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.verify import default_questions
from indexer.opensearch.write.load import load
from indexer.retrieval import meaning
from indexer.retrieval.corpus import read_corpora
from indexer.retrieval.request import Fusion, Request, Way
from tests import synthetic
from tests.integration.support import drop_namespace, unique_namespace

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "typescript"
CORPORA = ROOT / "corpora"


def _expected(path: Path) -> None:
    """The reference engine's answers, by meaning and hybrid, for each sample state's questions."""
    rows = []
    for corpus in read_corpora(CORPORA):
        asked = default_questions(corpus)[:20] + synthetic.generate_questions(corpus.laws, 10, 28)
        for question in asked:
            # The plugin's defaults (none sent), k 60 and 10, and weights other than the defaults.
            for by, fusion in (
                ("meaning", {}),
                ("hybrid", {}),
                ("hybrid", {"rrf_k": 60}),
                ("hybrid", {"rrf_k": 10, "words_weight": 0.5, "meaning_weight": 2.0}),
            ):
                answer = meaning.answer(corpus, Request(corpus.state, question, Way(by), 8, Fusion(**fusion)))
                rows.append({
                    "state": corpus.state, "question": question, "by": by, **fusion,
                    "ids": [hit.law.id for hit in answer.hits], "scores": [hit.score for hit in answer.hits],
                })  # fmt: skip
    path.write_text(json.dumps(rows), encoding="utf-8")


def test_the_cluster_client_by_meaning_and_hybrid_returns_the_reference(opensearch_url: str, tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm are needed for the TypeScript client's tests")
    if not (CLIENT / "node_modules" / ".bin" / "tsx").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=CLIENT, check=True)
    namespace = unique_namespace()
    connection = Connection.from_env(opensearch_url, namespace=namespace)
    load(connection, read_corpora(CORPORA), vectors=True)
    try:
        expected = tmp_path / "expected.json"
        _expected(expected)
        env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace, "LAWINDEX_EXPECTED": str(expected)}
        done = subprocess.run(
            ["node", "--import", "tsx", "--test", "--test-reporter=spec", "test/cluster-meaning.test.ts"],
            cwd=CLIENT, env={**os.environ, **env}, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        print(done.stdout[-3000:])
        assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
        assert done.stdout.count("exact") >= 2, done.stdout[-2000:]
    finally:
        drop_namespace(connection.client(), namespace)
