"""Sixteen clients ask `lawindex serve` while the state is reloaded five times with alternating corpora.

Every answer must be the reference answer of corpus A or of corpus B: never an error, never a mix. The
service's one shared engine follows the alias: after a reload moves it, the next request sees the new
index (the pattern of test_concurrent_reloads.py, over HTTP).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from indexer.opensearch.write.generations import serving
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpus
from tests import synthetic
from tests.integration.serving import running
from tests.integration.support import each_counts_once_more, fresh_connection, run_threads

pytestmark = pytest.mark.integration

STATE = "TX"
CLIENTS = 16
RELOADS = 5
LAWS = 250


def _write(path: Path, seed: int) -> Corpus:
    laws = synthetic.generate_corpus(STATE, LAWS, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(law.model_dump(exclude_none=True)) + "\n" for law in laws), encoding="utf-8")
    return read_corpus(path)


def _key(hits: list[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    # 12 significant digits: the exact re-scoring is float64 and a mix moves scores far more than that.
    return tuple((law, float(f"{score:.12g}")) for law, score in hits)


def test_sixteen_clients_get_the_old_answer_or_the_new_never_an_error_or_a_mix(
    opensearch_url: str, tmp_path: Path
) -> None:
    a, b = _write(tmp_path / "a" / f"{STATE}.jsonl", 101), _write(tmp_path / "b" / f"{STATE}.jsonl", 202)
    questions = synthetic.generate_questions(a.laws, 40, 7) + synthetic.generate_questions(b.laws, 40, 8)
    expected = {
        q: tuple(_key([(hit.law.id, hit.score) for hit in reference.ask(corpus, q).hits]) for corpus in (a, b))
        for q in questions
    }
    assert sum(1 for in_a, in_b in expected.values() if in_a != in_b) >= 0.8 * len(questions)

    with fresh_connection(opensearch_url) as connection:
        client = connection.client()
        load_state(client, a, LoadOptions(namespace=connection.namespace))
        env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": connection.namespace}
        with running(env, ready="/readyz") as service:
            done = threading.Event()
            errors: list[str] = []
            wrong: list[str] = []
            answered = [0] * CLIENTS
            generations: list[str] = []

            def reloader() -> None:
                try:
                    for turn in range(RELOADS):
                        # every one of the clients answers on the generation about to be replaced
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
                turn = number
                with httpx.Client(base_url=service.url, timeout=60) as http:
                    while not done.is_set():
                        question = questions[turn % len(questions)]
                        turn += 1
                        response = http.get(f"/v1/states/{STATE}/ask", params={"q": question})
                        if response.status_code != 200:
                            errors.append(f"client {number}: {question!r}: {response.status_code} {response.text}")
                            return
                        body: dict[str, Any] = response.json()
                        got = _key([(hit["id"], hit["score"]) for hit in body["hits"]])
                        if got not in expected[question]:
                            wrong.append(f"client {number}: {question!r}: {got[:3]}... is neither A's nor B's")
                            return
                        answered[number] += 1

            threads = [threading.Thread(target=asker, args=(n,)) for n in range(CLIENTS)]
            threads.append(threading.Thread(target=reloader))
            seconds = run_threads(threads)

        print(
            f"\nlawindex serve through {RELOADS} reloads: {sum(answered)} questions from {CLIENTS} clients "
            f"in {seconds:.1f}s; errors {len(errors)}, wrong {len(wrong)}"
        )
        assert not errors, errors[:5]
        assert not wrong, wrong[:5]
        assert len(set(generations)) == RELOADS
        assert all(count > 0 for count in answered)
