"""The lawindex query's refusals, highlights, cancellation and timeout, sent raw as any client sends them.

What issue 26 found, each now held: `"order": "kind"` answered HTTP 500 from inside Lucene, `"field":
"nosuch"` 200 with no hits, `"question": 30` was taken as "30", highlighting was silently empty, and a long
question could not be stopped. Every bad parameter is now a 400 whose reason names it; a question past
`index.lawindex.max_question_length` is a 400 naming the setting; highlights are a `match` query's; and
`_tasks/<id>/_cancel` and `"timeout"` stop a question that takes long.
"""

from __future__ import annotations

import json
import os
import random
import re
import struct
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.opensearch.verify import default_questions
from indexer.retrieval import meaning, reference
from indexer.retrieval.corpus import read_corpus
from indexer.retrieval.request import Fusion, Request, Way
from tests import synthetic
from tests.integration.hostile_support import Loaded, Raw, Reply, loaded, node_is_well

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
LIMIT = "index.lawindex.max_question_length"
# The one rule set of a question (contract/request.json): the plugin's refusals are its messages.
CONTRACT = json.loads((Path(__file__).resolve().parents[2] / "contract" / "request.json").read_text(encoding="utf-8"))
BOOST = "[lawindex] boost: must be 1 or a power of two from 2^-20 to 2^20"
NOTHING_TO_EMBED = ["", " ", "   ", "\t\n\r", "?!.,", "\u0001\u007f", "😀 🇺🇸", "\u00a0", "é 日本 ٣"]


def contract(key: str, **values: object) -> str:
    """The contract's message `key` with its {name}s filled, as the plugin's 400 gives it."""
    text = str(CONTRACT["messages"][key])
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return f"[lawindex] {text}"


def _weight(name: str, value: str) -> str:
    return contract("weight", name=name, min="0.000001", max="1000000", value=value)


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


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        # An unmapped field on every way (by meaning it once answered 200 with hits).
        ({"question": "fire hydrant", "by": "meaning", "field": "nosuch"}, "field [nosuch] is not mapped"),
        ({"question": "fire hydrant", "by": "hybrid", "field": "nosuch"}, "field [nosuch] is not mapped"),
        # A weight past the contract's bounds (1e40 once made every fused score Infinity, in corpus order).
        ({"question": "fire hydrant", "by": "hybrid", "words_weight": 1e40}, _weight("words_weight", "1e+40")),
        (
            {"question": "fire hydrant", "by": "hybrid", "words_weight": 1.7976931348623157e308},
            _weight("words_weight", "1.7976931348623157e+308"),
        ),
        ({"question": "fire hydrant", "by": "hybrid", "meaning_weight": 1e-300}, _weight("meaning_weight", "1e-300")),
        (
            {"question": "fire hydrant", "by": "hybrid", "meaning_weight": 1000000.5},
            _weight("meaning_weight", "1000000.5"),
        ),
        (
            {"question": "fire hydrant", "by": "meaning", "rrf_k": 5},
            contract("not_for_way", name="rrf_k", ways="hybrid", way="meaning"),
        ),
        (
            {"question": "fire hydrant", "by": "hybrid", "rrf_k": 10001},
            contract("integer", name="rrf_k", min=1, max=10000, value=10001),
        ),
        (
            {"question": "fire hydrant", "by": "hybrid", "words_weight": 0, "meaning_weight": 0},
            contract("weights_both_zero"),
        ),
        ({"question": "fire hydrant", "by": "vectors"}, contract("way", value="vectors")),
        # boost: 1 or a power of two (3e38 once made every words score Infinity).
        ({"question": "fire hydrant", "boost": 3e38}, BOOST),
        ({"question": "fire hydrant", "boost": 3}, BOOST),
        ({"question": "fire hydrant", "by": "meaning", "boost": 0.3}, BOOST),
        ({"question": "fire hydrant", "by": "hybrid", "boost": 2097152}, BOOST),
        ({"question": "fire hydrant", "boost": 0}, BOOST),
    ],
)
def test_the_contracts_refusals_and_boost_are_400s_with_its_messages(
    state: Loaded, query: dict[str, object], reason: str
) -> None:
    raw = Raw(state.url)
    _refused(raw.search(state.alias, query), reason)
    raw.close()


def _float32(value: object) -> float:
    return float(struct.unpack("f", struct.pack("f", float(value)))[0])  # type: ignore[arg-type]


@pytest.mark.parametrize("by", ["words", "meaning", "hybrid"])
def test_a_power_of_two_boost_scales_every_score_exactly_and_keeps_the_order(state: Loaded, by: str) -> None:
    raw = Raw(state.url)
    question = "how far from a fire hydrant can i park"

    def hits(boost: float) -> list[tuple[str, float]]:
        reply = raw.search(state.alias, {"question": question, "by": by, "boost": boost}, size=50, _source=["id"])
        assert reply.status == 200, (reply.status, reply.body)
        # _score is a float32 written in its shortest form: read back as the float32 it is.
        return [(str(h["_source"]["id"]), _float32(h["_score"])) for h in reply.body["hits"]["hits"]]  # type: ignore[index]

    plain = hits(1)
    assert plain
    for boost in (2.0**-20, 0.5, 2.0, 1024.0, 2.0**20):
        assert hits(boost) == [(law, score * boost) for law, score in plain], boost
    raw.close()


