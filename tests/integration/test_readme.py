"""README's examples that need a cluster, run in the README's order against the test node (tests/readme.py
says how): load, status, ask and get through OpenSearch, verify. In a namespace of their own, so the
README's `lawindex load corpora/` meets no index and loads every state, as on a fresh machine."""

from __future__ import annotations

import pytest
from opensearchpy import OpenSearch

from tests.integration.support import drop_namespace, unique_namespace
from tests.readme import differences, examples, run

pytestmark = pytest.mark.integration


def test_the_readme_examples_print_what_the_readme_shows(opensearch_url: str, opensearch: OpenSearch) -> None:
    namespace = unique_namespace()
    env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace}
    ran = 0
    try:
        for example in examples():
            if example.skipped_because() is not None:
                continue
            code, stdout, stderr = run(example, env=env)
            assert code == 0, (example.line, example.command, stderr)
            assert "Traceback" not in stderr
            problems = differences(example, stdout)
            assert not problems, f"README.md:{example.line}: {example.command}\n" + "\n".join(problems)
            ran += 1
    finally:
        drop_namespace(opensearch, namespace)
    assert ran >= 10
