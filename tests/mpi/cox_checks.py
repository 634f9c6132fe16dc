"""Distributed Cox (graphpar.mpi.CoxPH) against the serial fit and the O(n^2) reference.

Ties, strata spanning rank boundaries (numbers and strings), weights, offsets,
near-tied times with and without timefix, a ridge penalty, rows read unevenly
(one rank reads everything, others nothing) and ranks that end up owning no
rows; errors raised on one rank's rows (global row numbers) or by ranks that
disagree; the table reader's rows and errors on every rank against the serial
reader's.
"""

from __future__ import annotations

import numpy as np
from _common import close, expect_error, run
from naive_cox import cox_loglik

import graphpar
from graphpar.mpi import CoxMPIStats
from graphpar.mpi import CoxPH as DistCoxPH
from graphpar.mpi._cox import distribute_cox
from graphpar.threads import set_threads

COEF_RTOL = 1e-12  # distributed vs serial coefficients: only the order of sums differs


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


def same_fit(model, ref, what, comm, n_rows):
    """The distributed model is the serial one: coefficients to COEF_RTOL, same summary."""
    assert isinstance(model, graphpar.CoxPH), what
    close(model.coef_, ref.coef_, COEF_RTOL, f"coef {what}")
    close(model.se_, ref.se_, 1e-10, f"se {what}")
    close([model.log_likelihood_], [ref.log_likelihood_], 1e-12, f"ll {what}")
    close([model.log_likelihood_null_], [ref.log_likelihood_null_], 1e-12, f"ll0 {what}")
    assert model.n_iter_ == ref.n_iter_, what
    assert model.converged_ == ref.converged_, what
    assert (model.n_samples_, model.n_events_) == (ref.n_samples_, ref.n_events_), what
    assert model.feature_names_in_ == ref.feature_names_in_, what
    assert str(model.summary()) == str(ref.summary()), what
    stats = model.mpi_stats_
    assert isinstance(stats, CoxMPIStats), what
    assert stats.ranks == comm.Get_size() == len(stats.rows_per_rank), what
    assert sum(stats.rows_per_rank) == n_rows, (what, stats)
    assert stats.evaluations >= model.n_iter_ + 1, (what, stats)  # the start, one per step
    assert len(stats.bytes_sent_per_rank) == stats.ranks and min(stats.bytes_sent_per_rank) > 0
    assert comm.allgather(stats) == [stats] * comm.Get_size(), what  # the same on every rank


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
            mine = {k: v[part] for k, v in kw.items()}
            for ties in ("efron", "breslow"):
                problem = distribute_cox(X[part], t[part], e[part], comm=comm, ties=ties, **mine)
                assert comm.allreduce(problem.n_local) == case["n"]
                # one evaluation against the O(n^2) reference at a random beta
                beta = np.random.default_rng(7).uniform(-0.3, 0.3, case["p"])
                ll, g, h = problem.evaluate(beta)
                rll, rg, rh = cox_loglik(X, t, e, beta, ties, **kw)
                close([ll], [rll], 1e-12, f"ll {case['seed']} {how} {ties}")
                close(g, rg, 1e-11, f"grad {case['seed']} {how} {ties}")
                close(h, rh, 1e-11, f"hess {case['seed']} {how} {ties}")
                for pen in (0.0, 0.5):
                    model = DistCoxPH(ties=ties, penalizer=pen, comm=comm).fit(
                        X[part], t[part], e[part], **mine)
                    ref = graphpar.CoxPH(ties=ties, penalizer=pen).fit(X, t, e, **kw)
                    same_fit(model, ref, f"case {case['seed']} {how} {ties} pen={pen}", comm,
                             case["n"])
                    checks += 1
    # near-tied times (R's timefix) with strata, weights and offsets; runs of near ties
    # span ranks
    rng = np.random.default_rng(11)
    n = 200
    X = rng.standard_normal((n, 2))
    base = rng.integers(1, 40, n).astype(np.float64)
    t = base + rng.integers(0, 3, n) * 1e-10  # distinct in floating point, tied for R
    e = rng.random(n) < 0.8
    s = rng.integers(0, 2, n).astype(np.float64)
    w = rng.uniform(0.5, 2.0, n)
    off = 0.1 * rng.standard_normal(n)
    part = split(n, comm, "even")
    coefs = {}
    for fix in (True, False):
        for kw in ({}, {"strata": s}, {"strata": s, "weights": w, "offset": off}):
            model = DistCoxPH(timefix=fix, comm=comm).fit(
                X[part], t[part], e[part], **{k: v[part] for k, v in kw.items()})
            ref = graphpar.CoxPH(timefix=fix).fit(X, t, e, **kw)
            same_fit(model, ref, f"timefix={fix} {list(kw)}", comm, n)
            coefs[fix, tuple(kw)] = model.coef_
            checks += 1
    for kw in ((), ("strata",), ("strata", "weights", "offset")):
        # the near ties matter, so the timefix checks above can fail
        assert np.max(np.abs(coefs[True, kw] - coefs[False, kw])) > 1e-6, kw
    # string stratum labels, and ranks holding different subsets of the labels
    labels = np.array(["north", "south", "east", "west"])[rng.integers(0, 4, n)]
    for how in ("even", "first", "reversed"):
        part = split(n, comm, how)
        model = DistCoxPH(comm=comm).fit(X[part], base[part], e[part], strata=labels[part],
                                         feature_names=["a", "b"])
        ref = graphpar.CoxPH().fit(X, base, e, strata=labels, feature_names=["a", "b"])
        same_fit(model, ref, f"string strata {how}", comm, n)
        checks += 1
    # every row in one tie group: one rank owns them all, the others nothing
    part = split(n, comm, "even")
    problem = distribute_cox(X[part], np.ones(n)[part], e[part], comm=comm)
    assert comm.allreduce(int(problem.n_local > 0)) == 1
    model = DistCoxPH(comm=comm).fit(X[part], np.ones(n)[part], e[part])
    same_fit(model, graphpar.CoxPH().fit(X, np.ones(n), e), "one group", comm, n)
    checks += 1
    # bad input on one rank: every rank raises the serial message, with the global row
    last = comm.Get_rank() == comm.Get_size() - 1
    bad = X[part].copy()
    if last:
        bad[-1, 1] = np.nan
    checks += expect_error(comm, lambda: DistCoxPH(comm=comm).fit(bad, t[part], e[part]),
                           f"X contains nan at row {n - 1}, column 1")
    bad_s = s[part].copy()
    if last:
        bad_s[-2] = np.nan
    checks += expect_error(comm, lambda: DistCoxPH(comm=comm).fit(X[part], t[part], e[part],
                                                                  strata=bad_s),
                           f"strata contains nan at row {n - 2}")
    bad_t = t[part].copy()
    if last:
        bad_t[0] = -1.0
    checks += expect_error(comm, lambda: distribute_cox(X[part], bad_t, e[part], comm=comm),
                           "time must be nonnegative, got -1.0 at row "
                           f"{(comm.Get_size() - 1) * n // comm.Get_size()}")
    # ranks that disagree
    if comm.Get_size() > 1:
        pen = 0.0 if comm.Get_rank() == 0 else 1.0
        checks += expect_error(comm, lambda: DistCoxPH(penalizer=pen, comm=comm).fit(
            X[part], t[part], e[part]), "parameters differ across ranks")
        wt = w[part] if comm.Get_rank() == 0 else None
        checks += expect_error(comm, lambda: DistCoxPH(comm=comm).fit(
            X[part], t[part], e[part], weights=wt),
            "weights is given on some ranks but not on others")
        mixed = labels[part] if comm.Get_rank() == 0 else np.arange(part.stop - part.start)
        checks += expect_error(comm, lambda: DistCoxPH(comm=comm).fit(
            X[part], t[part], e[part], strata=mixed), "strata labels have types that cannot")
        names = ["a", "b"] if comm.Get_rank() == 0 else ["a", "c"]
        checks += expect_error(comm, lambda: DistCoxPH(comm=comm).fit(
            X[part], t[part], e[part], feature_names=names), "feature names differ")
    checks += expect_error(comm, lambda: DistCoxPH(ties="exact", comm=comm).fit(
        X[part], t[part], e[part]), "ties must be 'efron' or 'breslow', got 'exact'")
    checks += expect_error(comm, lambda: DistCoxPH(comm=comm).fit(
        X[part], t[part], np.zeros(part.stop - part.start)), "event has no events")
    # collinear covariates: raised by the shared Newton loop on every rank alike
    Xc = np.column_stack([X, X[:, 0] - 2 * X[:, 1]])
    checks += expect_error(comm, lambda: DistCoxPH(comm=comm).fit(
        Xc[part], t[part], e[part], feature_names=["a", "b", "c"]), "collinear")
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

    from graphpar._cox_reader import pick_columns, read_csv, read_npz
    from graphpar.mpi.io import read_table_rows

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
