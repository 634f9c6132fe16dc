"""Robust and cluster-robust Cox variance and the residuals, against R's survival::coxph.

References: datasets/survival/r_robust_reference.json, written by
make_robust_reference.R (the R calls are recorded beside the values).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from r_reference import DATA, fit_arguments, reference
from r_reference import table as read_table

from graphpar import CoxPH

REF = reference("r_robust_reference.json")
FITS = REF["fits"]
TOL = 1e-8


def _fit(ref, **extra):
    X, kw = fit_arguments(ref)
    kw.update(extra)
    model = CoxPH(ties=ref["ties"], penalizer=ref["penalizer"])
    model.fit(X, kw.pop("time"), kw.pop("event"), **kw)
    return model, X.shape[0]


def _close(got, want, tol=TOL):
    want = np.asarray(want, dtype=np.float64)
    np.testing.assert_allclose(got, want.reshape(np.shape(got)), rtol=tol,
                               atol=tol * max(1.0, float(np.max(np.abs(want)))))


@pytest.mark.parametrize("ref", FITS, ids=[f"{f['name']}-{f['ties']}" for f in FITS])
def test_robust_se_equals_r(ref):
    model, _ = _fit(ref)
    assert model.robust_
    _close(model.coef_, ref["coef"], 1e-7)
    _close(model.se_, ref["robust_se"])
    _close(model.var_, ref["robust_var"])
    _close(model.se_model_, ref["model_se"])
    assert not np.allclose(model.se_, model.se_model_, rtol=1e-3)  # the two really differ


RESID = [f for f in FITS if "score" in f]


@pytest.mark.parametrize("ref", RESID, ids=[f"{f['name']}-{f['ties']}" for f in RESID])
def test_residuals_equal_r(ref):
    model, n = _fit(ref)
    p = len(ref["covariates"])
    U = model.score_residuals()
    assert U.shape == (n, p)
    _close(U, ref["score"])
    M = model.martingale_residuals()
    assert M.shape == (n,)
    _close(M, ref["martingale"])
    rows, S = model.schoenfeld_residuals(return_rows=True)
    _close(S, ref["schoenfeld"])
    d = read_table(ref["data"])
    # R's order: stratum, then time ascending; the rows are the events (R's row names,
    # the times, carry 15 significant digits: the 1e-12 jitter of veteran_years shows)
    np.testing.assert_allclose(d[ref["time"]][rows], ref["schoenfeld_time"], rtol=1e-11)
    assert np.all(d[ref["event"]][rows] == 1) and rows.size == int(d[ref["event"]].sum())
    D = model.dfbeta_residuals()
    _close(D, ref["dfbeta"])
    # the weighted score residuals sum to the gradient, zero at the fit
    w = d[ref["weights"]] if ref["weights"] else np.ones(n)
    assert np.max(np.abs(w @ U)) < 1e-6 * max(1.0, np.max(np.abs(U)))


def _naive_score_residuals(X, time, event, beta, weights=None, ties="breslow"):
    """O(n^2) oracle: the definition, one event time at a time (one stratum)."""
    n, p = X.shape
    w = np.ones(n) if weights is None else weights
    r = np.exp(X @ beta)
    U = np.where(event[:, None] == 1, X, 0.0).astype(float)
    for t in np.unique(time[event == 1]):
        risk = time >= t
        dead = (time == t) & (event == 1)
        d = int(dead.sum())
        D = w[dead].sum()
        fracs = np.arange(d) / d if ties == "efron" else np.zeros(1)
        for f in fracs:
            c = np.where(dead, 1.0 - f, 1.0) * risk if ties == "efron" else risk * 1.0
            den = np.sum(c * w * r)
            xbar = (c * w * r) @ X / den
            dl = (D / d if ties == "efron" else D) / den
            U -= (c * r)[:, None] * (X - xbar) * dl
            U[dead] -= xbar / len(fracs)
    return U


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_score_residuals_against_naive_oracle(ties):
    rng = np.random.default_rng(3)
    n = 60
    X = rng.normal(size=(n, 2))
    time = rng.integers(1, 12, size=n).astype(float)  # many ties
    event = (rng.random(n) < 0.7).astype(float)
    w = rng.uniform(0.5, 2.0, size=n)
    model = CoxPH(ties=ties).fit(X, time, event, weights=w)
    want = _naive_score_residuals(X, time, event, model.coef_, w, ties)
    np.testing.assert_allclose(model.score_residuals(), want, atol=1e-10)


def test_summary_says_robust():
    ref = next(f for f in FITS if f["name"] == "rats_weights_cluster_litter")
    model, _ = _fit(ref)
    table = model.summary_table()
    np.testing.assert_allclose(table.se, model.se_)
    text = str(table)
    assert "robust se" in text and "se(coef)" in text
    assert model.n_clusters_ == len(np.unique(read_table(ref["data"])["litter"]))


def test_model_based_by_default_and_cluster_codes_any_labels():
    ref = next(f for f in FITS if f["name"] == "rats_weights_cluster_litter")
    plain, _ = _fit(ref, cluster=None, robust=False)
    assert not plain.robust_ and plain.n_clusters_ is None
    np.testing.assert_array_equal(plain.se_, plain.se_model_)
    _close(plain.se_, ref["model_se"])
    d = read_table(ref["data"])
    labels = np.array([f"litter-{int(v)}" for v in d["litter"]])
    named, _ = _fit(ref, cluster=labels)
    _close(named.se_, ref["robust_se"])


def test_bad_robust_arguments():
    X = np.array([[0.0], [1.0], [0.5], [2.0]])
    t, e = [4, 1, 3, 2], [1, 1, 0, 1]
    with pytest.raises(ValueError, match="cluster has length 3 but X has 4 rows"):
        CoxPH().fit(X, t, e, cluster=[1, 2, 3])
    with pytest.raises(ValueError, match="cluster contains nan at row 1"):
        CoxPH().fit(X, t, e, cluster=[1.0, np.nan, 2.0, 2.0])
    with pytest.raises(ValueError, match="robust=False"):
        CoxPH().fit(X, t, e, cluster=[1, 1, 2, 2], robust=False)
    with pytest.raises(TypeError, match="robust must be"):
        CoxPH().fit(X, t, e, robust="yes")
    with pytest.raises(ValueError, match="not fitted"):
        CoxPH().score_residuals()


@pytest.mark.mpi
@pytest.mark.parametrize("nprocs", [2, 3])
def test_distributed_robust_equals_serial_and_r(nprocs):
    """graphpar.mpi.CoxPH(robust=True / cluster=) on every recorded R fit, rows split 4 ways.

    tests/mpi/cox_robust_checks.py: R's robust variance to 1e-8 and the serial
    fit's to 1e-10, clusters scattered over the ranks, counting-process rows,
    DataFrame fits with levels absent from some ranks, and the errors.
    """
    from conftest import run_mpi_script

    res = run_mpi_script("cox_robust_checks.py", nprocs,
                         env={"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"})
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"on {nprocs} ranks" in res.stdout and "ALL OK:" in res.stdout, res.stdout


def test_cli_cluster_equals_r():
    from capped import run_capped

    ref = next(f for f in FITS if f["name"] == "rats_weights_cluster_litter"
               and f["ties"] == "efron")
    out = run_capped(["cox", str(DATA / "rats.csv"), "--time", "time", "--event", "status",
                      "--weights", "w", "--cluster", "litter", "--json"], timeout=240)
    assert out.returncode == 0, out.output
    fields = json.loads(out.stdout)
    assert list(fields["se"]) == ["rx", "female"]  # the cluster column is no covariate
    _close(list(fields["se"].values()), ref["robust_se"])
    _close(list(fields["se_model"].values()), ref["model_se"])
    assert fields["variance"] == "robust"


def test_cli_bad_cluster_column():
    from capped import assert_one_line_error, run_capped

    out = run_capped(["cox", str(DATA / "rats.csv"), "--time", "time", "--event", "status",
                      "--cluster", "nope"], timeout=240)
    assert_one_line_error(out, "rats.csv", "'nope'", "--cluster")


@pytest.mark.mpi
def test_cli_mpi_cluster_equals_r():
    from conftest import run_mpiexec

    ref = next(f for f in FITS if f["name"] == "rats_weights_cluster_litter"
               and f["ties"] == "efron")
    out = run_mpiexec(3, ["-m", "graphpar", "cox", DATA / "rats.csv", "--time", "time",
                          "--event", "status", "--weights", "w", "--cluster", "litter",
                          "--json"], timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert len(lines) == 1, out.stdout  # rank 0 alone prints
    fields = json.loads(lines[0])
    _close(list(fields["se"].values()), ref["robust_se"])
    _close(list(fields["se_model"].values()), ref["model_se"])
    assert fields["variance"] == "robust" and fields["ranks"] == 3


def test_dataframe_cluster_col_equals_r():
    pd = pytest.importorskip("pandas")
    ref = next(f for f in FITS if f["name"] == "rats_weights_cluster_litter"
               and f["ties"] == "breslow")
    df = pd.read_csv(DATA / "rats.csv")
    model = CoxPH(ties="breslow").fit(df, duration_col="time", event_col="status",
                                      weights_col="w", cluster_col="litter")
    assert model.feature_names_in_ == ["rx", "female"]
    _close(model.se_, ref["robust_se"])
    _close(model.martingale_residuals(), ref["martingale"])


WEIGHTS_DEFAULT = reference("r_weights_default_reference.json")["fits"]


@pytest.mark.parametrize("ref", WEIGHTS_DEFAULT,
                         ids=[f"{f['name']}-{f['ties']}" for f in WEIGHTS_DEFAULT])
def test_default_variance_follows_r_for_non_integer_weights(ref):
    """R's coxph reports the robust variance by default when some case weight is not an
    integer (and keeps the model-based one in naive.var); so does graphpar's default."""
    model, _ = _fit(ref)  # robust=None: the default
    assert model.robust_ == ref["robust"], ref["r_call"]
    _close(model.coef_, ref["coef"])
    _close(model.se_, ref["se"])
    _close(model.se_model_, ref["se_model"])


def test_robust_false_keeps_the_model_based_variance_for_non_integer_weights():
    ref = WEIGHTS_DEFAULT[0]  # rats, efron, weights = w (not integers)
    model, _ = _fit(ref, robust=False)
    assert ref["robust"] and not model.robust_
    _close(model.se_, ref["se_model"])  # R: coxph(..., robust = FALSE)


def test_cli_default_variance_follows_r_and_no_robust_opts_out():
    from capped import run_capped

    ref = WEIGHTS_DEFAULT[0]  # rats, efron, weights = w (not integers)
    assert ref["robust"]
    base = ["cox", str(DATA / "rats.csv"), "--time", "time", "--event", "status", "--weights",
            "w", "--covariates", "rx,female", "--json"]
    out = run_capped(base, timeout=240)
    assert out.returncode == 0, out.output
    fields = json.loads(out.stdout)
    assert fields["variance"] == "robust"
    _close(list(fields["se"].values()), ref["se"])
    out = run_capped([*base, "--no-robust"], timeout=240)
    assert out.returncode == 0, out.output
    fields = json.loads(out.stdout)
    assert fields["variance"] == "model"
    _close(list(fields["se"].values()), ref["se_model"])
