"""statistics.count against the spec's `indexOf` (tests/spec_port.py's `index_of`), on corpora that cross the
chunks count() works in."""

from __future__ import annotations

import pytest

from indexer.retrieval import statistics
from indexer.retrieval.corpus import Law
from tests import spec_port, synthetic


def _same_as_the_spec(laws: tuple[Law, ...]) -> None:
    counted = statistics.count(laws)
    spec = spec_port.index_of(laws)
    # The vocabulary in the spec's insertion order, each word's df; N, the average; per law its length
    # and tf per word (0 and {} for a process row).
    assert list(counted.vocabulary.items()) == list(spec.frequency.items())
    assert (counted.size, counted.average) == (spec.size, spec.average)
    assert counted.lengths == [length for length, _ in spec.docs]
    assert counted.counts == [counts for _, counts in spec.docs]
    # The pairs are the same counts, law by law, then by the word's place in the vocabulary.
    place = {word: number for number, word in enumerate(counted.vocabulary)}
    expected = [(law, place[word], tf) for law, (_, counts) in enumerate(spec.docs) for word, tf in counts.items()]
    expected.sort(key=lambda pair: (pair[0], pair[1]))
    pairs = counted.pairs
    assert list(zip(pairs.laws.tolist(), pairs.words.tolist(), pairs.tfs.tolist(), strict=True)) == expected


@pytest.mark.parametrize("size", [1, statistics.CHUNK, statistics.CHUNK + 1, 1000])
def test_count_is_the_spec_index_across_chunks(size: int) -> None:
    _same_as_the_spec(tuple(synthetic.generate_corpus("TX", size, size)))


def test_count_of_laws_without_words() -> None:
    law = Law(id="X-1", kind="statute", law="the of and", question="", concept="a")
    process = Law(id="X-2", kind="process", law="park here", question="where", concept="b")
    _same_as_the_spec((law, process))
    _same_as_the_spec(())
