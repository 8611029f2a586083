"""The reference scorer against the spec's literal port: ids, order and scores, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.retrieval import reference
from indexer.retrieval.corpus import Law, read_corpus
from tests import spec_port, synthetic
from tests.synthetic import corpus_of

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


def law(number: int, text: str, kind: str = "statute", question: str = "", concept: str = "rule") -> Law:
    return Law(id=f"T-{number}", kind=kind, law=text, question=question or "x", concept=concept)


def same(laws: tuple[Law, ...], question: str, limit: int = 8) -> None:
    ours = [(hit.law.id, hit.score) for hit in reference.score(laws, question, limit)]
    spec = [(found.id, value) for found, value in spec_port.bm25_scored(laws, question, limit)]
    assert ours == spec  # float equality: bit for bit, not approximately


# ---- small fixtures -------------------------------------------------------------------------------

PARKING = (
    law(1, "Do not park within 15 feet of a fire hydrant.", concept="parking-hydrant"),
    law(2, "Do not park within 20 feet of a fire station driveway.", concept="parking-fire-station"),
    law(3, "Do not park within 20 feet of a crosswalk at an intersection.", concept="parking-crosswalk"),
    law(4, "Headlights must be on from sunset to sunrise.", concept="headlights"),
    law(5, "How long must I hold my permit?", kind="process", question="permit hydrant park"),
    law(6, "the of and to", question="a an the", concept="a-the"),  # all stopwords: ranked, length 0
    law(7, "Do not park within 15 feet of a fire hydrant.", concept="parking-hydrant"),  # a tie with 1
)


@pytest.mark.parametrize(
    "question",
    [
        "how far from a fire hydrant can i park",
        "how far must i be behing a firehydrant",
        "permit",
        "hydrants hydrants hydrant",
        "the a an",
        "",
        "headlightss at sunsett",
    ],
)
def test_small_corpus_equals_the_spec(question: str) -> None:
    same(PARKING, question)


def test_the_hydrant_question_reaches_the_hydrant_laws_first_in_corpus_order() -> None:
    ids = [found.id for found in reference.bm25(PARKING, "how far from a fire hydrant can i park")]
    assert ids[:2] == ["T-1", "T-7"]  # equal scores: corpus order
    assert "T-4" not in ids  # headlights share no word
    assert "T-5" not in ids  # a process row is never ranked by words


def test_process_rows_count_in_neither_n_df_nor_average() -> None:
    stats = reference.statistics(PARKING)
    assert stats.size == 6  # 7 laws, one process row
    assert "permit" not in stats.vocabulary  # only the process row says "permit"
    assert stats.lengths[4] == 0 and stats.counts[4] == {}


def test_limit_and_no_shared_word() -> None:
    assert len(reference.bm25(PARKING, "park", limit=2)) == 2
    assert reference.bm25(PARKING, "park", limit=0) == []
    assert reference.bm25(PARKING, "motorcycle helmet") == []
    assert reference.bm25((), "park") == []
    with pytest.raises(ValueError):
        reference.bm25(PARKING, "park", limit=-1)


def test_expand_returns_words_and_distinct_terms_in_scoring_order() -> None:
    stats = reference.statistics(PARKING)
    asked, terms = reference.expand("firehydrant fire parks", stats)
    assert asked == ["firehydrant", "fire", "park"]
    assert terms == ["fire", "hydrant", "park"]


def test_statistics_are_kept_per_sequence_and_rebuilt_when_it_changes() -> None:
    laws = list(PARKING)
    first = reference.statistics(laws)
    assert reference.statistics(laws) is first
    laws.append(law(8, "Do not park on a bridge."))
    assert reference.statistics(laws) is not first
    assert reference.statistics(tuple(laws)) is not reference.statistics(laws)


# ---- the sample corpora, as they are in corpora/ --------------------------------------------------

SAMPLE_FILES = sorted(CORPORA.glob("*.jsonl")) if CORPORA.is_dir() else []


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=[p.stem for p in SAMPLE_FILES])
def test_sample_corpora_equal_the_spec(path: Path) -> None:
    corpus = read_corpus(path)
    questions = [law.question for law in corpus.laws] + synthetic.generate_questions(corpus.laws, 150, 7)
    questions += ["how far from a fire hydrant can i park", "how far must i be behing a firehydrant"]
    for question in questions:
        same(corpus.laws, question)


# ---- generated corpora ----------------------------------------------------------------------------


def test_a_generated_texas_equals_the_spec() -> None:
    laws = tuple(synthetic.generate_corpus("TX", 1500, 3))
    for question in synthetic.generate_questions(laws, 120, 4):
        same(laws, question)


_word = st.sampled_from(["fire", "hydrant", "hydrants", "park", "the", "of", "bus", "buss", "feet", "fires"])
_text = st.lists(st.one_of(_word, st.text(alphabet="abcfhirt", min_size=1, max_size=7)), max_size=14).map(" ".join)
_law = st.tuples(st.sampled_from(["statute", "statute", "handbook", "process"]), _text, _text)


@settings(max_examples=250, deadline=None)
@given(st.lists(_law, max_size=25), st.lists(_text, min_size=1, max_size=5), st.integers(0, 12))
def test_generated_corpora_and_questions_equal_the_spec(
    rows: list[tuple[str, str, str]], questions: list[str], limit: int
) -> None:
    laws = tuple(
        Law(id=f"G-{i}", kind=kind, law=text or "the", question=question or "q", concept="some-rule")
        for i, (kind, text, question) in enumerate(rows)
    )
    laws = laws + laws[:3]  # exact duplicates: ties
    for question in questions:
        same(laws, question, limit)


# ---- the Lucene mode over these statistics ---------------------------------------------------------

# PARKING and two laws past 40 words (49 and 102), whose lengths Lucene keeps rounded down (48, 96).
LONG = (
    *PARKING,
    law(8, "Park by the hydrant. " + " ".join(f"rule{n}" for n in range(44)), concept="long-hydrant"),
    law(9, "Fire hydrant hydrant zone. " + " ".join(f"clause{n}" for n in range(95)), concept="longer-rule"),
)
# OpenSearch 3.9.0's own `_score`s for LONG, loaded by `lawindex load` and asked with the bool of `term`
# queries the engine sends (tests/integration/test_lucene_mode.py holds every hit of larger corpora the
# same way, live): pinned here, so that a change to the Lucene mode fails without a node.
OPENSEARCH_3_9_SCORES = {
    ("park", "fire", "hydrant"): {
        "T-1": 1.0274779, "T-7": 1.0274779, "T-2": 0.6524375, "T-8": 0.43415847, "T-9": 0.34812158, "T-3": 0.23178115
    },
    ("hydrant",): {"T-1": 0.43978286, "T-7": 0.43978286, "T-8": 0.3012695, "T-9": 0.21552464},
    ("fire", "hydrant", "zone", "station"): {
        "T-2": 1.6786753, "T-1": 0.7956967, "T-7": 0.7956967, "T-9": 0.7339019, "T-8": 0.3012695
    },
}  # fmt: skip


@pytest.mark.parametrize("terms", list(OPENSEARCH_3_9_SCORES), ids=" ".join)
def test_lucene_score_is_opensearch_s_own(terms: tuple[str, ...]) -> None:
    stats = reference.statistics(LONG)
    assert stats.lengths[7:] == [49, 102]
    order = {law.id: index for index, law in enumerate(LONG)}
    for law_id, served in OPENSEARCH_3_9_SCORES[terms].items():
        # `_score` is a Java float printed as the shortest decimal that reads back as it: bit for bit.
        assert reference.lucene_score(terms, stats, order[law_id]) == float(np.float32(served)), law_id
    assert stats.doc_count == 7  # the all-stopword law has no field in Lucene; the process row neither
    assert reference.lucene_score(terms, stats, 3) == 0.0  # headlights: no term


def test_hits_carry_what_their_score_was_computed_from() -> None:
    # The counts of the answer's terms the law has, and its length: what --explain reads.
    answer = reference.ask(corpus_of("TX", PARKING), "fire hydrants at the station")
    assert answer.terms == ["fire", "hydrant", "station"]
    assert [hit.law.id for hit in answer.hits] == ["T-2", "T-1", "T-7"]
    # "Do not park within 15 feet of a fire hydrant." + question "x" + concept "parking hydrant": not park
    # within 15 feet fire hydrant x parking hydrant.
    assert answer.hits[1].counts == {"fire": 1, "hydrant": 2} and answer.hits[1].length == 10
    # "Do not park within 20 feet of a fire station driveway." + "x" + "parking fire station".
    assert answer.hits[0].counts == {"fire": 2, "station": 2} and answer.hits[0].length == 12
