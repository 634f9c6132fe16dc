"""``graphpar cox``: fit a Cox proportional-hazards model to a CSV or .npz table.

Serially the table is read whole (:func:`graphpar._cox_reader.read_table`) and
fitted with :class:`graphpar.CoxPH`. Under ``mpiexec`` each rank reads only its
own rows (:func:`graphpar.mpi.read_table_rows`, with the serial reader's own
code, so errors are the serial ones) and :class:`graphpar.mpi.CoxPH` sorts the
rows across the ranks in time order and evaluates the likelihood distributed;
rank 0 prints the serial summary followed by one line with the ranks, the time
per likelihood evaluation and the bytes each rank sent.
"""

from __future__ import annotations

import time

import numpy as np

DEMO_N = 200_000
DEMO_COEF = (0.5, -0.8, 0.25, 0.0, 1.0)
DEMO_TOL = 0.05  # about ten standard errors at DEMO_N rows


def register(sub) -> None:
    """Add the ``cox`` subcommand to ``sub``."""
    from graphpar.cli._driver import add_shared_options

    p = sub.add_parser(
        "cox",
        help="fit a Cox proportional-hazards model to a CSV or .npz table",
        description=(
            "Fit a Cox proportional-hazards model by Newton-Raphson (parallel prefix-scan "
            "likelihood) and print the coefficient table. DATA is a UTF-8 CSV file with a "
            "header of column names and one row of numbers per line (optionally compressed: "
            ".csv.gz, .csv.bz2, .csv.xz), or a .npz file of equal-length 1-D real arrays "
            "named by column. Every column other than --time, --event, --strata, --weights "
            "and --offset is a covariate, unless --covariates picks them. A bad table gets "
            "one error naming the file, the line (or array and index) and the column."
        ),
    )
    p.add_argument("data", metavar="DATA",
                   help="input table (.csv, .csv.gz/.bz2/.xz or .npz)")
    p.add_argument("--time", required=True, metavar="COL", help="follow-up time column")
    p.add_argument("--event", required=True, metavar="COL",
                   help="event indicator column (1 event, 0 censored)")
    p.add_argument("--strata", metavar="COL", help="stratum column (optional)")
    p.add_argument("--weights", metavar="COL", help="case-weight column (optional)")
    p.add_argument("--offset", metavar="COL", help="offset column (optional)")
    p.add_argument("--covariates", metavar="A,B,C", help="comma-separated covariate columns")
    p.add_argument("--ties", choices=("efron", "breslow"), default="efron",
                   help="tie handling (default efron)")
    p.add_argument("--penalizer", type=float, default=0.0,
                   help="L2 penalty: maximise loglik - 0.5*X*||beta||^2 (default 0)")
    add_shared_options(p, json=True)
    p.set_defaults(func=run)


def fit_args(args, table: dict) -> dict:
    """Return the ``CoxPH.fit`` keyword arguments chosen by the parsed ``args``.

    Examples
    --------
    >>> import argparse, numpy as np
    >>> a = argparse.Namespace(data="d.csv", time="t", event="e", strata=None, weights=None,
    ...                        offset=None, covariates=None)
    >>> t = {"t": np.ones(2), "e": np.ones(2), "x": np.zeros(2)}
    >>> fit_args(a, t)["feature_names"]
    ['x']
    """
    from graphpar._cox_reader import pick_columns

    covs = None
    if args.covariates:
        covs = [c.strip() for c in args.covariates.split(",") if c.strip()]
    return pick_columns(table, args.data, args.time, args.event, strata=args.strata,
                        weights=args.weights, offset=args.offset, covariates=covs)


def _read(args, ctx) -> dict:
    """The ``CoxPH.fit`` arguments of the table: all its rows, or under MPI this rank's."""
    if ctx.mpi:
        from graphpar.mpi import read_table_rows

        table, _ = read_table_rows(args.data, ctx.comm)
    else:
        from graphpar._cox_reader import read_table

        table = read_table(args.data)
    return ctx.collectively(lambda: fit_args(args, table))