def test_a_boost_from_a_query_around_it_keeps_the_order_or_is_refused(state: Loaded) -> None:
    """A `bool`'s boost reaches the lawindex query's weight: its floats are made from the exact score times it, so
    any boost keeps the order, and one that would overflow a float is refused (it once made every score Infinity)."""
    raw = Raw(state.url)
    question = "how far from a fire hydrant can i park"
    want = reference.ask(state.corpus, question, 20).ids()
    for boost in (3.0, 0.1, 1e-30, 1e-40, 1e30):
        body = {
            "size": 20,
            "_source": ["id"],
            "query": {"bool": {"must": [{"lawindex": {"question": question}}], "boost": boost}},
        }
        reply = raw.send("POST", f"/{state.alias}/_search", body)
        assert reply.status == 200, (boost, reply.body)
        assert [str(h["_source"]["id"]) for h in reply.body["hits"]["hits"]] == want, boost  # type: ignore[index]
    body = {"query": {"bool": {"must": [{"lawindex": {"question": question}}], "boost": 3e38}}}
    _refused(raw.send("POST", f"/{state.alias}/_search", body), "[lawindex] boost: ", "overflows a float")
    raw.close()


def _hybrid(question: str, rrf_k: int, words_weight: float, meaning_weight: float) -> Request:
    """The reference engine's request of `question` to the `state` fixture's AL by hybrid with this fusion, 8 laws."""
    return Request("AL", question, Way.hybrid, 8, Fusion(rrf_k, words_weight, meaning_weight))


def test_weights_at_the_contracts_bounds_answer_as_the_reference(state: Loaded) -> None:
    raw = Raw(state.url)
    question = "how far from a fire hydrant can i park"
    for words_weight, meaning_weight, rrf_k in ((1e6, 1e-6, 1), (1e-6, 1e6, 10_000), (0, 1e6, 5), (1e6, 0, 60)):
        query = {"question": question, "by": "hybrid", "rrf_k": rrf_k, "words_weight": words_weight,
                 "meaning_weight": meaning_weight}  # fmt: skip
        reply = raw.search(state.alias, query, size=8, _source=["id"])
        assert reply.status == 200, (reply.status, reply.body)
        got = [str(h["_source"]["id"]) for h in reply.body["hits"]["hits"]]  # type: ignore[index]
        expected = meaning.answer(state.corpus, _hybrid(question, rrf_k, words_weight, meaning_weight)).ids()
        assert got == expected, (words_weight, meaning_weight, rrf_k)
    raw.close()


# Weights the contract takes (0, or 1e-6 to 1e6) and ones it refuses (between 0 and 1e-6, past 1e6 up to the
# largest double), k over its range, boosts that are powers of two: issue 44's property, plugin against reference.
_TAKEN = st.one_of(st.floats(1e-6, 1e6), st.sampled_from([1e-6, 1e6, 0.0]))
_REFUSED = st.one_of(
    st.floats(0.0, 1e-6, exclude_min=True, exclude_max=True), st.floats(1e6, 1.7976931348623157e308, exclude_min=True)
)
FUSIONS = int(os.environ.get("LAWINDEX_FUSION_EXAMPLES", "80"))


def test_hybrid_over_the_contracts_weights_and_k_is_the_reference_and_past_them_a_400(state: Loaded) -> None:
    raw = Raw(state.url)
    questions = default_questions(state.corpus)[:12]
    counted = {"answered": 0, "refused": 0}

    @settings(max_examples=FUSIONS, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        question=st.sampled_from(questions),
        weights=st.sampled_from([(_TAKEN, _TAKEN)] * 3 + [(_REFUSED, _TAKEN), (_TAKEN, _REFUSED)]).flatmap(
            lambda pair: st.tuples(*pair)
        ),
        rrf_k=st.integers(1, 10_000),
        power=st.integers(-20, 20),
    )
    def one(question: str, weights: tuple[float, float], rrf_k: int, power: int) -> None:
        ww, mw = weights
        query = {"question": question, "by": "hybrid", "rrf_k": rrf_k, "words_weight": ww, "meaning_weight": mw,
                 "boost": 2.0**power}  # fmt: skip
        reply = raw.search(state.alias, query, size=8, _source=["id"])
        bad = [name for name, w in (("words_weight", ww), ("meaning_weight", mw)) if w != 0 and not 1e-6 <= w <= 1e6]
        if bad:
            assert reply.status == 400 and reply.reason().startswith(f"[lawindex] {bad[0]}: "), (query, reply.body)
            counted["refused"] += 1
        elif ww == 0 and mw == 0:
            assert reply.status == 400 and reply.reason() == contract("weights_both_zero"), (query, reply.body)
        else:
            assert reply.status == 200, (query, reply.body)
            got = [str(hit["_source"]["id"]) for hit in reply.body["hits"]["hits"]]  # type: ignore[index]
            assert got == meaning.answer(state.corpus, _hybrid(question, rrf_k, ww, mw)).ids(), query
            counted["answered"] += 1

    one()
    print(f"hybrid on the plugin: {counted['answered']} answers as the reference, {counted['refused']} refusals")
    assert counted["answered"] > 0 and counted["refused"] > 0
    raw.close()


@pytest.mark.parametrize("question", NOTHING_TO_EMBED)
def test_a_question_with_nothing_to_embed_finds_nothing_whichever_way(state: Loaded, question: str) -> None:
    """No letter or digit once lowercased (the spec's words() view): near no row (`" "` once gave 8 hits by
    meaning), and hybrid is words' part alone, which is none."""
    raw = Raw(state.url)
    for by in ("words", "meaning", "hybrid"):
        reply = raw.search(state.alias, {"question": question, "by": by}, size=8)
        assert reply.status == 200, (reply.status, reply.body)
        assert reply.body["hits"]["hits"] == [], (by, question)  # type: ignore[index]
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
