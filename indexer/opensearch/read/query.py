"""`ask` on OpenSearch: the spec's exact ranking, from a real cluster.

words(question) → spelled_as() against the state's vocabulary (stored with its index) → one `term`
query per distinct word on the ranked field `words`, summed by a bool query → a window of candidates
by OpenSearch's own BM25 → each candidate re-scored with the spec's float64 arithmetic from the
statistics the indexer stored → the window proven wide enough, or widened and asked again.

Why the window is needed: OpenSearch's BM25 is the spec's formula with other arithmetic
(docs/exactness.md): Lucene keeps a law's length in one byte, rounded down above 40 words; it computes in
float32; 2.x multiplies by (k1+1) and 3.x does not; and Lucene's N and average length leave out a
ranked law whose words are all stopwords, which the spec counts. So OpenSearch ranks the right laws
near the top but not always in the spec's order. Why the window is enough: indexer/retrieval/bound.py,
also for a question whose terms pass OpenSearch's clause limit and are asked in groups (the
limits themselves, and the pages a window wider than the result window is read in: read/search_limits.py).

The learner's text never reaches a query parser: it becomes `term` queries on words the vocabulary
already holds, or nothing.

The words path only: the searches it sends, the statistics and the seal are read/searching.py's; the exact
re-scoring and the proofs read/rescore.py's; the bound's arithmetic indexer.retrieval.bound's; the engine that
chooses a way read/engine.py.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from indexer.errors import ClusterRefused
from indexer.opensearch.cluster import plugin_path, stored_lexicon
from indexer.opensearch.cluster.connection import errors_translated
from indexer.opensearch.cluster.schema import (
    RANKED_FIELD,
    law_id,
    terms_query,
)
from indexer.opensearch.read import search_limits
from indexer.opensearch.read.rescore import hit_of, plugin_proven, rescored, union, window_proven
from indexer.opensearch.read.search_limits import Candidates, TooManyClauses, WindowTooLarge
from indexer.opensearch.read.searching import Searcher
from indexer.opensearch.read.statistics import IndexStatistics, Moved
from indexer.opensearch.trust import ownership
from indexer.retrieval.answers import Answer, Window
from indexer.retrieval.corpus import state_code
from indexer.retrieval.request import RETRIEVED_LAWS
from indexer.retrieval.words import words

if TYPE_CHECKING:
    pass

# The first window asked for: wide enough that the spec's top 8 is almost always inside it, narrow
# enough that fetching it costs little more than fetching 8. On a Texas-size generated corpus
# (benchmarks/ask.py, 1,000 questions) 16 widened 6 questions and 32 widened 2, while 32 cost 0.4 ms a
# question more at p50 (1.5x a raw search of size 8, against 1.2x): the fetch of each extra document
# is most of a window's price. A window that cannot be proven wide enough is widened by WIDEN.
WINDOW = 16
WIDEN = 4


class Words:
    """Answers a question by words from the laws loaded into OpenSearch, ranked exactly as the spec ranks them:
    the plugin's query where the index was built for it, else OpenSearch's windows, re-scored and proven."""

    def __init__(self, searcher: Searcher, *, window: int = WINDOW) -> None:
        self.searcher = searcher
        self.window = window
        self._lock = threading.Lock()
        # Per concrete index: built for the lawindex plugin (its `_meta`, read once; cluster/plugin_path.py).
        self._on_plugin: dict[str, bool] = {}

    def ask(self, state: str, question: str, limit: int = RETRIEVED_LAWS) -> Answer:
        """The laws of `state` that best answer `question`, best first; exactly the reference's answer."""
        state = state_code(state)
        asked = words(question)
        with errors_translated(self.searcher.connection):
            # A search that races a reload can meet the old index as it is deleted: ask again, once, of the
            # generation the statistics read afresh name (pinned: read/searching.py `target`). A second time is
            # not a race: it is said, never raised as Moved (a --from batch goes on past it).
            for attempt in range(2):
                try:
                    return (
                        self._pinned(state, question, asked, limit)
                        if attempt
                        else self._ask(state, question, asked, limit)
                    )
                except Moved as moved:
                    if attempt:
                        moved.fail(state, self.searcher.connection.namespace)
        raise AssertionError("unreachable")

    def _expand(self, state: str, asked: list[str], stats: IndexStatistics) -> list[str]:
        """`_expand`, with a block of the vocabulary that does not match its sealed digest refused (the
        state's statistics forgotten, so that a load that repairs it is read afresh)."""
        try:
            return _expand(asked, stats)
        except stored_lexicon.AlteredBlock as altered:
            self.searcher.statistics_cache.forget(stats.index)
            raise self.searcher.statistics_cache.refusal(
                state, stats.index, f"the statistics of {stats.index} were altered: {altered}"
            ) from None

    def _ask(self, state: str, question: str, asked: list[str], limit: int) -> Answer:
        stats = self.searcher.statistics_cache.cached(state)
        answered = self.answer_from(state, question, asked, limit, stats, self.searcher.target(state, stats, False))
        # None: the alias moved since the statistics were last seen.
        return self._pinned(state, question, asked, limit) if answered is None else answered

    def _pinned(self, state: str, question: str, asked: list[str], limit: int) -> Answer:
        """The answer from the generation the alias names now, its statistics read afresh and every search
        asking it by its own name, whichever node answers and whether or not it has applied a move of the
        alias yet: one generation, or Moved where it is deleted under the question."""
        stats = self.searcher.statistics_cache.fresh(state)
        answered = self.answer_from(state, question, asked, limit, stats, stats.index)
        if answered is None:
            raise AssertionError(f"a search of {stats.index} was answered by another index")
        return answered

    def answer_from(
        self, state: str, question: str, asked: list[str], limit: int, stats: IndexStatistics, target: str
    ) -> Answer | None:
        """The answer from the generation `stats` are of, its searches asking `target` (the alias, or
        `stats.index` itself: read/searching.py `target`); None when another generation answered a search
        (asked through the alias, it had moved), never when `target` is the generation itself."""
        if self._plugin_index(stats.index):
            answered = self._ask_plugin(state, question, asked, limit, stats, target)
            if answered is not None:
                return answered
        terms = self._expand(state, asked, stats)
        size = max(self.window, limit)
        sizes: list[int] = []
        while True:
            sizes.append(size)
            windows = self._windows(state, target, stats.index, terms, size) if terms else []
            laws = union(windows)
            # Which concrete index answered: every hit says; with none, through the alias, ask it (a question
            # that reaches nothing must still see a reload, whose vocabulary may know its words). Asked of the
            # generation itself, it answered, by construction.
            if target == stats.index:
                served = {stats.index, *(str(law["_index"]) for law in laws)}
            else:
                served = {str(law["_index"]) for law in laws} if laws else {self.searcher.served_now(state)}
            if served != {stats.index}:
                return None  # the alias moved since the vocabulary was read: expand again with the new one
            self.searcher.refuse_altered(state, stats, laws)  # every law re-scored: its counts decide the ranking
            ranked_hits = rescored(laws, terms, stats)
            # Every window held fewer laws than asked for: every law that shares a word is here.
            complete = all(window.complete for window in windows)
            if complete or window_proven(ranked_hits, windows, stats, limit, self.searcher.is_legacy()):
                hits = [hit_of(scored, terms) for scored in ranked_hits[:limit]]
                return Answer(state, question, asked, terms, hits, window=Window(tuple(sizes)))
            size *= WIDEN

    def _plugin_index(self, index: str) -> bool:
        """True when `index` was built for the lawindex plugin (its `_meta`, read once per concrete index)."""
        known = self._on_plugin.get(index)
        if known is None:
            known = plugin_path.on_plugin(ownership.meta_of(self.searcher.client, index))
            with self._lock:
                # generations long deleted
                if len(self._on_plugin) > 4 * len(self.searcher.statistics_cache.kept()) + 64:
                    self._on_plugin.clear()
                self._on_plugin[index] = known
        return known

    def _ask_plugin(
        self, state: str, question: str, asked: list[str], limit: int, stats: IndexStatistics, target: str
    ) -> Answer | None:
        """The answer from the plugin's own query of `target` (the alias or `stats.index`), re-scored exactly
        and proven (`plugin_proven`); None when the window path must answer: no word to ask, the alias moved
        (the window path sees it), or the plugin's answer could not be proven (said on stderr; never expected).

        limit + 1 laws first: the law just past the last returned one proves the boundary. Only laws tied
        with the limit-th (a duplicate law, or one differing past float32's precision) need more: they are
        read on in pages of PLUGIN_PAGE by `_score` then corpus order (`search_limits.pages`), until a page ends
        below the tie or the matches end, never all at once. (12,000 exact ties were handed to the window
        path, which asked for 16,384 laws in one request.)"""
        terms = self._expand(state, asked, stats)
        if not terms:
            return None
        query = plugin_query(question, limit + 1)

        def batches() -> Iterator[tuple[list[dict[str, Any]], int, bool]]:
            """Each answer of the plugin's query, how many laws it asked for, and whether it is the first of
            a reading (the pages start again from the best law: the first request had the collector's order)."""
            if limit + 1 <= search_limits.PAGE:
                yield self.searcher.search(state, target, query, len(terms)), limit + 1, True
            tied = search_limits.pages(
                lambda body: self.searcher.search(state, target, body, len(terms)), query["query"], PLUGIN_PAGE
            )
            for number, page in enumerate(tied):
                yield page, PLUGIN_PAGE, number == 0

        sizes: list[int] = []
        read: list[dict[str, Any]] = []
        why = ""
        try:
            for page, requested, fresh in batches():
                read = page if fresh else read + page
                sizes.append(len(read))
                if page and {str(hit["_index"]) for hit in page} != {stats.index}:
                    return None
                # A law altered after its load is refused, never served.
                self.searcher.refuse_altered(state, stats, page)
                ranked_hits = rescored(read, terms, stats)
                # The plugin's own order must already be the spec's: anything else is a plugin not doing
                # what it promises, and its scores are not trusted for the bound either.
                spec_order = [law_id(str(h.source["id"])) for h in ranked_hits[:limit]]
                if [str(hit["_id"]) for hit in read[:limit]] != spec_order:
                    why = "its order is not the spec's"
                    break
                if len(page) < requested or plugin_proven(ranked_hits, page[-1], limit):
                    found = [hit_of(scored, terms) for scored in ranked_hits[:limit]]
                    return Answer(state, question, asked, terms, found, window=Window(tuple(sizes), plugin=True))
                why = "ties at the boundary"
        except (TooManyClauses, WindowTooLarge) as refused:
            why = f"refused ({refused})"
        _log.warning(
            "lawindex: %s: the plugin's answer to %r could not be proven (%s); answered by the window path",
            state,
            question,
            why,
        )
        return None

    def _windows(self, state: str, target: str, index: str, terms: list[str], size: int) -> list[Candidates]:
        """OpenSearch's best `size` laws for `terms`, a window per group of terms that the clause limit
        allows in one request (one group below it), each read in pages where the result window is smaller
        than `size`. A refusal by either limit is learnt from and the windows asked again."""
        while True:
            try:
                return [
                    self._window(state, target, index, group, size)
                    for group in search_limits.groups(terms, self.searcher.clauses)
                ]
            except TooManyClauses as refused:
                if refused.sent <= 1:
                    raise ClusterRefused("OpenSearch refused a query of one term (its clause limit)") from None
                self.searcher.clauses = refused.smaller()
            except WindowTooLarge as refused:
                if (
                    refused.limit < 1
                    or refused.limit >= size
                    or self.searcher.result_window.get(index) == refused.limit
                ):
                    raise ClusterRefused(
                        f"OpenSearch refused a window of {size} laws (result window {refused.limit})"
                    ) from None
                self.searcher.result_window[index] = refused.limit

    def _window(self, state: str, target: str, index: str, terms: list[str], size: int) -> Candidates:
        hits = self.searcher.best_hits(state, target, index, terms_query(terms), size, len(terms))
        return Candidates(terms, hits, complete=len(hits) < size)


_log = logging.getLogger("lawindex.query")

# Rows a page of the plugin's ties holds (search_limits.pages): a generated Texas's duplicates come in twos and
# threes, so one page nearly always ends the tie; 12,000 exact ties take 47 requests of at most 256 laws.
PLUGIN_PAGE = 256


def plugin_query(question: str, size: int) -> dict[str, Any]:
    """The search body of the plugin's query (cluster/plugin_path.py): the question as the learner typed it,
    analysed and expanded on the node, `size` laws by the spec's score."""
    return {
        "size": size,
        "track_total_hits": False,
        "query": {plugin_path.QUERY: {"question": question, "field": RANKED_FIELD}},
    }


def _expand(asked: list[str], stats: IndexStatistics) -> list[str]:
    """The spec's `[...new Set(words(question).flatMap(spelledAs))]`, in its order. Nothing is built for it
    (indexer/retrieval/spelling.py): the blocks a word reaches are read, once, and checked against their
    sealed digests; a block that does not match is stored_lexicon.AlteredBlock."""
    return stats.spelling.terms(asked)
