"""The analyzer in mappings/laws.json is the exact twin of words(): OpenSearch's `_analyze` with
`spec_words`, on an index made from laws.json, gives the words of indexer.retrieval.words for every law of every
corpus and for generated text where Java and Python differ (İ, Kelvin's K, long s, combining marks).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from opensearchpy import OpenSearch

from indexer.opensearch.write import mappings
from indexer.retrieval.corpus import read_corpora
from indexer.retrieval.words import ranked_text, words
from tests.integration.support import drop_namespace, unique_namespace

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"

# `_analyze` refuses to return more than index.analyze.max_token_count tokens (10,000 by default) in
# one answer; a batch is cut well below it, counting raw runs (an upper bound on the words that survive).
_BATCH_TOKENS = 5000


@pytest.fixture(scope="module")
def analyzing(opensearch: OpenSearch) -> Iterator[str]:
    """An index created from laws.json, in a namespace of its own: the analyzer as a load builds it."""
    namespace = unique_namespace()
    index = f"{namespace}-analyzer"
    opensearch.indices.create(index=index, body=mappings.laws_index())
    try:
        yield index
    finally:
        drop_namespace(opensearch, namespace)


def _utf16_length(text: str) -> int:
    # Lucene's offsets count Java chars: UTF-16 code units, two for a character outside the BMP.
    return len(text.encode("utf-16-le")) // 2


def analyzed(client: OpenSearch, index: str, texts: Sequence[str]) -> list[list[str]]:
    """The tokens `spec_words` makes of each of `texts`, in as few `_analyze` calls as the token limit allows.

    Given a list, `_analyze` analyzes the texts as the values of one field and concatenates their
    tokens; each value's offsets start one past the end of the previous value (the analyzer's offset
    gap), so a token's start offset tells which text it came from.
    """
    result: list[list[str]] = []
    batch: list[str] = []
    budget = 0
    for text in [*texts, None]:
        # Runs of [a-z0-9] are at most one more than the characters between them.
        size = 0 if text is None else 1 + sum(1 for c in text if not (c.isascii() and c.isalnum()))
        if batch and (text is None or budget + size > _BATCH_TOKENS):
            answer = client.indices.analyze(index=index, body={"analyzer": "spec_words", "text": batch})
            starts, begin = [], 0
            for value in batch:
                starts.append(begin)
                begin += _utf16_length(value) + 1
            split: list[list[str]] = [[] for _ in batch]
            place = 0
            for token in answer["tokens"]:
                while place + 1 < len(starts) and token["start_offset"] >= starts[place + 1]:
                    place += 1
                split[place].append(token["token"])
            result.extend(split)
            batch, budget = [], 0
        if text is not None:
            batch.append(text)
            budget += size
    return result


def test_batched_analyze_splits_per_text(opensearch: OpenSearch, analyzing: str) -> None:
    # The splitting itself, on texts whose words are known by hand: empty texts, all-stopword texts and
    # a character outside the BMP (two UTF-16 units) must not shift a token into its neighbour.
    texts = ["Hydrants and buses", "", "the of a", "😀 Kelvin's cats", "İs ſtops", "x"]
    assert analyzed(opensearch, analyzing, texts) == [
        ["hydrant", "buse"],
        [],
        [],
        ["kelvin", "s", "cat"],
        ["s", "top"],
        ["x"],
    ]


def test_every_law_of_every_corpus(opensearch: OpenSearch, analyzing: str) -> None:
    corpora = read_corpora(CORPORA)
    texts = [ranked_text(law) for corpus in corpora for law in corpus.laws]
    assert len(texts) > 100, "the sample corpora are missing"
    got = analyzed(opensearch, analyzing, texts)
    mismatches = [(text, tokens, words(text)) for text, tokens in zip(texts, got, strict=True) if tokens != words(text)]
    assert mismatches == []


# Text where the two lowercasings and regex engines could part: the letters whose case mapping leaves
# ASCII (İ → i + U+0307, Kelvin's K → k), the long s a case-insensitive Java [a-z] would take, other
# scripts' cased letters, ligatures, combining marks, emoji (two UTF-16 units), digits of other scripts,
# stopwords and plurals.
_TRAPS = [
    "\u0130",
    "\u212a",
    "\u017f",
    "\u0131",
    "\u0307",
    "\u0301",
    "\u0308",
    "\ufb01",
    "\ufb06",
    "ß",
    "ẞ",
    "Σ",
    "ς",
    "Ω",
    "Å",
    "ǅ",
    "😀",
    "👩‍🚒",
    "١٢٣",
    "１",
    "Ａ",
    "ⓐ",
    "ℌ",
    "ﬀ",
    "ǰ",
    "ŉ",
]
_WORDS = ["the", "is", "its", "bus", "buses", "hydrants", "pass", "ares", "ss", "s", "its's", "x1s", "TEST", "ThEs"]
_piece = st.one_of(
    st.sampled_from(_TRAPS),
    st.sampled_from(_WORDS),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=8),
    st.text(alphabet=" \t\n.,;:-_'\"!?()/&#", min_size=1, max_size=3),
    # Any character a UTF-8 corpus file can hold (no lone surrogates).
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=4),
)
_texts = st.lists(_piece, max_size=20).map("".join)


# Each call is one `_analyze` round trip of up to 40 texts: 200 of them take a second or two.
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_texts, min_size=1, max_size=40))
@example(["\u0130stanbul KELVIN \u212aelvin \u017ftop", "a\u0130b\u0130s", "caf\u00e9S hydrants bus"])
# Every trap alone, and between letters and plurals, so none of them depends on the draw.
@example(_TRAPS + [f"Ab{trap}cds{trap}S" for trap in _TRAPS])
def test_generated_text(opensearch: OpenSearch, analyzing: str, texts: list[str]) -> None:
    assert analyzed(opensearch, analyzing, texts) == [words(text) for text in texts]
