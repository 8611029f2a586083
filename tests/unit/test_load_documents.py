"""documents(): the bulk actions a load sends for a state, on a corpus small enough to work out by hand."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from indexer.opensearch.cluster import stored_lexicon
from indexer.opensearch.cluster.connection import DEFAULT_NAMESPACE
from indexer.opensearch.cluster.schema import STATISTICS_ID, law_id
from indexer.opensearch.trust import sealing
from indexer.opensearch.write.index_body import documents
from indexer.retrieval.corpus import Corpus, Law
from indexer.retrieval.reference import statistics

LAWS = (
    Law(
        id="MD-S01",
        kind="statute",
        law="Park 15 feet from fire hydrants.",
        question="How far from a hydrant can I park?",
        concept="parking-fire-hydrant",
        source="Md. Code 21-1003",
    ),
    Law(
        id="MD-P01",
        kind="process",
        law="Renew a license online.",
        question="How do I renew my license?",
        concept="license-renewal",
        family="renewal",
    ),
    Law(id="MD-S02", kind="handbook", law="The buses stop.", question="Is it?", concept="bus-stop"),
    # Every word a stopword: ranked, of length 0.
    Law(id="MD-S03", kind="regulation", law="It is what it is.", question="Can you?", concept="the"),
)


def _actions() -> list[dict[str, Any]]:
    corpus = Corpus("MD", Path("corpora/MD.jsonl"), LAWS, sha256="0" * 64)
    return list(documents(corpus, statistics(LAWS)))


def test_one_document_per_law_in_corpus_order_then_the_statistics() -> None:
    actions = _actions()
    assert [action["_id"] for action in actions] == [
        "law:MD-S01",
        "law:MD-P01",
        "law:MD-S02",
        "law:MD-S03",
        STATISTICS_ID,
    ]
    assert [action["_source"].get("order") for action in actions[:-1]] == [0, 1, 2, 3]
    assert law_id("TX-1") == "law:TX-1"


def test_a_ranked_law_carries_its_ranked_text_and_its_exact_counts() -> None:
    source = _actions()[0]["_source"]
    assert source["words"] == "Park 15 feet from fire hydrants. How far from a hydrant can I park? parking fire hydrant"
    assert source["state"] == "MD"
    assert source["kind"] == "statute"
    assert source["source"] == "Md. Code 21-1003"
    # park 15 feet fire hydrant far hydrant park parking fire hydrant: 11 words.
    assert source["length"] == 11
    assert source["counts"] == {
        "park": 2,
        "15": 1,
        "feet": 1,
        "fire": 2,
        "hydrant": 3,
        "far": 1,
        "parking": 1,
    }


def test_a_process_row_has_no_ranked_text_at_all() -> None:
    source = _actions()[1]["_source"]
    assert "words" not in source
    assert source["family"] == "renewal"
    assert source["length"] == 0
    assert source["counts"] == {}
    # Stored for what is shown, never ranked.
    assert source["question"] == "How do I renew my license?"


def test_a_ranked_law_of_stopwords_only_still_carries_its_text() -> None:
    source = _actions()[3]["_source"]
    assert source["words"] == "It is what it is. Can you? the"
    assert source["length"] == 0
    assert source["counts"] == {}


def test_the_statistics_document() -> None:
    last = _actions()[-1]
    assert last["_id"] == STATISTICS_ID
    assert last["_source"]["kind"] == "statistics"
    assert "words" not in last["_source"]
    stats = last["_source"]["statistics"]
    # Ranked: S01 (11 words), S02 (buse stop bus stop: 4 words), S03 (0 words); the process row is not.
    assert stats["size"] == 3
    assert stats["average"] == 15 / 3
    # Lucene's N leaves out S03, which has no term at all.
    assert stats["doc_count"] == 2
    assert stats["total_length"] == 15
    # In order of first appearance, as the spec's Map is; the process row's words are in none. Read back
    # from the stored blocks (a field per length in bytes) as the query side reads them.
    blocks = last["_source"][stored_lexicon.FIELD]
    assert sorted(blocks) == ["2", "3", "4", "7"] == sorted(stats["words"]["blocks"])
    lexicon = stored_lexicon.read(
        stats["words"], lambda fields: {name: [blocks[name.split(".")[1]]] for name in fields}
    )
    assert lexicon.in_order() == [
        ("park", 1),
        ("15", 1),
        ("feet", 1),
        ("fire", 1),
        ("hydrant", 1),
        ("far", 1),
        ("parking", 1),
        ("buse", 1),
        ("stop", 1),
        ("bus", 1),
    ]
    # The blocks are not in the seal's JSON: the statistics as OpenSearch returns them (the blocks left out
    # of _source) are whole; a block altered is refused by its digest.
    without = {key: value for key, value in last["_source"].items() if key != stored_lexicon.FIELD}
    assert sealing.seal_problem(without, "", "MD", DEFAULT_NAMESPACE) is None
    altered = dict(blocks, **{"4": base64.b64encode(b"fare" + base64.b64decode(blocks["4"])[4:]).decode()})
    with pytest.raises(stored_lexicon.AlteredBlock, match="digest does not match"):
        stored_lexicon.read(
            stats["words"], lambda fields: {name: [altered[name.split(".")[1]]] for name in fields}
        ).get("fire")


def test_the_buses_law() -> None:
    source = _actions()[2]["_source"]
    # "The buses stop. Is it? bus stop": buses -> buse (the spec's rule, not English), bus stays.
    assert source["counts"] == {"buse": 1, "stop": 2, "bus": 1}
    assert source["length"] == 4
