"""The lawindex query's refusals, highlights, cancellation and timeout, sent raw as any client sends them.

What issue 26 found, each now held: `"order": "kind"` answered HTTP 500 from inside Lucene, `"field":
"nosuch"` 200 with no hits, `"question": 30` was taken as "30", highlighting was silently empty, and a long
question could not be stopped. Every bad parameter is now a 400 whose reason names it; a question past
`index.lawindex.max_question_length` is a 400 naming the setting; highlights are a `match` query's; and
`_tasks/<id>/_cancel` and `"timeout"` stop a question that takes long.
"""

from __future__ import annotations

import random
import re
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer.retrieval import reference
from indexer.retrieval.corpus import read_corpus
from tests import synthetic
from tests.integration.hostile_support import Loaded, Raw, Reply, loaded, node_is_well

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
LIMIT = "index.lawindex.max_question_length"


@pytest.fixture(scope="module")
def state(opensearch_url: str) -> Iterator[Loaded]:
    with loaded(opensearch_url, read_corpus(CORPORA / "AL.jsonl")) as made:
        yield made


@pytest.fixture(scope="module")
def big(opensearch_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    """A generated Texas (3,000 laws): a vocabulary big enough that a question of many misspelt words is
    seconds of work, long enough to be cancelled or timed out on its way."""
    laws = synthetic.generate_corpus("TX", 3000, seed=26)
    path = tmp_path_factory.mktemp("big") / "TX.jsonl"
    with loaded(opensearch_url, synthetic.corpus_of("TX", laws, path)) as made:
        yield made


def _refused(reply: Reply, *names: str) -> None:
    assert reply.status == 400, (reply.status, reply.body)
    reason = reply.reason()
    for name in names:
        assert name in reason, reason


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ({"question": "fire hydrant", "order": "kind"}, ["order field [kind]", "[keyword]", "whole-number"]),
        ({"question": "fire hydrant", "order": "nosuch"}, ["order field [nosuch] is not mapped"]),
        ({"question": "fire hydrant", "order": "id"}, ["order field [id]"]),
        ({"question": "fire hydrant", "field": "nosuch"}, ["field [nosuch] is not mapped"]),
        ({"question": "fire hydrant", "field": "id"}, ["field [id] is not scored by a lawindex_bm25"]),
        ({"question": 30}, ["[question] must be a string, not a number"]),
        ({"question": True}, ["[question] must be a string, not a boolean"]),
        ({"question": None}, ["[question] must be a string, not null"]),
        ({"question": ["fire", "hydrant"]}, ["[question] must be a string, not an array"]),
        ({"question": {"text": "fire"}}, ["[question] must be a string, not an object"]),
        ({"question": "fire", "field": 7}, ["[field] must be a string, not a number"]),
        ({"question": "fire", "order": False}, ["[order] must be a string, not a boolean"]),
        ({"question": "fire", "size": 8}, ["not [size]"]),
        ({"field": "words"}, ["requires [question]"]),
    ],
)
def test_a_bad_parameter_is_a_400_that_names_it(state: Loaded, query: dict[str, object], names: list[str]) -> None:
    raw = Raw(state.url)
    _refused(raw.search(state.alias, query), *names)
    raw.close()


def test_a_question_past_the_limit_is_a_400_naming_the_setting(state: Loaded) -> None:
    raw = Raw(state.url)
    index = state.index()
    assert raw.send("PUT", f"/{index}/_settings", {"index": {"lawindex.max_question_length": 1000}}).status == 200
    try:
        at = ("fire hydrant " * 100)[:1000]
        got = raw.search(state.alias, {"question": at}, size=8, _source=["id"])
        assert got.status == 200, got
        assert [hit["_source"]["id"] for hit in got.body["hits"]["hits"]] == reference.ask(state.corpus, at).ids()  # type: ignore[index]
        _refused(raw.search(state.alias, {"question": at + "x"}), "1001 characters", LIMIT)
    finally:
        raw.send("PUT", f"/{index}/_settings", {"index": {"lawindex.max_question_length": None}})
    # The default takes a million characters and refuses one more.
    _refused(raw.search(state.alias, {"question": "a" * 1_000_001}), "1000001 characters", LIMIT)
    node_is_well(raw)
    raw.close()


def _emphasised(fragments: list[str]) -> set[str]:
    return {word.lower() for fragment in fragments for word in re.findall(r"<em>(.*?)</em>", fragment)}


