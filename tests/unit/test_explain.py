"""indexer.retrieval.explain: each word's part of a law's score, adding up to the score bit for bit."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.opensearch.cluster import stored_lexicon
from indexer.opensearch.read.statistics import IndexStatistics
from indexer.retrieval import reference
from indexer.retrieval.answers import Answer, Hit
from indexer.retrieval.corpus import read_corpus
from indexer.retrieval.explain import explain
from indexer.retrieval.lexicon import Lexicon
from tests import spec_port, synthetic

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
HYDRANT = "how far from a fire hydrant can i park"


def total(parts: list[float]) -> float:
    score = 0.0
    for part in parts:  # in order, from 0.0, as the spec adds
        score += part
    return score


def test_maryland_hydrant_law_is_explained_by_its_four_words() -> None:
    corpus = read_corpus(CORPORA / "MD.jsonl")
    stats = reference.statistics(corpus.laws)
    answer = reference.ask(corpus, HYDRANT)
    explained = explain(answer, stats)
    assert answer.hits[0].law.id == "MD-S01"
    first = explained[0]
    assert [part.word for part in first] == ["far", "fire", "hydrant", "park"]
    hydrant = first[2]
    assert hydrant.tf == 3 and hydrant.df == stats.vocabulary["hydrant"] and hydrant.length == stats.lengths[0]
    # Each part is what the spec scores the law for that word alone: the literal port's score of the
    # one-word question (tests/spec_port.py has its own copy of the formula).
    for part in first:
        alone = dict((law.id, value) for law, value in spec_port.bm25_scored(corpus.laws, part.word, len(corpus.laws)))
        assert part.score == alone["MD-S01"], part.word
    assert len(explained) == len(answer.hits) == 8
    for hit, parts in zip(answer.hits, explained, strict=True):
        assert total([part.score for part in parts]) == hit.score  # bit for bit


@pytest.mark.parametrize("state", ["AL", "MD", "PA", "SC", "WV"])
def test_contributions_sum_to_every_hits_score_on_the_samples(state: str) -> None:
    corpus = read_corpus(CORPORA / f"{state}.jsonl")
    stats = reference.statistics(corpus.laws)
    for question in [HYDRANT, "how far must i be behing a firehydrant", *(law.question for law in corpus.laws)]:
        answer = reference.ask(corpus, question)
        for hit, parts in zip(answer.hits, explain(answer, stats), strict=True):
            assert parts, (question, hit.law.id)
            assert total([part.score for part in parts]) == hit.score, (question, hit.law.id)
            assert [part.word for part in parts] == [term for term in answer.terms if term in {p.word for p in parts}]


def test_contributions_sum_to_the_score_on_a_generated_corpus_with_index_statistics() -> None:
    # The statistics as the OpenSearch engine reads them from the index: the same figures, another type.
    laws = synthetic.generate_corpus("TX", 1500, 4)
    stats = reference.statistics(laws)
    summary, blocks = stored_lexicon.stored(Lexicon.of(stats.vocabulary))
    body = {
        "size": stats.size,
        "average": stats.average,
        "words": summary,
        "doc_count": stats.doc_count,
        "total_length": stats.sum_total_term_freq,
        "digests": "",
    }
    index_stats = IndexStatistics.of(
        "lawindex-tx-1", body, lambda fields: {name: [blocks[name.split(".")[1]]] for name in fields}
    )
    checked = 0
    for question in synthetic.generate_questions(laws, 300, 4):
        hits = reference.score(laws, question)
        _, terms = reference.expand(question, stats)
        answer = Answer("TX", question, [], terms, hits)
        for which in (stats, index_stats):
            for hit, parts in zip(hits, explain(answer, which), strict=True):
                assert total([part.score for part in parts]) == hit.score, (question, hit.law.id)
                assert all(part.length == stats.lengths[hit.order] for part in parts)
                checked += 1
    assert checked > 1000


def test_a_process_row_has_no_contributions() -> None:
    corpus = read_corpus(CORPORA / "PA.jsonl")
    stats = reference.statistics(corpus.laws)
    page = next(i for i, law in enumerate(corpus.laws) if law.kind == "process")
    # As an engine returns it: a process row has no counts and no length.
    answer = Answer("PA", "permit", ["permit"], ["permit"], [Hit(corpus.laws[page], 0.0, page)])
    assert explain(answer, stats) == [[]]


def test_the_parts_come_from_the_hit_not_from_its_text() -> None:
    # --explain reads what the score was computed from (hit.counts, hit.length), as the engine fetched
    # it: it never re-tokenizes the law. Counts that the law's text does not have prove where they came from.
    corpus = read_corpus(CORPORA / "MD.jsonl")
    stats = reference.statistics(corpus.laws)
    law = corpus.laws[0]
    assert "school" not in law.law.lower()
    hit = Hit(law, 0.0, 0, {"school": 2}, 17)
    (parts,) = explain(Answer("MD", "school", ["school"], ["school"], [hit]), stats)
    assert [(part.word, part.tf, part.length) for part in parts] == [("school", 2, 17)]
