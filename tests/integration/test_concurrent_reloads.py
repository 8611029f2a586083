"""Eight learners ask one state while it is reloaded five times with alternating corpora.

Every answer must be the reference answer of corpus A or of corpus B: never an error, never a mix (the
hits of one generation scored with the other's statistics, or half of each). A and B are generated with
different seeds, so most questions have different answers in each and a mix cannot hide.
"""

from __future__ import annotations

import threading

import pytest
from opensearchpy import OpenSearch

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.retrieval import reference
from indexer.retrieval.answers import Answer
from indexer.retrieval.corpus import Corpus
from indexer.retrieval.request import Request
from tests import synthetic
from tests.integration.support import Reloads, run_threads, two_corpora

pytestmark = pytest.mark.integration

STATE = "TX"
ASKERS = 8
RELOADS = 5
LAWS = 250


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, Corpus]:
    root = tmp_path_factory.mktemp("reloads")
    return two_corpora(root, STATE, LAWS)


def _key(answer: Answer) -> list[tuple[str, float]]:
    # Scores to 12 significant digits: the exact re-scoring is the reference's float64 arithmetic, and a
    # mix (hits of one generation, statistics of the other) moves them far more than that.
    return [(hit.law.id, float(f"{hit.score:.12g}")) for hit in answer.hits]


@pytest.mark.parametrize("shared", [True, False], ids=["one-shared-engine", "an-engine-per-thread"])
def test_answers_are_old_or_new_never_an_error_or_a_mix(
    connection: Connection, corpora: tuple[Corpus, Corpus], shared: bool
) -> None:
    a, b = corpora
    questions = synthetic.generate_questions(a.laws, 40, 7) + synthetic.generate_questions(b.laws, 40, 8)
    expected = {q: (_key(reference.ask(a, q)), _key(reference.ask(b, q))) for q in questions}
    telling = sum(1 for in_a, in_b in expected.values() if in_a != in_b)
    assert telling >= 0.8 * len(questions), "A and B must answer most questions differently, or a mix could hide"

    client: OpenSearch = connection.client()
    load_state(client, a, LoadOptions(namespace=connection.namespace))
    engines = (
        [OpenSearchEngine(connection)] * ASKERS if shared else [OpenSearchEngine(connection) for _ in range(ASKERS)]
    )

    reloads = Reloads(ASKERS)
    done, errors, wrong = reloads.done, reloads.errors, reloads.wrong
    answered, generations = reloads.answered, reloads.generations

    def asker(number: int) -> None:
        engine = engines[number]
        turn = number  # each thread starts at another question
        while not done.is_set():
            question = questions[turn % len(questions)]
            turn += 1
            try:
                got = _key(engine.ask(Request(STATE, question)))
            except Exception as error:
                errors.append(f"asker {number}: {question!r}: {type(error).__name__}: {error}")
                return
            if got not in expected[question]:
                wrong.append(f"asker {number}: {question!r}: {got[:3]}... is neither A's nor B's answer")
                return
            answered[number] += 1

    threads = [threading.Thread(target=asker, args=(n,)) for n in range(ASKERS)]
    reload = (client, (a, b), STATE, RELOADS, connection.namespace)
    threads.append(threading.Thread(target=reloads.reload, args=reload))
    seconds = run_threads(threads)

    print(
        f"\nconcurrent reloads ({'one shared engine' if shared else 'an engine per thread'}): "
        f"{sum(answered)} questions answered by {ASKERS} threads in {seconds:.1f}s across {RELOADS} reloads "
        f"(per thread {answered}); errors {len(errors)}, wrong {len(wrong)}"
    )
    assert not errors, errors[:5]
    assert not wrong, wrong[:5]
    assert len(set(generations)) == RELOADS, f"every reload must make a new generation: {generations}"
    assert all(count > 0 for count in answered)
    # Nothing of the replaced generations is left behind but the one kept for a rollback.
    names = sorted(client.indices.get(index=f"{connection.namespace}-{STATE.lower()}-*"))
    assert names == sorted(generations[-2:])  # the serving one and the one it replaced (load --keep 2)
