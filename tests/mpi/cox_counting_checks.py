"""Distributed counting-process Cox (``entry=``) against the serial fit.

``graphpar.mpi.CoxPH().fit(..., entry=start)`` on rows split evenly, unevenly
(rank 0 reads all) and in reverse order must equal ``graphpar.CoxPH`` on the
same rows: coefficients, standard errors, log-likelihoods and the baseline
hazard, with heavy ties, strata spanning ranks, weights (zeros included), an
offset, both tie methods; on R's ``heart`` data too; and a bad entry on one
rank's rows is the serial error with the global row number.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _common import close, run

import graphpar
from graphpar.mpi import CoxPH as DistCoxPH

DATA = Path(__file__).resolve().parents[2] / "datasets" / "survival"


def dataset(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    t = np.ceil(rng.exponential(np.exp(-(X @ [0.4, -0.3, 0.2]))) * 20 / 3.0) + 1  # ties
    entry = np.floor(t * rng.random(n))  # ties among entries and with times
    entry[rng.random(n) < 0.3] = 0.0
    event = rng.random(n) < 0.7
    event[0] = True
    strata = rng.integers(0, 3, n).astype(np.float64)
    w = rng.uniform(0.5, 2.0, n)
    w[rng.random(n) < 0.1] = 0.0
    off = 0.1 * rng.standard_normal(n)
    return X, t, event, strata, w, off, entry


def split(n, comm, how):
    r, k = comm.Get_rank(), comm.Get_size()
    if how == "even":
        return slice(r * n // k, (r + 1) * n // k)
    if how == "first":
        return slice(0, n) if r == 0 else slice(0, 0)
    return slice((k - 1 - r) * n // k, (k - r) * n // k)


def same(model, ref, what):
    close(model.coef_, ref.coef_, 1e-11, f"coef {what}")
    close(model.se_, ref.se_, 1e-10, f"se {what}")
    close([model.log_likelihood_], [ref.log_likelihood_], 1e-12, f"ll {what}")
    close([model.log_likelihood_null_], [ref.log_likelihood_null_], 1e-12, f"ll0 {what}")
    assert (model.n_samples_, model.n_events_) == (ref.n_samples_, ref.n_events_), what
    for lab, c in ref.baseline_cumulative_hazard_.items():
        d = model.baseline_cumulative_hazard_[lab]
        assert np.array_equal(d.time, c.time), f"baseline times {what} {lab}"
        close(d.value, c.value, 1e-10, f"baseline {what} {lab}")


def main(comm):
    checks = 0
    X, t, e, s, w, off, entry = dataset(700, 3)
    n = t.size
    for ties in ("efron", "breslow"):
        for kw in ({}, {"strata": s, "weights": w, "offset": off}):
            ref = graphpar.CoxPH(ties=ties).fit(X, t, e, entry=entry, **kw)
            for how in ("even", "first", "reversed"):
                sl = split(n, comm, how)
                local = {k: v[sl] for k, v in kw.items()}
                m = DistCoxPH(ties=ties).fit(X[sl], t[sl], e[sl], entry=entry[sl], **local)
                same(m, ref, f"{ties} {sorted(kw)} {how}")
                checks += 1
    from graphpar._cox_reader import read_csv

    h = read_csv(DATA / "heart.csv")
    cols = ["age", "year", "surgery", "transplant"]
    HX = np.column_stack([h[c] for c in cols])
    sl = split(HX.shape[0], comm, "even")
    for ties in ("efron", "breslow"):
        ref = graphpar.CoxPH(ties=ties).fit(HX, h["stop"], h["event"], entry=h["start"])
        m = DistCoxPH(ties=ties).fit(HX[sl], h["stop"][sl], h["event"][sl],
                                     entry=h["start"][sl])
        same(m, ref, f"heart {ties}")
        checks += 1
    # a timefix near-tie chain 2000 values long below the first event, its values split
    # over the ranks: the chained rows must leave the first risk set, as serially
    k, step = 2000, 1e-8
    rng = np.random.default_rng(6)
    cs = np.concatenate([[1.0], np.full(k, 3.0), rng.uniform(1.5, 4.0, 300)])
    ce = np.concatenate([[1], np.zeros(k, np.uint8), np.ones(300, np.uint8)])
    cen = np.concatenate([[0.0], 1.0 - step * np.arange(1, k + 1), np.zeros(300)])
    cX = rng.standard_normal((cs.size, 1))
    cX[1:k + 1] += 1.0
    for ties in ("efron", "breslow"):
        ref = graphpar.CoxPH(ties=ties).fit(cX, cs, ce, entry=cen)
        for how in ("even", "reversed"):
            sl = split(cs.size, comm, how)
            m = DistCoxPH(ties=ties).fit(cX[sl], cs[sl], ce[sl], entry=cen[sl])
            close(m.coef_, ref.coef_, 1e-11, f"chain coef {ties} {how}")
            close([m.log_likelihood_], [ref.log_likelihood_], 1e-12, f"chain ll {ties} {how}")
            checks += 1
    # a bad entry on the last rank's rows: the serial message, global row number
    bad = entry.copy()
    bad[n - 2] = t[n - 2]
    sl = split(n, comm, "even")
    try:
        DistCoxPH().fit(X[sl], t[sl], e[sl], entry=bad[sl])
    except ValueError as exc:
        want = f"entry must be less than time, got entry {t[n - 2]} and time {t[n - 2]} " \
               f"at row {n - 2}"
        assert str(exc) == want, str(exc)
        checks += 1
    else:
        raise AssertionError("a bad entry was accepted")
    return checks


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    run(main)