def test_highlights_are_the_words_asked_expanded_ones_included(state: Loaded) -> None:
    """Asking "behing a firehydrant" asks behind, fire and hydrant: each hit's highlight marks the ones it has, as a
    `match` query on those words marks them."""
    raw = Raw(state.url)
    question = "how far must i be behing a firehydrant"
    answer = reference.ask(state.corpus, question)
    assert {"behind", "fire", "hydrant"} <= set(answer.terms), answer.terms
    highlight = {"fields": {"words": {}}}
    got = raw.search(state.alias, {"question": question}, size=8, _source=["id"], highlight=highlight)
    assert got.status == 200, got
    hits = got.body["hits"]["hits"]  # type: ignore[index]
    assert [hit["_source"]["id"] for hit in hits] == answer.ids()
    match = raw.send(
        "POST",
        f"/{state.alias}/_search",
        {"size": 100, "_source": ["id"], "query": {"match": {"words": " ".join(answer.terms)}}, "highlight": highlight},
    )
    by_match = {hit["_source"]["id"]: hit["highlight"]["words"] for hit in match.body["hits"]["hits"]}  # type: ignore[index]
    for hit in hits:
        marked = _emphasised(hit["highlight"]["words"])
        assert marked and marked <= set(answer.terms), (hit["_source"]["id"], marked)
        assert marked == _emphasised(by_match[hit["_source"]["id"]])
    assert "fire" in _emphasised(hits[0]["highlight"]["words"])
    raw.close()


def _slow_question(seed: int, words: int) -> str:
    """Many distinct misspelt words of 6 to 9 letters: each is looked into and corrected by one edit
    against the whole vocabulary, so the question is long work, in linear time."""
    rng = random.Random(seed)
    return " ".join(
        "".join(rng.choice("abcdefghijklmnoprstuvwy") for _ in range(rng.randint(6, 9))) for _ in range(words)
    )


def test_a_timeout_stops_a_long_question(big: Loaded) -> None:
    raw = Raw(big.url)
    question = _slow_question(1, 90_000)
    reply = raw.search(big.alias, {"question": question}, size=8, timeout="50ms")
    assert reply.status == 200, (reply.status, reply.body)
    assert reply.body["timed_out"] is True, reply.body
    assert reply.body["hits"]["hits"] == []  # type: ignore[index]
    node_is_well(raw)
    raw.close()


def test_a_cancelled_question_stops(big: Loaded) -> None:
    """The search is found in _tasks while it runs and cancelled; it ends as cancelled, not with hits."""
    raw = Raw(big.url)
    question = _slow_question(2, 100_000)  # about 850,000 characters: under the default limit
    replies: list[Reply] = []
    # The node is shared: the other pytest process's files search it meanwhile. The search is told from theirs
    # by its X-Opaque-Id, which _tasks lists with each task (the first search seen was cancelled before, and
    # once it was another file's: this question then ran to its end, 200 with hits, in 41 s).
    opaque = f"lawindex-cancel-{uuid.uuid4().hex}"

    def ask() -> None:
        replies.append(Raw(big.url).search(big.alias, {"question": question}, {"X-Opaque-Id": opaque}, size=8))

    asking = threading.Thread(target=ask)
    asking.start()
    task = None
    deadline = time.monotonic() + 60
    while task is None and time.monotonic() < deadline and asking.is_alive():
        listed = raw.send("GET", "/_tasks?actions=indices:data/read/search&detailed=false")
        for node in listed.body.get("nodes", {}).values():  # type: ignore[union-attr]
            for task_id, info in node["tasks"].items():
                ours = info.get("headers", {}).get("X-Opaque-Id") == opaque
                if ours and info["action"] == "indices:data/read/search":
                    task = task_id
        time.sleep(0.05)
    assert task is not None, "the search was never seen running"
    cancelled = raw.send("POST", f"/_tasks/{task}/_cancel")
    assert cancelled.status == 200, cancelled
    asking.join(timeout=120)
    assert not asking.is_alive()
    reply = replies[0]
    assert reply.status != 200 or reply.body.get("hits", {}).get("hits") == [], reply.body  # type: ignore[union-attr]
    assert "cancelled" in str(reply.body).lower(), str(reply.body)[:2000]
    node_is_well(raw)
    raw.close()
