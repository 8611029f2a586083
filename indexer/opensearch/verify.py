"""`lawindex verify`: every question through three engines, and where they part.

For each question of a state: the exact `ask` on OpenSearch (`read.engine.OpenSearchEngine`), OpenSearch's
own ranking (its top 8 by `_score`, equal scores in corpus order), and the reference scorer on the corpus
file (`indexer.retrieval.reference`). The exact `ask` must give the reference's top 8, ids, order and scores, every
time: one difference is a Disagreement (exit 7). OpenSearch's own ranking is reported beside it, with the
reason for each difference, found by moving the spec's arithmetic towards Lucene's one step at a time:

1. `N/avgdl (stopword-only law)`: Lucene's N and average length, which leave out a ranked law whose words
   are all stopwords (it has the field but no terms);
2. `length rounding`: lengths as Lucene decodes them from one byte (over 40 words they round down);
3. `float32`: what remains between step 2 (float64) and OpenSearch's own float32 `_score`, when the Lucene
   mode reproduces that `_score` (`unexplained` when it does not: a bug in the Lucene mode or the index).

A difference that two steps both change is reported under both ("length rounding + float32").

Long: one report asks every question of four rankings (exact ask, the plugin query, native BM25, the
reference) and explains each difference; the comparisons share their questions and statistics, so they stay
in one place.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from indexer.errors import BadInput
from indexer.opensearch.cluster import plugin_path
from indexer.opensearch.cluster.connection import alias_of, errors_translated
from indexer.opensearch.cluster.schema import terms_query
from indexer.opensearch.trust import ownership
from indexer.retrieval import reference, scoring
from indexer.retrieval.corpus import Corpus
from indexer.retrieval.files import text_lines
from indexer.retrieval.reference import Statistics
from indexer.retrieval.request import RETRIEVED_LAWS
from indexer.retrieval.words import ranked

if TYPE_CHECKING:
    from indexer.opensearch.read.engine import OpenSearchEngine

# Largest relative error of the Lucene mode against `_score` that is still "float32 rounding": a unit in
# the last place of a float is at most 2^-23 of it. The Lucene mode is bit-exact where it is right (0.0 on
# both pinned versions); a wrong statistic or formula shows as errors of 1e-4 and more.
FLOAT32_ROUNDING = 2.0**-23

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Ranking:
    """One engine's top laws for a question: ids best first, and their scores."""

    ids: tuple[str, ...]
    scores: tuple[float, ...]


@dataclass(frozen=True)
class Differing:
    """A question on which an engine's ranking is not the reference's."""

    question: str
    reference: Ranking
    other: Ranking
    reason: str


@dataclass
class StateReport:
    """What verify found in one state."""

    state: str
    questions: int = 0
    exact_same: int = 0
    native_same: int = 0
    lucene_error: float = 0.0  # the largest relative error of the Lucene mode against `_score`
    lucene_hits: int = 0  # hits the Lucene mode was held against
    widened: int = 0  # questions whose first window could not be proven wide enough
    widest: int = 0  # the widest window any question needed
    reasons: Counter[str] = field(default_factory=Counter)  # why native rankings differed, and how often
    disagreements: list[Differing] = field(default_factory=list)  # exact `ask` against the reference
    altered: list[str] = field(default_factory=list)  # laws whose documents are not the ones loaded
    seconds: float = 0.0
    # On an index built for the lawindex plugin (cluster/plugin_path.py): its raw query of size 8, as any
    # client sends it, against the reference; None on the window path.
    plugin_same: int | None = None
    plugin_disagreements: list[Differing] = field(default_factory=list)

    @property
    def exact_percent(self) -> float:
        return 100.0 * self.exact_same / self.questions if self.questions else 100.0

    @property
    def native_percent(self) -> float:
        return 100.0 * self.native_same / self.questions if self.questions else 100.0

    def as_json(self) -> dict[str, Any]:
        """The report as one JSON object (the CLI's --json)."""
        return {
            "state": self.state,
            "questions": self.questions,
            "exact_identical": self.exact_same,
            "exact_percent": round(self.exact_percent, 2),
            "native_identical": self.native_same,
            "native_percent": round(self.native_percent, 2),
            "native_reasons": dict(self.reasons.most_common()),
            "lucene_max_relative_error": self.lucene_error,
            "lucene_hits": self.lucene_hits,
            "widened": self.widened,
            "widest_window": self.widest,
            "seconds": round(self.seconds, 3),
            "disagreements": [_differing_json(d) for d in self.disagreements],
            "path": "window" if self.plugin_same is None else "plugin",
            "plugin_identical": self.plugin_same,
            "plugin_disagreements": [_differing_json(d, "plugin") for d in self.plugin_disagreements],
            "altered_laws": self.altered,
        }


