"""Eight learners ask one state while it is reloaded five times with alternating corpora.

Every answer must be the reference answer of corpus A or of corpus B: never an error, never a mix (the
hits of one generation scored with the other's statistics, or half of each). A and B are generated with
different seeds, so most questions have different answers in each and a mix cannot hide.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.generations import serving
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.retrieval import reference
from indexer.retrieval.answers import Answer
from indexer.retrieval.corpus import Corpus, read_corpus
from indexer.retrieval.request import Request
from tests import synthetic
from tests.integration.support import each_counts_once_more, run_threads

pytestmark = pytest.mark.integration

STATE = "TX"
ASKERS = 8
RELOADS = 5
LAWS = 250


def _write(path: Path, seed: int) -> Corpus:
    laws = synthetic.generate_corpus(STATE, LAWS, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(law.model_dump(exclude_none=True)) + "\n" for law in laws), encoding="utf-8")
    return read_corpus(path)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, Corpus]:
    root = tmp_path_factory.mktemp("reloads")
    return _write(root / "a" / f"{STATE}.jsonl", 101), _write(root / "b" / f"{STATE}.jsonl", 202)


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

    done = threading.Event()
    errors: list[str] = []
    wrong: list[str] = []
    answered = [0] * ASKERS
    generations: list[str] = []

    def reloader() -> None:
        try:
            for turn in range(RELOADS):
                # every one of the askers answers on the generation about to be replaced
                each_counts_once_more(answered, lambda: bool(errors or wrong), f"before reload {turn}")
                load_state(client, b if turn % 2 == 0 else a, LoadOptions(namespace=connection.namespace))
                generations.append(str(serving(client, STATE, connection.namespace)))
        except Exception as error:  # a reload that fails fails the test, below
            errors.append(f"reload: {type(error).__name__}: {error}")
        finally:
            try:  # and on the last generation too
                each_counts_once_more(answered, lambda: bool(errors or wrong), "after the last reload")
            except AssertionError as error:
                errors.append(str(error))
            finally:
                done.set()

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
    threads.append(threading.Thread(target=reloader))
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
