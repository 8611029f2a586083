"""A window's candidates by the spec's exact score: each law re-scored in float64 from the statistics the
indexer stored (its terms summed in the question's order, ties in corpus order), and the proofs that the
window, or the plugin's pages, hold the spec's top `limit` (the bound's arithmetic in indexer.retrieval.bound).
Pure functions, side by side, apart from the engine that asks the cluster (read/query.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from indexer.opensearch.cluster.schema import LAW_FIELDS
from indexer.opensearch.read.search_limits import Candidates
from indexer.retrieval.answers import Hit
from indexer.retrieval.bound import grouped_bound, proven
from indexer.retrieval.corpus import Law
from indexer.retrieval.scoring import exact_term_score

if TYPE_CHECKING:
    from indexer.opensearch.read.statistics import IndexStatistics


def plugin_proven(ranked_hits: list[Scored], last: dict[str, Any], limit: int) -> bool:
    """True when no law the plugin's query has not returned yet can enter the top `limit`.

    The plugin's `_score` is the float64 spec score rounded to the nearest float32, then raised by none or a
    few units in the last place where float32 would tie laws that the spec tells apart (docs/plugin.md):
    never below the float nearest the law's spec score. The laws not returned yet come after `last` (the
    collector, or the pages' sort, keeps the best `_score`s first), so a law X among them has
    nearest(spec(X)) <= _score(X) <= _score(last). Rounding to nearest is monotone, so when
    _score(last) < nearest(s), s the limit-th spec score of the laws read, spec(X) < s: X cannot enter.
    An X with nearest(spec(X)) = nearest(s) could (an equal score wins on corpus order): so a tie with the
    limit-th is read on until the scores fall below it."""
    if len(ranked_hits) < limit:
        return False
    lowest = np.float32(float(last["sort"][0] if "sort" in last else last["_score"]))
    return bool(lowest < np.float32(ranked_hits[limit - 1].score))


def law_of(source: dict[str, Any]) -> Law:
    """The law a stored document holds."""
    return Law.model_validate({key: source.get(key) for key in LAW_FIELDS})


def exact_score(source: dict[str, Any], terms: list[str], stats: IndexStatistics) -> float:
    """The spec's score of one law: its terms summed in `asked` order, in float64."""
    counts: dict[str, int] = source["counts"]
    length = int(source["length"])
    score = 0.0
    for term in terms:
        tf = counts.get(term, 0)
        if tf:
            score += exact_term_score(tf, stats.vocabulary[term], stats.size, length, stats.average)
    return score


@dataclass(frozen=True)
class Scored:
    """A window's law by the spec's score, before it is made a Law (only the returned ones are)."""

    source: dict[str, Any]
    score: float
    order: int


def rescored(laws: list[dict[str, Any]], terms: list[str], stats: IndexStatistics) -> list[Scored]:
    """The window's laws by the spec's score, ties in corpus order, as the spec's stable sort leaves them."""
    scored = [
        Scored(hit["_source"], exact_score(hit["_source"], terms, stats), int(hit["_source"]["order"])) for hit in laws
    ]
    scored = [hit for hit in scored if hit.score > 0]
    scored.sort(key=lambda hit: (-hit.score, hit.order))
    return scored


def hit_of(scored: Scored, terms: list[str]) -> Hit:
    """A returned law, with what its exact score was computed from (so `--explain` needs nothing more)."""
    counts: dict[str, int] = scored.source["counts"]
    return Hit(
        law=law_of(scored.source),
        score=scored.score,
        order=scored.order,
        counts={term: counts[term] for term in terms if counts.get(term)},
        length=int(scored.source["length"]),
    )


def union(windows: list[Candidates]) -> list[dict[str, Any]]:
    """The laws of every window, each once (a law with words of two groups is in both windows)."""
    seen: dict[str, dict[str, Any]] = {}
    for window in windows:
        for hit in window.hits:
            seen.setdefault(str(hit["_id"]), hit)
    return list(seen.values())


def window_proven(
    ranked_hits: list[Scored], windows: list[Candidates], stats: IndexStatistics, limit: int, legacy: bool
) -> bool:
    """True when no law outside the windows can enter the top `limit` (indexer.retrieval.bound: why)."""
    vocabulary = stats.vocabulary
    incomplete = [([vocabulary[t] for t in window.terms], window.lowest) for window in windows if not window.complete]
    outside = grouped_bound(incomplete, stats.size, stats.doc_count, legacy)
    return proven([hit.score for hit in ranked_hits[:limit]], limit, outside)
