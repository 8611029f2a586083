"""`spelledAs()` of spec/retrieve.md, exactly, from an index built once per vocabulary.

A learner types on a phone: a word the laws do not use stands for the laws' words it contains
("firehydrant" → fire, hydrant) or is one edit away from ("behing" → behind). The spec finds them by
scanning the whole vocabulary for every unknown word, about 3 ms a word on Texas's 6,000 laws; here a
`Vocabulary` is built once and each unknown word costs a few dictionary look-ups:

- compounds: every substring of the word, of a length some known word of 4+ letters has, looked up in
  a set (the spec's `word.includes(known)`, turned around);
- one edit: a deletion neighbourhood (symmetric delete). Two words one insertion, deletion or
  substitution apart always share a key among {word} and {word less one letter}; candidates that share a
  key but are two edits apart (a swap: "ab"/"ba") are checked with the spec's `oneEditApart`.

The result is in vocabulary (insertion) order, as the spec's loop yields it: the scorer sums terms in
that order, and float addition is not associative.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# The spec's thresholds: a contained word must have 4 letters or more ("bus" inside "business" is not
# meant), an unknown word must have 4 letters to be looked into and 5 to be corrected by one edit.
MIN_CONTAINED = 4
MIN_LOOKED_INTO = 4
MIN_CORRECTED = 5
# How many unknown words a vocabulary remembers the spelling of, and of how many letters at most: a few
# MB at most.
REMEMBERED = 1 << 16
REMEMBERED_LETTERS = 32


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
    """The laws' words in insertion order, indexed for the spec's compound and one-edit matches."""

    __slots__ = ("_by_deletion", "_contained", "_contained_lengths", "_rank", "_remembered")

    def __init__(self, words: Iterable[str]) -> None:
        # rank: the place of each word in the vocabulary's insertion order (a dict keeps it).
        self._rank: dict[str, int] = {word: place for place, word in enumerate(dict.fromkeys(words))}
        # The compound and one-edit indexes are built on the first unknown word, not here: a word the
        # laws use needs neither, the loader never asks, and they are a sixth of Texas's statistics.
        self._contained: frozenset[str] | None = None
        self._contained_lengths: tuple[int, ...] = ()
        self._by_deletion: dict[str, str | list[str]] = {}
        self._remembered: dict[str, tuple[str, ...]] = {}  # unknown word -> what it stands for

    def _indexed(self) -> frozenset[str]:
        """The words a compound may contain, building both indexes first if they are not built yet.

        Two threads that meet an unbuilt index both build it and assign the same thing: no lock needed.
        """
        if self._contained is not None:
            return self._contained
        # deletion key -> the known word (or words) of MIN_CORRECTED - 1 letters or more that become it
        # by deleting one letter: no shorter word can be one edit from a word of MIN_CORRECTED letters.
        # One word is kept as itself and a list made only on a collision: three times faster to build.
        # The keys are made a position at a time over all the words of a length (a slice per word in
        # a comprehension), a fifth faster again: 38 ms for a generated Texas's 10,000 words. A list may
        # then name a word twice ("speed" loses either "e" to the same "sped"): its words are candidates,
        # gathered in a set.
        by_length: dict[int, list[str]] = {}
        for known in self._rank:
            if len(known) >= MIN_CORRECTED - 1:
                by_length.setdefault(len(known), []).append(known)
        by_deletion: dict[str, str | list[str]] = {}
        kept_of = by_deletion.get
        for length, knowns in by_length.items():
            for i in range(length):
                for key, known in zip([known[:i] + known[i + 1 :] for known in knowns], knowns, strict=True):
                    kept = kept_of(key)
                    if kept is None:
                        by_deletion[key] = known
                    elif isinstance(kept, str):
                        if kept is not known:
                            by_deletion[key] = [kept, known]
                    elif kept[-1] is not known:
                        kept.append(known)
        contained = frozenset(w for w in self._rank if len(w) >= MIN_CONTAINED)
        self._by_deletion = by_deletion
        self._contained_lengths = tuple(sorted({len(w) for w in contained}))
        self._contained = contained  # last: a reader that sees it sees the others built
        return contained

    @property
    def rank(self) -> dict[str, int]:
        """word -> its place in the vocabulary's insertion order (do not change it)."""
        return self._rank

    @classmethod
    def of(cls, vocabulary: Mapping[str, int] | Vocabulary) -> Vocabulary:
        """`vocabulary` itself, or a Vocabulary of a {word: df} mapping's keys in their order."""
        return vocabulary if isinstance(vocabulary, Vocabulary) else cls(vocabulary)

    def __contains__(self, word: object) -> bool:
        return word in self._rank

    def __len__(self) -> int:
        return len(self._rank)

    def spelled_as(self, word: str) -> list[str]:
        """The known words `word` stands for, in vocabulary order: [word] if known, else what it contains
        or is one edit from; [] for an unknown word under 4 letters."""
        if word in self._rank:
            return [word]
        return list(self._unknown(word))

    def terms(self, asked: Iterable[str]) -> list[str]:
        """The spec's `[...new Set(asked.flatMap(spelledAs))]`: the known words the asked words stand for,
        distinct, in the order the spec scores them (the first word's first, each one where it first
        came)."""
        rank = self._rank
        found: dict[str, None] = {}
        for word in asked:
            if word in rank:
                found[word] = None
            else:
                for known in self._unknown(word):
                    found[known] = None  # a word already found keeps its place, as in a Set
        return list(found)

    def _unknown(self, word: str) -> tuple[str, ...]:
        """What an unknown `word` stands for, remembered: a learner's typos come back (a generated Texas's
        3,000 questions ask 3,358 unknown words, 2,411 of them distinct), and each costs ~20 µs to work out."""
        spelled = self._remembered.get(word)
        if spelled is None:
            spelled = self._spell(word)
            # Bounded: a service asked random strings stops adding, and a long "word" is not kept.
            if len(word) <= REMEMBERED_LETTERS and len(self._remembered) < REMEMBERED:
                self._remembered[word] = spelled
        return spelled

    def _spell(self, word: str) -> tuple[str, ...]:
        if len(word) < MIN_LOOKED_INTO:
            return ()
        found = self._contained_in(word)
        if len(word) >= MIN_CORRECTED:
            found |= self._one_edit_from(word)
        return tuple(sorted(found, key=self._rank.__getitem__))

    def _contained_in(self, word: str) -> set[str]:
        # Only lengths some known word has: a 2,000-letter "word" costs 2,000 look-ups per distinct
        # length, not 2,000 squared over 2.
        contained = self._indexed()
        found: set[str] = set()
        size = len(word)
        for length in self._contained_lengths:
            if length >= size:
                break  # a known word as long as `word` would be `word` itself, which is unknown
            for start in range(size - length + 1):
                part = word[start : start + length]
                if part in contained:
                    found.add(part)
        return found

    def _one_edit_from(self, word: str) -> set[str]:
        self._indexed()
        rank, by_deletion = self._rank, self._by_deletion
        found: set[str] = set()
        # known = word plus a letter (a letter typed too few): `word` is one of known's deletions. Always
        # one edit: no check.
        kept = by_deletion.get(word)
        if kept is not None:
            found.update((kept,) if isinstance(kept, str) else kept)
        suspects: set[str] = set()
        for i in range(len(word)):
            key = word[:i] + word[i + 1 :]
            # known = word less a letter (a letter typed too many): always one edit.
            if key in rank:
                found.add(key)
            # known = word with a letter changed: both lose a letter and meet. Meeting is not enough
            # ("ab" and "ba" both become "a" and are two edits apart): these are checked.
            kept = by_deletion.get(key)
            if kept is not None:
                suspects.update((kept,) if isinstance(kept, str) else kept)
        suspects -= found
        found.update(known for known in suspects if one_edit_apart(word, known))
        return found


def spelled_as(word: str, vocabulary: Mapping[str, int] | Vocabulary) -> list[str]:
    """The spec's `spelledAs(word, vocabulary)`: what `word` stands for, in vocabulary order.

    Pass a `Vocabulary` built once; a plain {word: df} mapping is indexed afresh on every call.
    """
    return Vocabulary.of(vocabulary).spelled_as(word)
