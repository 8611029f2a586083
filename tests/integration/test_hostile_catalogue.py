"""The hostile catalogue (issue 26, item 5): exact answers at OpenSearch's limits, on the node as it runs by
default (`lawindex opensearch start`: 512 MB of heap), on both of `ask`'s paths (the lawindex plugin's query,
and Lucene's BM25 window on an index built without it), with no circuit breaker tripped.

One made-up state holds every class: ties by the thousand (3,000 laws with the same words, so that the
top 8 is decided by corpus order among them), a vocabulary past 1,024 words (questions whose expansion
passes the clause limit), a family of 1,200 page rows, and questions spelt as no learner would (long runs
of known words, periodic tokens, Unicode that lowercases oddly). Every answer is held to the reference
engine's (ids and scores); every search request lawindex sends is watched, and none asks for more than a
page of laws (search_limits.PAGE): 3,000 ties once made the window path ask for 4,096 laws in one request, and
12,000 for 16,384, which is what a 512 MB node's parent breaker refuses.
"""

from __future__ import annotations

import hashlib
import json
import random
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read import search_limits
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, Law
from tests.integration.support import fresh_connection

STATE = "TX"
TIES = 3000
FAMILY = 1200
rng = random.Random(26)
VOCABULARY = sorted({"".join(rng.choices("bcdfghjklmnprstvwz", k=3)) + "".join(rng.choices("aeiou", k=2)) + "x"
                     for _ in range(1700)})  # fmt: skip


def _laws() -> list[Law]:
    draw = random.Random(260)
    laws = [
        Law(id=f"TX-T{n:05d}", kind="statute", law="Park by the hydrant, not on the curb.", question="", concept="tie")
        for n in range(TIES)
    ]
    laws += [
        Law(id=f"TX-V{n:05d}", kind="statute", law=" ".join(draw.choices(VOCABULARY, k=draw.randint(3, 60))),
            question="", concept="made-up")
        for n in range(400)
    ]  # fmt: skip
    # Every vocabulary word in some law, so that a question of them all passes 1,024 clauses.
    laws += [
        Law(id=f"TX-W{n:05d}", kind="statute", law=" ".join(VOCABULARY[n : n + 10]) + " hydrant", question="",
            concept="made-up")
        for n in range(0, len(VOCABULARY), 10)
    ]  # fmt: skip
    laws += [
        Law(id=f"TX-P{n:05d}", kind="process", law=f"Page {n} of the permit.", question="How do I get a permit?",
            concept="permit", family="permit")
        for n in range(FAMILY)
    ]  # fmt: skip
    draw.shuffle(laws)
    return laws


def _corpus() -> Corpus:
    laws = _laws()
    digest = hashlib.sha256("\n".join(law.model_dump_json() for law in laws).encode()).hexdigest()
    return Corpus(STATE, Path(f"{STATE}.jsonl"), tuple(laws), digest)


CORPUS = _corpus()
QUESTIONS = [
    # Ties by the thousand: every one of the 3,000 scores the same.
    ("hydrant", 8),
    ("curb", 8),
    ("park by the hydrant", 8),
    ("hydrant curb park", 100),
    ("curb", 1000),
    # Past the clause limit: 1,100 and every one of the known words, and misspelt ones (each one edit away
    # from several known words).
    (" ".join(VOCABULARY[:1100]), 8),
    (" ".join(VOCABULARY), 8),
    (" ".join(VOCABULARY) + " hydrant curb", 50),
    (" ".join(word[:-1] + "q" for word in VOCABULARY[:400]), 8),
    # Hostile spellings: runs of known words, periodic tokens, odd Unicode.
    ("firehydrantcurbpark" * 12, 8),
    ("".join(VOCABULARY[:60]), 8),
    ("hydrant" * 40, 8),
    ("ab" * 150, 8),
    ("ﬁre ʜydrant cURB İpark ſtop Kurb", 8),
    ("hydrants curbs parks", 8),
]


def tripped(url: str) -> int:
    """Every circuit breaker's trips, summed over the nodes (`_nodes/stats/breaker`)."""
    with urllib.request.urlopen(f"{url}/_nodes/stats/breaker", timeout=30) as response:
        stats = json.loads(response.read())
    return sum(breaker["tripped"] for node in stats["nodes"].values() for breaker in node["breakers"].values())


@pytest.fixture(scope="module", params=["plugin", "window"])
def loaded(request: pytest.FixtureRequest, opensearch_url: str) -> Iterator[tuple[Connection, bool]]:
    plugin = request.param == "plugin"
    with fresh_connection(opensearch_url) as connection:
        load_state(connection.client(), CORPUS, LoadOptions(namespace=connection.namespace, plugin=plugin))
        yield connection, plugin


class Watched(OpenSearchEngine):
    """The engine, with the size of every search it sends kept (each is sent as it would be)."""

    def __init__(self, connection: Connection) -> None:
        super().__init__(connection)
        self.sizes: list[int] = []

    def search(self, state: str, target: str, body: dict[str, Any], clauses: int) -> list[dict[str, Any]]:
        self.sizes.append(int(body.get("size", 10)))
        return super().search(state, target, body, clauses)


def test_the_catalogue_is_answered_exactly_within_a_page_and_no_breaker_trips(
    loaded: tuple[Connection, bool], opensearch_url: str
) -> None:
    connection, plugin = loaded
    before = tripped(opensearch_url)
    engine = Watched(connection)
    for question, limit in QUESTIONS:
        truth = reference.ask(CORPUS, question, limit)
        got = engine.words.ask(STATE, question, limit)
        assert got.terms == truth.terms, question[:80]
        assert [(hit.law.id, hit.score) for hit in got.hits] == [(hit.law.id, hit.score) for hit in truth.hits], (
            question[:80],
            limit,
        )
        # On the plugin's index the plugin answers, ties and all (before: the window path, said on stderr).
        if truth.terms:
            assert got.window is not None and got.window.plugin == plugin, (question[:80], got.window)
    family = engine.family(STATE, "permit")
    assert [law.id for law in family] == [law.id for law in CORPUS.laws if law.family == "permit"]
    assert len(family) == FAMILY
    assert max(engine.sizes) <= search_limits.PAGE, sorted(engine.sizes)[-5:]
    assert tripped(opensearch_url) == before
