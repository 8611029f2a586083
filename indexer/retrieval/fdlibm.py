"""The spec's logarithm, bit for bit: fdlibm's `__ieee754_log` (e_log.c), the algorithm of V8's `Math.log`
and of Java's `StrictMath.log`, ported from its description, for one float and for a numpy array.

Why not Python's or numpy's logarithm: both are glibc's, which rounds differently from fdlibm in the last
bit for about 3% of the spec's idf arguments (tests/unit/test_fdlibm.py counts them on its sample), and an
ulp is enough to turn two laws the spec scores bit-equal (kept in corpus order) into two that are not, in
the other order. Node's V8 (11.3, Node 20) runs exactly this algorithm; tests/unit/test_fdlibm.py holds
both forms here bit-equal to Node's `Math.log` and to Java's `StrictMath.log` on over 100,000 arguments.

The method (fdlibm's comments): write x = 2^k * (1 + f) with sqrt(2)/2 < 1 + f < sqrt(2); with
s = f / (2 + f), log(1 + f) = 2s + s*R(s^2), R a degree-14 polynomial in s (coefficients Lg1..Lg7, error
below 2^-58.45); then log(x) = k*ln2_hi + (f - (hfsq - (s*(hfsq + R) + k*ln2_lo))), hfsq = f^2/2, ln2
split in two so that k*ln2_hi is exact. Near 1 (|f| < 2^-20) a short series replaces the polynomial.

Both forms do the same IEEE-754 double operations (+, -, *, /, each correctly rounded) in the same order
on the same operands, and the same integer operations on the bits, so an element of `log_array` is the
bits of `log` of it. No fused multiply-add: numpy does not contract `a * b + c`, nor does CPython.
"""

from __future__ import annotations

import struct

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]

# The constants, with the bits fdlibm intends (hex in its source; these decimals round to exactly them).
LN2_HI = 6.93147180369123816490e-01  # 0x3FE62E42_FEE00000: ln 2's leading 32 bits, so k * LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10  # 0x3DEA39EF_35793C76: ln 2 - LN2_HI
TWO54 = 1.80143985094819840000e16  # 0x43500000_00000000: scales a subnormal up to a normal
LG1 = 6.666666666666735130e-01  # 0x3FE55555_55555593
LG2 = 3.999999999940941908e-01  # 0x3FD99999_9997FA04
LG3 = 2.857142874366239149e-01  # 0x3FD24924_94229359
LG4 = 2.222219843214978396e-01  # 0x3FCC71C5_1D8E78AF
LG5 = 1.818357216161805012e-01  # 0x3FC74664_96CB03DE
LG6 = 1.531383769920937332e-01  # 0x3FC39A09_D078C69F
LG7 = 1.479819860511658591e-01  # 0x3FC2F112_DF3E5244
THIRD = 0.33333333333333333  # the series near 1: f - f^2 (1/2 - f/3)

_INF = float("inf")
_NAN = float("nan")

_DOUBLE = struct.Struct("<d")
_BITS = struct.Struct("<q")


def _bits(x: float) -> int:
    """The 64 bits of `x` as a signed integer (the sign bit makes it negative)."""
    return int(_BITS.unpack(_DOUBLE.pack(x))[0])


def _double(bits: int) -> float:
    return float(_DOUBLE.unpack(_BITS.pack(bits))[0])


