"""Sixteen clients ask `lawindex serve` while the state is reloaded five times with alternating corpora.

Every answer must be the reference answer of corpus A or of corpus B: never an error, never a mix. The
service's one shared engine follows the alias: after a reload moves it, the next request sees the new
index (the pattern of test_concurrent_reloads.py, over HTTP).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.retrieval import reference
from tests import synthetic
from tests.integration.serving import running
from tests.integration.support import Reloads, fresh_connection, run_threads, two_corpora

pytestmark = pytest.mark.integration

STATE = "TX"
CLIENTS = 16
RELOADS = 5
LAWS = 250


def _key(hits: list[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    # 12 significant digits: the exact re-scoring is float64 and a mix moves scores far more than that.
    return tuple((law, float(f"{score:.12g}")) for law, score in hits)


def test_sixteen_clients_get_the_old_answer_or_the_new_never_an_error_or_a_mix(
    opensearch_url: str, tmp_path: Path
) -> None:
    a, b = two_corpora(tmp_path, STATE, LAWS)
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
            reloads = Reloads(CLIENTS)
            done, errors, wrong = reloads.done, reloads.errors, reloads.wrong
            answered, generations = reloads.answered, reloads.generations

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
            reload = (client, (a, b), STATE, RELOADS, connection.namespace)
            threads.append(threading.Thread(target=reloads.reload, args=reload))
            seconds = run_threads(threads)

        print(
            f"\nlawindex serve through {RELOADS} reloads: {sum(answered)} questions from {CLIENTS} clients "
            f"in {seconds:.1f}s; errors {len(errors)}, wrong {len(wrong)}"
        )
        assert not errors, errors[:5]
        assert not wrong, wrong[:5]
        assert len(set(generations)) == RELOADS
        assert all(count > 0 for count in answered)
