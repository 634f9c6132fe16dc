"""Distributed Cox against the serial fit and the O(n^2) reference, under mpiexec.

Ties, strata spanning rank boundaries, weights, offsets, near-tied times,
a ridge penalty, rows read unevenly (one rank reads everything, others
nothing) and ranks that end up owning no rows.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _common import close, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for naive_cox
from naive_cox import cox_loglik  # noqa: E402

from graphpar.cox import CoxPH  # noqa: E402
from graphpar.mpi.cox import distribute_cox, fit_distributed  # noqa: E402
from graphpar.threads import set_threads  # noqa: E402


def dataset(n, p, seed, n_times, n_strata):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = rng.uniform(-0.5, 0.5, p)
    t = rng.exponential(np.exp(-(X @ beta)))
    t = np.ceil(t * n_times / max(t.max(), 1e-12))  # heavy ties
    event = rng.random(n) < 0.7
    event[0] = True
    strata = rng.integers(0, n_strata, n).astype(np.float64)
    w = rng.uniform(0.5, 2.0, n)
    w[rng.random(n) < 0.1] = 0.0  # zero-weight rows count as absent, in tie counts too
    off = 0.1 * rng.standard_normal(n)
    return X, t, event, strata, w, off


def split(n, comm, how):
    r, k = comm.Get_rank(), comm.Get_size()
    if how == "even":
        return slice(r * n // k, (r + 1) * n // k)
    if how == "first":  # rank 0 reads every row, the others none
        return slice(0, n) if r == 0 else slice(0, 0)
    return slice((k - 1 - r) * n // k, (k - r) * n // k)  # reversed


def main(comm):
    set_threads(None)
    checks = 0
    cases = [
        dict(n=400, p=3, seed=0, n_times=15, n_strata=1, kw=()),
        dict(n=400, p=3, seed=1, n_times=30, n_strata=4, kw=("strata",)),
        dict(n=300, p=2, seed=2, n_times=10, n_strata=3, kw=("strata", "weights", "offset")),
        dict(n=7, p=1, seed=3, n_times=3, n_strata=2, kw=("strata",)),
        dict(n=250, p=4, seed=4, n_times=1000, n_strata=2, kw=("weights",)),
    ]
    for case in cases:
        X, t, e, s, w, off = dataset(case["n"], case["p"], case["seed"], case["n_times"],
                                     case["n_strata"])
        extra = {"strata": s, "weights": w, "offset": off}
        kw = {k: extra[k] for k in case["kw"]}
        for how in ("even", "first", "reversed"):
            part = split(case["n"], comm, how)
            for ties in ("efron", "breslow"):
                data = distribute_cox(X[part], t[part], e[part], comm=comm,
                                      **{k: v[part] for k, v in kw.items()})
                assert comm.allreduce(data.nloc) == case["n"]
                # one evaluation against the O(n^2) reference at a random beta
                beta = np.random.default_rng(7).uniform(-0.3, 0.3, case["p"])
                ll, g, h = data.evaluate(beta, ties)
                rll, rg, rh = cox_loglik(X, t, e, beta, ties, **kw)
                close([ll], [rll], 1e-12, f"ll {case['seed']} {how} {ties}")
                close(g, rg, 1e-11, f"grad {case['seed']} {how} {ties}")
                close(h, rh, 1e-11, f"hess {case['seed']} {how} {ties}")
                for pen in (0.0, 0.5):
                    model = fit_distributed(data, ties=ties, penalizer=pen)
                    ref = CoxPH(ties=ties, penalizer=pen).fit(X, t, e, **kw)
                    what = f"case {case['seed']} {how} {ties} pen={pen}"
                    close(model.coef_, ref.coef_, 1e-10, f"coef {what}")
                    close(model.se_, ref.se_, 1e-9, f"se {what}")
                    close([model.log_likelihood_], [ref.log_likelihood_], 1e-12, f"ll {what}")
                    assert model.n_iter_ == ref.n_iter_, what
                    assert model.converged_ == ref.converged_, what
                    assert str(model.summary()) == str(ref.summary()), what
                    checks += 6
    # near-tied times (R's timefix), with strata and with a run of near ties spanning ranks
    rng = np.random.default_rng(11)
    n = 200
    X = rng.standard_normal((n, 2))
    base = rng.integers(1, 40, n).astype(np.float64)
    t = base + rng.integers(0, 3, n) * 1e-10  # distinct in floating point, tied for R
    e = rng.random(n) < 0.8
    s = rng.integers(0, 2, n).astype(np.float64)
    part = split(n, comm, "even")
    for fix in (True, False):
        for kw in ({}, {"strata": s}):
            data = distribute_cox(X[part], t[part], e[part], comm=comm, timefix=fix,
                                  **{k: v[part] for k, v in kw.items()})
            model = fit_distributed(data)
            ref = CoxPH(timefix=fix).fit(X, t, e, **kw)
            close(model.coef_, ref.coef_, 1e-10, f"timefix={fix} {list(kw)}")
            checks += 1
    # every row in one tie group: one rank owns them all, the others nothing
    data = distribute_cox(X[part], np.ones(n)[part], e[part], comm=comm)
    assert comm.allreduce(int(data.nloc > 0)) == 1
    close(fit_distributed(data).coef_, CoxPH().fit(X, np.ones(n), e).coef_, 1e-10, "one group")
    checks += 1
    # bad input on one rank: every rank raises the same error
    bad = X[part].copy()
    if comm.Get_rank() == comm.Get_size() - 1 and bad.shape[0]:
        bad[-1, 0] = np.nan
    try:
        distribute_cox(bad, t[part], e[part], comm=comm)
    except ValueError as exc:
        assert f"at row {part.stop - 1}" in str(exc) or f"row {n - 1}" in str(exc), exc
        checks += 1
    else:
        raise AssertionError("NaN in X was not refused")
    return checks


if __name__ == "__main__":
    run(main)
