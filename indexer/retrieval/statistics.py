"""What BM25 needs of a state's laws that does not depend on the question: the spec's `indexOf`.

`count(laws)` is each law's word counts and length, the number of ranked laws (N), their average
length, and how many laws each word is in (df), in the spec's insertion order. The loader stores
exactly this with the index; the reference scorer adds its postings on top (indexer.retrieval.reference).
`PerSequence` keeps what was built for a laws sequence, as the spec's WeakMap keeps its Index per array.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

from indexer.retrieval.corpus import Law
from indexer.retrieval.words import TEXT_END, WordNumbers, ranked, ranked_text

# Texts tokenized and counted at a time by count().
CHUNK = 128


@dataclass(frozen=True, eq=False)
class Counts:
    """The spec's `Index` of a laws sequence, and Lucene's own N and total length beside it."""

    size: int  # laws ranked by words: every one but the process rows (the spec's N)
    average: float  # mean length of the ranked laws, in words after stopwords
    vocabulary: dict[str, int]  # word -> how many ranked laws have it (df), in the spec's insertion order
    lengths: list[int]  # per law, in corpus order: its length in words (0 for a process row)
    counts: list[dict[str, int]]  # per law: word -> how often it has it (tf); {} for a process row
    # Lucene's N for the ranked field: the laws with at least one word there. A ranked law whose words
    # are all stopwords has no terms, so Lucene leaves it out while the spec counts it.
    doc_count: int
    sum_total_term_freq: int  # Lucene's sumTotalTermFreq: the ranked words of all laws together
    # The same counts as arrays, one element per (law, word) the law has: law after law in corpus order,
    # within a law by the word's place in `vocabulary`. The reference scorer's postings are these, by word.
    pairs: Pairs = field(repr=False)


@dataclass(frozen=True, eq=False)
class Pairs:
    """Each (law, word) a law has, with how often: `laws` (the law's place in the corpus), `words` (the
    word's place in the vocabulary) and `tfs`, sorted by law, then by word."""

    laws: npt.NDArray[np.intp]
    words: npt.NDArray[np.intp]
    tfs: npt.NDArray[np.int64]


def count(laws: Sequence[Law]) -> Counts:
    """The counts of `laws`, built afresh: the spec's `indexOf` (process rows count in neither N, df
    nor the average).

    Every word of every ranked law is numbered by its place in the vocabulary (indexer.retrieval.words), and the
    counting is numpy's: the (law, word) pairs made unique with their counts, the lengths and df counted
    from them. A word is numbered where it first appears, law after law: the spec's insertion order.
    """
    ranked_laws = [place for place, law in enumerate(laws) if ranked(law)]
    texts = [ranked_text(laws[place]) for place in ranked_laws]
    numbers = WordNumbers()
    # A hundred texts at a time, each chunk's (law, word) pairs made unique with their counts before the
    # next: the tokens of all of Texas at once were 37 MB of strings and arrays made and freed (9,000 page
    # faults, as many as the rest of the command); a chunk's fit in memory the process already has.
    # Chunks follow one another in law order, so their pairs, put end to end, are in law order too.
    keys_of: list[npt.NDArray[np.int64]] = []
    tfs_of: list[npt.NDArray[np.intp]] = []
    lengths_of: list[npt.NDArray[np.intp]] = []
    for start in range(0, len(texts), CHUNK):
        chunk = texts[start : start + CHUNK]
        tokens = np.fromiter(numbers.numbers(chunk), dtype=np.int64)
        text_of = np.cumsum(tokens == TEXT_END)  # each token's text, 0 for the chunk's first
        kept = tokens >= 0
        text_of = text_of[kept]
        # One key per word of a law, ordered by law and then word: the unique keys are the pairs.
        keys, tfs = np.unique(((text_of + start) << 32) | tokens[kept], return_counts=True)
        keys_of.append(keys)
        tfs_of.append(tfs)
        lengths_of.append(np.bincount(text_of, minlength=len(chunk)))
    words = list(numbers.words)
    keys = np.concatenate(keys_of) if keys_of else np.zeros(0, dtype=np.int64)
    tfs = np.concatenate(tfs_of) if tfs_of else np.zeros(0, dtype=np.intp)
    pair_text, pair_word = (keys >> 32).astype(np.intp), (keys & 0xFFFFFFFF).astype(np.intp)
    df = np.bincount(pair_word, minlength=len(words))
    ranked_lengths = np.concatenate(lengths_of).tolist() if lengths_of else []

    lengths = [0] * len(laws)
    counts: list[dict[str, int]] = [{} for _ in laws]
    # Each ranked law's tf per word from its run of the pairs, its words in vocabulary order.
    # (The words picked by numpy from an array of them: a list of 160,000 word numbers would be as many
    # int objects, 5 MB made and freed.)
    pair_words = np.array(words, dtype=object)[pair_word].tolist() if words else []
    pairs_of = iter(zip(pair_words, tfs.tolist(), strict=True))
    for place, length, distinct in zip(
        ranked_laws, ranked_lengths, np.bincount(pair_text, minlength=len(ranked_laws)).tolist(), strict=True
    ):
        lengths[place] = length
        counts[place] = dict(islice(pairs_of, distinct))
    size = len(ranked_laws)
    total = sum(ranked_lengths)
    pairs = Pairs(laws=np.array(ranked_laws, dtype=np.intp)[pair_text], words=pair_word, tfs=tfs)
    return Counts(
        size=size,
        average=total / max(1, size),
        vocabulary=dict(zip(words, df.tolist(), strict=True)),
        lengths=lengths,
        counts=counts,
        doc_count=sum(1 for length in ranked_lengths if length > 0),
        sum_total_term_freq=total,
        pairs=pairs,
    )


Built = TypeVar("Built")


class PerSequence(Generic[Built]):
    """What `build` makes of a laws sequence, made on first sight of that sequence and kept.

    Keyed by the identity of the sequence, as the spec's WeakMap is keyed by the array. Tuples and lists
    cannot be weakly referenced, so the cache holds its sequences (which also keeps their ids from being
    reused) and forgets the least recently used past `kept`: one per state and to spare. A tuple
    (Corpus.laws) cannot change; a list is also checked for its length, as the spec checks the array's,
    so a list changed in place at the same length is not noticed: the spec has the same edge. Not for
    threads: a loader that builds side by side calls `build` itself.
    """

    def __init__(self, build: Callable[[Sequence[Law]], Built], kept: int = 64) -> None:
        self._build = build
        self._kept = kept
        self._cache: OrderedDict[int, tuple[Sequence[Law], int, Built]] = OrderedDict()

    def __call__(self, laws: Sequence[Law]) -> Built:
        key = id(laws)
        found = self._cache.get(key)
        if found is not None and found[0] is laws and found[1] == len(laws):
            self._cache.move_to_end(key)
            return found[2]
        built = self._build(laws)
        self._cache[key] = (laws, len(laws), built)
        self._cache.move_to_end(key)
        while len(self._cache) > self._kept:
            self._cache.popitem(last=False)
        return built
