"""The distributed fit's baseline hazard and predictions against the serial fit's.

graphpar.mpi.CoxPH on rows split across the ranks (evenly, all on rank 0,
reversed) must give the serial baseline_cumulative_hazard_ and
baseline_survival_ (same strata, same times, values to 1e-10 relative) and the
same predictions, with heavy ties spanning rank boundaries, strata, weights
(some zero), offsets, both tie methods, timefix on near-tied times, and string
strata.
"""

from __future__ import annotations

import numpy as np
from _common import close, run

import graphpar
from graphpar.mpi import CoxPH as DistCoxPH

RTOL = 1e-10  # only the order of floating-point sums differs


def dataset(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    t = rng.exponential(np.exp(-(X @ [0.4, -0.3, 0.2])))
    t = np.ceil(t * 40 / t.max())  # heavy ties
    t[::7] *= 1 + 1e-12  # near ties that timefix merges
    event = rng.random(n) < 0.7
    event[0] = True
    strata = rng.integers(0, 3, n)
    w = rng.uniform(0.5, 2.0, n)
    w[rng.random(n) < 0.1] = 0.0
    off = 0.1 * rng.standard_normal(n)
    return X, t, event, strata, w, off


def split(n, comm, how):
    r, k = comm.Get_rank(), comm.Get_size()
    if how == "even":
        return slice(r * n // k, (r + 1) * n // k)
    if how == "first":
        return slice(0, n) if r == 0 else slice(0, 0)
    return slice((k - 1 - r) * n // k, (k - r) * n // k)


def same_baseline(model, ref, what):
    for attr in ("baseline_cumulative_hazard_", "baseline_survival_"):
        got, want = getattr(model, attr), getattr(ref, attr)
        assert list(got) == list(want), (what, attr, list(got), list(want))
        for key in want:
            assert np.array_equal(got[key].time, want[key].time), (what, attr, key)
            close(got[key].value, want[key].value, RTOL, f"{what} {attr}[{key!r}]")
    close(model.means_, ref.means_, 1e-12, f"{what} means_")


def main(comm):
    checks = 0
    n = 500
    X, t, e, s, w, off = dataset(n, 7)
    new = np.array([[0.0, 0.0, 0.0], [1.0, -0.5, 0.3], [-2.0, 1.0, 0.5]])
    cases = [
        ("plain", {}, None),
        ("strata+weights+offset", {"strata": s, "weights": w, "offset": off}, [0, 2, 1]),
        ("string strata", {"strata": np.array(["a", "b", "c"])[s]}, ["c", "a", "b"]),
    ]
    for ties in ("efron", "breslow"):
        for timefix in (True, False):
            for name, extra, new_strata in cases:
                ref = graphpar.CoxPH(ties=ties, timefix=timefix).fit(X, t, e, **extra)
                for how in ("even", "first", "reversed"):
                    sl = split(n, comm, how)
                    mine = {k: v[sl] for k, v in extra.items()}
                    model = DistCoxPH(ties=ties, timefix=timefix).fit(X[sl], t[sl], e[sl],
                                                                      **mine)
                    what = f"{name} {ties} timefix={timefix} {how}"
                    same_baseline(model, ref, what)
                    kw = {"strata": new_strata} if new_strata is not None else {}
                    off_new = {"offset": [0.1, 0.0, -0.2]} if "offset" in extra else {}
                    got = model.predict_survival_function(new, **kw, **off_new)
                    want = ref.predict_survival_function(new, **kw, **off_new)
                    assert np.array_equal(got.time, want.time), what
                    close(got.value, want.value, RTOL, f"{what} survival")
                    assert np.array_equal(model.predict_median(new, **kw, **off_new),
                                          ref.predict_median(new, **kw, **off_new)), what
                    checks += 1
    return checks


if __name__ == "__main__":
    run(main)
