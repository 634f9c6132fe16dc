"""Distributed Cox against the serial fit and the O(n^2) reference, under mpiexec.

Ties, strata spanning rank boundaries, weights, offsets, near-tied times,
a ridge penalty, rows read unevenly (one rank reads everything, others
nothing) and ranks that end up owning no rows; the table reader's rows and
errors on every rank against the serial reader's.
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
    return checks + reader_checks(comm)


def _tables_equal(a, b, what):
    assert list(a) == list(b), what
    for k in a:
        assert np.array_equal(a[k], b[k], equal_nan=True), (what, k)


def reader_checks(comm) -> int:
    """``read_table_rows`` on every rank against the serial reader: rows and errors."""
    import os
    import shutil
    import tempfile

    from graphpar._cox_table import pick_columns, read_csv, read_npz
    from graphpar.mpi.cli_cox import read_table_rows

    folder = comm.bcast(tempfile.mkdtemp() if comm.Get_rank() == 0 else None)
    rng = np.random.default_rng(5)
    rows = []
    for i in range(60):  # uneven line lengths, one line longer than any rank's byte range
        pad = "0" * (3000 if i == 17 else int(rng.integers(0, 40)))
        end = "\r\n" if i % 7 == 0 else "\n"
        rows.append(f"{pad}{i + 1.5},{i % 2},{pad}{rng.normal():.6f}{end}")
    good = "time,event,x\n" + "".join(rows) + "\n  \n"
    bad = {
        "nan": (2 + 44, "nan"), "event": (2 + 51, "2"), "text": (2 + 3, "abc"),
        "blank": (2 + 30, None), "latin": (2 + 58, "\xe9"),
    }
    files = {"good": good.encode()}
    for name, (lineno, cell) in bad.items():
        lines = good.encode().split(b"\n")
        if cell is None:
            lines[lineno - 1] = b" "
        else:
            cells = lines[lineno - 1].split(b",")
            cells[2] = cell.encode("latin-1")
            lines[lineno - 1] = b",".join(cells)
        files[name] = b"\n".join(lines)
    files["header-only"] = b"time,event,x\n\n"
    checks = 0
    try:
        if comm.Get_rank() == 0:
            for name, data in files.items():
                with open(os.path.join(folder, name + ".csv"), "wb") as f:
                    f.write(data)
            np.savez(os.path.join(folder, "good.npz"), time=np.arange(1.0, 41), x=np.ones(40),
                     event=np.arange(40) % 2)
        comm.Barrier()
        for name in files:
            path = os.path.join(folder, name + ".csv")
            try:
                want = read_csv(path)
                pick_columns(want, path, "time", "event")
            except ValueError as exc:
                want = str(exc)
            try:
                got, row0 = read_table_rows(path, comm)
                pick_columns(got, path, "time", "event")
            except ValueError as exc:
                assert str(exc) == want, (name, str(exc), want)
                assert f"{path}, line " in want or name == "header-only", want
            else:
                assert not isinstance(want, str), (name, want)
                parts = comm.allgather(dict(got))
                _tables_equal({k: np.concatenate([p[k] for p in parts]) for k in got}, want,
                              name)
                assert got.first_line == row0 + 2
            checks += 1
        path = os.path.join(folder, "good.npz")
        got, row0 = read_table_rows(path, comm)
        parts = comm.allgather(dict(got))
        _tables_equal({k: np.concatenate([p[k] for p in parts]) for k in got}, read_npz(path),
                      "npz")
        checks += 1
    finally:
        comm.Barrier()
        if comm.Get_rank() == 0:
            shutil.rmtree(folder, ignore_errors=True)
    return checks


if __name__ == "__main__":
    run(main)
