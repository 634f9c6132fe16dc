"""CoxPH's baseline hazard and predictions against R's survfit.coxph, lifelines and a naive oracle.

The R references (``datasets/survival/r_survfit_reference.json``, made by
``make_survfit_reference.R`` with the R calls recorded beside the values) cover
both tie methods, strata, case weights, offsets and near-tied times merged by
timefix; graphpar must give R's times exactly and its cumulative hazards and
survival to 1e-8 relative. The naive oracle below recomputes the baseline from
its definition with one loop per time.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from r_reference import offset, reference, table

from graphpar import CoxPH

R_REF = reference("r_survfit_reference.json")
RTOL = 1e-8


def r_fit(entry):
    d = table(entry["data"])
    X = np.column_stack([d[c] for c in entry["covariates"]])
    kw = {}
    if entry["strata"]:
        kw["strata"] = d[entry["strata"]]
    if entry["weights"]:
        kw["weights"] = d[entry["weights"]]
    if entry["offset"]:
        kw["offset"] = offset(d, entry["offset"])
    return CoxPH(ties=entry["ties"]).fit(X, d[entry["time"]], d[entry["event"]], **kw)


@pytest.mark.parametrize("entry", R_REF["fits"], ids=lambda e: f"{e['name']}-{e['ties']}")
@pytest.mark.usefixtures("cox_evaluation")
def test_survfit_equals_r(entry):
    m = r_fit(entry)
    np.testing.assert_allclose(m.coef_, entry["coef"], rtol=1e-7)
    nd = entry["newdata"]
    Xnew = np.column_stack([nd[c] for c in entry["covariates"]])
    for i, curve in enumerate(entry["curves"]):
        kw = {}
        if entry["strata"]:
            kw["strata"] = [curve["stratum"]]
        if entry["offset"]:
            kw["offset"] = [0.01 * nd["age"][i]]
        t, H = m.predict_cumulative_hazard(Xnew[i:i + 1], **kw)
        np.testing.assert_array_equal(t, curve["time"], err_msg=curve["survfit_call"])
        np.testing.assert_allclose(H[:, 0], curve["cumhaz"], rtol=RTOL,
                                   err_msg=curve["survfit_call"])
        t2, S = m.predict_survival_function(Xnew[i:i + 1], **kw)
        np.testing.assert_array_equal(t2, t)
        np.testing.assert_allclose(S[:, 0], curve["surv"], rtol=RTOL,
                                   err_msg=curve["survfit_call"])
        # at R's own times, and between them (step function, right-continuous)
        rt = np.asarray(curve["time"])
        mid = np.concatenate(([rt[0] / 2], (rt[:-1] + rt[1:]) / 2))
        _, Hmid = m.predict_cumulative_hazard(Xnew[i:i + 1], times=mid, **kw)
        want = np.concatenate(([0.0], curve["cumhaz"][:-1]))
        np.testing.assert_allclose(Hmid[:, 0], want, rtol=RTOL)


def test_r_reference_covers_the_cases():
    kinds = {(e["ties"], bool(e["strata"]), bool(e["weights"]), bool(e["offset"]))
             for e in R_REF["fits"]}
    for ties in ("efron", "breslow"):
        for key in ((ties, False, False, False), (ties, True, False, False),
                    (ties, False, True, False), (ties, True, True, False),
                    (ties, False, False, True)):
            assert key in kinds, key
    assert all("survfit(fit, newdata" in c["survfit_call"] for e in R_REF["fits"]
               for c in e["curves"])


# ------------------------------------------------------------------ naive oracle
def naive_baseline(X, time, event, coef, ties, strata=None, weights=None, offset=None):
    """{stratum: (times ascending, cumhaz)} at the column means of X, one loop per time."""
    n = len(time)
    strata = np.zeros(n) if strata is None else np.asarray(strata)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    off = np.zeros(n) if offset is None else np.asarray(offset, dtype=float)
    risk = np.exp((X - X.mean(axis=0)) @ coef + off)
    out = {}
    for s in np.unique(strata):
        rows = [i for i in range(n) if strata[i] == s and w[i] > 0]
        times = sorted({time[i] for i in rows})
        H, acc = [], 0.0
        for t in times:
            at_risk = sum(w[i] * risk[i] for i in rows if time[i] >= t)
            dead = [i for i in rows if time[i] == t and event[i]]
            D = sum(w[i] for i in dead)
            if dead and ties == "efron" and len(dead) > 1:
                E = sum(w[i] * risk[i] for i in dead)
                d = len(dead)
                acc += D / d * sum(1.0 / (at_risk - E * j / d) for j in range(d))
            elif dead:
                acc += D / at_risk
            H.append(acc)
        out[s] = (np.array(times), np.array(H))
    return out


def tied_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    t = np.ceil(rng.exponential(np.exp(-(X @ [0.6, -0.4]))) * 8)  # heavy ties
    e = rng.random(n) < 0.75
    s = rng.integers(0, 3, n)
    w = rng.uniform(0.2, 3.0, n)
    w[rng.random(n) < 0.1] = 0.0
    off = 0.2 * rng.standard_normal(n)
    return X, t, e, s, w, off


@pytest.mark.parametrize("ties", ["efron", "breslow"])
@pytest.mark.parametrize("with_strata", [False, True])
def test_baseline_equals_naive_oracle(ties, with_strata):
    X, t, e, s, w, off = tied_data()
    kw = {"weights": w, "offset": off}
    if with_strata:
        kw["strata"] = s
    m = CoxPH(ties=ties, timefix=False).fit(X, t, e, **kw)
    want = naive_baseline(X, t, e, m.coef_, ties, strata=kw.get("strata"), weights=w,
                          offset=off)
    got = m.baseline_cumulative_hazard_
    assert list(got) == ([0, 1, 2] if with_strata else [None])
    for key, (wt, wh) in zip(got, want.values(), strict=True):
        np.testing.assert_array_equal(got[key].time, wt)
        np.testing.assert_allclose(got[key].value, wh, rtol=1e-12)
        np.testing.assert_allclose(m.baseline_survival_[key].value, np.exp(-wh), rtol=1e-12)
    np.testing.assert_allclose(m.means_, X.mean(axis=0), rtol=1e-14)


def test_efron_and_breslow_baselines_differ_only_at_ties():
    X, t, e, _, _, _ = tied_data()
    m = CoxPH(ties="efron").fit(X, t, e)
    single = naive_baseline(X, t, e, m.coef_, "breslow")[0.0][1]
    efron = m.baseline_cumulative_hazard_[None].value
    assert np.all(efron > single - 1e-15) and np.any(efron > single * (1 + 1e-6))


def test_zero_weight_rows_are_absent():
    X, t, e, s, w, off = tied_data()
    keep = w > 0
    a = CoxPH().fit(X, t, e, strata=s, weights=w)
    b = CoxPH().fit(X[keep], t[keep], e[keep], strata=s[keep], weights=w[keep])
    new = np.array([[0.5, -0.5]])
    # the baseline row differs (the means include the zero-weight rows); the predictions agree
    ca = a.predict_cumulative_hazard(new, strata=[1])
    cb = b.predict_cumulative_hazard(new, strata=[1])
    np.testing.assert_array_equal(ca.time, cb.time)
    np.testing.assert_allclose(ca.value, cb.value, rtol=1e-10)


def test_predictions_are_consistent():
    X, t, e, s, _, _ = tied_data()
    m = CoxPH().fit(X, t, e, strata=s)
    new = np.array([[0.0, 0.0], [1.0, 1.0], [-1.5, 0.5], [3.0, -3.0]])
    rows_strata = [0, 2, 2, 1]
    lp = m.predict_log_partial_hazard(new)
    np.testing.assert_allclose(lp, (new - X.mean(axis=0)) @ m.coef_, rtol=1e-13)
    np.testing.assert_allclose(m.predict_partial_hazard(new), np.exp(lp), rtol=1e-13)
    # predict_risk differs from the partial hazard by a constant factor
    ratio = m.predict_risk(new) / m.predict_partial_hazard(new)
    np.testing.assert_allclose(ratio, math.exp(X.mean(axis=0) @ m.coef_), rtol=1e-12)
    times, H = m.predict_cumulative_hazard(new, strata=rows_strata)
    union = np.unique(np.concatenate([m.baseline_cumulative_hazard_[k].time for k in (0, 1, 2)]))
    np.testing.assert_array_equal(times, union)
    for i, k in enumerate(rows_strata):
        base = m.baseline_cumulative_hazard_[k]
        at = np.searchsorted(times, base.time)
        np.testing.assert_allclose(H[at, i], base.value * np.exp(lp[i]), rtol=1e-12)
    _, S = m.predict_survival_function(new, strata=rows_strata)
    np.testing.assert_allclose(S, np.exp(-H), rtol=1e-14)
    med = m.predict_median(new, strata=rows_strata)
    for i in range(len(new)):
        below = np.flatnonzero(S[:, i] <= 0.5)
        assert med[i] == (times[below[0]] if below.size else np.inf)
    assert np.isinf(med[0]) or np.isfinite(med).any()
    # times: any order, before the first time the hazard is 0
    tq = np.array([1e9, -1.0, 0.0, times[3]])
    _, Hq = m.predict_cumulative_hazard(new, times=tq, strata=rows_strata)
    assert np.all(Hq[1] == 0) and np.all(Hq[2] == 0)
    np.testing.assert_allclose(Hq[0], H[-1])
    np.testing.assert_allclose(Hq[3], H[3])
    # a scalar time is one time
    assert m.predict_survival_function(new, times=5.0, strata=rows_strata).value.shape == (1, 4)


def test_median_is_infinite_when_survival_stays_above_half():
    X, t, e, _, _, _ = tied_data()
    m = CoxPH().fit(X, t, e)
    assert np.isinf(m.predict_median([[-40.0, 40.0]])[0])
    assert np.isfinite(m.predict_median([[40.0, -40.0]])[0])


def test_timefix_merged_times_are_reported_merged():
    X, t, e, _, _, _ = tied_data()
    t = t / 7.0
    t2 = t * (1 + np.where(np.arange(t.size) % 2 == 0, 1e-12, 0.0))
    a = CoxPH().fit(X, t2, e)
    b = CoxPH(timefix=False).fit(X, t2, e)
    assert a.baseline_cumulative_hazard_[None].time.size == np.unique(t).size
    assert b.baseline_cumulative_hazard_[None].time.size > np.unique(t).size


@pytest.mark.parametrize(
    "call, pattern",
    [
        (lambda m: m.predict_cumulative_hazard([[0.0, 0.0]]),
         r"fitted with 3 strata \(0, 1, 2\): pass strata="),
        (lambda m: m.predict_survival_function([[0.0, 0.0], [1, 1]], strata=[0, 7]),
         "strata has label 7 at row 1, which the model was not fitted on"),
        (lambda m: m.predict_median([[0.0, 0.0]], strata=["a"]), "label 'a' at row 0"),
        (lambda m: m.predict_partial_hazard([[0.0, 0.0, 1.0]]), "X has 3 columns but the model"),
        (lambda m: m.predict_cumulative_hazard([[0.0, np.nan]], strata=[0]),
         r"X contains nan at row 0, column 1"),
        (lambda m: m.predict_cumulative_hazard([[0.0, 0.0]], times=[1.0, np.inf], strata=[0]),
         "times inf at row 1|times .*inf"),
        (lambda m: m.predict_cumulative_hazard([[0.0, 0.0]], times=[[1.0]], strata=[0]),
         "times must be a number or 1-D"),
        (lambda m: m.predict_cumulative_hazard([[0.0, 0.0]], strata=[0, 1]),
         "strata has 2 rows|length"),
    ],
)
def test_bad_prediction_input_is_a_clear_error(call, pattern):
    X, t, e, s, _, _ = tied_data()
    m = CoxPH().fit(X, t, e, strata=s)
    with pytest.raises(ValueError, match=pattern):
        call(m)


def test_strata_refused_for_an_unstratified_fit_and_unfitted_model():
    X, t, e, _, _, _ = tied_data()
    m = CoxPH().fit(X, t, e)
    with pytest.raises(ValueError, match="fitted without strata"):
        m.predict_median([[0.0, 0.0]], strata=[1])
    with pytest.raises(ValueError, match="not fitted yet"):
        CoxPH().predict_survival_function([[0.0, 0.0]])
    assert not hasattr(CoxPH(), "baseline_survival_")


def test_progress_reports_newton_steps(capsys, monkeypatch):
    monkeypatch.setenv("GRAPHPAR_PROGRESS_INTERVAL", "0")  # by default short work prints none
    X, t, e, _, _, _ = tied_data()
    CoxPH().fit(X, t, e)
    assert capsys.readouterr().err == ""
    m = CoxPH().fit(X, t, e, progress=True)
    err = capsys.readouterr().err
    assert "cox: Newton steps" in err and f"{m.n_iter_}" in err and "loglik" in err


def test_progress_through_logging(monkeypatch):
    import logging

    monkeypatch.setenv("GRAPHPAR_PROGRESS_INTERVAL", "0")
    X, t, e, _, _, _ = tied_data()
    logger = logging.getLogger("graphpar")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    old = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        CoxPH().fit(X, t, e, progress=None)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)
    assert "cox: Newton steps" in stream.getvalue()


# ------------------------------------------------------------------ lifelines
def test_equals_lifelines_without_ties():
    lifelines = pytest.importorskip("lifelines")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    n = 400
    X = rng.standard_normal((n, 2))
    t = rng.exponential(np.exp(-(X @ [0.7, -0.5])))  # continuous: no ties, so the
    c = rng.exponential(2.0, n)                        # Breslow and Efron baselines agree
    e = t <= c
    t = np.minimum(t, c)
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "T": t, "E": e.astype(int)})
    lf = lifelines.CoxPHFitter().fit(df, "T", "E", fit_options={"precision": 1e-12})
    for ties in ("breslow", "efron"):
        m = CoxPH(ties=ties).fit(X, t, e)
        np.testing.assert_allclose(m.coef_, lf.params_.to_numpy(), rtol=1e-6)
        if ties == "efron":  # lifelines fits Efron's likelihood: compare at the same coef
            base = lf.baseline_cumulative_hazard_
            np.testing.assert_array_equal(m.baseline_cumulative_hazard_[None].time,
                                          base.index.to_numpy())
            np.testing.assert_allclose(m.baseline_cumulative_hazard_[None].value,
                                       base.iloc[:, 0].to_numpy(), rtol=1e-6)
            np.testing.assert_allclose(m.baseline_survival_[None].value,
                                       lf.baseline_survival_.iloc[:, 0].to_numpy(), rtol=1e-6)
            new = df.iloc[:5]
            np.testing.assert_allclose(m.predict_partial_hazard(X[:5]),
                                       lf.predict_partial_hazard(new).to_numpy(), rtol=1e-6)
            np.testing.assert_allclose(m.predict_log_partial_hazard(X[:5]),
                                       lf.predict_log_partial_hazard(new).to_numpy(),
                                       rtol=1e-6, atol=1e-9)
            sf = lf.predict_survival_function(new)
            _, S = m.predict_survival_function(X[:5], times=sf.index.to_numpy())
            np.testing.assert_allclose(S, sf.to_numpy(), rtol=1e-6)
            np.testing.assert_array_equal(m.predict_median(X[:5]),
                                          lf.predict_median(new).to_numpy())


def test_breslow_baseline_equals_lifelines_formula_with_ties():
    """lifelines' baseline (always Breslow's) at graphpar's Breslow coefficients."""
    pytest.importorskip("lifelines")
    pd = pytest.importorskip("pandas")
    from lifelines.utils import survival_table_from_events

    X, t, e, _, w, _ = tied_data()
    m = CoxPH(ties="breslow").fit(X, t, e, weights=w)
    keep = w > 0
    X, t, e, w = X[keep], t[keep], e[keep], w[keep]
    # lifelines' CoxPHFitter._compute_baseline_hazard, at these coefficients
    ph = pd.Series(np.exp((X - X.mean(axis=0)) @ m.coef_) * w)
    summed = ph.groupby(t).sum().sort_index(ascending=False).cumsum()
    table = survival_table_from_events(t, e, weights=w)
    hazard = (table["observed"].loc[summed.index] / summed).sort_index()
    # the baseline row differs by the means (graphpar's include the zero-weight rows)
    shift = math.exp((X.mean(axis=0) - m.means_) @ m.coef_)
    np.testing.assert_allclose(m.baseline_cumulative_hazard_[None].value * shift,
                               hazard.cumsum().to_numpy(), rtol=1e-10)


