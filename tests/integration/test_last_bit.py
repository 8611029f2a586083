"""Answers decided in the last bit, on OpenSearch: `lawindex ask` (the exact path: candidates from the node,
re-scored in the spec's arithmetic, the window proven) against the spec's own TypeScript.

The corpora (tests/synthetic.py: last_bit_corpora) hold exact float64 ties that glibc's logarithm breaks,
one each way, and two laws whose equal term scores sum to different doubles in different orders. A
lawindex whose idf took glibc's log, or whose sum took another order, answers them otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import synthetic
from tests.integration.support import drop_namespace, lawindex, unique_namespace
from tests.spec_oracle.oracle import TSX, prepare, spec_ids, spec_path

pytestmark = pytest.mark.integration

STATES = {"df51": "TX", "df191": "CA", "sum-order": "NY"}


@pytest.fixture(scope="module")
def loaded(opensearch_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], Path]]:
    folder = tmp_path_factory.mktemp("last-bit")
    for name, state in STATES.items():
        synthetic.write_corpus(folder / f"{state}.jsonl", _corpus(name, state).laws)
    env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": unique_namespace()}
    code, out, err = lawindex("load", str(folder), "--json", env=env)
    assert code == 0, err
    assert {json.loads(line)["outcome"] for line in out.splitlines()} == {"indexed"}
    yield env, folder
    from opensearchpy import OpenSearch

    drop_namespace(OpenSearch(opensearch_url), env["LAWINDEX_NAMESPACE"])


def _corpus(name: str, state: str) -> synthetic.LastBit:
    return next(corpus for corpus in synthetic.last_bit_corpora(state) if corpus.name == name)


def _oracle(directory: Path) -> Path:
    spec = spec_path()
    if not spec.is_file():
        message = f"no spec at {spec}: the spec's TypeScript cannot be run (set LAWINDEX_SPEC)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    if shutil.which("node") is None or not TSX.exists():
        pytest.fail("node and tests/spec_oracle's tsx (tests/spec_oracle/install.sh) are needed")
    return prepare(directory, spec)


def test_lawindex_ask_on_opensearch_answers_as_the_spec_s_typescript(
    loaded: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, folder = loaded
    directory = _oracle(tmp_path)
    for name, state in STATES.items():
        corpus = _corpus(name, state)
        expected = spec_ids(directory, folder / f"{state}.jsonl", corpus.questions)
        questions = tmp_path / f"{state}.txt"
        questions.write_text("".join(q + "\n" for q in corpus.questions), encoding="utf-8")
        code, out, err = lawindex("ask", state, "--from", str(questions), "--json", env=env)
        assert code == 0, err
        answered = [[hit["id"] for hit in json.loads(line)["hits"]] for line in out.splitlines()]
        assert answered == expected, corpus.why
        if corpus.name != "sum-order":
            assert all(ids[:2] == [f"{state}-S0101", f"{state}-S0701"] for ids in expected)
