"""The lexicon look-up (indexer/retrieval/lexicon.py, indexer/retrieval/spelling.py) against the spec's linear
scan (tests/spec_port.py's spelled_as, a plain port of the spec's loop), on vocabularies made to
sit on the spec's edges: substrings of exactly 4 letters (and of 3, which never count), words of 5 letters
one edit away (and of 4, which are never corrected), swaps (two edits), duplicates, and words whose
first appearance decides the order. Both the lexicon made in memory and the one read back from its
stored blocks (indexer/opensearch/cluster/stored_lexicon.py, what `ask` on OpenSearch looks up) are checked."""

from __future__ import annotations

import base64
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.opensearch.cluster import stored_lexicon
from indexer.retrieval.lexicon import Lexicon
from indexer.retrieval.spelling import Vocabulary
from tests import spec_port

# The characters words() makes: [a-z0-9]. A small part of it as well, so that collisions are common.
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
_letters = st.sampled_from("abc01")
_word = st.text(alphabet="abc01", min_size=1, max_size=9)


def _edits(word: str, rng: random.Random) -> list[str]:
    """Words around `word` on the spec's edges: its substrings of 3-5 letters, its deletions, insertions
    and substitutions (one edit), a swap of two neighbours (two edits), and itself with a letter doubled."""
    out = [word[i : i + n] for n in (3, 4, 5) for i in range(max(0, len(word) - n + 1))]
    for i in range(len(word) + 1):
        letter = rng.choice(_ALPHABET[:5] + "9")
        out.append(word[:i] + letter + word[i:])  # insertion
        if i < len(word):
            out.append(word[:i] + word[i + 1 :])  # deletion
            out.append(word[:i] + letter + word[i + 1 :])  # substitution (maybe itself)
        if i + 1 < len(word):
            out.append(word[:i] + word[i + 1] + word[i] + word[i + 2 :])  # a swap
    return [known for known in out if known]


@st.composite
def _vocabulary_around(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """(a vocabulary in first-appearance order, with duplicates; the words asked of it)."""
    asked = draw(st.lists(st.text(alphabet="abc01", min_size=3, max_size=10), min_size=1, max_size=6))
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    near = [known for word in asked for known in _edits(word, rng)]
    extra = draw(st.lists(_word, max_size=20))
    words = near + extra
    rng.shuffle(words)
    # Duplicates: some words again, later: the first appearance keeps its place.
    words += rng.sample(words, k=min(len(words), draw(st.integers(0, 10))))
    # A word asked may itself be a word of the laws (then it stands for itself alone).
    if draw(st.booleans()):
        words.append(asked[0])
    return words, asked + [known for known in near[: draw(st.integers(0, 8))]]


def _stored(lexicon: Lexicon) -> Lexicon:
    """`lexicon` as `ask` on OpenSearch reads it: its blocks stored (base64) and read back per length."""
    summary, blocks = stored_lexicon.stored(lexicon)
    return stored_lexicon.read(summary, lambda fields: {name: [blocks[name.split(".")[1]]] for name in fields})


@settings(max_examples=400, deadline=None)
@given(_vocabulary_around())
def test_the_lookup_is_the_spec_scan_on_its_edges(case: tuple[list[str], list[str]]) -> None:
    words, asked = case
    spec_map = dict.fromkeys(words, 1)  # the spec's Map: each word where it first appeared
    in_memory = Vocabulary(spec_map)
    stored = Vocabulary(_stored(Lexicon.of(words)))
    listed = Vocabulary(words)  # an iterable with duplicates: first appearance
    for word in asked:
        expected = spec_port.spelled_as(word, spec_map)
        assert in_memory.spelled_as(word) == expected, word
        assert stored.spelled_as(word) == expected, word
        assert listed.spelled_as(word) == expected, word
    expansion = list(dict.fromkeys(known for word in asked for known in spec_port.spelled_as(word, spec_map)))
    assert stored.terms(asked) == expansion == in_memory.terms(asked)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=_ALPHABET, min_size=1, max_size=14), max_size=80), st.data())
def test_places_and_df_survive_storing(words: list[str], data: st.DataObject) -> None:
    vocabulary = {word: index + 1 for index, word in enumerate(dict.fromkeys(words))}
    lexicon = _stored(Lexicon.of(vocabulary))
    assert lexicon.in_order() == list(vocabulary.items())
    assert len(lexicon) == len(vocabulary)
    for place, word in enumerate(vocabulary):
        assert lexicon.get(word) == (place, vocabulary[word])
    missing = data.draw(st.text(alphabet=_ALPHABET, min_size=1, max_size=15))
    assert (lexicon.get(missing) is None) == (missing not in vocabulary)


def test_the_spec_s_own_examples_and_thresholds() -> None:
    laws = ["behind", "fire", "hydrant", "far", "park", "bus", "abcd", "abcde"]
    vocabulary = Vocabulary(_stored(Lexicon.of(laws)))
    assert vocabulary.spelled_as("behing") == ["behind"]
    assert vocabulary.spelled_as("firehydrant") == ["fire", "hydrant"]  # in the vocabulary's order
    assert vocabulary.spelled_as("hydrantfire") == ["fire", "hydrant"]  # not the word's
    assert vocabulary.spelled_as("busy") == []  # "bus" has 3 letters: never contained
    assert vocabulary.spelled_as("abce") == []  # 4 letters: contains nothing, never corrected
    assert vocabulary.spelled_as("abcdf") == ["abcd", "abcde"]  # contains abcd; one edit from abcde
    assert vocabulary.spelled_as("bacde") == []  # a swap is two edits
    assert vocabulary.spelled_as("fare") == []  # 4 letters, one edit from "far": not corrected


def test_a_block_altered_in_store_is_refused() -> None:
    summary, blocks = stored_lexicon.stored(Lexicon.of({"hydrant": 3, "behind": 2}))
    raw = bytearray(base64.b64decode(blocks["7"]))
    raw[-1] ^= 1  # the df of "hydrant"
    altered = {**blocks, "7": base64.b64encode(bytes(raw)).decode()}
    lexicon = stored_lexicon.read(summary, lambda fields: {name: [altered[name.split(".")[1]]] for name in fields})
    assert lexicon.get("behind") == (1, 2)  # another length's block is whole
    try:
        lexicon.get("hydrant")
    except stored_lexicon.AlteredBlock as error:
        assert "digest does not match" in str(error)
    else:
        raise AssertionError("an altered block was read")