# ------------------------------------------------------------------ distributed
@pytest.mark.mpi
@pytest.mark.parametrize("nprocs", [2, 3])
def test_distributed_baseline_equals_serial(nprocs):
    from conftest import run_mpi_script

    res = run_mpi_script("cox_predict_checks.py", nprocs,
                         env={"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"})
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"on {nprocs} ranks" in res.stdout and "ALL OK: " in res.stdout, res.stdout


def test_dataframe_columns_are_taken_by_name():
    pd = pytest.importorskip("pandas")
    X, t, e, _, _, _ = tied_data()
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1]})
    m = CoxPH().fit(df, t, e)
    new = pd.DataFrame({"extra": [9.0, 9.0], "b": [1.0, -1.0], "a": [0.5, 2.0]})
    want = m.predict_partial_hazard(np.array([[0.5, 1.0], [2.0, -1.0]]))
    np.testing.assert_allclose(m.predict_partial_hazard(new), want, rtol=1e-14)
    with pytest.raises(ValueError, match="X has no column"):
        m.predict_median(pd.DataFrame({"a": [1.0], "c": [2.0]}))
    unnamed = CoxPH().fit(X, t, e)
    np.testing.assert_allclose(unnamed.predict_partial_hazard(new[["a", "b"]]),
                               m.predict_partial_hazard(new), rtol=1e-14)