def run(args, ctx) -> int:
    """Run ``graphpar cox`` in the context ``ctx`` (serial or one MPI rank); return 0."""
    kw, load_s = ctx.timed(lambda: _read(args, ctx))
    if ctx.mpi:
        from graphpar.mpi import CoxPH

        model = CoxPH(ties=args.ties, penalizer=args.penalizer, comm=ctx.comm)
    else:
        from graphpar import CoxPH

        model = CoxPH(ties=args.ties, penalizer=args.penalizer)
    _, seconds = ctx.timed(lambda: model.fit(**kw), start_together=True)
    summary = model.summary()
    fields = {**summary.to_dict(), "seconds": seconds}
    extra = ""
    if ctx.mpi:
        stats = model.mpi_stats_
        per_eval, sent = stats.seconds_per_evaluation, max(stats.bytes_sent_per_rank)
        fields.update(ranks=ctx.size, threads_per_rank=ctx.threads,
                      seconds_per_evaluation=per_eval, bytes_sent_per_rank=sent,
                      load_seconds=load_s, distribute_seconds=stats.distribute_seconds)
        extra = (f"{ctx.size} ranks x {ctx.threads} threads; {per_eval * 1e3:.2f} ms per "
                 f"likelihood evaluation (median of {stats.evaluations}); at most {sent} "
                 f"bytes sent per rank; rows read in {load_s:.3f} s, sorted across the ranks "
                 f"in {stats.distribute_seconds:.3f} s (part of the fit)")

    def text(_fields):
        print(summary)
        print(f"fitted in {seconds:.3f} s")
        if extra:
            print(extra)

    ctx.report(fields, text)
    return 0


def demo_data(n: int, seed: int):
    """Generated survival data with coefficients ``DEMO_COEF``, ~30% censored, some ties.

    Examples
    --------
    >>> X, t, e = demo_data(100, 0)
    >>> X.shape
    (100, 5)
    """
    rng = np.random.default_rng(seed)
    beta = np.asarray(DEMO_COEF)
    X = rng.standard_normal((n, beta.size))
    t = rng.exponential(np.exp(-(X @ beta)))
    c = rng.exponential(2.5, n)
    e = t <= c
    t = np.round(np.minimum(t, c), 3)  # rounding makes tie groups
    return X, t, e


def demo(args) -> bool:
    """The Cox step of ``graphpar demo``: recover known coefficients from generated data.

    Fits ``DEMO_N`` generated rows with Efron ties, prints four lines and returns
    True when the fit converged and every coefficient is within ``DEMO_TOL``
    of ``DEMO_COEF``.

    Examples
    --------
    >>> import argparse
    >>> demo(argparse.Namespace(seed=0))  # doctest: +SKIP
    cox: 200000 rows, ...
    True
    """
    from graphpar import CoxPH

    X, t, e = demo_data(DEMO_N, getattr(args, "seed", 0))
    t0 = time.perf_counter()
    m = CoxPH().fit(X, t, e)
    sec = time.perf_counter() - t0
    err = float(np.max(np.abs(m.coef_ - np.asarray(DEMO_COEF))))
    ok = bool(m.converged_ and err < DEMO_TOL)
    print(f"cox: {DEMO_N} rows, {int(e.sum())} events, {X.shape[1]} covariates, Efron ties")
    print("cox: true coef   " + " ".join(f"{b:7.3f}" for b in DEMO_COEF))
    print("cox: fitted coef " + " ".join(f"{b:7.3f}" for b in m.coef_))
    print(f"cox: {m.n_iter_} Newton steps in {sec:.2f} s; max |error| {err:.4f} "
          f"(tolerance {DEMO_TOL}): " + ("OK" if ok else "FAILED"))
    return ok
