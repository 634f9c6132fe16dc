"""The CSR checks' NumPy paths (small inputs, nothing to compile) against their kernels."""

from __future__ import annotations

import numpy as np

from graphpar.kernels import csr


def _random_csr(rng):
    n = int(rng.integers(1, 12))
    m = int(rng.integers(0, 30))
    counts = rng.multinomial(m, np.ones(n) / n)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    cols = rng.integers(-1, n + 1, m).astype(np.int32)
    if rng.random() < 0.5:  # mostly sorted rows, so that the first bad row varies
        for i in range(n):
            if counts[i] <= n + 2:
                cols[indptr[i]:indptr[i + 1]] = np.sort(
                    rng.choice(np.arange(n + 2), counts[i], replace=False))
    return n, indptr, cols


def test_numpy_paths_equal_the_kernels_on_random_rows():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(3000):
        n, indptr, cols = _random_csr(rng)
        row = csr.first_unsorted_row(indptr, cols)
        assert row == csr._first_unsorted_row(indptr, cols)
        k = csr.first_bad_index(cols, n)
        assert k == csr._first_bad_index(cols, n)
        seen.add((row >= 0, k >= 0))
    assert seen == {(False, False), (False, True), (True, False), (True, True)}


def test_large_inputs_use_the_kernels_with_the_same_answers():
    n = csr.NUMPY_CHECK_BELOW
    indptr = np.array([0, n // 2, n + 3], dtype=np.int64)
    cols = np.concatenate([np.arange(n // 2), np.arange(n - n // 2 + 3)]).astype(np.int64)
    cols[n // 2 + 10] = cols[n // 2 + 9]  # a duplicate in row 1
    assert csr.first_unsorted_row(indptr, cols) == 1
    assert csr.first_bad_index(cols, n // 2) == n // 2 + n // 2


def test_numpy_weight_check_equals_the_compiled_scan():
    # the same array checked below NUMPY_CHECK_BELOW (numpy) and, padded with zeros past
    # it, by the compiled chunked scan: same first bad weight, code and largest weight
    rng = np.random.default_rng(3)
    special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e308, 2.5]
    pad = np.zeros(csr.NUMPY_CHECK_BELOW)
    codes = set()
    for _ in range(300):
        w = rng.choice(special, int(rng.integers(1, 40)))
        for reject_negative, reject_inf in ((False, False), (True, False), (True, True)):
            small = csr.first_bad_weight(w, reject_negative, reject_inf, 1)
            large = csr.first_bad_weight(np.concatenate([w, pad]), reject_negative,
                                         reject_inf, 4)
            assert small == large, (w, reject_negative, reject_inf)
            codes.add(small[1])
    assert codes == {0, 1, 2, 3}
