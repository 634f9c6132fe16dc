"""Counting-process Cox regression: ``CoxPH().fit(X, stop, event, entry=start)``.

References: R's ``coxph(Surv(start, stop, event) ~ ...)`` and ``survfit`` on it
(datasets/survival/r_counting_reference.json, written with the R calls by
datasets/survival/make_counting_reference.R: R's ``heart`` data and a
left-truncated ``veteran`` with strata, weights and an offset, both tie
methods), an O(n^2) partial likelihood over the risk sets ``entry < t <= stop``
written out below, and two identities (entry 0 is the right-censored fit; cutting
a row's interval in two changes nothing). Also the checks of ``entry``, the CLI's
``--entry`` and the distributed fit under ``mpiexec -n 2`` and ``3``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from capped import assert_one_line_error, run_capped
from conftest import run_mpi_script
from r_reference import DATA, reference

from graphpar import CoxPH, MonotoneLikelihoodWarning
from graphpar._cox_problem import CoxProblem
from graphpar._cox_reader import read_csv
from graphpar._validation import check_cox_arrays

FITS = reference("r_counting_reference.json")["fits"]


def _fit(ref, table):
    X = np.column_stack([table[c] for c in ref["covariates"]])
    col = {k: table[ref[k]] if ref[k] else None for k in ("strata", "weights", "offset")}
    m = CoxPH(ties=ref["ties"]).fit(X, table[ref["time"]], table[ref["event"]],
                                    entry=table[ref["entry"]], feature_names=ref["covariates"],
                                    **col)
    return m, X, col


@pytest.mark.parametrize("ref", FITS, ids=lambda f: f"{f['name']}-{f['ties']}")
@pytest.mark.usefixtures("cox_evaluation")
def test_matches_r_coxph_counting(ref):
    table = read_csv(DATA / ref["data"])
    m, X, col = _fit(ref, table)
    assert m.converged_, ref["r_call"]
    assert m.n_iter_ == ref["iter"], ref["r_call"]
    np.testing.assert_allclose(m.coef_, ref["coef"], rtol=1e-8, err_msg=ref["r_call"])
    # the reference holds R's model-based se (naive.var when R reports the robust one)
    np.testing.assert_allclose(m.se_model_, ref["se"], rtol=1e-8, err_msg=ref["r_call"])
    assert m.log_likelihood_ == pytest.approx(ref["loglik"], rel=1e-10), ref["r_call"]
    assert m.log_likelihood_null_ == pytest.approx(ref["loglik_null"], rel=1e-10)
    for c in ref["curves"]:
        i = c["row"]
        kw = {"strata": None if col["strata"] is None else col["strata"][i:i + 1],
              "offset": None if col["offset"] is None else col["offset"][i:i + 1]}
        t, h = m.predict_cumulative_hazard(X[i:i + 1], **kw)  # default grid: R's times
        np.testing.assert_array_equal(t, c["time"], err_msg=c["survfit_call"])
        np.testing.assert_allclose(h[:, 0], c["cumhaz"], rtol=1e-8, err_msg=c["survfit_call"])


def test_r_reference_covers_strata_weights_offset_both_ties():
    kinds = {(f["ties"], bool(f["strata"]), bool(f["weights"]), bool(f["offset"]))
             for f in FITS}
    for ties in ("efron", "breslow"):
        assert (ties, True, False, False) in kinds
        assert (ties, True, True, True) in kinds
        assert (ties, False, False, True) in kinds
    assert {f["name"] for f in FITS} >= {"heart", "veteran_entry"}


def naive_loglik(X, entry, stop, event, beta, w, strata, ties):
    """Log partial likelihood summed over event times, risk set entry < t <= stop."""
    eta = X @ beta
    r = w * np.exp(eta)
    ll = 0.0
    for s in np.unique(strata):
        for t in np.unique(stop[(strata == s) & (event == 1)]):
            dead = (strata == s) & (stop == t) & (event == 1) & (w > 0)
            risk = (strata == s) & (entry < t) & (stop >= t)
            S0 = r[risk].sum()
            D, m, A = w[dead].sum(), int(dead.sum()), r[dead].sum()
            if m == 0:
                continue
            ll += (w[dead] * eta[dead]).sum()
            if ties == "breslow" or m == 1:
                ll -= D * np.log(S0)
            else:
                ll -= D / m * sum(np.log(S0 - k / m * A) for k in range(m))
    return ll


def data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    stop = np.ceil(rng.exponential(np.exp(-(X @ [0.5, -0.4]))) * 8) + 1  # heavy ties
    entry = np.floor(stop * rng.random(n))
    entry[rng.random(n) < 0.3] = 0.0
    event = (rng.random(n) < 0.7).astype(np.uint8)
    w = rng.uniform(0.5, 2.0, n)
    w[rng.random(n) < 0.1] = 0.0
    return X, entry, stop, event, w, rng.integers(0, 3, n)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_loglik_gradient_hessian_against_naive(ties):
    X, entry, stop, event, w, strata = data(400, 1)
    beta = np.array([0.3, -0.2])
    prob = CoxProblem(check_cox_arrays(X, stop, event, strata, w), ties, timefix=False,
                      entry=entry)
    ll, g, h = prob.evaluate(beta)
    Xc = X - X.mean(axis=0)

    def f(b):
        return naive_loglik(Xc, entry, stop, event, b, w, strata, ties)

    assert ll == pytest.approx(f(beta), rel=1e-12)
    eps = 1e-5
    num_g = np.array([(f(beta + eps * e) - f(beta - eps * e)) / (2 * eps) for e in np.eye(2)])
    np.testing.assert_allclose(g, num_g, rtol=1e-6, atol=1e-6)
    # the Hessian: central differences of the (just checked) gradient
    num_h = np.array([(prob.evaluate(beta + eps * e)[1] - prob.evaluate(beta - eps * e)[1])
                      / (2 * eps) for e in np.eye(2)])
    np.testing.assert_allclose(h, num_h, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_zero_entry_is_the_right_censored_fit(ties):
    X, _, stop, event, w, strata = data(500, 2)
    ref = CoxPH(ties=ties).fit(X, stop, event, strata=strata, weights=w)
    m = CoxPH(ties=ties).fit(X, stop, event, strata=strata, weights=w, entry=np.zeros(500))
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-12)
    np.testing.assert_allclose(m.se_, ref.se_, rtol=1e-12)
    for lab, c in ref.baseline_cumulative_hazard_.items():
        np.testing.assert_array_equal(m.baseline_cumulative_hazard_[lab].time, c.time)
        np.testing.assert_allclose(m.baseline_cumulative_hazard_[lab].value, c.value,
                                   rtol=1e-12)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_cutting_intervals_changes_nothing(ties):
    # (entry, stop] cut at an interior time c into (entry, c] censored and (c, stop]
    X, entry, stop, event, w, strata = data(300, 3)
    cut = np.floor(entry + (stop - entry) * 0.5) + 0.5
    both = cut < stop
    i = np.flatnonzero(both)
    X2 = np.vstack([X, X[i]])
    entry2 = np.concatenate([entry, cut[i]])
    stop2 = np.concatenate([np.where(both, cut, stop), stop[i]])
    event2 = np.concatenate([np.where(both, 0, event), event[i]])
    kw = dict(strata=strata, weights=w)
    kw2 = dict(strata=np.concatenate([strata, strata[i]]), weights=np.concatenate([w, w[i]]))
    a = CoxPH(ties=ties, timefix=False).fit(X, stop, event, entry=entry, **kw)
    b = CoxPH(ties=ties, timefix=False).fit(X2, stop2, event2, entry=entry2, **kw2)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-10)
    # model-based: the robust se (R's default for these weights) treats the cut rows as two
    np.testing.assert_allclose(b.se_model_, a.se_model_, rtol=1e-10)
    assert b.log_likelihood_ == pytest.approx(a.log_likelihood_, rel=1e-12)


def test_lifelines_time_varying_agrees():
    lifelines = pytest.importorskip("lifelines")
    pd = pytest.importorskip("pandas")
    h = read_csv(DATA / "heart.csv")
    df = pd.DataFrame({k: h[k] for k in ("start", "stop", "event", "age", "year", "surgery",
                                         "transplant", "id")})
    ref = lifelines.CoxTimeVaryingFitter().fit(df, id_col="id", event_col="event",
                                               start_col="start", stop_col="stop")
    X = df[["age", "year", "surgery", "transplant"]].to_numpy()
    m = CoxPH().fit(X, h["stop"], h["event"], entry=h["start"])
    np.testing.assert_allclose(m.coef_, ref.params_.to_numpy(), rtol=1e-5)


@pytest.mark.parametrize("entry, message", [
    ([0.0, 5.0, 1.0], "entry must be less than time, got entry 5.0 and time 5.0 at row 1"),
    ([0.0, np.nan, 1.0], "entry contains nan at row 1"),
    ([0.0, 1.0], "entry has length 2 but time has length 3"),
    ([0.0, 6.0, 1.0], "entry must be less than time, got entry 6.0 and time 5.0 at row 1"),
])
def test_bad_entry_is_a_one_line_error(entry, message):
    X = np.array([[0.0], [1.0], [0.5]])
    with pytest.raises(ValueError) as exc:
        CoxPH().fit(X, [3.0, 5.0, 4.0], [1, 1, 0], entry=entry)
    assert str(exc.value) == message


def test_entry_merged_with_its_time_by_timefix_is_refused():
    X = np.array([[0.0], [1.0], [0.5]])
    t = np.array([3.0, 5.0, 4.0])
    entry = np.array([0.0, 5.0 * (1 - 1e-13), 1.0])
    with pytest.raises(ValueError, match="at row 1, which differ by less than the near-tie"):
        CoxPH().fit(X, t, [1, 1, 0], entry=entry)
    # kept apart: accepted (three rows whose x orders the events: the likelihood is monotone)
    with pytest.warns(MonotoneLikelihoodWarning):
        CoxPH(timefix=False).fit(X, t, [1, 1, 0], entry=entry)


def test_cli_entry_matches_the_library(tmp_path):
    out = tmp_path / "fit.json"
    res = run_capped(["cox", str(DATA / "heart.csv"), "--time", "stop", "--event", "event",
                      "--entry", "start", "--covariates", "age,year,surgery,transplant",
                      "--ties", "breslow", "-o", str(out), "--quiet"])
    assert res.returncode == 0, res.output
    got = json.loads(out.read_text())
    ref = next(f for f in FITS if f["name"] == "heart" and f["ties"] == "breslow")
    coef = [got["coef"][c] for c in ref["covariates"]]
    np.testing.assert_allclose(coef, ref["coef"], rtol=1e-8)
    assert got["log_likelihood"] == pytest.approx(ref["loglik"], rel=1e-10)


def test_cli_bad_entry_names_file_line_and_column(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("start,stop,event,x\n0,3,1,0.5\n4,4,1,1.0\n1,5,0,0.2\n")
    res = run_capped(["cox", str(csv), "--time", "stop", "--event", "event", "--entry",
                      "start"])
    assert_one_line_error(res, "line 3", "'start'", "entry must be less than time")


@pytest.mark.parametrize("nprocs", [2, 3])
def test_distributed_counting_equals_serial(nprocs):
    res = run_mpi_script("cox_counting_checks.py", nprocs,
                         env={"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"})
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ALL OK:" in res.stdout and f"on {nprocs} ranks" in res.stdout, res.stdout


def test_entries_below_every_event_get_no_removal_row():
    # rows entering at 0 (or before the first event) are in every risk set: no removal row,
    # with timefix too: its merge cannot move the first event (2e-6) down to 0, although
    # a margin proportional to the largest time (50) would reach 0
    rng = np.random.default_rng(5)
    n = 2000
    X = rng.standard_normal((n, 2))
    stop = rng.exponential(1.0, n) + 1e-3
    stop[:2] = 2e-6, 50.0
    event = (rng.random(n) < 0.7).astype(np.uint8)
    event[0] = 1
    entry = np.where(rng.random(n) < 0.5, 0.0, stop * rng.uniform(0.1, 0.9, n))
    entry[0] = 0.0
    first = stop[event == 1].min()
    late = int(np.count_nonzero(entry >= first))
    beta = np.array([0.3, -0.2])
    for timefix in (True, False):
        prob = CoxProblem(check_cox_arrays(X, stop, event), "efron", timefix=timefix,
                          entry=entry)
        assert prob.removals == late
        ll = prob.evaluate(beta)[0]
        ref = naive_loglik(X - X.mean(axis=0), entry, stop, event, beta, np.ones(n),
                           np.zeros(n), "efron")
        assert ll == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_timefix_chain_below_the_first_event_keeps_its_removals(ties):
    # distinct values 1e-8 apart chain the first event (at 1) down by 2e-5, far more than
    # any fixed margin: every chained entry is merged with it, so those rows leave its
    # risk set; the same data merged by hand with timefix=False is the reference
    k = 2000
    step = 1e-8
    bottom = 1.0 - k * step
    chain = 1.0 - step * np.arange(1, k + 1)
    rng = np.random.default_rng(6)
    n_late = 300
    stop = np.concatenate([[1.0], np.full(k, 3.0), rng.uniform(1.5, 4.0, n_late)])
    event = np.concatenate([[1], np.zeros(k, np.uint8), np.ones(n_late, np.uint8)])
    entry = np.concatenate([[0.0], chain, np.zeros(n_late)])
    X = rng.standard_normal((stop.size, 1))
    X[1:k + 1] += 1.0  # the chained rows: wrongly left in the first risk set, it shows
    m = CoxPH(ties=ties).fit(X, stop, event, entry=entry)
    stop_h, entry_h = stop.copy(), entry.copy()
    stop_h[0] = bottom
    entry_h[1:k + 1] = bottom
    ref = CoxPH(ties=ties, timefix=False).fit(X, stop_h, event, entry=entry_h)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-10)
    assert m.log_likelihood_ == pytest.approx(ref.log_likelihood_, rel=1e-12)
    # the chain really matters: without its removals the first risk set is 1 + k rows
    wrong = CoxPH(ties=ties, timefix=False).fit(X, stop_h, event, entry=np.where(
        entry_h == bottom, bottom - 1.0, entry_h))
    assert abs(wrong.log_likelihood_ - ref.log_likelihood_) > 1e-3
