"""What BM25 needs of a state's laws that does not depend on the question: the spec's `indexOf`.

`count(laws)` is each law's word counts and length, the number of ranked laws (N), their average
length, and how many laws each word is in (df), in the spec's insertion order. The loader stores
exactly this with the index; the reference scorer adds its postings on top (indexer.reference).
`PerSequence` keeps what was built for a laws sequence, as the spec's WeakMap keeps its Index per array.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from indexer.corpus import Law
from indexer.words import iter_words_of_texts, ranked, ranked_text


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


def count(laws: Sequence[Law]) -> Counts:
    """The counts of `laws`, built afresh: the spec's `indexOf` (process rows count in neither N, df
    nor the average)."""
    is_ranked = [ranked(law) for law in laws]
    texts = [ranked_text(law) for law, kept in zip(laws, is_ranked, strict=True) if kept]
    tokenized = iter_words_of_texts(texts)
    counts: list[dict[str, int]] = []
    lengths: list[int] = []
    # Each law's distinct words one law after another, so that the vocabulary is in the spec's order:
    # a word enters when the first law that has it is counted.
    distinct: list[str] = []
    for kept in is_ranked:
        # A dict in first-occurrence order, counted in C from the words as they are made (no list of them).
        law_counts = Counter(next(tokenized)) if kept else Counter()
        counts.append(law_counts)
        lengths.append(sum(law_counts.values()))
        distinct.extend(law_counts)
    size = len(texts)
    total = sum(lengths)  # a process row's length is 0: the sum is the ranked laws'
    return Counts(
        size=size,
        average=total / max(1, size),
        vocabulary=dict(Counter(distinct)),
        lengths=lengths,
        counts=counts,
        doc_count=sum(1 for length in lengths if length > 0),
        sum_total_term_freq=total,
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
