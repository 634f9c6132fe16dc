"""CoxPH and concordance_index: known coefficients, optimality, bad input, warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from naive_cox import concordance_naive, cox_loglik

from graphpar import (
    ConvergenceWarning,
    CoxPH,
    CoxSummary,
    MonotoneLikelihoodWarning,
    concordance_index,
)


def generated(n=4000, beta=(0.6, -0.9, 0.3), seed=0, ties=True):
    rng = np.random.default_rng(seed)
    beta = np.asarray(beta)
    X = rng.normal(size=(n, beta.size))
    t = rng.exponential(np.exp(-(X @ beta)))
    c = rng.exponential(2.0, n)
    e = t <= c
    t = np.minimum(t, c)
    if ties:
        t = np.round(t, 2)
    return X, t, e


def test_recovers_known_coefficients():
    beta = np.array([0.6, -0.9, 0.3])
    X, t, e = generated(n=20000, beta=beta, seed=1)
    for ties in ("efron", "breslow"):
        m = CoxPH(ties=ties).fit(X, t, e)
        assert m.converged_
        # within 5 standard errors of the truth, and the standard errors are sane
        assert np.all(np.abs(m.coef_ - beta) < 5 * m.se_)
        assert np.all(m.se_ < 0.05)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_fit_is_a_stationary_point_of_the_direct_likelihood(ties):
    rng = np.random.default_rng(2)
    X, t, e = generated(n=150, seed=2)
    strata = rng.integers(0, 3, 150)
    w = rng.uniform(0.5, 2.0, 150)
    off = rng.normal(scale=0.2, size=150)
    m = CoxPH(ties=ties).fit(X, t, e, strata=strata, weights=w, offset=off)
    ll, g, h = cox_loglik(X, t, e, m.coef_, ties, strata, w, off)
    assert m.log_likelihood_ == pytest.approx(ll, rel=1e-12)
    assert np.max(np.abs(g)) < 1e-8
    np.testing.assert_allclose(m.var_model_, np.linalg.inv(-h), rtol=1e-8)
    ll0 = cox_loglik(X, t, e, np.zeros(3), ties, strata, w, off)[0]
    assert m.log_likelihood_null_ == pytest.approx(ll0, rel=1e-12)


def test_penalizer_is_half_l2_on_total_loglik():
    X, t, e = generated(n=300, seed=3)
    pen = 7.5
    m = CoxPH(penalizer=pen).fit(X, t, e)
    ll, g, h = cox_loglik(X, t, e, m.coef_, "efron")
    np.testing.assert_allclose(g - pen * m.coef_, 0.0, atol=1e-8)
    np.testing.assert_allclose(m.var_, np.linalg.inv(-h + pen * np.eye(3)), rtol=1e-8)
    assert np.linalg.norm(m.coef_) < np.linalg.norm(CoxPH().fit(X, t, e).coef_)


def test_step_halving_converges_where_plain_newton_diverges():
    # A rare covariate with a strong effect: the curvature at 0 is small, so the
    # plain Newton step from 0 overshoots and the log-likelihood falls.
    rng = np.random.default_rng(2)
    n = 300
    x = (rng.random((n, 1)) < 0.02) * rng.uniform(5, 10, (n, 1))
    t = rng.exponential(np.exp(-1.5 * x[:, 0]))
    e = rng.random(n) < 0.9
    b = np.zeros(1)
    lls = []
    for _ in range(3):
        ll, g, h = cox_loglik(x, t, e, b, "breslow")
        lls.append(ll)
        b = b - np.linalg.solve(h, g)
    assert min(np.diff(lls)) < -1.0  # plain Newton goes downhill
    m = CoxPH(ties="breslow").fit(x, t, e)
    assert m.converged_
    ll, g, h = cox_loglik(x, t, e, m.coef_, "breslow")
    assert abs(g[0]) < 1e-6 and ll > max(lls)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_zero_weight_rows_are_as_if_absent(ties):
    rng = np.random.default_rng(17)
    X, t, e = generated(n=300, seed=17)
    w = rng.uniform(0.5, 2.0, 300)
    zero = rng.random(300) < 0.2
    w[zero] = 0.0
    a = CoxPH(ties=ties).fit(X, t, e, weights=w)
    b = CoxPH(ties=ties).fit(X[~zero], t[~zero], e[~zero], weights=w[~zero])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10)
    assert a.log_likelihood_ == pytest.approx(b.log_likelihood_, rel=1e-12)


def test_inputs_are_not_mutated_and_read_only_inputs_work():
    rng = np.random.default_rng(5)
    X, t, e = generated(n=200, seed=5)
    w = rng.uniform(0.5, 2, 200)
    off = rng.normal(size=200) * 0.1
    s = rng.integers(0, 2, 200)
    arrays = [X, t, e, w, off, s]
    copies = [a.copy() for a in arrays]
    for a in arrays:
        a.flags.writeable = False
    m = CoxPH().fit(X, t, e, strata=s, weights=w, offset=off)
    for a, c in zip(arrays, copies, strict=True):
        np.testing.assert_array_equal(a, c)
    assert m.converged_
    m.predict_risk(X)


def test_fortran_order_int_and_bool_inputs_match():
    X, t, e = generated(n=300, seed=6)
    Xi = np.round(X * 3).astype(np.int32)
    a = CoxPH().fit(Xi, t, e.astype(np.int64))
    b = CoxPH().fit(np.asfortranarray(Xi.astype(float)), t, e)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)


def test_summary_and_names():
    X, t, e = generated(n=500, seed=7)
    m = CoxPH().fit(X, t, e, feature_names=["age", "dose", "sex"])
    s = m.summary_table()
    assert isinstance(s, CoxSummary)
    assert s.names == ["age", "dose", "sex"]
    np.testing.assert_allclose(s.exp_coef, np.exp(m.coef_))
    np.testing.assert_allclose(s.z, m.coef_ / m.se_)
    np.testing.assert_allclose(s.upper - s.lower, 2 * 1.959963984540054 * m.se_)
    from scipy.stats import norm

    np.testing.assert_allclose(s.p, 2 * norm.sf(np.abs(s.z)), rtol=1e-12)
    text = str(s)
    for word in ("age", "dose", "sex", "exp(coef)", "lower 95%", "log-likelihood"):
        assert word in text
    d = s.to_dict()
    assert set(d["coef"]) == {"age", "dose", "sex"} and d["iterations"] == m.n_iter_
    assert m.feature_names_in_ == ["age", "dose", "sex"]
    np.testing.assert_allclose(m.predict_risk(X), np.exp(X @ m.coef_))


def test_dataframe_names():
    pd = pytest.importorskip("pandas")
    X, t, e = generated(n=300, seed=8)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    m = CoxPH().fit(df, pd.Series(t), pd.Series(e))
    assert m.feature_names_in_ == ["a", "b", "c"]
    np.testing.assert_allclose(m.coef_, CoxPH().fit(X, t, e).coef_, rtol=1e-12)


def test_timefix_matters_only_for_near_ties():
    X, t, e = generated(n=300, seed=9)
    t2 = t * (1 + np.where(np.arange(300) % 2 == 0, 1e-12, 0.0))
    a = CoxPH().fit(X, t, e)
    b = CoxPH().fit(X, t2, e)  # near-ties merged back (R's default)
    c = CoxPH(timefix=False).fit(X, t2, e)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-12)
    assert np.max(np.abs(c.coef_ - a.coef_)) > 1e-6


def test_separating_covariate_warns_by_name():
    rng = np.random.default_rng(10)
    n = 200
    t = rng.exponential(size=n)
    e = np.ones(n, dtype=bool)
    sep = -t  # whoever fails first has the highest value: perfect separation
    X = np.column_stack([rng.normal(size=n), sep])
    with pytest.warns(MonotoneLikelihoodWarning, match="'dose'"):
        CoxPH().fit(X, t, e, feature_names=["age", "dose"])


def test_no_warning_on_ordinary_data():
    X, t, e = generated(n=300, seed=11)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CoxPH().fit(X, t, e)


def test_max_iter_warns():
    X, t, e = generated(n=300, seed=12)
    with pytest.warns(ConvergenceWarning):
        m = CoxPH(max_iter=1).fit(X, t, e)
    assert not m.converged_


def test_collinear_and_constant_columns_are_named():
    X, t, e = generated(n=200, seed=13)
    Xc = np.column_stack([X, X[:, 0] - 2 * X[:, 2]])
    with pytest.raises(ValueError, match="'a'.*'c'.*'d'.*collinear"):
        CoxPH().fit(Xc, t, e, feature_names=["a", "b", "c", "d"])
    Xk = np.column_stack([X, np.full(200, 3.0)])
    with pytest.raises(ValueError, match="'k'.*no variation"):
        CoxPH().fit(Xk, t, e, feature_names=["a", "b", "c", "k"])
    # constant within every stratum
    s = np.arange(200) % 4
    with pytest.raises(ValueError, match="'z'"):
        CoxPH().fit(np.column_stack([X, s * 1.5]), t, e, strata=s,
                    feature_names=["a", "b", "c", "z"])
    # a ridge penalty makes collinear columns estimable
    assert CoxPH(penalizer=1.0).fit(Xc, t, e).converged_


@pytest.mark.parametrize(
    "mutate, arg, pattern",
    [
        (lambda d: d["X"].__setitem__((5, 1), np.nan), "X", r"X contains nan at row 5, column 1"),
        (lambda d: d["X"].__setitem__((7, 0), np.inf), "X", r"X contains inf at row 7"),
        (lambda d: d["time"].__setitem__(3, np.nan), "time", r"time contains nan at row 3"),
        (lambda d: d["time"].__setitem__(4, -1.0), "time", r"time must be nonnegative.*row 4"),
        (lambda d: d["weights"].__setitem__(6, np.inf), "weights",
         r"weights contains inf at row 6"),
        (lambda d: d["weights"].__setitem__(2, -0.5), "weights", r"weights must be nonneg.*row 2"),
        (lambda d: d["offset"].__setitem__(8, np.nan), "offset", r"offset contains nan at row 8"),
        (lambda d: d["event"].__setitem__(9, 2), "event", r"event must be 0/1.*2.*row 9"),
        (lambda d: d.__setitem__("event", np.zeros(50)), "event", r"no events"),
        (lambda d: d.__setitem__("time", np.ones(49)), "time", r"time has length 49.*50 rows"),
        (lambda d: d.__setitem__("strata", np.ones(51)), "strata", r"strata has length 51"),
        (lambda d: d.__setitem__("X", np.ones(50)), "X", r"X must be 2-D"),
    ],
)
def test_bad_input_names_argument_and_row(mutate, arg, pattern):
    rng = np.random.default_rng(14)
    d = dict(X=rng.normal(size=(50, 2)), time=rng.exponential(size=50),
             event=(rng.random(50) < 0.7).astype(float), strata=None,
             weights=np.ones(50), offset=np.zeros(50))
    mutate(d)
    with pytest.raises(ValueError, match=pattern):
        CoxPH().fit(**d)


def test_bad_parameters_and_types():
    X, t, e = generated(n=50, seed=15)
    with pytest.raises(ValueError, match="ties"):
        CoxPH(ties="exact").fit(X, t, e)
    with pytest.raises(ValueError, match="penalizer"):
        CoxPH(penalizer=-1).fit(X, t, e)
    with pytest.raises(TypeError, match="X must be numeric"):
        CoxPH().fit(np.array([["a", "b"]] * 50), t, e)
    with pytest.raises(ValueError, match="not fitted"):
        CoxPH().summary()
    m = CoxPH().fit(X, t, e)
    with pytest.raises(ValueError, match="columns"):
        m.predict_risk(np.ones((3, 2)))


def test_concordance_against_all_pairs():
    rng = np.random.default_rng(16)
    for n in (2, 30, 300):
        t = rng.integers(0, 15, n).astype(float)  # many tied times
        risk = np.round(rng.normal(size=n), 1)  # many tied risks
        e = rng.random(n) < 0.6
        e[0] = True
        t[0] = min(t[0], t.max() - 1) if n > 1 else t[0]
        if n == 2:
            t = np.array([1.0, 2.0])
        assert concordance_index(t, event=e, risk=risk) == pytest.approx(
            concordance_naive(t, risk, e), rel=1e-14)


def test_concordance_takes_medians_never_reached():
    """predict_median's inf (survival never below 0.5) ranks as the longest, ties among itself."""
    rng = np.random.default_rng(17)
    t = rng.integers(0, 15, 200).astype(float)
    e = rng.random(200) < 0.6
    median = np.round(rng.exponential(10, 200), 0)
    median[rng.random(200) < 0.4] = np.inf
    assert concordance_index(t, event=e, predicted_survival=median) == pytest.approx(
        concordance_naive(t, -median, e), rel=1e-14)
    with pytest.raises(ValueError, match="predicted_survival contains -inf"):
        concordance_index(t, event=e, predicted_survival=-median)