def log(x: float) -> float:
    """fdlibm's natural logarithm of `x`: V8's `Math.log(x)` and Java's `StrictMath.log(x)`, bit for bit.

    log(+-0) = -inf, log(x < 0) = nan, log(+inf) = +inf, log(nan) = nan, log(1) = +0.
    """
    bits = _bits(x)
    hx = bits >> 32  # the high word, signed: negative for a negative x
    lx = bits & 0xFFFFFFFF
    k = 0
    if hx < 0x00100000:  # below 2^-1022: zero, subnormal or negative
        if ((hx & 0x7FFFFFFF) | lx) == 0:
            return -_INF
        if hx < 0:
            return _NAN
        k -= 54
        x *= TWO54  # exact: a subnormal scaled up to a normal
        bits = _bits(x)
        hx, lx = bits >> 32, bits & 0xFFFFFFFF
    if hx >= 0x7FF00000:
        return x + x  # +inf or nan
    k += (hx >> 20) - 1023
    hx &= 0x000FFFFF
    # The mantissa's place against sqrt(2): i is 0x100000 when 1 + f would reach past it; then x is
    # normalised to [sqrt(2)/2, 1) instead of [1, sqrt(2)) and k counts one more.
    i = (hx + 0x95F64) & 0x100000
    x = _double(((hx | (i ^ 0x3FF00000)) << 32) | lx)
    k += i >> 20
    f = x - 1.0
    if (0x000FFFFF & (2 + hx)) < 3:  # -2^-20 <= f < 2^-20
        if f == 0.0:
            if k == 0:
                return 0.0
            dk = float(k)
            return dk * LN2_HI + dk * LN2_LO
        r = f * f * (0.5 - THIRD * f)
        if k == 0:
            return f - r
        dk = float(k)
        return dk * LN2_HI - ((r - dk * LN2_LO) - f)
    s = f / (2.0 + f)
    dk = float(k)
    z = s * s
    w = z * z
    t1 = w * (LG2 + w * (LG4 + w * LG6))
    t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)))
    r = t2 + t1
    # Where the mantissa is far enough from 1 (hx between 0x6147A and 0x6B851, the two differences both
    # positive), the more accurate form with hfsq.
    if ((hx - 0x6147A) | (0x6B851 - hx)) > 0:
        hfsq = 0.5 * f * f
        if k == 0:
            return f - (hfsq - s * (hfsq + r))
        return dk * LN2_HI - ((hfsq - (s * (hfsq + r) + dk * LN2_LO)) - f)
    if k == 0:
        return f - s * (f - r)
    return dk * LN2_HI - ((s * (f - r) - dk * LN2_LO) - f)


def log_array(values: npt.ArrayLike) -> Floats:
    """`log` of every element of `values` (as float64), elementwise: each element the bits `log` gives.

    Every branch of `log` is computed for every element and the element's own branch chosen by a mask
    (np.where), so the operations on an element are those `log` does on it.
    """
    given = np.array(values, dtype=np.float64).reshape(-1)
    shape = np.shape(values)
    x = given
    with np.errstate(all="ignore"):  # the branches not taken see zeros, nans and infinities
        bits = x.view(np.int64)
        hx = bits >> 32
        zero = ((hx & 0x7FFFFFFF) | (bits & 0xFFFFFFFF)) == 0
        low = hx < 0x00100000
        negative = low & (hx < 0) & ~zero
        subnormal = low & ~negative & ~zero
        k = np.where(subnormal, -54, 0).astype(np.int64)
        x = np.where(subnormal, x * TWO54, x)
        bits = x.view(np.int64)
        hx = bits >> 32
        lx = bits & 0xFFFFFFFF
        special = hx >= 0x7FF00000
        k += (hx >> 20) - 1023
        hx &= 0x000FFFFF
        i = (hx + 0x95F64) & 0x100000
        x = (((hx | (i ^ 0x3FF00000)) << 32) | lx).view(np.float64)
        k += i >> 20
        f = x - 1.0
        dk = k.astype(np.float64)  # exact: |k| < 1100
        k0 = k == 0

        # Near 1: -2^-20 <= f < 2^-20.
        r = f * f * (0.5 - THIRD * f)
        near = np.where(
            f == 0.0,
            np.where(k0, 0.0, dk * LN2_HI + dk * LN2_LO),
            np.where(k0, f - r, dk * LN2_HI - ((r - dk * LN2_LO) - f)),
        )

        s = f / (2.0 + f)
        z = s * s
        w = z * z
        t1 = w * (LG2 + w * (LG4 + w * LG6))
        t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)))
        r = t2 + t1
        hfsq = 0.5 * f * f
        accurate = np.where(
            k0,
            f - (hfsq - s * (hfsq + r)),
            dk * LN2_HI - ((hfsq - (s * (hfsq + r) + dk * LN2_LO)) - f),
        )
        plain = np.where(k0, f - s * (f - r), dk * LN2_HI - ((s * (f - r) - dk * LN2_LO) - f))
        result = np.where(((hx - 0x6147A) | (0x6B851 - hx)) > 0, accurate, plain)
        result = np.where((0x000FFFFF & (2 + hx)) < 3, near, result)
        # The edges, last: nothing above is defined for them.
        result = np.where(special, given + given, result)  # +inf or nan
        result = np.where(negative, np.nan, result)
        result = np.where(zero, -np.inf, result)
    return result.reshape(shape)
