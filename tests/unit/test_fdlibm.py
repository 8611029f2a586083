"""indexer.retrieval.fdlibm against the logarithms it ports: V8's `Math.log` (Node runs tests/logarithm/v8_log.mjs) and
Java's `StrictMath.log` (the single-file launcher runs tests/logarithm/StrictLog.java), bit for bit, scalar
and vectorised, on a sample of over 200,000 doubles: the spec's idf arguments over many N and df, and
doubles of every kind (every exponent, subnormals, 1 and its neighbours, the normalisation edge at
sqrt(2), huge, inf, nan, zeros, negatives). Doubles travel as hex bit patterns, so nothing is rounded on the
way. A NaN is compared as a NaN: its payload is not specified (V8 and Java give different ones).

It also counts how many of the idf arguments glibc's logarithm (Python's) gets otherwise: the reason the
port exists. Node and Java are part of the test: where either is missing the test is skipped, and fails
under CI=true.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from indexer.retrieval import fdlibm, scoring

SCRIPTS = Path(__file__).resolve().parents[1] / "logarithm"


def _bits(x: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", x))[0])


def _double(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def idf_arguments() -> list[float]:
    """The spec's idf arguments `1 + (N - df + 0.5) / (df + 0.5)`: every df of every N up to 300, and for
    300 larger N (to 1,000,000 laws) about 300 df each, small ones (rare words) most of all."""
    rng = random.Random(19)
    out = [1 + (n - df + 0.5) / (df + 0.5) for n in range(1, 301) for df in range(1, n + 1)]
    for n in sorted({rng.randint(301, 30_000) for _ in range(300)} | {1_000, 6_000, 23_952, 100_000, 1_000_000}):
        dfs = {rng.randint(1, n) for _ in range(200)} | {rng.randint(1, min(n, 200)) for _ in range(120)}
        out += [1 + (n - df + 0.5) / (df + 0.5) for df in sorted(dfs)]
    return out


def other_doubles() -> list[float]:
    """Doubles of every kind, each branch of e_log.c many times over."""
    rng = random.Random(20)
    out = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
           2.225073858507201e-308, 1.7976931348623157e308, 2.0, 0.5, math.e, 10.0, 2**-1022, 2**1023]  # fmt: skip
    out += [_double(rng.getrandbits(64)) for _ in range(40_000)]  # any bits: half negative, some nan
    # Positive, uniform over the exponents, subnormals included.
    out += [_double((rng.randint(0, 2046) << 52) | rng.getrandbits(52)) for _ in range(30_000)]
    out += [_double(rng.randint(1, 2**52 - 1)) for _ in range(5_000)]  # subnormal
    one = _bits(1.0)
    out += [_double(one + d) for d in range(-3_000, 3_001)]  # 1 and its neighbours: the series near 1
    out += [_double(one + (d << 32)) for d in range(-40, 41)]  # |f| about 2^-20, the series' edge
    for high in (0x3FF6A09E, 0x3FE6A09E, 0x3FF6147A, 0x3FF6B851, 0x4006A09E):  # sqrt(2), the hfsq edges
        out += [_double(((high + d) << 32) | rng.getrandbits(32)) for d in range(-30, 31)]
    out += [1 + rng.random() * 10.0 ** rng.randint(-16, 6) for _ in range(20_000)]  # just above 1 to huge
    return out


def _require(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        message = f"{tool} is not installed: fdlibm's port cannot be held to it"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def _run_on(command: list[str], values: list[float], directory: Path) -> list[float]:
    given, taken = directory / "in.hex", directory / "out.hex"
    given.write_text("".join(f"{_bits(x):016x}\n" for x in values), encoding="ascii")
    done = subprocess.run([*command, str(given), str(taken)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = [_double(int(line, 16)) for line in taken.read_text(encoding="ascii").split()]
    assert len(out) == len(values)
    return out


@pytest.fixture(scope="module")
def sample() -> list[float]:
    values = idf_arguments() + other_doubles()
    assert len(idf_arguments()) >= 100_000 and len(values) >= 200_000
    return values


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tmp_path_factory.mktemp("logarithm")


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or _bits(a) == _bits(b)


def _differences(sample: list[float], expected: list[float]) -> list[tuple[float, float, float, float]]:
    """(x, expected, scalar, vectorised) wherever either form of the port differs from `expected`."""
    vectorised = fdlibm.log_array(np.array(sample)).tolist()
    return [
        (x, e, s, v)
        for x, e, v in zip(sample, expected, vectorised, strict=True)
        if not (_same(s := fdlibm.log(x), e) and _same(v, e))
    ]


def test_the_port_is_v8s_math_log_bit_for_bit(sample: list[float], workdir: Path) -> None:
    v8 = _run_on([_require("node"), str(SCRIPTS / "v8_log.mjs")], sample, workdir)
    assert _differences(sample, v8)[:5] == []
    # What the port is for: glibc's logarithm, which Python and numpy use, is not V8's.
    arguments = idf_arguments()
    off = sum(1 for x, e in zip(arguments, v8, strict=False) if _bits(math.log(x)) != _bits(e))
    print(f"glibc's log differs from V8's on {off} of {len(arguments)} idf arguments ({off / len(arguments):.2%})")
    assert off > 0


def test_the_port_is_javas_strictmath_log_bit_for_bit(sample: list[float], workdir: Path) -> None:
    java = _require("java")
    strict = _run_on([java, str(SCRIPTS / "StrictLog.java")], sample, workdir)
    assert _differences(sample, strict)[:5] == []


def test_the_edges() -> None:
    # By the definition (ECMA-262 Math.log, e_log.c's special cases), not by running anything.
    assert fdlibm.log(1.0) == 0.0 and math.copysign(1, fdlibm.log(1.0)) == 1
    assert fdlibm.log(0.0) == -math.inf and fdlibm.log(-0.0) == -math.inf
    assert math.isnan(fdlibm.log(-1.0)) and math.isnan(fdlibm.log(-math.inf)) and math.isnan(fdlibm.log(math.nan))
    assert fdlibm.log(math.inf) == math.inf
    assert fdlibm.log(5e-324) == -744.4400719213812  # the smallest subnormal: -1074 ln 2
    vectorised = fdlibm.log_array([1.0, 0.0, -0.0, -1.0, math.inf, math.nan, 5e-324])
    assert vectorised[:3].tolist() == [0.0, -math.inf, -math.inf] and vectorised[4] == math.inf
    assert math.isnan(vectorised[3]) and math.isnan(vectorised[5]) and vectorised[6] == -744.4400719213812
    assert fdlibm.log_array(np.array(2.0)).shape == () and fdlibm.log_array(np.ones((2, 3))).shape == (2, 3)


def test_the_vectorised_idf_is_the_scalar_one() -> None:
    for size in (1, 2, 51, 1_000, 6_000, 23_952):
        dfs = np.arange(1, min(size, 3_000) + 1)
        vectorised = scoring.idf_array(dfs, size)
        assert [_bits(v) for v in vectorised.tolist()] == [_bits(scoring.idf(int(df), size)) for df in dfs]


def test_glibcs_logarithm_would_break_the_last_bit_ties() -> None:
    # Why tests/synthetic.py's last_bit_corpora are worth asking: the two laws that tie bit for bit with
    # V8's logarithm (so corpus order puts S0101 first) do not tie with glibc's, and the later one wins.
    from indexer.retrieval.reference import statistics
    from tests import synthetic

    for corpus in synthetic.last_bit_corpora()[:2]:
        stats = statistics(tuple(corpus.laws))
        df = stats.vocabulary["zorvak"]
        first, later = (next(i for i, law in enumerate(corpus.laws) if law.id == f"TX-{n}") for n in ("S0101", "S0701"))

        argument = 1 + (stats.size - df + 0.5) / (df + 0.5)
        for log, tie in ((fdlibm.log(argument), True), (math.log(argument), False)):
            a, b = (
                scoring.term_score(log, stats.counts[i]["zorvak"], stats.lengths[i], stats.average)
                for i in (first, later)
            )
            assert (_bits(a) == _bits(b)) if tie else (b > a), corpus.name
