"""The analyzer's Python twin: the spec's `words()` (docs/contract.md), exactly.

mappings/laws.json builds the same analysis in OpenSearch from stock parts; the integration tests hold
the two equal on every law of every corpus and on generated Unicode.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from indexer.retrieval.corpus import Law

# Words that say nothing about which law is meant. "park" and "far" stay: in a question about road
# law they are the whole question. The spec's list, in the spec's order.
# The spec's own string, so that the two can be compared by eye.
_SPEC_STOP = (
    "a an and are as at be by can could do does for from how i if in is it its me my of on or should so "
    "that the their them there this to was what when where which who why will with would you your"
)
STOP = frozenset(_SPEC_STOP.split(" "))

_TOKEN = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """The meaningful words of `text`: lowercased runs of [a-z0-9], stopwords dropped, plurals cut."""
    # str.lower() is JavaScript's toLowerCase() here: both apply Unicode's full case mapping, so "İ"
    # becomes "i" + U+0307 (a word break after the i) and Kelvin's "K" becomes "k" in both.
    return [
        # "hydrants" must find "hydrant"; "bus" must not become "bu".
        word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
        for word in _TOKEN.findall(text.lower())
        if word not in STOP
    ]


def ranked(law: Law) -> bool:
    """True for a law ranked by words: every kind but `process`, the rows of the state's own pages."""
    # Every page row carries its family's question, and five of them a family would fill the
    # shortlist for any question that shares words with it. A page row is reached by its family.
    return law.kind != "process"


def ranked_text(law: Law) -> str:
    """The text a ranked law is found by: its law, its question and its concept, as the spec joins them."""
    return f"{law.law} {law.question} {law.concept.replace('-', ' ')}"


# ---------------------------------------------------------------------------------------------------
# words() at corpus scale. words() is a regex and a list comprehension per text: 150 ms for Texas's
# 6,000 laws. `WordNumbers` makes the same words from C-level string operations over many texts at once,
# judges each distinct raw token once (stopword, plural), and gives each word as a number (its place among
# the distinct words, in the order first seen), which is what counting needs;
# tests/unit/test_words.py proves `words_of_texts` equal to words() on generated Unicode text.
_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789")
_SEPARATOR = 0  # NUL: joins the texts; kept by the translation, so it still separates them after it
_NOT_ALNUM_TO_SPACE = bytes(c if c in _ALNUM or c == _SEPARATOR else 0x20 for c in range(256))
# What WordNumbers gives for a stopword, and between two texts.
STOPWORD = -1
TEXT_END = -2


class WordNumbers(dict[str, int]):
    """raw token -> the place in `words` of the word words() makes of it, STOPWORD for a stopword, and
    TEXT_END for the separator; filled on first sight, so that the words are numbered in the order they
    first appear, over every text it is given."""

    def __init__(self) -> None:
        super().__init__({"\0": TEXT_END})
        self.words: dict[str, int] = {}

    def __missing__(self, raw: str) -> int:
        if raw in STOP:
            place = STOPWORD
        else:
            word = raw[:-1] if len(raw) > 3 and raw.endswith("s") and not raw.endswith("ss") else raw
            place = self.words.setdefault(word, len(self.words))
        self[raw] = place
        return place

    def numbers(self, texts: Sequence[str]) -> Iterator[int]:
        """Every raw token of `texts`, text after text, as its number, with TEXT_END between two texts:
        the words of a text, in order, are the words at its numbers that are not negative (`words()`)."""
        joined = "\0".join(texts)
        # Lowercasing the joined texts is lowercasing each: the only context-dependent mapping (Greek
        # final sigma) yields a letter that is not [a-z0-9] either way. A NUL inside a text would split
        # it in two: then each text on its own, its NULs spaces.
        if joined.count("\0") == max(0, len(texts) - 1):
            spaced = _spaced(joined)
        else:
            spaced = "\0".join(_spaced(text.replace("\0", " ")) for text in texts)
        return map(self.__getitem__, spaced.replace("\0", " \0 ").split())


def _spaced(text: str) -> str:
    """`text` lowercased as words() lowercases it (full Unicode case mapping, so "K" (Kelvin) is "k"),
    with every character but [a-z0-9] (and NUL) a space; a non-ASCII character first becomes "?"."""
    return text.lower().encode("ascii", "replace").translate(_NOT_ALNUM_TO_SPACE).decode("ascii")


def words_of_texts(texts: Sequence[str]) -> list[list[str]]:
    """`[words(text) for text in texts]`, from WordNumbers' numbers (what the tests hold equal to words())."""
    numbered = WordNumbers()
    places = list(numbered.numbers(texts))
    vocabulary = list(numbered.words)
    result: list[list[str]] = [[] for _ in texts]
    text = 0
    for place in places:
        if place >= 0:
            result[text].append(vocabulary[place])
        elif place == TEXT_END:
            text += 1
    return result