def _differing_json(d: Differing, other: str = "exact") -> dict[str, Any]:
    return {
        "question": d.question,
        "reference": list(d.reference.ids),
        other: list(d.other.ids),
        "reference_scores": list(d.reference.scores),
        f"{other}_scores": list(d.other.scores),
    }


# ---------------------------------------------------------------------------------------------------
# Questions


def variants(question: str, seed: str) -> list[str]:
    """The question as a learner on a phone might type it, deterministically per seed: a letter off in its
    longest word, two of its words run together, and its words made plural. Each only when it changes
    the question."""
    rng = random.Random(seed)
    tokens = _WORD.findall(question.lower())
    found: list[str] = []
    long_ones = [i for i, token in enumerate(tokens) if len(token) >= 5 and token.isalpha()]
    if long_ones:
        i = max(long_ones, key=lambda j: (len(tokens[j]), -j))
        found.append(" ".join([*tokens[:i], typo(rng, tokens[i], first=1), *tokens[i + 1 :]]))
    pairs = [i for i in range(len(tokens) - 1) if len(tokens[i]) >= 4 and len(tokens[i + 1]) >= 4]
    if pairs:
        i = rng.choice(pairs)
        found.append(" ".join([*tokens[:i], tokens[i] + tokens[i + 1], *tokens[i + 2 :]]))
    plural = [
        token + "s" if len(token) >= 3 and not token.endswith("s") and token.isalpha() else token for token in tokens
    ]
    found.append(" ".join(plural))
    return [text for text in dict.fromkeys(found) if text != question.lower()]


def typo(rng: random.Random, word: str, first: int = 0) -> str:
    """`word` with one letter changed, added or dropped at a place from `first` on, as a thumb does it."""
    place = rng.randrange(first, len(word))
    edit = rng.randrange(3)
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    if edit == 0:
        return word[:place] + letter + word[place + 1 :]
    if edit == 1:
        return word[:place] + letter + word[place:]
    return word[:place] + word[place + 1 :]


def default_questions(corpus: Corpus) -> list[str]:
    """Each ranked law's own question, followed by its typo, compound and plural variants; distinct, in
    corpus order."""
    questions: dict[str, None] = {}
    for law in corpus.laws:
        if not ranked(law) or not law.question.strip():
            continue
        questions[law.question] = None
        for variant in variants(law.question, f"lawindex/verify/{corpus.state}/{law.id}"):
            questions[variant] = None
    return list(questions)


# `--from`: a question is at most 2,000 characters (8,000 bytes); a file of them is not gigabytes.
MAX_QUESTIONS_BYTES = 64 << 20
MAX_QUESTION_LINE = 1 << 16


def read_questions(path: Path) -> list[str]:
    """Questions from a file, one a line; blank lines skipped; read within bounds (indexer.retrieval.files)."""
    return [line.strip() for _, line in text_lines(path, MAX_QUESTIONS_BYTES, MAX_QUESTION_LINE) if line.strip()]


# ---------------------------------------------------------------------------------------------------
# The spec's arithmetic moved towards Lucene's, for the reasons native rankings differ


