"""The distributed robust variance and DataFrame fits against the serial fit and R.

graphpar.mpi.CoxPH(robust=True / cluster=ids) on the rows of every recorded R
fit of datasets/survival/r_robust_reference.json (strata, weights, offsets,
ridge, counting-process rows, clusters with rows on several ranks), split
across the ranks evenly, all on rank 0, reversed and in a shuffled order
(so that a cluster's rows land on different ranks): the robust standard
errors and variance equal R's to 1e-8 and the serial fit's to 1e-10. With
non-integer weights on some ranks only, the default variance is the robust one
on every rank, as in the serial fit (R's default).
DataFrame fits with a categorical level absent from some ranks' rows give
the serial fit's columns and coefficients. Errors (a bad cluster id on one
rank, robust=False with cluster=, ranks disagreeing on robust) are raised on
every rank.
"""

from __future__ import annotations

import numpy as np
from _common import close, expect_error, run
from r_reference import DATA, fit_arguments, reference

import graphpar
from graphpar.mpi import CoxPH as DistCoxPH

R_TOL = 1e-8
SERIAL_TOL = 1e-10  # only the order of floating-point sums differs


def split(n, comm, how):
    """This rank's row indices of ``n`` rows."""
    r, k = comm.Get_rank(), comm.Get_size()
    rows = np.arange(n)
    if how == "shuffled":  # clusters' rows scattered over every rank
        rows = np.random.default_rng(7).permutation(n)
    if how == "first":
        return rows if r == 0 else rows[:0]
    if how == "reversed":
        r = k - 1 - r
    return rows[r * n // k:(r + 1) * n // k]


def robust_checks(comm):
    checks = 0
    fits = reference("r_robust_reference.json")["fits"]
    for ref in fits:
        X, kw = fit_arguments(ref)
        variants = [(f"{ref['name']}-{ref['ties']}", kw)]
        if ref["cluster"] == "row":  # cluster(row) is robust=TRUE; with entry= the
            # removal rows' pieces of a row's residual are summed by global row number
            plain = {k: v for k, v in kw.items() if k != "cluster"}
            variants.append((f"{ref['name']}-{ref['ties']}-robust", {**plain, "robust": True}))
        for what, kw in variants:
            checks += _robust_fit(comm, ref, what, X, kw)
    return checks


def _robust_fit(comm, ref, what, X, kw):
    """One recorded fit at every split: R's robust variance, the serial fit's."""
    serial = graphpar.CoxPH(ties=ref["ties"], penalizer=ref["penalizer"]).fit(X, **kw)
    for how in ("even", "first", "reversed", "shuffled"):
        mine = split(X.shape[0], comm, how)
        local = {k: (v[mine] if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        m = DistCoxPH(ties=ref["ties"], penalizer=ref["penalizer"]).fit(X[mine], **local)
        assert m.robust_, what
        close(m.se_, ref["robust_se"], R_TOL, f"R robust se {what} {how}")
        close(m.var_, ref["robust_var"], R_TOL, f"R robust var {what} {how}")
        close(m.se_model_, ref["model_se"], R_TOL, f"R model se {what} {how}")
        close(m.se_, serial.se_, SERIAL_TOL, f"serial se {what} {how}")
        close(m.var_, serial.var_, SERIAL_TOL, f"serial var {what} {how}")
        assert m.n_clusters_ == serial.n_clusters_, (what, how, m.n_clusters_)
        assert comm.allgather(m.se_.tobytes()) == [m.se_.tobytes()] * comm.Get_size()
    return 4


def robust_errors(comm):
    rank = comm.Get_rank()
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 2))
    t = rng.exponential(1.0, 40)
    e = np.ones(40)
    ids = np.arange(40).astype(np.float64)
    if rank == comm.Get_size() - 1:
        ids[-1] = np.nan
    mine = slice(rank * 40 // comm.Get_size(), (rank + 1) * 40 // comm.Get_size())
    global_row = 39  # the NaN sits on the last row of the last rank
    expect_error(comm, lambda: DistCoxPH().fit(X[mine], t[mine], e[mine], cluster=ids[mine]),
                 f"cluster contains nan at row {global_row}")
    expect_error(comm, lambda: DistCoxPH().fit(X[mine], t[mine], e[mine], robust=False,
                                         cluster=np.arange(40)[mine]),
                 "cluster= asks for the cluster-robust variance, but robust=False")
    checks = 2
    if comm.Get_size() > 1:
        expect_error(comm, lambda: DistCoxPH().fit(X[mine], t[mine], e[mine], robust=rank == 0),
                     "CoxPH parameters differ across ranks", "robust")
        expect_error(comm, lambda: DistCoxPH().fit(X[mine], t[mine], e[mine], robust=True,
                                             cluster=np.arange(40)[mine] if rank == 0
                                             else None),
                     "cluster is given on some ranks but not on others (only on rank(s) [0])")
        checks += 2
    m = DistCoxPH().fit(X[mine], t[mine], e[mine])
    assert not m.robust_ and np.array_equal(m.se_, m.se_model_)
    return checks + 1


def frame_checks(comm):
    import pandas as pd

    rank, size = comm.Get_rank(), comm.Get_size()
    df = pd.read_csv(DATA / "veteran_factor.csv")
    checks = 0
    # sorted by celltype, so that with 2+ ranks no rank sees every level
    order = np.argsort(df["celltype"].to_numpy(), kind="stable")
    df = df.iloc[order].reset_index(drop=True)
    n = len(df)
    for formula, kw in (("age + celltype + karno", {}),
                        ("age + karno + karno:celltype", {}),
                        ("age + celltype", {"strata": "trt"})):
        serial = graphpar.CoxPH().fit(df, duration_col="time", event_col="status",
                                      formula=formula, **kw)
        for how in ("even", "first", "reversed"):
            mine = split(n, comm, how)
            m = DistCoxPH().fit(df.iloc[mine], duration_col="time", event_col="status",
                                formula=formula, **kw)
            assert m.feature_names_in_ == serial.feature_names_in_, (
                formula, how, m.feature_names_in_)
            close(m.coef_, serial.coef_, SERIAL_TOL, f"frame coef {formula} {how}")
            close(m.se_, serial.se_, SERIAL_TOL, f"frame se {formula} {how}")
            # prediction encodes a frame as the fit did, on every rank
            close(m.predict_partial_hazard(df.iloc[:5]), serial.predict_partial_hazard(
                df.iloc[:5]), SERIAL_TOL, f"frame prediction {formula} {how}")
            checks += 1
    # integer-coded categories marked categorical, one level on one rank only
    df["code"] = df["celltype"].astype("category").cat.codes.astype(int)
    serial = graphpar.CoxPH().fit(df, duration_col="time", event_col="status",
                                  formula="age + code", categorical=["code"])
    mine = split(n, comm, "even")
    m = DistCoxPH().fit(df.iloc[mine], duration_col="time", event_col="status",
                        formula="age + code", categorical=["code"])
    assert m.feature_names_in_ == serial.feature_names_in_, m.feature_names_in_
    close(m.coef_, serial.coef_, SERIAL_TOL, "integer codes")
    # a cluster column of a frame
    rats = pd.read_csv(DATA / "rats.csv")
    ref = next(f for f in reference("r_robust_reference.json")["fits"]
               if f["name"] == "rats_weights_cluster_litter" and f["ties"] == "efron")
    mine = split(len(rats), comm, "shuffled")
    m = DistCoxPH().fit(rats.iloc[mine], duration_col="time", event_col="status",
                        weights_col="w", cluster_col="litter")
    close(m.se_, ref["robust_se"], R_TOL, "frame cluster_col")
    # a column numeric on one rank and text on another
    bad = df.iloc[split(n, comm, "even")].copy()
    if rank == 0 and size > 1:
        bad["karno"] = bad["karno"].astype(str)
    if size > 1:
        expect_error(comm, lambda: DistCoxPH().fit(bad, duration_col="time", event_col="status",
                                             formula="age + karno"),
                     "'karno' is numeric on some ranks and categorical on others")
    # a column missing on one rank: that rank's message, on every rank
    if size > 1:
        miss = df.iloc[split(n, comm, "even")]
        if rank == size - 1:
            miss = miss.drop(columns=["karno"])
        expect_error(comm, lambda: DistCoxPH().fit(miss, duration_col="time", event_col="status",
                                             formula="age + karno"), "no column 'karno'")
    return checks + 3


def default_variance_checks(comm):
    """R's default for non-integer weights, robust, decided from every rank's weights: the
    fractional weights sit on the last rows only, so the other ranks hold integers alone."""
    from r_reference import table

    rats = table("rats.csv")
    n = rats["time"].size
    X = np.column_stack([rats["rx"], rats["female"]])
    w = np.where(np.arange(n) >= n - 10, rats["w"] + 0.25, 1.0)
    serial = graphpar.CoxPH().fit(X, rats["time"], rats["status"], weights=w)
    assert serial.robust_
    checks = 0
    for how in ("even", "first", "reversed"):
        mine = split(n, comm, how)
        m = DistCoxPH().fit(X[mine], rats["time"][mine], rats["status"][mine], weights=w[mine])
        assert m.robust_, how
        close(m.se_, serial.se_, SERIAL_TOL, f"default robust se {how}")
        close(m.se_model_, serial.se_model_, SERIAL_TOL, f"default model se {how}")
        checks += 1
    return checks


def main(comm):
    return (robust_checks(comm) + robust_errors(comm) + frame_checks(comm)
            + default_variance_checks(comm))


if __name__ == "__main__":
    run(main)
