"""A vectorisable ``exp`` for Numba loops, within one unit in the last place of libm's.

Numba compiles ``np.exp(x)`` on a float to a call of libm's ``exp``: about
7.4 ns an element here, and no loop that calls it vectorises. :func:`exp` is
the textbook reduction ``exp(x) = 2**k exp(r)``, ``|r| <= ln(2) / 2``, with a
degree-13 Taylor polynomial (truncation below ``2e-18`` relative) and ``2**k``
built from its bits, in straight-line code: a loop of it compiled with
``fastmath={"contract"}`` (fused multiply-adds) vectorises, at about 2 ns an
element (docs/performance.md). Its results differ from libm's by at most one
unit in the last place (about one element in twenty differs at all).

``2**k`` is the product of two powers of two of about half the exponent each,
so that results in the subnormal range (``x`` below about -708.4) are rounded
once, as libm rounds them; below -745.2 the result is 0 and above 709.8 it is
``inf``. NaN gives NaN.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_SHIFTER = 6755399441055744.0  # 1.5 * 2**52: x + _SHIFTER - _SHIFTER rounds x to an integer
_SHIFTER_BITS = 0x4338000000000000  # its bits: bits(x + _SHIFTER) - this is that integer
_INV_LN2 = 1.4426950408889634
# ln 2 in two parts (fdlibm's): k * _LN2_HI is exact for |k| < 2**20
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = (
    1.0 / np.prod(np.arange(1.0, k + 1.0)) for k in range(2, 14))


@intrinsic
def _bits(typingctx, x):
    """The bits of a float64 as an int64 (no conversion)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, x):
    """The float64 whose bits are the int64 ``x``."""
    if x != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@njit(inline="always")
def exp(x):
    """``exp(x)`` within one ulp of libm's, in code a loop vectorises (see the module)."""
    x = x if not x < -746.0 else -746.0  # (NaN passes both tests unchanged)
    x = x if not x > 710.0 else 710.0
    t = x * _INV_LN2 + _SHIFTER
    k = t - _SHIFTER
    ki = _bits(t) - _SHIFTER_BITS  # k as an integer, in [-1076, 1025]
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = _C13
    p = p * r + _C12
    p = p * r + _C11
    p = p * r + _C10
    p = p * r + _C9
    p = p * r + _C8
    p = p * r + _C7
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + 1.0
    p = p * r + 1.0
    # 2**k as 2**k1 * 2**k2, both normal; the shift is of a positive value (AVX2 has no
    # arithmetic shift of 64-bit lanes)
    k1 = ((ki + 1100) >> 1) - 550
    k2 = ki - k1
    return p * _from_bits((k1 + 1023) << 52) * _from_bits((k2 + 1023) << 52)


@njit(cache=True, nogil=True, fastmath={"contract"})
def exp_shifted(x, shift, out, lo, hi):
    """``out[i] = exp(x[i] - shift)`` for ``i`` in ``[lo, hi)`` (:func:`exp`), vectorised.

    Examples
    --------
    >>> x = np.array([0.0, -1.0, 3.0])
    >>> out = np.empty(3)
    >>> exp_shifted(x, 3.0, out, 0, 3)
    >>> bool(np.all(np.abs(out - np.exp(x - 3.0)) <= np.spacing(np.exp(x - 3.0))))
    True
    """
    xs = x[lo:hi]
    o = out[lo:hi]
    for i in range(hi - lo):
        o[i] = exp(xs[i] - shift)