class _TowardsLucene:
    """Rankings of a state's laws under the spec's formula with Lucene's statistics and lengths, in
    float64, over the postings of the reference's statistics."""

    def __init__(self, stats: Statistics) -> None:
        self.stats = stats
        self.lengths = np.asarray(stats.lengths, dtype=np.float64)
        table = np.array([scoring.lucene_length(n) for n in range(max(stats.lengths, default=0) + 1)])
        self.rounded = table[np.asarray(stats.lengths, dtype=np.intp)].astype(np.float64)
        self._tf: dict[str, tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]] = {}

    def postings(self, term: str) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
        kept = self._tf.get(term)
        if kept is None:
            stats = self.stats
            w = stats.rank[term]
            laws = stats.post_laws[stats.offsets[w] : stats.offsets[w + 1]]
            tf = np.fromiter((stats.counts[i][term] for i in laws), dtype=np.float64, count=len(laws))
            kept = self._tf[term] = (laws, tf)
        return kept

    def top(self, terms: Sequence[str], lucene_n: bool, rounded: bool, limit: int) -> tuple[int, ...]:
        """The top `limit` law indices by the spec's formula, in float64, with Lucene's N and average
        (`lucene_n`) and lengths decoded from one byte (`rounded`); equal scores in corpus order."""
        stats = self.stats
        n_docs = stats.doc_count if lucene_n else stats.size
        average = stats.sum_total_term_freq / max(1, n_docs) if lucene_n else stats.average
        lengths = self.rounded if rounded else self.lengths
        scores = np.zeros(len(stats.lengths), dtype=np.float64)
        for term in terms:
            laws, tf = self.postings(term)
            idf = scoring.idf(stats.vocabulary[term], n_docs)
            scores[laws] += scoring.term_score(idf, tf, lengths[laws], average)
        matched = np.flatnonzero(scores)
        order = np.lexsort((matched, -scores[matched]))[:limit]
        return tuple(int(i) for i in matched[order])


def _reason(
    stages: _TowardsLucene, terms: Sequence[str], reference: tuple[int, ...], native: tuple[int, ...], faithful: bool
) -> str:
    limit = RETRIEVED_LAWS
    with_n = stages.top(terms, lucene_n=True, rounded=False, limit=limit)
    with_lengths = stages.top(terms, lucene_n=True, rounded=True, limit=limit)
    steps = []
    if with_n != reference:
        steps.append("N/avgdl (stopword-only law)")
    if with_lengths != with_n:
        steps.append("length rounding")
    if native != with_lengths:
        steps.append("float32" if faithful else "unexplained")
    return " + ".join(steps) or "unexplained"


# ---------------------------------------------------------------------------------------------------
# Verify


def native_search(engine: OpenSearchEngine, state: str, terms: Sequence[str], size: int) -> list[dict[str, Any]]:
    """OpenSearch's own ranking for `terms`: its top `size` laws by `_score`, equal scores in corpus order."""
    if not terms:
        return []
    body = {
        "size": size,
        "track_scores": True,
        "_source": ["id", "order"],
        "sort": [{"_score": {"order": "desc"}}, {"order": {"order": "asc"}}],
        "query": terms_query(terms),
    }
    response = engine.client.search(index=alias_of(state, engine.connection.namespace), body=body)
    hits: list[dict[str, Any]] = response["hits"]["hits"]
    return hits


def plugin_search(engine: OpenSearchEngine, state: str, question: str, size: int) -> list[dict[str, Any]]:
    """The lawindex plugin's own ranking for `question`: its raw query, as any client sends it."""
    from indexer.opensearch.read.query import plugin_query

    body = {**plugin_query(question, size), "_source": ["id", "order"]}
    response = engine.client.search(index=alias_of(state, engine.connection.namespace), body=body)
    hits: list[dict[str, Any]] = response["hits"]["hits"]
    return hits


def on_plugin(engine: OpenSearchEngine, state: str) -> bool:
    """True when the index behind the state's alias was built for the lawindex plugin."""
    stats = engine.statistics(state)
    with errors_translated(engine.connection):
        return plugin_path.on_plugin(ownership.meta_of(engine.client, stats.index))


def check_served(engine: OpenSearchEngine, corpus: Corpus) -> None:
    """BadInput unless the index behind the state's alias was loaded from this very corpus."""
    stats = engine.statistics(corpus.state)
    with errors_translated(engine.connection):
        mapping = engine.client.indices.get_mapping(index=stats.index)
    meta = mapping[stats.index]["mappings"].get("_meta", {}).get("lawindex", {})
    if meta.get("sha256") != corpus.sha256:
        raise BadInput(
            f"{corpus.state}: the index {stats.index} was not loaded from {corpus.path}",
            hint=f"load it first: lawindex load {corpus.path.parent} --state {corpus.state}",
        )


