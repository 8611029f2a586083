"""The spec's `spelledAs()` (docs/contract.md), exactly, by looking up what a word can stand for.

A learner types on a phone: a word the laws do not use stands for the laws' words it contains
("firehydrant" → fire, hydrant) or is one edit away from ("behing" → behind). The spec finds them by
scanning the whole vocabulary for every unknown word (3 ms a word on Texas's 6,000 laws, a second on a
million-word state). Turned around, it needs no index: every word the spec can find for an unknown word
`w` of n letters is one of

- its substrings of 4 letters or more (shorter than n: one as long is `w` itself, which is unknown), at
  most n² / 2 of them, and no longer than the vocabulary's longest word;
- for n >= 5, its deletions (n), substitutions and insertions of a letter the vocabulary uses (36 · n and
  36 · (n + 1) for words of [a-z0-9]): exactly the words one insertion, deletion or substitution away,
  which is the spec's `oneEditApart` with `|known.length - word.length| <= 1`.

About 75 · n candidates, looked up at once in the vocabulary's sorted blocks (indexer.retrieval.lexicon), with
nothing built first: the index a deletion neighbourhood needed was 10 s to build for a million words.
The words found are returned in vocabulary (insertion) order, each once, as the spec's loop yields them:
the scorer sums terms in that order, and float addition is not associative.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TypeVar

from indexer.retrieval.lexicon import Lexicon

# The spec's thresholds: a contained word must have 4 letters or more ("bus" inside "business" is not
# meant), an unknown word must have 4 letters to be looked into and 5 to be corrected by one edit.
MIN_CONTAINED = 4
MIN_LOOKED_INTO = 4
MIN_CORRECTED = 5
# How many words a vocabulary remembers the spelling of, and of how many letters at most: a few MB at
# most, and a learner's words come back (a generated Texas's 3,000 questions ask 3,358 unknown words,
# 2,411 of them distinct).
REMEMBERED = 1 << 16
REMEMBERED_LETTERS = 32

T = TypeVar("T")


def one_edit_apart(a: str, b: str) -> bool:
    """True when one insertion, deletion or substitution turns `a` into `b`: the spec's `oneEditApart`.

    (The spec's literal port in the tests keeps its own copy, on purpose: it is the oracle this one is
    held to, and an oracle that imports what it checks checks nothing.)
    """
    if a == b:
        return False
    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :]
    return a[i + 1 :] == b[i:] if len(a) > len(b) else a[i:] == b[i + 1 :]


class Vocabulary:
    """The laws' words in insertion order, looked up for the spec's compound and one-edit matches."""

    __slots__ = ("_building", "_known", "_lexicon", "_remembered", "_words")

    def __init__(self, words: Iterable[str] | Mapping[str, int] | Lexicon) -> None:
        # A lexicon (the stored one of an index: indexer.opensearch.cluster.stored_lexicon) is looked up as it is.
        # Words in memory (the reference engine's counts) answer "is it a word, of what df" themselves,
        # and their lexicon is made on the first unknown word only: a question of known words needs none.
        self._lexicon: Lexicon | None = words if isinstance(words, Lexicon) else None
        self._words: Mapping[str, int] | None = None
        if not isinstance(words, Lexicon):
            self._words = words if isinstance(words, Mapping) else dict.fromkeys(words, 0)
        self._building = threading.Lock()  # one lexicon made however many first questions want it
        # Looked up already: known word -> (place, df); unknown word -> what it stands for.
        self._known: dict[str, tuple[int, int]] = {}
        self._remembered: dict[str, tuple[str, ...]] = {}

    @property
    def lexicon(self) -> Lexicon:
        """The words as sorted blocks per length (indexer.retrieval.lexicon), made on first use."""
        if self._lexicon is None:
            with self._building:
                if self._lexicon is None:
                    assert self._words is not None
                    self._lexicon = Lexicon.of(self._words)
        return self._lexicon

    @property
    def rank(self) -> Mapping[str, int]:
        """word -> its place in the vocabulary's insertion order (looked up word by word)."""
        return _Looked(self, self.place)

    @property
    def frequencies(self) -> Mapping[str, int]:
        """word -> how many ranked laws have it, in the vocabulary's order (looked up word by word)."""
        return self._words if self._words is not None else _Looked(self, self.df)

    @classmethod
    def of(cls, vocabulary: Mapping[str, int] | Vocabulary) -> Vocabulary:
        """`vocabulary` itself, or a Vocabulary of a {word: df} mapping's keys in their order."""
        return vocabulary if isinstance(vocabulary, Vocabulary) else cls(vocabulary)

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        if self._words is not None:
            return word in self._words
        return self.known(word) is not None

    def __len__(self) -> int:
        return len(self._words) if self._words is not None else len(self.lexicon)

    def known(self, word: str) -> tuple[int, int] | None:
        """(place, df) of a word of the vocabulary; None for any other."""
        found = self._known.get(word)
        if found is None:
            if self._words is not None and word not in self._words:
                return None
            found = self.lexicon.get(word)
            if found is not None:
                self._remember(self._known, word, found)
        return found

    def place(self, word: str) -> int:
        """The place of a word of the vocabulary in its order (KeyError for any other)."""
        found = self.known(word)
        if found is None:
            raise KeyError(word)
        return found[0]

    def df(self, word: str) -> int:
        """How many ranked laws have a word of the vocabulary (KeyError for any other)."""
        if self._words is not None:
            return self._words[word]
        found = self.known(word)
        if found is None:
            raise KeyError(word)
        return found[1]

    def spelled_as(self, word: str) -> list[str]:
        """The known words `word` stands for, in vocabulary order: [word] if known, else what it contains
        or is one edit from; [] for an unknown word under 4 letters."""
        if word in self:
            return [word]
        return list(self._unknown(word))

    def terms(self, asked: Iterable[str]) -> list[str]:
        """The spec's `[...new Set(asked.flatMap(spelledAs))]`: the known words the asked words stand for,
        distinct, in the order the spec scores them (the first word's first, each one where it first
        came)."""
        asked = list(asked)
        if self._words is None:
            self._read_ahead(asked)
        found: dict[str, None] = {}
        for word in asked:
            if word in self:
                found[word] = None
            else:
                for known in self._unknown(word):
                    found[known] = None  # a word already found keeps its place, as in a Set
        return list(found)

    def _read_ahead(self, asked: list[str]) -> None:
        """The stored blocks a question's words reach, read in two requests at most instead of one per length:
        the lengths of the words themselves, then every length the unknown ones reach (their substrings and
        one-edit neighbours), so that concurrent or first questions cost one statistics fetch and two reads."""
        lexicon = self.lexicon
        fresh = [word for word in asked if word not in self._known and word not in self._remembered]
        lexicon.read({len(word.encode()) for word in fresh})
        reached: set[int] = set()
        for word in fresh:
            size = len(word.encode())
            if size < MIN_LOOKED_INTO or lexicon.get(word) is not None:
                continue
            reached.update(range(MIN_CONTAINED, size))
            if size >= MIN_CORRECTED:
                reached.update((size - 1, size, size + 1))
        lexicon.read(reached)

    @staticmethod
    def _remember(kept: dict[str, T], word: str, value: T) -> None:
        # Bounded: a service asked random strings stops adding, and a long "word" is not kept.
        if len(word) <= REMEMBERED_LETTERS and len(kept) < REMEMBERED:
            kept[word] = value

    def _unknown(self, word: str) -> tuple[str, ...]:
        """What an unknown `word` stands for, remembered."""
        spelled = self._remembered.get(word)
        if spelled is None:
            spelled = self._spell(word)
            self._remember(self._remembered, word, spelled)
        return spelled

    def _spell(self, word: str) -> tuple[str, ...]:
        size = len(word)
        if size < MIN_LOOKED_INTO:
            return ()
        lexicon = self.lexicon
        candidates: set[str] = set()
        # Contained: every substring of 4 letters or more, shorter than the word and no longer than the
        # longest known word (a 2,000-letter "word" costs 2,000 per length, not 2,000 squared over 2).
        for length in range(MIN_CONTAINED, min(size - 1, lexicon.longest) + 1):
            candidates.update(word[start : start + length] for start in range(size - length + 1))
        # One edit: a letter too many, a letter changed, a letter too few; only the letters some known
        # word has can make a known word. No known word is longer than `longest`.
        if size >= MIN_CORRECTED and size - 1 <= lexicon.longest:
            alphabet = lexicon.alphabet
            for i in range(size):
                head, tail = word[:i], word[i + 1 :]
                candidates.add(head + tail)
                candidates.update([head + letter + tail for letter in alphabet])
            if size + 1 <= lexicon.longest:
                for i in range(size + 1):
                    head, tail = word[:i], word[i:]
                    candidates.update([head + letter + tail for letter in alphabet])
        candidates.discard(word)
        found = lexicon.find(candidates)
        for known, value in found.items():
            self._remember(self._known, known, value)
        return tuple(sorted(found, key=lambda known: found[known][0]))


class _Looked(Mapping[str, int]):
    """A Vocabulary's place or df of each word as a read-only mapping: a word is looked up (and remembered),
    never the whole vocabulary made a dict; iterating it reads every word, in the vocabulary's order."""

    __slots__ = ("_look", "_vocabulary")

    def __init__(self, vocabulary: Vocabulary, look: Callable[[str], int]) -> None:
        self._vocabulary = vocabulary
        self._look = look

    def __getitem__(self, word: str) -> int:
        return self._look(word)

    def __contains__(self, word: object) -> bool:
        return word in self._vocabulary

    def __iter__(self) -> Iterator[str]:
        return (word for word, _ in self._vocabulary.lexicon.in_order())

    def __len__(self) -> int:
        return len(self._vocabulary)


def spelled_as(word: str, vocabulary: Mapping[str, int] | Vocabulary) -> list[str]:
    """The spec's `spelledAs(word, vocabulary)`: what `word` stands for, in vocabulary order.

    Pass a `Vocabulary` built once; a plain {word: df} mapping is made one afresh on every call.
    """
    return Vocabulary.of(vocabulary).spelled_as(word)
