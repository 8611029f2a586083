"""indexer.retrieval.scoring: the one idf and term score, exact and Lucene, against figures worked out by hand and
against the spec's literal port; the vectorised form held bit for bit to the scalar one."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.retrieval import fdlibm, reference, scoring
from indexer.retrieval.scoring import byte4_to_int, exact_term_score, int_to_byte4, lucene_term_score
from tests import spec_port, synthetic

INDEXER = Path(__file__).resolve().parents[2] / "indexer"


def test_the_idf_is_written_once_with_v8s_logarithm() -> None:
    # "One definition of idf": no module but the scoring core takes a logarithm, and that one is V8's
    # (indexer.retrieval.fdlibm): glibc's (Python's, numpy's) is an ulp off for 3% of idf arguments. Nor do the
    # tests and benchmarks, but the one test that counts how often glibc is off.
    root = INDEXER.parent
    for path in [*INDEXER.rglob("*.py"), *(root / "tests").rglob("*.py"), *(root / "benchmarks").rglob("*.py")]:
        if path.name != "test_fdlibm.py":
            assert not re.search(r"\b(math|np|numpy)\.log\b", path.read_text(encoding="utf-8")), path
    for path in INDEXER.rglob("*.py"):
        if path.name not in ("scoring.py", "fdlibm.py"):
            assert not re.search(r"\bfdlibm\b", path.read_text(encoding="utf-8")), path


def test_exact_term_score_by_hand() -> None:
    # N=2, df=1: idf = ln(1 + 1.5/1.5) = ln 2; tf=1, length=average: 2.2 / (1 + 1.2) = 1, so ln 2.
    assert scoring.idf(1, 2) == 0.6931471805599453
    assert exact_term_score(1, 1, 2, 10, 10.0) == pytest.approx(0.6931471805599453, abs=1e-15)
    # N=10, df=1: idf = ln(1 + 9.5/1.5) = ln(22/3); tf=2, length 20 of average 10:
    # 2.2·2 / (2 + 1.2·(0.25 + 1.5)) = 4.4 / 4.1.
    assert exact_term_score(2, 1, 10, 20, 10.0) == pytest.approx(1.9924301646902063 * 4.4 / 4.1, rel=1e-15)  # ln(22/3)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 9), st.integers(1, 60), st.integers(0, 300), st.integers(0, 400), st.floats(0.5, 80))
def test_exact_term_score_is_the_spec_ports(tf: int, df: int, extra: int, length: int, average: float) -> None:
    # The spec's expression as spec/retrieve.md writes it: the core must keep its order of operations
    # (idf * (tf * 2.2), say, differs in the last bits, and a near tie flips). Its Math.log is V8's.
    size = df + extra
    k1, b = 1.2, 0.75
    idf = fdlibm.log(1 + (size - df + 0.5) / (df + 0.5))
    spec = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / average))
    assert exact_term_score(tf, df, size, length, average) == spec  # bit for bit


def test_the_vectorised_term_score_is_the_scalar_one_bit_for_bit() -> None:
    # The reference scores every posting at once with numpy; explain, query and the spec score one law
    # at a time in Python floats. The same expression must give the same bits either way.
    stats = reference.statistics(tuple(synthetic.generate_corpus("TX", 1500, 9)))
    words = list(stats.vocabulary)
    checked = 0
    for w, word in enumerate(words):
        lo, hi = stats.offsets[w], stats.offsets[w + 1]
        for law, vectorised in zip(stats.post_laws[lo:hi], stats.post_scores[lo:hi], strict=True):
            tf = stats.counts[law][word]
            scalar = exact_term_score(tf, stats.vocabulary[word], stats.size, stats.lengths[law], stats.average)
            assert float(vectorised) == scalar, (word, int(law))
            checked += 1
    assert checked == sum(len(counts) for counts in stats.counts)


def test_the_reference_scores_are_the_spec_ports_sums() -> None:
    # A single-word question: the law's score is that word's term score alone, by the port's own formula.
    laws = tuple(synthetic.generate_corpus("TX", 800, 10))
    stats = reference.statistics(laws)
    for word in list(stats.vocabulary)[:40]:
        spec = {law.id: value for law, value in spec_port.bm25_scored(laws, word, len(laws))}
        for hit in reference.score(laws, word, len(laws)):
            assert hit.score == spec[hit.law.id]
            assert hit.score == exact_term_score(
                hit.counts[word], stats.vocabulary[word], stats.size, hit.length, stats.average
            )


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
    assert scoring.lucene_length(100) == 96
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