def verify_state(
    engine: OpenSearchEngine,
    corpus: Corpus,
    questions: Iterable[str],
    *,
    progress: Callable[[int], None] | None = None,
) -> StateReport:
    """Run `questions` through the exact `ask`, OpenSearch's own ranking and the reference scorer."""
    began = time.perf_counter()
    state = corpus.state
    stats = reference.statistics(corpus.laws)
    stages = _TowardsLucene(stats)
    legacy = engine.legacy()
    report = StateReport(state)
    engine.statistics(state)  # a state with no index fails here, before any question
    # Every law document against its sealed digest: an altered one would be refused by every question
    # that reaches it, so a state with any is reported as such and not asked.
    report.altered = engine.altered_laws(state)
    plugin = on_plugin(engine, state)
    if plugin:
        report.plugin_same = 0
    for question in questions if not report.altered else ():
        report.questions += 1
        truth = reference.ask(corpus, question)
        want = Ranking(tuple(truth.ids()), tuple(hit.score for hit in truth.hits))
        answer = engine.words.ask(state, question)
        got = Ranking(tuple(answer.ids()), tuple(hit.score for hit in answer.hits))
        window = answer.window
        if window is not None and window.widened:
            report.widened += 1
        report.widest = max(report.widest, window.sizes[-1] if window else 0)
        if got == want and answer.terms == truth.terms:
            report.exact_same += 1
        else:
            report.disagreements.append(Differing(question, want, got, "exact ask"))

        with errors_translated(engine.connection):
            hits = native_search(engine, state, truth.terms, RETRIEVED_LAWS)
        faithful = True
        # On the plugin path the term queries are scored by the plugin's similarity (the spec's statistics
        # and lengths, float64 per term): there is no Lucene BM25 to hold the Lucene mode against.
        for hit in [] if plugin else hits:
            # Both as float32: `_score` is a Java float, printed as the shortest decimal that reads back
            # as that float, so 0.0 here means bit for bit.
            lucene = np.float32(reference.lucene_score(truth.terms, stats, int(hit["_source"]["order"]), legacy))
            served = np.float32(hit["_score"])
            error = float(abs(lucene - served) / served)
            report.lucene_error = max(report.lucene_error, error)
            report.lucene_hits += 1
            faithful = faithful and error <= FLOAT32_ROUNDING
        native = Ranking(tuple(str(hit["_source"]["id"]) for hit in hits), tuple(float(hit["_score"]) for hit in hits))
        if native.ids == want.ids:
            report.native_same += 1
        elif plugin:
            report.reasons["float32 (lawindex similarity, summed by Lucene)"] += 1
        else:
            reason = _reason(
                stages,
                truth.terms,
                tuple(hit.order for hit in truth.hits),
                tuple(int(hit["_source"]["order"]) for hit in hits),
                faithful,
            )
            report.reasons[reason] += 1
        if plugin and report.plugin_same is not None:
            with errors_translated(engine.connection):
                found = plugin_search(engine, state, question, RETRIEVED_LAWS)
            native = Ranking(
                tuple(str(hit["_source"]["id"]) for hit in found), tuple(float(hit["_score"]) for hit in found)
            )
            if native.ids == want.ids:
                report.plugin_same += 1
            else:
                report.plugin_disagreements.append(Differing(question, want, native, "plugin query"))
        if progress is not None:
            progress(report.questions)
    report.seconds = time.perf_counter() - began
    return report


def verify(
    engine: OpenSearchEngine,
    corpora: Sequence[Corpus],
    questions: Sequence[str] | None = None,
    *,
    progress: Callable[[str, int], None] | None = None,
) -> list[StateReport]:
    """One report per corpus: `questions` (by default each law's question and its variants) through the
    three engines. Every corpus must be what its state's index was loaded from."""
    reports = []
    for corpus in corpora:
        check_served(engine, corpus)
        asked = list(questions) if questions is not None else default_questions(corpus)
        reports.append(verify_state(engine, corpus, asked, progress=_per_state(progress, corpus.state)))
    return reports


def _per_state(progress: Callable[[str, int], None] | None, state: str) -> Callable[[int], None] | None:
    if progress is None:
        return None
    report = progress

    def step(done: int) -> None:
        report(state, done)

    return step