@pytest.mark.parametrize("timefix", [True, False])
def test_baseline_without_the_problems_sorted_rows(timefix):
    """The baseline sorts for itself when the prepared problem does not expose its order."""
    from types import SimpleNamespace

    from graphpar._cox import _serial_baseline
    from graphpar._validation import check_cox_arrays

    X, t, e, s, w, off = tied_data()
    t = t * (1 + np.where(np.arange(t.size) % 3 == 0, 1e-12, 0.0))
    m = CoxPH(timefix=timefix).fit(X, t, e, strata=s, weights=w, offset=off)
    arrays = check_cox_arrays(X, t, e, s, w, off)
    b = _serial_baseline(arrays, SimpleNamespace(), m.coef_, "efron", timefix)
    for key, curve in m.baseline_cumulative_hazard_.items():
        other = b.cumulative_hazard()[key]
        np.testing.assert_array_equal(other.time, curve.time)
        np.testing.assert_allclose(other.value, curve.value, rtol=1e-13)


MEDIAN_REF = reference("r_median_reference.json")


def _median_fit(entry):
    d = table(entry["data"])
    X = np.column_stack([d[c] for c in entry["covariates"]])
    kw = {"strata": d[entry["strata"]]} if entry["strata"] else {}
    if entry["weights"]:
        kw["weights"] = d[entry["weights"]]
    return CoxPH(ties=entry["ties"]).fit(X, d[entry["time"]], d[entry["event"]], **kw)


