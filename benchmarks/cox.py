"""Cox regression benchmark: graphpar.CoxPH against NumPy, lifelines, scikit-survival and R.

Synthetic data: N patients, p = 10 standard-normal covariates, exponential event
times with known coefficients, about 35% censored, and 5% of the rows in tie
groups (pairs sharing a time). Every case runs in a fresh subprocess, so that
its peak memory (VmHWM, reset after the data is made) is its own; the input
arrays are X (N x p float64), time (float64) and event (bool).

The references run in the same invocation: a vectorised NumPy Newton fit (the
"x numpy" column), lifelines (Efron ties) and scikit-survival when installed, and R's
``coxph`` when ``Rscript`` with the survival package is on the path (up to
``--r-max`` rows; only ``coxph`` is inside R's timer, see ``_cox_refs.py``); a
line per size prints each one's fit time over graphpar's with the same ties.
Each case prints the whole fit (median of the repeats), the time of one
likelihood + gradient + Hessian evaluation ("per iteration"), the Newton
iterations, the peak memory of the fit above the process's size before it, and
its ratio to the input arrays' size, and ``k``: the peak as ``k * N * 8`` bytes
(what a fit holds beyond its input). Ratios "x" are NumPy's time over ours;
"cpu s" is the fit's CPU time summed over threads (less sensitive than wall time
to other load on a shared machine).

``--stages`` times, in one process, the parts of a graphpar fit (sorting and
setup, each Newton evaluation, the baseline) against two references measured in
the same run: a memory-bandwidth pass over X (a sum of all its entries) and one
evaluation of the vectorised NumPy reference; it prints CPU and wall seconds and
their ratios, so that a loaded machine still gives comparable figures.
``--entry`` also fits ``(start, stop]`` data (half of the rows entering late) and
prints its cost relative to the right-censored fit of the same N.

Usage::

    python benchmarks/cox.py                      # N = 1e5, 1e6, 1e7 at 2 threads
    python benchmarks/cox.py --sizes 1e5 1e6 --threads 1 2 --repeat 3
    python benchmarks/cox.py --n 1e7 --p 10 --stages --entry   # the issue's case, by stage
    python benchmarks/cox.py --cold               # first fits in a fresh NUMBA_CACHE_DIR
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

P = 10
TRUE_BETA = np.linspace(-0.5, 0.5, P)


def set_p(p: int) -> None:
    """Use ``p`` covariates (coefficients evenly spaced in [-0.5, 0.5])."""
    global P, TRUE_BETA
    P = int(p)
    TRUE_BETA = np.linspace(-0.5, 0.5, P)


def make_data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, P))
    t = rng.exponential(1.0, n)
    t /= np.exp(X @ TRUE_BETA)
    c = rng.exponential(2.0, n)
    event = t <= c
    np.minimum(t, c, out=t)
    # no time within the near-tie tolerance of 0 (about 10 rows at N = 1e7): a (start, stop]
    # row starting at 0 could not stop there (timefix would merge 0 and the stop, as R does)
    np.maximum(t, 1e-6, out=t)
    k = n // 40  # 2k rows = 5% of the rows in tie groups of two
    rows = rng.choice(n, 2 * k, replace=False)
    t[rows[:k]] = t[rows[k:]]
    return X, t, event


def _status(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return float(line.split()[1]) / 1024.0  # MiB
    return float("nan")


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
    except OSError:
        pass


def numpy_breslow_fit(X, t, event, tol=1e-9, max_iter=50):
    """A vectorised NumPy Newton fit (Breslow ties): sorts once, cumulative sums per iteration.

    The Hessian's sum of S2/S0 terms is rearranged (summation by parts) into one
    weighted X'WX, so no N x p x p array is formed. Returns (coef, iterations,
    seconds per evaluation).
    """
    order = np.argsort(-t, kind="stable")
    Xs = X[order]
    ts = t[order]
    ev = event[order]
    n = len(ts)
    last = np.empty(n, dtype=bool)  # last row of each tie group (descending time)
    last[:-1] = ts[1:] != ts[:-1]
    last[-1] = True
    ends = np.flatnonzero(last)
    gid = np.cumsum(np.r_[False, last[:-1]])  # group of each row
    dcount = np.bincount(gid, weights=ev, minlength=len(ends))
    has = dcount > 0
    xev = Xs[ev].sum(axis=0)

    def evaluate(beta):
        eta = Xs @ beta
        m = eta.max()
        r = np.exp(eta - m)
        s0 = np.cumsum(r)[ends]
        s1 = np.cumsum(r[:, None] * Xs, axis=0)[ends]
        ll = float(eta[ev].sum() - (dcount[has] * (np.log(s0[has]) + m)).sum())
        mean = s1[has] / s0[has, None]
        g = xev - dcount[has] @ mean
        a = np.zeros(len(ends))
        a[has] = dcount[has] / s0[has]
        csum = np.cumsum(a[::-1])[::-1]  # sum over groups at or after each group
        wrow = r * csum[gid]
        h = Xs.T @ (Xs * wrow[:, None]) - (mean * dcount[has, None]).T @ mean
        return ll, g, -h

    beta = np.zeros(X.shape[1])
    ll, g, h = evaluate(beta)
    times = []
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        step = np.linalg.solve(-h, g)
        while True:
            t0 = time.perf_counter()
            new = evaluate(beta + step)
            times.append(time.perf_counter() - t0)
            if np.isfinite(new[0]) and new[0] >= ll - 1e-12 * abs(ll):
                break
            step /= 2
        done = abs(new[0] - ll) <= tol * abs(ll)
        beta = beta + step
        ll, g, h = new
        if done:
            break
    return beta, it, statistics.median(times)


def run_case(method: str, n: int, threads: int, repeat: int) -> dict:
    X, t, e = make_data(n)
    input_mb = (X.nbytes + t.nbytes + e.nbytes) / 2**20
    out = {"method": method, "n": n, "threads": threads, "input_mb": input_mb}
    if method.startswith("graphpar"):
        from graphpar import CoxPH
        from graphpar._cox_problem import CoxProblem
        from graphpar._validation import check_cox_arrays
        from graphpar.threads import set_threads

        set_threads(threads)
        ties = method.split("-")[1]
        # load the compiled kernels (a fit under NUMPY_ROWS_BELOW rows would use none)
        CoxPH(ties=ties).fit(X[:20_000], t[:20_000], e[:20_000])
        _reset_peak()
        base = _status("VmRSS")
        fits = []
        cpus = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            c0 = time.process_time()
            m = CoxPH(ties=ties).fit(X, t, e)
            fits.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        out["peak_mb"] = _status("VmHWM") - base
        del m
        prob = CoxProblem(check_cox_arrays(X, t, e), ties)
        evals = []
        for _ in range(max(3, repeat)):
            t0 = time.perf_counter()
            prob.evaluate(TRUE_BETA)
            evals.append(time.perf_counter() - t0)
        m = CoxPH(ties=ties).fit(X, t, e)
        out.update(fit_s=statistics.median(fits), fits=fits, iter_s=statistics.median(evals),
                   cpu_s=statistics.median(cpus),
                   iters=m.n_iter_, coef_err=float(np.max(np.abs(m.coef_ - TRUE_BETA))))
    elif method == "numpy":
        os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))
        _reset_peak()
        base = _status("VmRSS")
        fits = []
        cpus = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            c0 = time.process_time()
            beta, iters, per = numpy_breslow_fit(X, t, e)
            fits.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        out.update(fit_s=statistics.median(fits), fits=fits, iter_s=per, iters=iters,
                   cpu_s=statistics.median(cpus),
                   peak_mb=_status("VmHWM") - base,
                   coef_err=float(np.max(np.abs(beta - TRUE_BETA))))
    elif method == "lifelines":
        import pandas as pd
        from lifelines import CoxPHFitter

        df = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)])
        df["T"] = t
        df["E"] = e
        _reset_peak()
        base = _status("VmRSS")
        t0 = time.perf_counter()
        c0 = time.process_time()
        cph = CoxPHFitter().fit(df, "T", "E")
        out.update(fit_s=time.perf_counter() - t0, iter_s=float("nan"), iters=-1,
                   cpu_s=time.process_time() - c0,
                   peak_mb=_status("VmHWM") - base,
                   coef_err=float(np.max(np.abs(cph.params_.values - TRUE_BETA))))
    elif method.startswith(("R-", "sksurv-")):
        import _cox_refs

        tool, ties = method.split("-")
        if tool == "R":
            res = _cox_refs.r_coxph(X, t, e, TRUE_BETA, ties, repeat, timeout=3600)
        else:
            res = _cox_refs.sksurv_coxph(X, t, e, TRUE_BETA, ties, repeat)
        out.update(res, peak_mb=float("nan"))
    return out


def cold_start(timeout: float) -> None:
    """Print the first Breslow and Efron fits' wall and CPU seconds with an empty kernel cache.

    Each case runs in its own fresh process and fresh ``NUMBA_CACHE_DIR``; the
    CPU time (one thread compiles) is the figure to trust on a loaded machine.
    Continuous times have no tied events, so there an Efron fit runs the Breslow
    kernel (the same operations); the "tied" cases round the times up to tenths,
    so that they compile the Efron kernel. A fit of fewer than
    ``graphpar._cox_problem.NUMPY_ROWS_BELOW`` rows evaluates in NumPy and
    compiles no Cox kernel: the 1000-row cases show that, the 10 000-row cases
    what a first larger fit compiles.
    """
    import tempfile

    code = ("import time, numpy as np; t0 = time.perf_counter(); c0 = time.process_time()\n"
            "import graphpar\n"
            "n = ROWS; rng = np.random.default_rng(0); X = rng.normal(size=(n, 3))\n"
            "t = rng.exponential(size=n); t = np.ceil(10 * t) / 10 if TIED else t\n"
            "graphpar.CoxPH(ties=TIES).fit(X, t, rng.random(n) < .7)\n"
            "print(time.perf_counter() - t0, time.process_time() - c0)")
    print(f"cold start (import + first fit, fresh cache); load average {os.getloadavg()}")
    for rows in (1000, 10_000):
        for ties, tied in (("breslow", False), ("efron", False), ("efron", True)):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, NUMBA_CACHE_DIR=cache)
                run = (code.replace("TIES", repr(ties)).replace("TIED", repr(tied))
                       .replace("ROWS", str(rows)))
                # cwd: not the repository, whose graphpar would shadow a PYTHONPATH export
                r = subprocess.run([sys.executable, "-c", run], capture_output=True,
                                   text=True, env=env, timeout=timeout, cwd=cache)
                wall, cpu = map(float, r.stdout.split())
                label = f"{ties}, tied" if tied else ties
                print(f"  {rows:>6} rows  {label:<13} wall {wall:6.2f} s   cpu {cpu:6.2f} s")


def child(method: str, n: int, threads: int, repeat: int, timeout: float,
          wait_policy: str = "passive") -> dict | None:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
    if wait_policy:
        env["OMP_WAIT_POLICY"] = wait_policy
    cmd = [sys.executable, str(Path(__file__).resolve()), "--p", str(P), "--case", method,
           str(n), str(threads), str(repeat)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"  {method} N={n}: timed out after {timeout:.0f} s")
        return None
    if r.returncode != 0:
        print(f"  {method} N={n}: failed\n{r.stderr[-2000:]}")
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def entry_times(t: np.ndarray, seed: int = 1) -> np.ndarray:
    """Entry times for ``(start, stop]`` data: half of the rows enter at a uniform share of
    their time, the others at 0.

    The near-tie merge of ``timefix`` (R's ``aeqSurv``: distinct times closer than
    ``1.5e-8``, absolute or relative to the mean time, merge, in chains) must never
    merge a row's entry with its own time, which the fit rightly refuses: a late
    entry within ``1e-6`` times the mean of its time, or below ``1e-5`` (where
    tiny entries could chain 0 to a time; :func:`make_data` keeps times at least
    ``1e-6``), is moved to 0.
    """
    rng = np.random.default_rng(seed)
    start = t * rng.uniform(0.0, 0.9, t.size)
    start[rng.random(t.size) < 0.5] = 0.0
    start[(t - start < 1e-6 * t.mean()) | (start < 1e-5)] = 0.0
    return start


def _timed(fn, repeat: int):
    """Median (cpu, wall) seconds of ``repeat`` calls and the last result."""
    cpus, walls = [], []
    out = None
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        out = fn()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - w0)
    return statistics.median(cpus), statistics.median(walls), out


def stages(n: int, threads: int, repeat: int, entry: bool) -> None:
    """Print the parts of one graphpar fit and the same-run references (see the docstring)."""
    from graphpar import CoxPH
    from graphpar._cox_problem import CoxProblem
    from graphpar._validation import check_cox_arrays
    from graphpar.threads import set_threads

    set_threads(threads)
    X, t, e = make_data(n)
    start = entry_times(t) if entry else None
    print(f"stages: N = {n}, p = {P}, {threads} threads, medians of {repeat}; "
          f"load average {os.getloadavg()}")
    for ties in ("breslow", "efron"):
        CoxPH(ties=ties).fit(X[:5000], t[:5000], e[:5000],
                             entry=None if start is None else start[:5000])  # compile
    bw_c, bw_w, _ = _timed(lambda: X.sum(), repeat)
    order = np.argsort(-t, kind="stable")
    Xs = X[order]

    def numpy_eval(Xs):  # one evaluation of the NumPy reference, on sorted rows
        eta = Xs @ TRUE_BETA
        r = np.exp(eta - eta.max())
        s1 = np.cumsum(r[:, None] * Xs, axis=0)
        return Xs.T @ (Xs * r[:, None]), s1[-1]

    np_c, np_w, _ = _timed(lambda: numpy_eval(Xs), repeat)
    Xs = None  # free it before the fits
    print(f"  {'reference pass over X (X.sum())':<42} cpu {bw_c:7.3f}  wall {bw_w:7.3f}")
    print(f"  {'NumPy evaluation (eta, exp, S1, Gram)':<42} cpu {np_c:7.3f}  wall {np_w:7.3f}")
    for ties in ("breslow", "efron"):
        arrays = check_cox_arrays(X, t, e)
        su_c, su_w, prob = _timed(lambda: CoxProblem(arrays, ties), 1)  # noqa: B023
        ev_c, ev_w, _ = _timed(lambda: prob.evaluate(TRUE_BETA), repeat)  # noqa: B023
        prob = None
        fit_c, fit_w, m = _timed(lambda: CoxPH(ties=ties).fit(X, t, e), repeat)  # noqa: B023
        print(f"  {ties}: {m.n_iter_} Newton steps")
        print(f"    {'setup (sort, time fix, permuted copy)':<40} cpu {su_c:7.3f}  "
              f"wall {su_w:7.3f}")
        print(f"    {'one evaluation (ll, gradient, Hessian)':<40} cpu {ev_c:7.3f}  "
              f"wall {ev_w:7.3f}   = {ev_c / bw_c:5.1f} x the pass over X, "
              f"{ev_c / np_c:5.2f} x NumPy's (cpu)")
        print(f"    {'whole fit':<40} cpu {fit_c:7.3f}  wall {fit_w:7.3f}")
        if start is not None:
            en_c, en_w, me = _timed(
                lambda: CoxPH(ties=ties).fit(X, t, e, entry=start), repeat)  # noqa: B023
            print(f"    {'whole fit, (start, stop]':<40} cpu {en_c:7.3f}  wall {en_w:7.3f}   "
                  f"= {en_c / fit_c:4.2f} x the right-censored fit (cpu), "
                  f"{en_w / fit_w:4.2f} x (wall); {me.n_iter_} Newton steps")


def print_reference_ratios(rows: list[dict]) -> None:
    """Print each reference tool's fit time over graphpar's with the same tie method.

    lifelines fits Efron ties (its only method); above 1 graphpar is faster.
    """
    ours = {r["method"].split("-")[1]: r for r in rows if r["method"].startswith("graphpar")}
    parts = []
    for r in rows:
        name = r["method"]
        ties = "efron" if name == "lifelines" else name.split("-")[-1]
        if name.startswith("graphpar") or name == "numpy" or ties not in ours:
            continue
        parts.append(f"{name} {r['fit_s'] / ours[ties]['fit_s']:.1f}x")
    if parts:
        print("  reference fit time / graphpar's (same ties): " + ", ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", "--n", nargs="+", default=["1e5", "1e6", "1e7"],
                    help="numbers of rows N")
    ap.add_argument("--p", type=int, default=P, help="covariates (default %(default)s)")
    ap.add_argument("--stages", action="store_true",
                    help="time the parts of one fit against same-run references, in process")
    ap.add_argument("--entry", action="store_true",
                    help="with --stages: also fit (start, stop] data of the same N")
    ap.add_argument("--threads", nargs="+", type=int, default=[2])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-lifelines", action="store_true")
    ap.add_argument("--no-sksurv", action="store_true", help="skip scikit-survival")
    ap.add_argument("--no-r", action="store_true", help="skip R's coxph (Rscript)")
    ap.add_argument("--r-max", type=float, default=1e6,
                    help="largest N fitted by R (one core; default %(default)g)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--omp-wait-policy", default="passive",
                    help="OMP_WAIT_POLICY for the cases (default passive: on a shared, "
                         "oversubscribed machine spinning OpenMP workers steal the cores; "
                         "'' keeps the environment's)")
    ap.add_argument("--cold", action="store_true",
                    help="only time the first fits in a fresh NUMBA_CACHE_DIR")
    ap.add_argument("--case", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    set_p(args.p)
    if args.stages:
        for size in args.sizes:
            for threads in args.threads:
                stages(int(float(size)), threads, args.repeat, args.entry)
        return
    if args.cold:
        cold_start(args.timeout)
        return
    if args.case:
        method, n, threads, repeat = args.case
        print(json.dumps(run_case(method, int(n), int(threads), int(repeat))))
        return
    try:
        import lifelines  # noqa: F401

        have_ll = not args.no_lifelines
    except ImportError:
        have_ll = False
    try:
        import sksurv  # noqa: F401

        have_sk = not args.no_sksurv
    except ImportError:
        have_sk = False
    import _cox_refs

    have_r = not args.no_r and _cox_refs.r_available()
    if not have_r and not args.no_r:
        print("R's coxph: skipped (no Rscript with the survival package on the path)")
    print(f"Cox benchmark: p = {P}, 5% of rows tied in pairs; medians of {args.repeat} fits; "
          "peak = VmHWM of the fit above the RSS before it; "
          f"OMP_WAIT_POLICY={args.omp_wait_policy or os.environ.get('OMP_WAIT_POLICY', '')!r}")
    print(f"load average before: {os.getloadavg()}")
    hdr = (f"{'method':<18} {'N':>9} {'thr':>3} {'fit s':>8} {'x numpy':>8} {'cpu s':>8} "
           f"{'iter s':>8} "
           f"{'iters':>5} {'peak MiB':>9} {'peak/input':>10} {'k':>5} {'max|b-b*|':>10}")
    print(hdr)
    for size in args.sizes:
        n = int(float(size))
        for threads in args.threads:
            wp = args.omp_wait_policy
            ref = child("numpy", n, threads, args.repeat, args.timeout, wp)
            rows = [ref]
            for method in ("graphpar-breslow", "graphpar-efron"):
                rows.append(child(method, n, threads, args.repeat, args.timeout, wp))
            last = threads == args.threads[-1]
            if have_ll and n <= 1_000_000 and last:
                rows.append(child("lifelines", n, threads, 1, args.timeout, wp))
            if have_sk and n <= 1_000_000 and last:
                for ties in ("breslow", "efron"):
                    rows.append(child(f"sksurv-{ties}", n, 1, 1, args.timeout, wp))
            if have_r and n <= args.r_max and last:
                for ties in ("breslow", "efron"):
                    rows.append(child(f"R-{ties}", n, 1, args.repeat, args.timeout, wp))
            for r in rows:
                if r is None:
                    continue
                ratio = (f"{ref['fit_s'] / r['fit_s']:.2f}x" if ref else "-")
                print(f"{r['method']:<18} {n:>9} {r['threads']:>3} {r['fit_s']:>8.3f} {ratio:>8} "
                      f"{r['cpu_s']:>8.3f} "
                      f"{r['iter_s']:>8.4f} {r['iters']:>5} {r['peak_mb']:>9.0f} "
                      f"{r['peak_mb'] / r['input_mb']:>10.2f} "
                      f"{r['peak_mb'] * 2**20 / (8 * n):>5.1f} {r['coef_err']:>10.2e}",
                      flush=True)
            print_reference_ratios([r for r in rows if r is not None])


if __name__ == "__main__":
    main()
