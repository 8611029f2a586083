"""Whether a difference `lawindex eval` shows is more than chance: paired tests over the same questions.

Two ways asked the same judged questions (or one way in two runs) give, per question, two values of a
measure (recall@8, MRR@8, nDCG@8). Two paired tests say how likely a mean difference this large is when the
two are the same system:

- Fisher's randomization test (the one Smucker, Allan and Carterette, CIKM 2007, recommend for IR): each
  question's pair swapped or not at random, `RESAMPLES` times, the mean difference each time; the p-value is
  the share at least as far from 0 as the observed one (two-sided). scipy.stats.permutation_test with
  `permutation_type="samples"`, from a fixed seed, so that the same figures give the same p-value every run.
- Student's paired t-test: scipy.stats.ttest_rel (two-sided).

Through scipy, not by hand: ranx's own `compare` calls the same scipy t-test, and ranx itself would bring 17
packages (numba, llvmlite, pandas, matplotlib, seaborn, ir_datasets among them) where scipy is already
installed (pytrec_eval, under ir-measures, needs it). A difference is called significant at ALPHA by the
randomization test; a question where both are equal counts in both tests, as ranx and trec_eval count it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ALPHA = 0.05
RESAMPLES = 10_000
SEED = 31  # fixed: the randomization test's p-value is then a function of the figures alone


@dataclass(frozen=True)
class Paired:
    """A paired comparison of `first` and `second` on one measure over the same questions."""

    first: str
    second: str
    measure: str
    first_mean: float
    second_mean: float
    randomization_p: float
    t_p: float

    @property
    def difference(self) -> float:
        """The mean of first - second."""
        return self.first_mean - self.second_mean

    @property
    def significant(self) -> bool:
        """True when the randomization test's p-value is below ALPHA."""
        return self.randomization_p < ALPHA


def paired(first: str, second: str, measure: str, a: Sequence[float], b: Sequence[float]) -> Paired:
    """The two paired tests of the values `a` and `b` (one pair a question, in the same order)."""
    import numpy as np
    import numpy.typing as npt
    from scipy import stats  # type: ignore[import-untyped]

    if len(a) != len(b):
        raise ValueError(f"paired values of {len(a)} and {len(b)} questions")
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if len(x) == 0 or bool(np.all(x == y)):
        # No difference at all: every resample is the observed 0 and the t statistic is 0/0.
        mean = float(x.mean()) if len(x) else 0.0
        return Paired(first, second, measure, mean, mean, 1.0, 1.0)

    def mean_difference(u: npt.NDArray[np.float64], v: npt.NDArray[np.float64], axis: int) -> Any:
        return np.mean(u - v, axis=axis)

    randomization = stats.permutation_test(
        (x, y),
        mean_difference,
        permutation_type="samples",
        n_resamples=RESAMPLES,
        vectorized=True,
        alternative="two-sided",
        rng=np.random.default_rng(SEED),
    )
    t = stats.ttest_rel(x, y)
    t_p = float(t.pvalue)
    return Paired(
        first, second, measure, float(x.mean()), float(y.mean()), float(randomization.pvalue),
        t_p if math.isfinite(t_p) else 1.0,
    )  # fmt: skip


def stars(p: float) -> str:
    """A p-value as the usual marks: `**` below 0.01, `*` below ALPHA, nothing else."""
    return "**" if p < 0.01 else "*" if p < ALPHA else ""
