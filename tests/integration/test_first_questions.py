"""One build, shared: concurrent first questions on a fresh `lawindex serve` wait for one statistics fetch and
one spelling index, so the service's peak memory is that of one question, however many come at once.

The fetches are counted by the node itself (`_stats/get` of the state's index: the statistics are the only
document the service gets; windows are searches), the memory by the kernel (VmHWM, the service's peak
resident set, against VmRSS when it was ready). Before the single flight, 16 first questions on a
20,000-law state fetched 16 times and peaked 354 MB over ready, one question 50 MB
(benchmarks/first_questions.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from tests import synthetic
from tests.integration.serving import start
from tests.integration.support import drop_namespace, unique_namespace
from tests.synthetic import corpus_of

pytestmark = pytest.mark.integration

CONCURRENT = 16


@pytest.fixture(scope="module")
def loaded(opensearch_url: str) -> Iterator[tuple[dict[str, str], str, list[str]]]:
    """A generated 8,000-law TX in a namespace of its own: the environment, its index, and questions that
    each carry a word the laws do not use (so that the first one builds the spelling index)."""
    connection = Connection.from_env(opensearch_url, namespace=unique_namespace())
    laws = synthetic.generate_corpus("TX", 8000, 19)
    (done,) = load(connection, [corpus_of("TX", laws)])
    assert done.index is not None
    # Only questions that reach a law: one that reaches none asks the alias which index it is (a get).
    questions = [f"{q} qxzvk" for q in synthetic.generate_questions(laws, 3 * CONCURRENT, 7) if reference.bm25(laws, q)]
    questions = questions[: CONCURRENT + 1]
    yield {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": connection.namespace}, done.index, questions
    drop_namespace(connection.client(), connection.namespace)


def _kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _gets(url: str, index: str) -> int:
    body = httpx.get(f"{url}/{index}/_stats/get", timeout=30).json()
    return int(body["indices"][index]["total"]["get"]["total"])


def _statistics(env: dict[str, str], index: str) -> dict[str, Any]:
    body = httpx.get(f"{env['OPENSEARCH_URL']}/{index}/_doc/statistics", timeout=30).json()
    found: dict[str, Any] = body["_source"]["statistics"]
    return found


def _first(env: dict[str, str], index: str, questions: list[str]) -> tuple[int, int]:
    """`questions` at once on a fresh service: (statistics fetches, peak growth over ready in kB)."""
    service = start(env)
    try:
        ready = _kb(service.process.pid, "VmRSS")
        before = _gets(env["OPENSEARCH_URL"], index)

        def ask(question: str) -> int:
            url = f"{service.url}/v1/states/TX/ask"
            return httpx.get(url, params={"q": question}, timeout=300).status_code

        with ThreadPoolExecutor(len(questions)) as pool:
            assert set(pool.map(ask, questions)) == {200}
        return _gets(env["OPENSEARCH_URL"], index) - before, _kb(service.process.pid, "VmHWM") - ready
    finally:
        assert service.stop() == 0, service.log


def test_sixteen_first_questions_fetch_once_and_peak_as_one(loaded: tuple[dict[str, str], str, list[str]]) -> None:
    env, index, questions = loaded
    fetches_one, growth_one = _first(env, index, questions[:1])
    fetches_many, growth_many = _first(env, index, questions[1:])
    # One get of the statistics, then the stored blocks of the vocabulary that the questions' words reach
    # (indexer/opensearch/cluster/stored_lexicon.py): one get for one question; for sixteen at once, one get per
    # batch of blocks not read yet, each block read once, never a statistics fetch per question.
    lengths = len(_statistics(env, index)["words"]["blocks"])
    assert fetches_one == 2, fetches_one
    assert 2 <= fetches_many <= 1 + lengths, (fetches_many, lengths)
    # Sixteen requests in flight cost a little of their own (threads, responses): 1.5x one question's
    # growth and 16 MB is the margin; sixteen builds were several times one.
    print(f"peak growth over ready: one question {growth_one} kB, {CONCURRENT} at once {growth_many} kB")
    assert growth_many <= 1.5 * growth_one + 16 * 1024, (growth_one, growth_many)
