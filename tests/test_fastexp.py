"""The vectorised ``exp`` of the Cox kernels against NumPy's (libm's) ``exp``."""

import numpy as np
import pytest

from graphpar.kernels.fastexp import exp_shifted


def _ulps(got, ref):
    """|got - ref| in units of the last place of ``ref`` (the spacing of subnormals below)."""
    return np.abs(got - ref) / np.spacing(np.maximum(np.abs(ref), 5e-324))


def test_within_one_ulp_of_libm_over_the_whole_range():
    rng = np.random.default_rng(0)
    x = np.concatenate([
        rng.uniform(-760.0, 715.0, 400_000),          # every exponent, both overflows
        -rng.exponential(3.0, 400_000),               # what the Cox kernel sees (x <= 0)
        rng.uniform(-1e-3, 1e-3, 100_000),            # near 0, where r is tiny
        rng.uniform(-745.2, -708.3, 100_000),         # results in the subnormal range
        np.arange(-1100, 1100) * np.log(2) / 2,       # the edges of the reduction
    ])
    got = np.empty_like(x)
    exp_shifted(x, 0.0, got, 0, x.size)
    with np.errstate(over="ignore"):
        ref = np.exp(x)
    finite = np.isfinite(ref)
    assert _ulps(got[finite], ref[finite]).max() <= 1.0
    np.testing.assert_array_equal(got[~finite], ref[~finite])
    assert (got != ref).mean() < 0.1  # most results are libm's exactly


@pytest.mark.parametrize("x, want", [
    (0.0, 1.0), (-0.0, 1.0), (-np.inf, 0.0), (np.inf, np.inf), (-746.0, 0.0),
    (-745.2, 0.0), (-745.13, 5e-324), (710.0, np.inf), (709.78, np.exp(709.78)),
])
def test_edges(x, want):
    got = np.empty(1)
    exp_shifted(np.array([x]), 0.0, got, 0, 1)
    assert got[0] == want


def test_nan_stays_nan():
    got = np.empty(2)
    exp_shifted(np.array([np.nan, -1.0]), 0.0, got, 0, 2)
    assert np.isnan(got[0]) and got[1] == pytest.approx(np.exp(-1.0), rel=2e-16)


def test_shift_and_range():
    # out[i] = exp(x[i] - shift) on [lo, hi) only; the rest of out is left alone
    x = np.linspace(-5.0, 5.0, 11)
    out = np.full(11, -7.0)
    exp_shifted(x, 5.0, out, 3, 8)
    np.testing.assert_array_equal(out[:3], -7.0)
    np.testing.assert_array_equal(out[8:], -7.0)
    assert _ulps(out[3:8], np.exp(x[3:8] - 5.0)).max() <= 1.0
