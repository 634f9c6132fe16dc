"""The Cox kernels against direct O(n^2) risk-set sums, finite differences and each other."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from naive_cox import cox_loglik

from graphpar.kernels import cox as K
from graphpar.kernels.cox_sort import cox_order

P = 3


def make_data(n=80, seed=0, nstrata=3, ties=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, P))
    X[:, 2] = rng.integers(0, 3, n)  # a discrete covariate
    if ties:
        time = rng.integers(1, 12, n).astype(float)  # many tie groups, some large
    else:
        time = rng.exponential(size=n)
    event = rng.random(n) < 0.7
    event[0] = True
    strata = rng.integers(0, nstrata, n)
    w = rng.uniform(0.2, 3.0, n)
    off = rng.normal(scale=0.3, size=n)
    return X, time, event, strata, w, off


class Sorted:
    """The kernels' inputs for a data set, sorted as the kernels require."""

    def __init__(self, X, time, event, strata, w, off, beta):
        order = np.lexsort((-time, strata))
        self.X = np.ascontiguousarray(X[order])
        self.event = event[order].astype(np.uint8)
        self.w = np.empty(0) if w is None else w[order]
        self.strata = strata[order].astype(np.int64)
        self.flags = np.empty(len(time), dtype=np.uint8)
        K.tie_flags(time[order], self.strata, self.flags)
        self.eta = self.X @ beta + (0.0 if off is None else off[order])
        self.nstrata = int(strata.max()) + 1
        self.shift = np.array([self.eta[self.strata == s].max() for s in range(self.nstrata)])

    def block(self, lo, hi, target, ties, hmode, carry, seg=None):
        flags = self.flags[lo:hi]
        cs = np.empty((hi - lo) // target + 2, dtype=np.int64)
        cst = np.empty((hi - lo) // target + 2, dtype=np.int64)
        nc = K.chunk_layout(flags, target, int(self.strata[lo]), cs, cst)
        ll = np.zeros(1)
        g = np.zeros(P)
        h = np.zeros((P, P))
        w = self.w[lo:hi] if self.w.size else self.w
        XT = np.ascontiguousarray(self.X[lo:hi].T)  # the kernels read covariates transposed
        K.cox_block(XT, self.eta[lo:hi], w, self.event[lo:hi], flags, self.shift,
                    cs[: nc + 1], cst[:nc], K.EFRON if ties == "efron" else K.BRESLOW, hmode,
                    carry[0], carry[1], carry[2], np.empty(hi - lo), ll, g, h,
                    np.empty(P + 2) if seg is None else seg)
        return ll[0], g, h

    def whole(self, target=1000, ties="efron", hmode=K.HESS_FULL):
        carry = (np.zeros(1), np.zeros(P), np.zeros((P, P)))
        return self.block(0, len(self.event), target, ties, hmode, carry)

    def group_starts(self):
        return np.flatnonzero(self.flags & K.FLAG_GROUP)


BETA = np.array([0.4, -0.7, 0.3])
CASES = [
    dict(strata=False, weights=False, offset=False),
    dict(strata=True, weights=False, offset=False),
    dict(strata=False, weights=True, offset=True),
    dict(strata=True, weights=True, offset=True),
]


def _inputs(case, seed=0, **kw):
    X, time, event, strata, w, off = make_data(seed=seed, **kw)
    if not case["strata"]:
        strata = np.zeros_like(strata)
    return (X, time, event, strata, w if case["weights"] else None,
            off if case["offset"] else None)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(k for k, v in c.items() if v)
                         or "plain")
def test_matches_direct_risk_set_sums(ties, case):
    X, time, event, strata, w, off = _inputs(case)
    ref_ll, ref_g, ref_h = cox_loglik(X, time, event, BETA, ties, strata, w, off)
    s = Sorted(X, time, event, strata, w, off, BETA)
    for target in (1, 7, 1000):
        ll, g, h = s.whole(target, ties)
        assert ll == pytest.approx(ref_ll, rel=1e-12)
        np.testing.assert_allclose(g, ref_g, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(h, ref_h, rtol=1e-10, atol=1e-10)
        np.testing.assert_array_equal(h, h.T)
        ll_d, g_d, h_d = s.whole(target, ties, K.HESS_DIAG)
        assert ll_d == ll
        np.testing.assert_allclose(g_d, g, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(np.diag(h_d), np.diag(ref_h), rtol=1e-10, atol=1e-10)
        assert np.count_nonzero(h_d - np.diag(np.diag(h_d))) == 0
        ll_n, g_n, h_n = s.whole(target, ties, K.HESS_NONE)
        assert ll_n == ll and not h_n.any()


def test_efron_and_breslow_differ_only_with_tied_events():
    X, time, event, strata, w, off = make_data(ties=False)
    e = cox_loglik(X, time, event, BETA, "efron")[0]
    b = cox_loglik(X, time, event, BETA, "breslow")[0]
    assert e == pytest.approx(b, rel=1e-13)
    s = Sorted(X, time, event, np.zeros_like(strata), None, None, BETA)
    assert s.whole(5, "efron")[0] == pytest.approx(s.whole(5, "breslow")[0], rel=1e-13)
    X, time, event, strata, w, off = make_data(ties=True)
    s = Sorted(X, time, event, np.zeros_like(strata), None, None, BETA)
    assert abs(s.whole(5, "efron")[0] - s.whole(5, "breslow")[0]) > 1e-3


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_threads_and_chunking_give_the_same_result(ties):
    X, time, event, strata, w, off = _inputs(CASES[3], n=3000, seed=3)
    s = Sorted(X, time, event, strata, w, off, BETA)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = s.whole(64, ties)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = s.whole(64, ties)
    finally:
        numba.set_num_threads(old)
    assert one[0] == two[0]  # same chunks: same summation order whatever the threads
    np.testing.assert_array_equal(one[1], two[1])
    np.testing.assert_array_equal(one[2], two[2])
    for target in (1, 5, 333, 10**6):
        other = s.whole(target, ties)
        assert other[0] == pytest.approx(one[0], rel=1e-12)
        np.testing.assert_allclose(other[1], one[1], rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(other[2], one[2], rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("hmode", [K.HESS_FULL, K.HESS_DIAG])
@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_carry_in_and_out_split_the_scan(ties, hmode):
    X, time, event, strata, w, off = _inputs(CASES[3], n=200, seed=5)
    s = Sorted(X, time, event, strata, w, off, BETA)
    ref = s.whole(1000, ties, hmode)
    starts = s.group_starts()
    n = len(time)
    for cuts in ([starts[len(starts) // 3]], [starts[5], starts[15], starts[-3]]):
        carry = (np.zeros(1), np.zeros(P), np.zeros((P, P)))
        bounds = [0, *cuts, n]
        tot_ll, tot_g, tot_h = 0.0, np.zeros(P), np.zeros((P, P))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            ll, g, h = s.block(lo, hi, 4, ties, hmode, carry)
            tot_ll += ll
            tot_g += g
            tot_h += h
        assert tot_ll == pytest.approx(ref[0], rel=1e-12)
        np.testing.assert_allclose(tot_g, ref[1], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(tot_h, ref[2], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("hmode", [K.HESS_FULL, K.HESS_DIAG, K.HESS_NONE])
@pytest.mark.parametrize("ties", ["efron", "breslow"])
@pytest.mark.parametrize("case", [CASES[0], CASES[3]])
def test_segment_terms_add_the_s1_s2_carries_afterwards(ties, hmode, case):
    # the distributed scheme: run a block with the true S0 carry and zero S1/S2
    # carries, then add the S1/S2 carries through out_seg = [alpha, beta0, u]
    X, time, event, strata, w, off = _inputs(case, n=300, seed=11)
    s = Sorted(X, time, event, strata, w, off, BETA)
    starts = s.group_starts()
    n = len(time)
    checked = 0
    for cut in (starts[7], starts[len(starts) // 2], starts[-4]):
        carry = (np.zeros(1), np.zeros(P), np.zeros((P, P)))
        s.block(0, cut, 4, ties, hmode, carry)
        true_carry = tuple(c.copy() for c in carry)
        ll, g, h = s.block(cut, n, 5, ties, hmode, true_carry)
        seg = np.full(P + 2, np.nan)
        zero_carry = (carry[0].copy(), np.zeros(P), np.zeros((P, P)))
        ll0, g0, h0 = s.block(cut, n, 5, ties, hmode, zero_carry, seg)
        alpha, beta0, u = seg[0], seg[1], seg[2:]
        C1, C2 = carry[1], carry[2]
        continues = s.flags[cut] & K.FLAG_STRATUM == 0
        if not continues:
            np.testing.assert_array_equal(seg, 0.0)
        checked += continues and alpha > 0
        assert ll0 == pytest.approx(ll, rel=1e-12)
        np.testing.assert_allclose(g0 - C1 * alpha, g, rtol=1e-10, atol=1e-10)
        corr = -C2 * alpha + beta0 * np.outer(C1, C1) + np.outer(C1, u) + np.outer(u, C1)
        if hmode == K.HESS_DIAG:
            corr = np.diag(np.diag(corr))
        if hmode == K.HESS_NONE:
            corr = 0.0
        np.testing.assert_allclose(h0 + corr, h, rtol=1e-10, atol=1e-10)
    assert checked > 0  # at least one cut falls inside a stratum with events after it


def test_carry_out_is_the_risk_set_sum_of_the_last_stratum():
    X, time, event, strata, w, off = _inputs(CASES[3], n=150, seed=2)
    s = Sorted(X, time, event, strata, w, off, BETA)
    carry = (np.zeros(1), np.zeros(P), np.zeros((P, P)))
    mid = s.group_starts()[len(s.group_starts()) // 2]
    s.block(0, mid, 3, "efron", K.HESS_FULL, carry)
    last = s.strata[mid - 1]
    rows = np.flatnonzero(s.strata[:mid] == last)
    r = s.w[rows] * np.exp(s.eta[rows] - s.shift[last])
    assert carry[0][0] == pytest.approx(r.sum(), rel=1e-12)
    np.testing.assert_allclose(carry[1], r @ s.X[rows], rtol=1e-12)
    np.testing.assert_allclose(carry[2], (s.X[rows] * r[:, None]).T @ s.X[rows], rtol=1e-12)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_gradient_and_hessian_match_finite_differences(ties):
    X, time, event, strata, w, off = _inputs(CASES[3], n=120, seed=7)

    def at(beta):
        return Sorted(X, time, event, strata, w, off, beta).whole(5, ties)

    ll, g, h = at(BETA)
    eps = 1e-5
    for j in range(P):
        d = np.zeros(P)
        d[j] = eps
        lp, gp, _ = at(BETA + d)
        lm, gm, _ = at(BETA - d)
        assert (lp - lm) / (2 * eps) == pytest.approx(g[j], rel=1e-6, abs=1e-6)
        np.testing.assert_allclose((gp - gm) / (2 * eps), h[:, j], rtol=1e-6, atol=1e-6)


def test_large_linear_predictor_is_stable():
    X, time, event, strata, w, off = _inputs(CASES[1], n=100, seed=1)
    big = np.array([300.0, -200.0, 150.0])  # exp(eta) overflows without the shift
    s = Sorted(X, time, event, strata, None, None, big)
    ll, g, h = s.whole(3, "efron")
    assert np.isfinite(ll) and np.all(np.isfinite(g)) and np.all(np.isfinite(h))
    shifted = Sorted(X, time, event, strata, None, None, big)
    shifted.shift = shifted.shift + 5.0  # any common shift per stratum gives the same answer
    ll2, g2, h2 = shifted.whole(3, "efron")
    assert ll2 == pytest.approx(ll, rel=1e-10)
    np.testing.assert_allclose(g2, g, rtol=1e-9, atol=1e-9)


def test_linear_predictor_and_stratum_maxima():
    X, time, event, strata, w, off = _inputs(CASES[3], n=500, seed=4)
    s = Sorted(X, time, event, strata, w, off, BETA)
    o = np.lexsort((-time, strata))
    for target in (1, 17, 10**6):
        cs = np.empty(500 // target + 2, dtype=np.int64)
        cst = np.empty(500 // target + 2, dtype=np.int64)
        nc = K.chunk_layout(s.flags, target, 0, cs, cst)
        assert np.all(s.flags[cs[:nc]] & K.FLAG_GROUP)
        np.testing.assert_array_equal(cst[:nc], s.strata[cs[:nc]])
        eta = np.empty(500)
        smax = np.empty(s.nstrata + 1)
        K.linear_predictor(np.ascontiguousarray(s.X.T), BETA, off[o], s.flags, cs[: nc + 1],
                           cst[:nc], eta, smax)
        np.testing.assert_allclose(eta, s.eta, rtol=1e-14, atol=1e-14)
        np.testing.assert_array_equal(smax[:-1], s.shift)
        assert smax[-1] == -np.inf


@pytest.mark.parametrize("radix", [False, True])
def test_radix_order_is_stable_lexsort(monkeypatch, radix):
    # small inputs sort with NumPy; radix=True forces the compiled radix kernel
    import graphpar.kernels.cox_sort as cs

    if radix:
        monkeypatch.setattr(cs, "NUMPY_SORT_BELOW", 0)
    rng = np.random.default_rng(0)
    for n in (1, 10, 5000):
        t = np.round(rng.exponential(size=n) * 20, 1)
        t[: min(n, 2)] = [0.0, -0.0][: min(n, 2)]
        codes = rng.integers(0, 40, n)
        order, t2 = cox_order(t, codes, 40)
        np.testing.assert_array_equal(order, np.lexsort((np.arange(n), -t, codes)))
        assert t2 is t
        order, _ = cox_order(t, None, 1)
        np.testing.assert_array_equal(order, np.lexsort((np.arange(n), -t)))
    # huge spread of magnitudes, all 64 bits in play
    t = rng.exponential(size=3000) * 10.0 ** rng.integers(-300, 300, 3000)
    order, _ = cox_order(t, None, 1)
    np.testing.assert_array_equal(order, np.lexsort((np.arange(3000), -t)))


def test_timefix_merges_near_ties_like_aeqsurv():
    t = np.array([1.0, 1.0 + 1e-12, 2.0, 2.0 + 1e-3, 3.0, 3.0 * (1 + 1e-10), 5.0])
    order, fixed = cox_order(t, None, 1, timefix=np.sqrt(np.finfo(float).eps))
    np.testing.assert_array_equal(fixed, [1.0, 1.0, 2.0, 2.0 + 1e-3, 3.0, 3.0, 5.0])
    np.testing.assert_array_equal(order, np.lexsort((np.arange(7), -t)))


@pytest.mark.parametrize("nstrata", [1, 3])
def test_sorted_times_equal_the_gathered_fixed_times(nstrata):
    rng = np.random.default_rng(5)
    n = 4000
    t = np.round(rng.exponential(size=n) * 50, 2)
    t[::7] *= 1 + 1e-10  # near ties that the time fix merges
    codes = rng.integers(0, nstrata, n) if nstrata > 1 else None
    tol = np.sqrt(np.finfo(float).eps)
    order, fixed = cox_order(t, codes, nstrata, timefix=tol)
    assert fixed is not t
    order2, ts = cox_order(t, codes, nstrata, timefix=tol, sorted_time=True)
    np.testing.assert_array_equal(order2, order)
    np.testing.assert_array_equal(ts, fixed[order])
    # the near ties moved to the smallest of their run, as a direct merge of the unique times
    u = np.unique(t)
    keep = np.ones(u.size, dtype=bool)
    keep[1:] = ~((np.diff(u) <= tol) | (np.diff(u) / np.abs(u).mean() <= tol))
    low = u[np.flatnonzero(keep)[np.searchsorted(np.flatnonzero(keep), np.arange(u.size),
                                                 "right") - 1]]
    np.testing.assert_array_equal(fixed, low[np.searchsorted(u, t)])
    _, plain = cox_order(t, codes, nstrata, sorted_time=True)
    np.testing.assert_array_equal(plain, t[order])


def test_linear_predictor_at_zero_is_the_offset():
    # columns of zero coefficient are skipped: at beta = 0, eta is exactly the offset
    X, time, event, strata, w, off = _inputs(CASES[3], n=300, seed=8)
    s = Sorted(X, time, event, strata, w, off, np.zeros(P))
    o = np.lexsort((-time, strata))
    cs = np.empty(300 // 7 + 2, dtype=np.int64)
    cst = np.empty(300 // 7 + 2, dtype=np.int64)
    nc = K.chunk_layout(s.flags, 7, 0, cs, cst)
    XT = np.ascontiguousarray(s.X.T)
    XT[1] = np.nan  # not read when its coefficient is zero
    eta = np.full(300, np.nan)
    smax = np.empty(s.nstrata)
    beta = np.array([0.0, 0.0, 0.5])
    K.linear_predictor(XT, beta, off[o], s.flags, cs[: nc + 1], cst[:nc], eta, smax)
    np.testing.assert_array_equal(eta, s.X[:, 2] * 0.5 + off[o])
    K.linear_predictor(XT, np.zeros(P), off[o], s.flags, cs[: nc + 1], cst[:nc], eta, smax)
    np.testing.assert_array_equal(eta, off[o])
    np.testing.assert_array_equal(smax, [off[o][s.strata == k].max() for k in range(s.nstrata)])


@pytest.mark.parametrize("layout", ["C", "F"])
def test_gather_rows_writes_the_centred_permuted_transpose(layout):
    rng = np.random.default_rng(9)
    X = np.asarray(rng.normal(size=(50_000, 7)) * 10 + 3, order=layout)
    order = rng.permutation(X.shape[0])
    center = K.column_means(X)
    np.testing.assert_allclose(center, X.mean(axis=0), rtol=1e-13)
    out = np.empty((7, X.shape[0]))
    K.gather_rows(X, order, center, out)
    np.testing.assert_array_equal(out, (X[order] - center).T)


def test_group_sums_kernel_against_a_loop():
    rng = np.random.default_rng(10)
    n = 400
    codes = np.sort(rng.integers(0, 3, n))
    time = np.concatenate([np.sort(rng.integers(1, 30, np.count_nonzero(codes == k)))[::-1]
                           for k in range(3)]).astype(float)
    event = (rng.random(n) < 0.6).astype(np.uint8)
    w = rng.uniform(0.0, 2.0, n)
    w[rng.random(n) < 0.2] = 0.0
    w[:5] = 0.0  # a group of weight zero only
    time[:5] = 100.0
    r = rng.uniform(0.1, 1.0, n)
    flags = np.empty(n, dtype=np.uint8)
    K.tie_flags(time, codes, flags)
    chunk_start, first_group, ng = K.group_layout(flags, 16)  # chunks of about 16 rows
    assert chunk_start.size > 10
    stratum, gtime, sums = np.zeros(ng, np.int64), np.zeros(ng), np.zeros((4, ng))
    deaths, keep = np.zeros(ng, np.int64), np.zeros(ng, bool)
    K.run_chunks(K.group_sums, chunk_start.size - 1, chunk_start, first_group, flags, time,
                 codes, event, w, r, stratum, gtime, sums, deaths, keep)
    key = list(zip(codes.tolist(), time.tolist(), strict=True))
    groups = list(dict.fromkeys(key))
    assert ng == len(groups)
    for g, (c, t) in enumerate(groups):
        rows = [i for i in range(n) if key[i] == (c, t)]
        dead = [i for i in rows if event[i] and w[i] > 0]
        assert (stratum[g], gtime[g]) == (c, t)
        assert sums[0, g] == pytest.approx(r[rows].sum(), rel=1e-14)
        assert sums[1, g] == pytest.approx(w[dead].sum(), rel=1e-14)
        assert sums[2, g] == pytest.approx(r[dead].sum(), rel=1e-14)
        assert sums[3, g] == sum(w[i] > 0 for i in rows)
        assert deaths[g] == len(dead)
        assert keep[g] == any(w[i] != 0 for i in rows)
    assert not keep[0]


@pytest.mark.parametrize("ties", ["efron", "breslow"])
@pytest.mark.parametrize("entry", [False, True])
def test_baseline_reusing_the_last_evaluation_equals_a_recomputed_one(ties, entry):
    from graphpar import CoxPH
    from graphpar._cox import _serial_baseline
    from graphpar._cox_problem import CoxProblem
    from graphpar._validation import check_cox_arrays, check_cox_entry

    X, time, event, strata, w, off = _inputs(CASES[3], n=500, seed=12)
    start = time * np.where(np.arange(500) % 3 == 0, 0.5, 0.0) if entry else None
    m = CoxPH(ties=ties).fit(X, time, event, strata=strata, weights=w, offset=off,
                             entry=start)
    a = check_cox_arrays(X, time, event, strata, w, off)
    prob = CoxProblem(a, ties, entry=None if start is None else check_cox_entry(start, a.time))
    prob.evaluate(m.coef_)
    assert prob.risk_at(m.coef_) is not None
    reused = _serial_baseline(a, prob, m.coef_, ties, True)
    prob.evaluate(np.zeros(P))  # elsewhere: the baseline recomputes eta and r
    assert prob.risk_at(m.coef_) is None
    fresh = _serial_baseline(a, prob, m.coef_, ties, True)
    for k in range(3):
        (t1, h1), (t2, h2) = reused.cumulative_hazard()[k], fresh.cumulative_hazard()[k]
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_allclose(h1, h2, rtol=1e-12)
        np.testing.assert_allclose(h1, m.baseline_cumulative_hazard_[k].value, rtol=1e-12)


@pytest.mark.parametrize("chunk_rows", [1 << 16, 7])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("stratified", [False, True])
def test_group_sums_numpy_path_equals_the_kernel(monkeypatch, weighted, stratified,
                                                 chunk_rows):
    # small data reduce with NumPy (no kernel to compile), large data with the kernel, in
    # chunks of tie groups spread over the threads (chunk_rows 7: about 70 chunks, a
    # group cut by no chunk): the same groups, removal rows (negative weights) included
    from graphpar import _cox_baseline as B
    from graphpar.kernels.cox import tie_flags

    rng = np.random.default_rng(11)
    n = 500
    codes = np.sort(rng.integers(0, 3, n)) if stratified else None
    parts = [np.count_nonzero(codes == k) for k in range(3)] if stratified else [n]
    time = np.concatenate([np.sort(rng.integers(1, 40, m))[::-1] for m in parts]).astype(float)
    event = (rng.random(n) < 0.6).astype(np.uint8)
    w = None
    if weighted:
        w = rng.uniform(0.0, 2.0, n)
        w[rng.random(n) < 0.2] = 0.0
        w[rng.random(n) < 0.1] *= -1.0
    eta = rng.normal(size=n)
    shift = rng.normal(size=3)
    small = B.group_sums(time, event, w, eta, codes, shift)
    monkeypatch.setattr(B, "GROUP_KERNEL_ROWS", 0)
    monkeypatch.setattr(B, "GROUP_CHUNK_ROWS", chunk_rows)
    big = B.group_sums(time, event, w, eta, codes, shift)
    flags = np.empty(n, dtype=np.uint8)
    tie_flags(time, codes if stratified else np.empty(0, np.int64), flags)
    given = B.group_sums(time, event, w, eta, codes, shift, flags=flags)
    assert small.keys() == big.keys() == given.keys()
    assert small["time"].size > 30  # many groups, so that chunks cut between them
    for k in small:
        assert small[k].dtype == big[k].dtype, k
        np.testing.assert_allclose(small[k], big[k], rtol=1e-13, atol=0, err_msg=k)
        np.testing.assert_array_equal(big[k], given[k], err_msg=k)


@pytest.mark.parametrize("table", [False, True])
@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_hazard_kernel_is_the_numpy_baseline_bit_for_bit(monkeypatch, ties, table):
    # many groups take the compiled loop (graphpar.kernels.cox_hazard): the same sums in
    # the same order as the NumPy passes, so the same bits; strata (one of them empty),
    # groups of removal rows alone (present 0), tied events, a risk set of 0, and (table)
    # the distributed fit's float columns, strided
    from graphpar import _cox_baseline as B

    rng = np.random.default_rng(21)
    ng = 4000
    codes = np.sort(rng.choice([0, 1, 3], ng))
    deaths = rng.integers(0, 4, ng) * (rng.random(ng) < 0.7)
    groups = {"stratum": codes, "time": np.sort(rng.random(ng))[::-1].copy(),
              "risk": rng.random(ng) * 3, "events": deaths * rng.uniform(0.5, 2.0, ng),
              "deaths": deaths, "event_risk": rng.random(ng) * 0.5,
              "present": (rng.random(ng) < 0.8) * 1.0}
    groups["risk"][:5] = 0.0
    groups["events"][0] = 0.0
    if table:
        cols = np.column_stack([np.asarray(groups[k], dtype=float) for k in B.GROUP_FIELDS])
        groups = {k: cols[:, j] for j, k in enumerate(B.GROUP_FIELDS)}
        groups["stratum"] = groups["stratum"].astype(np.int64)
        groups["deaths"] = groups["deaths"].astype(np.int64)
    shift = np.array([0.3, -np.inf, 1.2, -0.5])
    with np.errstate(divide="ignore"):
        small = B.baseline_from_groups(groups, ties, shift, 4)
    monkeypatch.setattr(B, "GROUP_KERNEL_ROWS", 0)
    big = B.baseline_from_groups(groups, ties, shift, 4)
    assert len(small) == len(big) == 4
    assert small[2][0].size == 0  # stratum 2 has no groups
    for (t1, h1, s1), (t2, h2, s2) in zip(small, big, strict=True):
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_array_equal(h1, h2)
        assert s1 == s2
    assert np.isinf(big[0][1]).any()  # events over a risk set of 0: D / 0
    assert sum(t.size for t, _, _ in big) < ng  # the removal-only groups are not times


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_linear_predictor_numpy_path_is_the_kernel_bit_for_bit(monkeypatch, ties):
    # small data compute eta with NumPy (no kernel to compile): the same sums in the same
    # order, so a fit is identical either way (strata across chunks, an offset, weights)
    from graphpar import CoxPH
    from graphpar.kernels import cox as kc

    rng = np.random.default_rng(12)
    n = 20_000
    X = rng.normal(size=(n, 3))
    t = np.round(rng.exponential(size=n) * 50, 1) + 0.1
    e = rng.random(n) < 0.7
    strata = rng.integers(0, 3, n)
    off = rng.normal(scale=0.1, size=n)
    w = rng.uniform(0.5, 2.0, n)

    def fit():
        return CoxPH(ties=ties).fit(X, t, e, strata=strata, offset=off, weights=w)

    small = fit()
    monkeypatch.setattr(kc, "NUMPY_LP_BELOW", 0)
    big = fit()
    np.testing.assert_array_equal(small.coef_, big.coef_)
    assert small.log_likelihood_ == big.log_likelihood_
    np.testing.assert_array_equal(small.se_, big.se_)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(k for k, v in c.items() if v)
                         or "plain")
def test_efron_without_tied_events_is_breslow_bit_for_bit(case):
    # the fit runs the Breslow kernel for an Efron fit without tied events
    # (CoxProblem.kernel_ties): the two must agree exactly there, one chunk or many
    X, time, event, strata, w, off = _inputs(case, ties=False)
    s = Sorted(X, time, event, strata, w, off, BETA)
    for target in (1, 7, 1000):
        for hmode in (K.HESS_FULL, K.HESS_DIAG, K.HESS_NONE):
            ll_e, g_e, h_e = s.whole(target, "efron", hmode)
            ll_b, g_b, h_b = s.whole(target, "breslow", hmode)
            assert ll_e == ll_b
            np.testing.assert_array_equal(g_e, g_b)
            np.testing.assert_array_equal(h_e, h_b)


def test_tied_events_are_found_as_the_kernels_see_them():
    from graphpar._cox_problem import has_tied_events

    t = np.array([5.0, 4.0, 4.0, 4.0, 1.0])
    none = np.empty(0)
    ev = np.array([1, 1, 0, 1, 1], np.uint8)
    assert has_tied_events(t, None, ev, none)  # rows 1 and 3: same group
    assert not has_tied_events(t, None, np.array([1, 1, 0, 0, 1], np.uint8), none)
    # the same time in two strata is two groups
    strata = np.array([0, 0, 0, 1, 1])
    assert not has_tied_events(t, strata, ev, none)
    # an event of weight 0 is as if absent; a positive weight counts
    assert not has_tied_events(t, None, ev, np.array([1.0, 1.0, 1.0, 0.0, 1.0]))
    assert has_tied_events(t, None, ev, np.array([1.0, 0.5, 1.0, 2.0, 1.0]))
    assert not has_tied_events(t[:0], None, ev[:0], none)


@pytest.mark.parametrize("gap", [0, 1, 5000])
@pytest.mark.parametrize("at", [100, 4095, 4096, 12287, 12288, 40000])
def test_tied_events_across_the_checks_blocks(at, gap):
    # has_tied_events reads the rows in blocks of 4096, 8192, ... rows: a tie whose two
    # events lie in different blocks (with ``gap`` censored rows between them, which share
    # their time) is found, and an untied neighbour is not taken for one
    from graphpar._cox_problem import has_tied_events

    n = 60000
    t = np.arange(n, 0, -1, dtype=np.float64)  # distinct times, descending
    ev = np.ones(n, np.uint8)
    none = np.empty(0)
    assert not has_tied_events(t, None, ev, none)
    b = min(at + gap + 1, n - 1)
    t[at:b + 1] = t[at]
    ev[at + 1:b] = 0
    assert has_tied_events(t, None, ev, none)
    assert not has_tied_events(t, np.repeat([0, 1], [b, n - b]), ev, none)  # b opens stratum 1
    w = np.ones(n)
    w[b] = 0.0
    assert not has_tied_events(t, None, ev, w)  # the later event weighs nothing


@pytest.mark.parametrize("tied", [False, True])
def test_problem_runs_breslow_only_when_efron_changes_nothing(tied):
    from graphpar._cox_problem import CoxProblem
    from graphpar._validation import check_cox_arrays

    X, time, event, strata, w, _ = make_data(n=60, ties=tied)
    arrays = check_cox_arrays(X, time, event, strata=strata, weights=w)
    assert CoxProblem(arrays, "breslow").kernel_ties == K.BRESLOW
    efron = CoxProblem(arrays, "efron")
    assert efron.kernel_ties == (K.EFRON if tied else K.BRESLOW)
    beta = np.array([0.2, -0.1, 0.3])
    ref = cox_loglik(X, time, event, beta, "efron", strata, w, None)
    ll, g, h = efron.evaluate(beta)
    assert ll == pytest.approx(ref[0], rel=1e-12)
    np.testing.assert_allclose(g, ref[1], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(h, ref[2], rtol=1e-10, atol=1e-10)


def _numpy_whole(s, ties):
    from graphpar.kernels.cox_small import cox_whole

    ll, g, h = np.zeros(1), np.zeros(P), np.zeros((P, P))
    r = np.empty(len(s.eta))
    cox_whole(np.ascontiguousarray(s.X.T), s.eta, s.w, s.event, s.flags, s.shift, 0,
              K.EFRON if ties == "efron" else K.BRESLOW, r, ll, g, h)
    return ll[0], g, h, r


@pytest.mark.parametrize("tied", [True, False])
@pytest.mark.parametrize("ties", ["efron", "breslow"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(k for k, v in c.items() if v)
                         or "plain")
def test_numpy_evaluation_of_small_fits_matches_the_kernels_and_the_direct_sums(case, ties,
                                                                                tied):
    # a fit of fewer than NUMPY_ROWS_BELOW rows evaluates in NumPy (no kernel compiled)
    X, time, event, strata, w, off = _inputs(case, ties=tied)
    s = Sorted(X, time, event, strata, w, off, BETA)
    ll, g, h, r = _numpy_whole(s, ties)
    ref_ll, ref_g, ref_h = cox_loglik(X, time, event, BETA, ties, strata, w, off)
    assert ll == pytest.approx(ref_ll, rel=1e-12)
    np.testing.assert_allclose(g, ref_g, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(h, ref_h, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(h, h.T)
    k_ll, k_g, k_h = s.whole(1000, ties)
    assert ll == pytest.approx(k_ll, rel=1e-13)
    np.testing.assert_allclose(g, k_g, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(h, k_h, rtol=1e-12, atol=1e-13)
    w_sorted = s.w if s.w.size else 1.0
    np.testing.assert_allclose(r, w_sorted * np.exp(s.eta - s.shift[s.strata]), rtol=1e-15)


def test_numpy_evaluation_keeps_tiny_risk_sets_finite():
    # eta far below its stratum's largest value: S0 near 1e-300, whose square underflows;
    # every group term is scaled by its own 1/S0, as in the kernels
    X, time, event, strata, w, off = _inputs(CASES[0], ties=True)
    X[:, 2] = np.where(time < np.median(time), 2.0, 0.0)  # the late rows: eta 700 below
    beta = np.array([0.3, -0.2, 350.0])
    s = Sorted(X, time, event, np.zeros_like(strata), None, None, beta)
    r = np.exp(s.eta - s.shift[s.strata])
    assert np.cumsum(r)[np.flatnonzero(s.event)[0]] < 1e-300  # the first risk set is tiny
    for ties in ("efron", "breslow"):
        ll, g, h, _ = _numpy_whole(s, ties)
        k_ll, k_g, k_h = s.whole(1000, ties)
        assert np.isfinite(ll) and np.all(np.isfinite(h))
        assert ll == pytest.approx(k_ll, rel=1e-12)
        np.testing.assert_allclose(g, k_g, rtol=1e-9, atol=1e-9 * np.abs(k_g).max())
        np.testing.assert_allclose(h, k_h, rtol=1e-9, atol=1e-9 * np.abs(k_h).max())


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_small_fits_equal_kernel_fits_with_entry_times(monkeypatch, ties):
    # (start, stop] rows: the removal rows' negative weights leave the risk sets in both
    from graphpar import CoxPH, _cox_problem

    rng = np.random.default_rng(21)
    n = 400
    X = rng.normal(size=(n, 3))
    entry = np.round(rng.uniform(0, 2, n), 1)
    stop = entry + np.round(rng.exponential(size=n), 1) + 0.1
    e = rng.random(n) < 0.7
    strata = rng.integers(0, 2, n)
    w = rng.uniform(0.5, 2.0, n)

    def fit():
        return CoxPH(ties=ties).fit(X, stop, e, entry=entry, strata=strata, weights=w)

    small = fit()
    monkeypatch.setattr(_cox_problem, "NUMPY_ROWS_BELOW", 0)
    big = fit()
    assert small.n_iter_ == big.n_iter_
    np.testing.assert_allclose(small.coef_, big.coef_, rtol=1e-11)
    np.testing.assert_allclose(small.se_, big.se_, rtol=1e-11)
    assert small.log_likelihood_ == pytest.approx(big.log_likelihood_, rel=1e-13)
    t1, h1 = small.predict_cumulative_hazard(X[:3], strata=strata[:3])
    t2, h2 = big.predict_cumulative_hazard(X[:3], strata=strata[:3])
    np.testing.assert_array_equal(t1, t2)
    np.testing.assert_allclose(h1, h2, rtol=1e-11)