def test_concordance_simple_and_errors():
    assert concordance_index([1, 2, 3], event=[1, 1, 1], risk=[3, 2, 1]) == 1.0
    assert concordance_index([1, 2, 3], event=[1, 1, 1], risk=[1, 1, 1]) == 0.5
    with pytest.raises(ValueError, match="no comparable pairs"):
        concordance_index([1, 1], event=[1, 1], risk=[1, 2])
    with pytest.raises(ValueError, match="risk has length"):
        concordance_index([1, 2], event=[1, 1], risk=[1])


def test_string_strata_fit_as_their_codes():
    rng = np.random.default_rng(18)
    X, t, e = generated(n=300, seed=18)
    codes = rng.integers(0, 3, 300)
    b = CoxPH().fit(X, t, e, strata=codes)
    a = CoxPH().fit(X, t, e, strata=np.array(["a", "b", "c"])[codes])
    np.testing.assert_array_equal(a.coef_, b.coef_)  # same strata in the same order
    c = CoxPH().fit(X, t, e, strata=np.array(["c", "a", "b"])[codes])
    np.testing.assert_allclose(c.coef_, b.coef_, rtol=1e-12)  # strata summed in another order
    assert np.max(np.abs(CoxPH().fit(X, t, e).coef_ - b.coef_)) > 1e-3  # strata matter here
    with pytest.raises(ValueError, match="strata contains nan at row 4"):
        CoxPH().fit(X, t, e, strata=np.where(np.arange(300) == 4, np.nan, 1.0))
    mixed = np.array(["a", 1] * 150, dtype=object)
    with pytest.raises(TypeError, match="strata labels must be of one sortable type"):
        CoxPH().fit(X, t, e, strata=mixed)


