"""A question is answered from the generation its statistics name, by that index's own name, however late the node
that coordinates a search applies a move of the alias: a node that has not applied it yet answers through the alias
from the other generation, and the question, found stale on one try, was found stale on its retry too and refused
("the index behind TX's alias changed twice") with one move near it (the 3-node soak, issue 47 item 3).

One node cannot lag, so the lag is made: each read of the statistics is followed, before the question searches, by
a move of the alias to the other kept generation (a rollback), as if every search met a node still at the other
side of the move. Every question, by words, meaning and hybrid, must still be answered, and exactly as the
reference engine answers for the generation whose statistics were read (ids and scores), never refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from indexer.opensearch.cluster import plugin_path
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.cluster.vector_layout import for_cluster
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.read.statistics import IndexStatistics
from indexer.opensearch.write.history import rollback
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.opensearch.write.lock import ensure_locks_index
from indexer.retrieval.corpus import Corpus
from indexer.retrieval.request import Request, Way
from indexer.service.engines import ReferenceEngine
from tests import synthetic
from tests.integration.support import two_corpora

pytestmark = pytest.mark.integration

STATE = "TX"
LAWS = 200


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Corpus, Corpus]:
    root = tmp_path_factory.mktemp("pinned")
    return (root, *two_corpora(root, STATE, LAWS))


def _key(answer: Any) -> list[tuple[str, float]]:
    return [(hit.law.id, float(f"{hit.score:.12g}")) for hit in answer.hits]


def test_a_question_is_answered_from_the_generation_its_statistics_name_when_the_alias_moves_after_they_are_read(
    connection: Connection, corpora: tuple[Path, Corpus, Corpus]
) -> None:
    root, a, b = corpora
    client, namespace = connection.client(), connection.namespace
    plugin = plugin_path.cluster_has_plugin(client)
    meaning = for_cluster(client, plugin)
    ensure_locks_index(client, namespace)
    first = load_state(client, a, LoadOptions(namespace=namespace, meaning=meaning, plugin=plugin, keep=2)).index
    second = load_state(client, b, LoadOptions(namespace=namespace, meaning=meaning, plugin=plugin, keep=2)).index
    ways = [Way.words] + ([Way.meaning, Way.hybrid] if meaning is not None else [])
    questions = synthetic.generate_questions(a.laws, 6, 7) + synthetic.generate_questions(b.laws, 6, 8)
    requests = [Request(STATE, question, way=way) for question in questions for way in ways]
    reference = {first: ReferenceEngine(root / "a"), second: ReferenceEngine(root / "b")}
    other = {first: second, second: first}

    engine = OpenSearchEngine(connection)
    read = engine.statistics_cache._fetch
    named: list[str] = []  # the generation each read of the statistics named, in order

    def lagging(state: str) -> IndexStatistics:
        """The statistics behind the alias, then the alias moved to the other generation: every search after
        this read meets the alias at the other side of a move, as on a node that lags behind or runs ahead."""
        stats = read(state)
        named.append(stats.index)
        rollback(client, STATE, namespace, to=other[stats.index])
        return stats

    engine.statistics_cache._fetch = lagging  # type: ignore[method-assign]
    refused: list[str] = []
    wrong: list[str] = []
    for request in requests:
        engine.statistics_cache.left(STATE)  # every question begins from a read of the statistics
        reads = len(named)
        try:
            got = _key(engine.ask(request))
        except Exception as error:
            refused.append(f"{request.way.value} {request.question!r}: {type(error).__name__}: {error}")
            continue
        # The generation of the last statistics read for this question, whose laws it must be answered from.
        assert len(named) > reads, "the question read no statistics"
        generation = named[-1]
        if got != _key(reference[generation].ask(request)):
            wrong.append(f"{request.way.value} {request.question!r}: not {generation}'s answer")
    print(f"\n{len(requests)} questions, {len(named)} reads of the statistics, each followed by a move of the alias")
    assert not refused, refused[:5]
    assert not wrong, wrong[:5]
    # Questions that met a move: the alias was always at the other side of their statistics' generation.
    assert len(named) >= len(requests)
