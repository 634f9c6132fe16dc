"""The distributed Cox residuals against the serial fit's and R's.

graphpar.mpi.CoxPH's score, martingale, Schoenfeld and dfbeta residuals on
every recorded R fit of datasets/survival/r_robust_reference.json that has R's
residuals (strata, weights, offsets, clusters, counting-process rows, both
tie methods), with the rows split across the ranks evenly, all on rank 0,
reversed and shuffled (tie groups' rows on several ranks); on synthetic data
with heavy ties, near ties merged by timefix, zero weights, ``(entry, time]``
rows and one tie group of every row; and on a DataFrame fit. Each rank's
results are its own rows' (Schoenfeld: its block of the serial order);
gathered in rank order they must equal the serial fit of the same rows in
the same order to 1e-10 and R's to 1e-8.
"""

from __future__ import annotations

import numpy as np
from _common import close, run
from r_reference import fit_arguments, reference

import graphpar
from graphpar.mpi import CoxPH as DistCoxPH

R_TOL = 1e-8
SERIAL_TOL = 1e-10  # only the order of floating-point sums differs
SPLITS = ("even", "first", "reversed", "shuffled")


def split(n, comm, how, seed=7):
    """This rank's row indices of ``n`` rows."""
    r, k = comm.Get_rank(), comm.Get_size()
    rows = np.arange(n)
    if how == "shuffled":
        rows = np.random.default_rng(seed).permutation(n)
    if how == "first":
        return rows if r == 0 else rows[:0]
    if how == "reversed":
        r = k - 1 - r
    return rows[r * n // k:(r + 1) * n // k]


def gathered(comm, a):
    return np.concatenate(comm.allgather(np.asarray(a)))


def residuals(model):
    """Every residual of a model (the distributed methods are collective: same order)."""
    rows, S = model.schoenfeld_residuals(return_rows=True)
    return {"score": model.score_residuals(), "martingale": model.martingale_residuals(),
            "schoenfeld": S, "rows": rows, "dfbeta": model.dfbeta_residuals()}


def compare(comm, ties, X, kw, how, what, penalizer=0.0, seed=7):
    """Fit on this rank's share of the rows; return gathered residuals, serial ones, order."""
    mine = split(X.shape[0], comm, how, seed)
    local = {k: (v[mine] if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
    m = DistCoxPH(ties=ties, penalizer=penalizer).fit(X[mine], **local)
    got = residuals(m)
    n_mine = mine.size
    events_mine = int(np.count_nonzero(kw["event"][mine]))
    assert got["score"].shape == (n_mine, X.shape[1]), (what, how, got["score"].shape)
    assert got["martingale"].shape == (n_mine,), (what, how)
    assert got["schoenfeld"].shape == (events_mine, X.shape[1]), (what, how)
    order = gathered(comm, mine)  # the rows of the distributed data set, in rank order
    allrows = {k: gathered(comm, v) for k, v in got.items()}
    permuted = {k: (v[order] if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
    serial = graphpar.CoxPH(ties=ties, penalizer=penalizer).fit(X[order], **permuted)
    want = residuals(serial)
    for k in ("score", "martingale", "schoenfeld", "dfbeta"):
        close(allrows[k], want[k], SERIAL_TOL, f"serial {k} {what} {how}")
    assert np.array_equal(allrows["rows"], want["rows"]), (what, how)
    return allrows, order


def r_checks(comm):
    checks = 0
    fits = [f for f in reference("r_robust_reference.json")["fits"] if "score" in f]
    assert len(fits) >= 14, len(fits)
    for ref in fits:
        X, kw = fit_arguments(ref)
        time, event = kw["time"], kw["event"]
        serial = graphpar.CoxPH(ties=ref["ties"], penalizer=ref["penalizer"]).fit(X, **kw)
        r_rows = serial.schoenfeld_residuals(return_rows=True)[0]  # R's order, by row
        where = np.empty(X.shape[0], dtype=np.int64)
        where[r_rows] = np.arange(r_rows.size)
        what = f"{ref['name']}-{ref['ties']}"
        for how in SPLITS:
            got, order = compare(comm, ref["ties"], X, kw, how, what, ref["penalizer"])
            # R's values in the distributed rows' order
            close(got["score"], np.asarray(ref["score"])[order], R_TOL, f"R score {what} {how}")
            close(got["martingale"], np.asarray(ref["martingale"])[order], R_TOL,
                  f"R martingale {what} {how}")
            close(got["dfbeta"], np.asarray(ref["dfbeta"])[order], R_TOL,
                  f"R dfbeta {what} {how}")
            original = order[got["rows"]]  # each Schoenfeld residual's row in R's data
            close(got["schoenfeld"], np.asarray(ref["schoenfeld"]).reshape(
                got["schoenfeld"].shape)[where[original]], R_TOL, f"R schoenfeld {what} {how}")
            assert np.all(event[original] == 1), (what, how)
            if how in ("even", "first"):  # the rows in R's order: R's Schoenfeld order
                close(time[original], ref["schoenfeld_time"], 1e-11, f"R times {what} {how}")
            checks += 1
    return checks


def synthetic_checks(comm):
    """Heavy ties, strata, weights (some zero), offsets, near ties, (entry, time] rows,
    and one tie group of every row (ranks without rows after the sort)."""
    rng = np.random.default_rng(11)
    n = 400
    X = rng.standard_normal((n, 3))
    time = np.round(rng.exponential(np.exp(-(X @ [0.5, -0.4, 0.2]))), 1) + 0.1
    time[::7] += 1e-10  # near ties, merged by timefix
    event = (rng.random(n) < 0.7).astype(float)
    strata = rng.integers(0, 3, n)
    weights = rng.choice([0.0, 0.5, 1.0, 2.0], n, p=[0.05, 0.25, 0.4, 0.3])
    offset = 0.1 * rng.standard_normal(n)
    entry = np.where(rng.random(n) < 0.5, np.round(time * rng.random(n), 1), 0.0)
    entry = np.minimum(entry, time - 0.05)
    variants = [
        ("plain", {}),
        ("strata", {"strata": strata}),
        ("weights-offset", {"weights": weights, "offset": offset}),
        ("entry-strata-weights", {"entry": entry, "strata": strata, "weights": weights}),
        ("entry", {"entry": entry}),
    ]
    # one tie group: one rank holds every row after the sort, the others none
    variants.append(("one-time-weights", {"time": np.ones(n), "weights": weights}))
    checks = 0
    for name, extra in variants:
        kw = {"time": time, "event": event, **extra}
        for ties in ("efron", "breslow"):
            for how in SPLITS:
                got, order = compare(comm, ties, X, kw, how, f"{name}-{ties}", seed=3)
                w = kw["weights"][order] if "weights" in kw else np.ones(n)
                # the weighted score residuals sum to the gradient, zero at the fit
                assert np.max(np.abs(w @ got["score"])) < 1e-6, (name, ties, how)
                checks += 1
    return checks


def frame_checks(comm):
    """A DataFrame fit (weights and cluster columns): R's residuals of the rows in rank order."""
    import pandas as pd
    from r_reference import DATA

    rats = pd.read_csv(DATA / "rats.csv")
    ref = next(f for f in reference("r_robust_reference.json")["fits"]
               if f["name"] == "rats_weights_cluster_litter" and f["ties"] == "breslow")
    mine = split(len(rats), comm, "shuffled")
    m = DistCoxPH(ties="breslow").fit(rats.iloc[mine], duration_col="time", event_col="status",
                                      weights_col="w", cluster_col="litter")
    order = gathered(comm, mine)
    close(gathered(comm, m.martingale_residuals()), np.asarray(ref["martingale"])[order], R_TOL,
          "R martingale, DataFrame")
    close(gathered(comm, m.dfbeta_residuals()), np.asarray(ref["dfbeta"])[order], R_TOL,
          "R dfbeta, DataFrame")
    return 1


def error_checks(comm):
    try:
        DistCoxPH().score_residuals()
    except ValueError as exc:
        assert "not fitted yet" in str(exc), str(exc)
    else:
        raise AssertionError("no error from an unfitted model")
    return 1


def main(comm):
    return r_checks(comm) + synthetic_checks(comm) + frame_checks(comm) + error_checks(comm)


if __name__ == "__main__":
    run(main)