def test_array_checks_name_global_rows_for_a_block():
    # the MPI layer runs these checks on each rank's rows with the rank's first global row
    from graphpar._validation import check_cox_arrays

    X = np.zeros((3, 2))
    X[2, 1] = np.inf
    with pytest.raises(ValueError, match=r"^X contains inf at row 102, column 1$"):
        check_cox_arrays(X, np.ones(3), np.ones(3), row0=100)
    with pytest.raises(ValueError, match=r"^event must be 0/1 or boolean, got 0.5 at row 51$"):
        check_cox_arrays(np.zeros((2, 1)), [1, 1], [1, 0.5], row0=50)
    with pytest.raises(ValueError, match=r"^offset contains nan at row 7$"):
        check_cox_arrays(np.zeros((2, 1)), [1, 1], [1, 0], offset=[0, np.nan], row0=6)
    # one rank's block may hold no rows or no events; the whole data set may not
    block = check_cox_arrays(np.zeros((0, 2)), [], [], whole=False)
    assert block.X.shape == (0, 2) and block.feature_names == ["x0", "x1"]
    assert not check_cox_arrays([[1.0]], [1.0], [0], whole=False).event.any()
    with pytest.raises(ValueError, match="X has no rows"):
        check_cox_arrays(np.zeros((0, 2)), [], [])
    with pytest.raises(ValueError, match="no events"):
        check_cox_arrays([[1.0]], [1.0], [0])
