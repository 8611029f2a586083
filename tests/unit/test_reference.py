"""The reference scorer against the spec's literal port: ids, order and scores, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer import reference, spec_port, synthetic
from indexer.corpus import Law, read_corpus
from indexer.reference import (
    byte4_to_int,
    exact_term_score,
    int_to_byte4,
    lucene_term_score,
)
from indexer.words import words

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


def test_exact_term_score_by_hand() -> None:
    # N=2, df=1: idf = ln(1 + 1.5/1.5) = ln 2; tf=1, length=average: 2.2 / (1 + 1.2) = 1, so ln 2.
    assert exact_term_score(1, 1, 2, 10, 10.0) == pytest.approx(0.6931471805599453, abs=1e-15)


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


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_the_fast_tokeniser_is_words(text: str) -> None:
    judged = reference._Judged()
    assert reference._tokens(text, judged) == words(text)


def test_the_fast_tokeniser_on_case_mapping_traps() -> None:
    for text in ["İstanbul PARKS", "\u212aelvin bus", "ſtop hydrantſ", "Straße FIRES", "x\u0307y"]:
        assert reference._tokens(text, reference._Judged()) == words(text)


# ---- Lucene's arithmetic --------------------------------------------------------------------------


def test_small_float_lengths_by_hand() -> None:
    # From SmallFloat.java: values under 24 are stored as they are; above, 24 + longToInt4(i - 24),
    # which keeps 4 significant bits. 40 - 24 = 16 = 0b10000 keeps all; 17 = 0b10001 loses its last bit.
    for length in range(41):
        assert byte4_to_int(int_to_byte4(length)) == length
    assert byte4_to_int(int_to_byte4(41)) == 40
    assert byte4_to_int(int_to_byte4(47)) == 46  # 23 = 0b10111 -> 0b1011 << 1 = 22
    assert byte4_to_int(int_to_byte4(100)) == 96  # 76 = 0b1001100 -> 0b1001 << 3 = 72
    assert int_to_byte4(100) == 24 + 33  # 76: shift 3, bits 0b001, (3 + 1) << 3 | 1 = 33
    assert int_to_byte4(2**31 - 1) == 255
    encoded = [int_to_byte4(n) for n in range(5000)]
    assert encoded == sorted(encoded)  # order-preserving
    assert all(byte4_to_int(b) <= n for n, b in enumerate(encoded))  # rounds down


def test_lucene_term_score_by_hand() -> None:
    # docCount=2, df=1, tf=1, length=10=avgdl: idf = (float) ln 2 = 0.6931472f; normInverse = 1/1.2f;
    # score = w - w / (1 + 1/1.2) = w * (1/1.2)/(1 + 1/1.2) = w / 2.2, in float.
    plain = lucene_term_score(1, 1, 2, 10, 10.0, legacy=False)
    legacy = lucene_term_score(1, 1, 2, 10, 10.0, legacy=True)
    assert isinstance(plain, np.float32)
    assert float(plain) == pytest.approx(0.6931472 / 2.2, rel=1e-6)
    assert float(legacy) == pytest.approx(0.6931472, rel=1e-6)
    assert float(plain) != 0.6931471805599453 / 2.2  # float32, not float64


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5), st.integers(1, 50), st.integers(0, 200), st.integers(1, 40))
def test_lucene_equals_the_exact_score_within_float_precision_up_to_40_words(
    tf: int, df: int, extra: int, length: int
) -> None:
    size = df + extra
    average = 17.25
    exact = exact_term_score(tf, df, size, length, average)
    assert float(lucene_term_score(tf, df, size, length, average, legacy=True)) == pytest.approx(exact, rel=2e-6)


def test_lucene_scores_long_laws_at_their_rounded_length() -> None:
    assert lucene_term_score(2, 3, 100, 47, 30.0, legacy=True) == lucene_term_score(2, 3, 100, 46, 30.0, True)
    assert float(lucene_term_score(2, 3, 100, 47, 30.0, legacy=True)) > exact_term_score(2, 3, 100, 47, 30.0)


def test_lucene_score_sums_in_double_and_casts() -> None:
    stats = reference.statistics(PARKING)
    terms = ["park", "fire", "hydrant"]
    parts = [
        lucene_term_score(stats.counts[0][t], stats.vocabulary[t], stats.doc_count, stats.lengths[0],
                          stats.sum_total_term_freq / stats.doc_count, False)
        for t in terms
    ]  # fmt: skip
    total = reference.lucene_score(terms, stats, 0)
    assert total == float(np.float32(sum(float(p) for p in parts)))
    assert stats.doc_count == 5  # the all-stopword law has no field in Lucene; the process row neither
    assert reference.lucene_score(terms, stats, 3) == 0.0
