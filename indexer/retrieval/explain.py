"""Why a law scored what it did: each asked word's part of its score, in the spec's exact arithmetic.

The parts are the terms the spec adds, in the order it adds them (`Answer.terms`), so adding them up from
0.0 gives the hit's score to the last bit: `ask --explain` shows what was summed, not an approximation.
Each hit carries what its score was computed from (its tf per term and its length), so nothing is
re-tokenized or fetched again; the statistics give N, the average and each word's df.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from indexer.retrieval import scoring
from indexer.retrieval.answers import Answer, Contribution, Hit

__all__ = ["Contribution", "Scored", "contributions", "explain"]


class Scored(Protocol):
    """What the explanation needs of a state's statistics: the spec's N, average and df per word. Both
    `indexer.retrieval.reference.Statistics` and `indexer.opensearch.read.statistics.IndexStatistics` have them."""

    @property
    def size(self) -> int: ...

    @property
    def average(self) -> float: ...

    @property
    def vocabulary(self) -> Mapping[str, int]: ...


def contributions(hit: Hit, terms: list[str], stats: Scored) -> list[Contribution]:
    """The words of `terms` that `hit`'s law has (`hit.counts`), each with its part of the score, in
    `terms` order."""
    parts = []
    for word in terms:
        tf = hit.counts.get(word, 0)
        if tf == 0:
            continue
        df = stats.vocabulary[word]
        idf = scoring.idf(df, stats.size)
        score = scoring.term_score(idf, tf, hit.length, stats.average)
        parts.append(Contribution(word=word, tf=tf, df=df, idf=idf, length=hit.length, score=score))
    return parts


def explain(answer: Answer, stats: Scored) -> list[list[Contribution]]:
    """Per hit of `answer`, best first, each asked word's contribution; their sum, added in order from 0.0,
    is the hit's score exactly."""
    return [contributions(hit, answer.terms, stats) for hit in answer.hits]
