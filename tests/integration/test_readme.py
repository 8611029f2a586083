"""The examples of README.md and docs/*.md that need a cluster, run page by page in each page's order against
the test node (tests/readme.py says how): load, status, ask and get through OpenSearch, verify. Each page in
a namespace of its own, so that its `lawindex load corpora/` meets no index and loads every state, as on a
fresh machine."""

from __future__ import annotations

from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from tests.integration.support import drop_namespace, unique_namespace
from tests.readme import differences, examples, pages, run

pytestmark = pytest.mark.integration


PAGES = pages()


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_the_examples_print_what_the_page_shows(opensearch_url: str, opensearch: OpenSearch, page: Path) -> None:
    runnable = [example for example in examples(page=page) if example.skipped_because() is None]
    if not runnable:
        return  # a page with no example that needs a cluster
    namespace = unique_namespace()
    env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace}
    try:
        for example in runnable:
            code, stdout, stderr = run(example, env=env)
            assert code == 0, (example.where, example.command, stderr)
            assert "Traceback" not in stderr
            problems = differences(example, stdout)
            assert not problems, f"{example.where}: {example.command}\n" + "\n".join(problems)
    finally:
        drop_namespace(opensearch, namespace)


def test_the_pages_have_examples_that_need_a_cluster() -> None:
    ran = {page.name: sum(e.skipped_because() is None for e in examples(page=page)) for page in PAGES}
    assert ran["README.md"] >= 3 and ran["cli.md"] >= 10, ran
