"""words(): the spec's tokeniser, stopwords and plural rule; its comments are the cases."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.opensearch.write import mappings
from indexer.retrieval.corpus import Law
from indexer.retrieval.words import _SPEC_STOP, _TOKEN, STOP, ranked, ranked_text, words, words_of_texts


def test_the_hydrant_question_leaves_four_words() -> None:
    assert words("how far from a fire hydrant can i park") == ["far", "fire", "hydrant", "park"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hydrants", ["hydrant"]),  # "hydrants" must find "hydrant"
        ("bus", ["bus"]),  # "bus" must not become "bu": three letters are kept whole
        ("buses", ["buse"]),  # the rule cuts one s, nothing cleverer
        ("class grass", ["class", "grass"]),  # ss is not a plural
        ("parks parking", ["park", "parking"]),  # only a final s is cut
        ("100s 4x4s", ["100", "4x4"]),  # digits are word characters
        ("abs", ["abs"]),  # exactly three letters: kept
        ("abcs", ["abc"]),  # four: cut
        ("whens", ["when"]),  # stopwords are dropped before plurals are cut, so this one survives
        ("ITS Its its", []),  # a stopword in any case
        ("Stop-sign; 15ft.", ["stop", "sign", "15ft"]),
        ("", []),
    ],
)
def test_the_rules(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_javascript_lowercasing_traps() -> None:
    # JavaScript's toLowerCase (and Python's lower) turn İ into i + U+0307: "i" is a stopword, and the
    # combining dot ends the word. Kelvin's K becomes k. The long s stays outside [a-z].
    assert words("İstanbul") == ["stanbul"]
    assert words("\u212aelvin") == ["kelvin"]
    assert words("ſtop") == ["top"]
    assert words("café") == ["caf"]


def test_the_stopword_list_is_the_spec_s() -> None:
    assert len(STOP) == 47
    assert {"park", "far", "must", "not"}.isdisjoint(STOP)


def test_process_rows_are_not_ranked_and_the_concept_is_split() -> None:
    row = {"id": "X", "law": "Park here.", "question": "Where?", "concept": "parking-fire-hydrant"}
    assert not ranked(Law(kind="process", **row))
    assert ranked(Law(kind="statute", **row))
    assert ranked_text(Law(kind="handbook", **row)) == "Park here. Where? parking fire hydrant"


# ---- words() at corpus scale ----------------------------------------------------------------------

_texts = st.lists(st.text(max_size=60) | st.sampled_from(["İstanbul PARKS", "\u212aelvin bus", "ſtop", "a\0b"]))


@settings(max_examples=300, deadline=None)
@given(_texts)
def test_words_of_texts_is_words_of_each(texts: list[str]) -> None:
    assert words_of_texts(texts) == [words(text) for text in texts]


def test_words_of_texts_on_case_mapping_traps_and_separators() -> None:
    texts = ["İstanbul PARKS", "\u212aelvin bus", "ſtop hydrantſ", "Straße FIRES", "x\u0307y", "fire\0hydrants", ""]
    assert words_of_texts(texts) == [words(text) for text in texts]
    assert words_of_texts(texts)[5] == ["fire", "hydrant"]  # a NUL inside a law separates words, as in words()
    assert words_of_texts([]) == []


# ---- mappings/laws.json's analyzer is words() -----------------------------------------------------

ANALYSIS = mappings.laws_index()["settings"]["index"]["analysis"]


def _char_mappings() -> dict[str, str]:
    """The mapping char filter's rules, `\\uXXXX` escapes decoded as OpenSearch decodes them."""
    rules = {}
    for rule in ANALYSIS["char_filter"]["spec_lowercase"]["mappings"]:
        left, right = rule.split("=>")
        rules[left.encode().decode("unicode_escape")] = right.encode().decode("unicode_escape")
    return rules


def analyze(text: str) -> list[str]:
    """laws.json's `spec_words` analyzer, run in Python from its own definition: char filter, tokenizer,
    then its token filters in their order."""
    analyzer = ANALYSIS["analyzer"]["spec_words"]
    assert analyzer["char_filter"] == ["spec_lowercase"]
    rules = _char_mappings()
    text = "".join(rules.get(char, char) for char in text)
    tokenizer = ANALYSIS["tokenizer"][analyzer["tokenizer"]]
    assert tokenizer["type"] == "pattern" and tokenizer["group"] == 0
    tokens = re.findall(tokenizer["pattern"], text)
    for name in analyzer["filter"]:
        spec = ANALYSIS["filter"][name]
        if spec["type"] == "stop":
            assert spec["ignore_case"] is False
            tokens = [token for token in tokens if token not in set(spec["stopwords"])]
        elif spec["type"] == "pattern_replace":
            replacement = spec["replacement"].replace("$1", r"\1")
            tokens = [re.sub(spec["pattern"], replacement, token) for token in tokens]
        else:
            raise AssertionError(f"a token filter words() does not have: {name} ({spec['type']})")
    return tokens


def test_the_stopwords_are_the_spec_s_in_its_order() -> None:
    assert ANALYSIS["filter"]["spec_stop"]["stopwords"] == _SPEC_STOP.split(" ")
    assert set(ANALYSIS["filter"]["spec_stop"]["stopwords"]) == STOP


def test_the_token_pattern_is_words_own() -> None:
    assert ANALYSIS["tokenizer"]["spec_runs"]["pattern"] == _TOKEN.pattern


def test_stopwords_go_before_the_plural_rule() -> None:
    # "whens" is not a stopword, so it survives the stop filter and the plural rule makes it "when".
    assert ANALYSIS["analyzer"]["spec_words"]["filter"] == ["spec_stop", "spec_plural"]
    assert analyze("whens its") == words("whens its") == ["when"]


def test_the_plural_rule_is_words_own_on_every_short_token() -> None:
    # Every token of up to 6 characters over letters that exercise the rule: s, ss, short words, digits.
    for size in range(1, 7):
        for letters in itertools.product("as1", repeat=size):
            token = "".join(letters)
            assert analyze(token) == words(token), token


def test_the_char_filter_lowercases_exactly_what_javascript_lowercases_into_ascii() -> None:
    # Only characters whose lowercase holds a letter of [a-z] matter to the tokenizer; the filter must
    # map every one of them, to exactly its lowercase.
    needed = {
        chr(code): chr(code).lower()
        for code in range(0x110000)
        if not 0xD800 <= code <= 0xDFFF and chr(code) not in "abcdefghijklmnopqrstuvwxyz"
        and any("a" <= c <= "z" for c in chr(code).lower())
    }  # fmt: skip
    assert _char_mappings() == needed


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("aAbsSzZ019 -.'İ\u212aſéßİ\u0307\0"), max_size=40) | st.text(max_size=40))
def test_the_analyzer_is_words(text: str) -> None:
    assert analyze(text) == words(text)