@pytest.mark.parametrize("entry", MEDIAN_REF["fits"],
                         ids=lambda e: f"{e['name']}-{e['ties']}")
def test_median_equals_r_quantile_survfit(entry):
    """R's rule: the first time S <= 0.5, the midpoint where S is 0.5 on an interval."""
    m = _median_fit(entry)
    rows = entry["rows"]
    X = np.array([r["x"] for r in rows], dtype=np.float64)
    strata = [r["stratum"] for r in rows] if entry["strata"] else None
    got = m.predict_median(X, strata=strata)
    want = np.array([np.inf if r["median"] is None else r["median"] for r in rows])
    for g, w, r in zip(got, want, rows, strict=True):
        assert g == w, (r["kind"], r["stratum"], g, w, entry["quantile_call"])
    kinds = {r["kind"] for r in rows}
    assert {"inner", "inner_low", "inner_out", "last_low", "last_high", "never"} <= kinds
    # the rule matters: on 0.5 the median is later than the first time S <= 0.5 + 1e-6
    at = {r["kind"]: i for i, r in enumerate(rows)}
    assert got[at["inner"]] > got[at["inner_out"]]


def test_stratified_prediction_without_strata_says_how():
    entry = next(e for e in MEDIAN_REF["fits"] if e["strata"] and e["ties"] == "efron")
    m = _median_fit(entry)
    every = entry["without_strata"]
    X = np.array(every["x"], dtype=np.float64)
    for call in (m.predict_median, m.predict_cumulative_hazard, m.predict_survival_function):
        with pytest.raises(ValueError) as info:
            call(X)
        msg = str(info.value)
        assert "fitted with 2 strata (1.0, 2.0): pass strata= with one label per row" in msg
        assert "np.repeat(X, 2, axis=0) with strata=list(model.baseline_survival_)" in msg
    # the recipe of the message gives R's curves of every stratum for every row
    k = len(m.baseline_survival_)
    got = m.predict_median(np.repeat(X, k, axis=0),
                           strata=list(m.baseline_survival_) * len(X))
    want = np.array(every["median"], dtype=np.float64).T.ravel()  # R: [stratum][row]
    np.testing.assert_array_equal(got, want, err_msg=every["survfit_call"])


def test_median_rule_at_exact_half_without_r():
    t = np.array([1.0, 2.0, 3.0, 4.0, 6.0])
    h = np.array([0.1, 0.3, math.log(2.0), math.log(2.0), 1.0])
    from graphpar._cox_baseline import median_times

    # S = 0.5 on [3, 6): midpoint 4.5; riskier rows cross 0.5 at a time of the curve
    np.testing.assert_array_equal(median_times(t, h, np.array([1.0, 3.0, 0.5])),
                                  [4.5, 2.0, np.inf])
    # ending exactly at 0.5: the midpoint of its first time and the curve's last time
    np.testing.assert_array_equal(median_times(t[:4], h[:4], np.array([1.0])), [3.5])
