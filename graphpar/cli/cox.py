"""``graphpar cox``: fit a Cox proportional-hazards model to a CSV or .npz table.

Serially the table is read whole (:func:`graphpar._cox_reader.read_table`) and
fitted with :class:`graphpar.CoxPH`. Under ``mpiexec`` each rank reads only its
own rows (:func:`graphpar.mpi.read_table_rows`, with the serial reader's own
code, so errors are the serial ones) and :class:`graphpar.mpi.CoxPH` sorts the
rows across the ranks in time order and evaluates the likelihood distributed;
rank 0 prints the serial summary followed by one line with the ranks, the time
per likelihood evaluation and the bytes each rank sent.

Outputs (rank 0 alone, each file atomically through
:func:`graphpar.io.atomic_write`): ``-o FIT.json`` or ``-o FIT.csv`` writes the
summary, plus the baseline survival to ``FIT.baseline.csv``; ``--predict
ROWS.csv`` adds the survival curves of the rows of ROWS.csv, in
``FIT.survival.csv`` (see :data:`OUTPUT_HELP`).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from graphpar.cli import int_in, positive_finite

DEMO_N = 200_000
DEMO_COEF = (0.5, -0.8, 0.25, 0.0, 1.0)
DEMO_TOL = 0.05  # about ten standard errors at DEMO_N rows

SUMMARY_COLUMNS = ("coef", "exp_coef", "se", "z", "p", "lower_95", "upper_95")
OUTPUT_LAYOUT = (
    "Outputs: -o FILE.json writes the summary as JSON (the fields of --json); -o FILE.csv "
    "writes it as CSV, one row per covariate with the columns covariate,"
    + ",".join(SUMMARY_COLUMNS) + ". Either also writes the baseline survival (a row at the "
    "covariates' means, offset 0) to FILE.baseline.csv (FILE without its suffix): the columns "
    "[STRATA,]time,cumulative_hazard,survival, one row per distinct time of each stratum, "
    "each value holding until the next time; with --predict, FILE.survival.csv too. Each "
    "file is written whole or not at all, by rank 0 under mpiexec. Progress of the Newton "
    "steps goes to stderr unless --quiet."
)
PREDICT_HELP = (
    "a CSV (or .npz) table of rows to predict, with the covariate columns of the fit (and "
    "the --strata and --offset columns when the fit has them); their survival curves go to "
    "FILE.survival.csv, FILE from -o without its suffix: a column time (the distinct times "
    "of the rows' strata) and one column row1, row2, ... per row of ROWS, each row's "
    "survival from that time until the next"
)


def register(sub) -> None:
    """Add the ``cox`` subcommand to ``sub``."""
    from graphpar.cli._driver import add_shared_options

    p = sub.add_parser(
        "cox",
        help="fit a Cox proportional-hazards model to a CSV or .npz table",
        description=(
            "Fit a Cox proportional-hazards model by Newton-Raphson (parallel prefix-scan "
            "likelihood) and print the coefficient table. DATA is a UTF-8 CSV file with a "
            "header of column names and one row per line, each column all numbers or all text "
            "labels (a text covariate is one-hot encoded against its first level in code-point "
            "order, as COL[T.level]); tab-separated for .tsv names or with --sep; optionally "
            "compressed (.csv.gz, .csv.bz2, .csv.xz), or a .npz file of equal-length 1-D "
            "real arrays "
            "named by column. Every column other than --time, --event, --strata, --weights, "
            "--offset and --entry is a covariate, unless --covariates picks them. A bad table gets "
            "one error naming the file, the line (or array and index) and the column."
        ),
        epilog=OUTPUT_LAYOUT,
    )
    p.add_argument("data", metavar="DATA",
                   help="input table (.csv, .csv.gz/.bz2/.xz or .npz)")
    p.add_argument("--time", required=True, metavar="COL", help="follow-up time column")
    p.add_argument("--event", required=True, metavar="COL",
                   help="event indicator column (1 event, 0 censored)")
    p.add_argument("--strata", metavar="COL", help="stratum column (optional)")
    p.add_argument("--weights", metavar="COL", help="case-weight column (optional)")
    p.add_argument("--offset", metavar="COL", help="offset column (optional)")
    p.add_argument("--entry", metavar="COL",
                   help="entry (start) time column for counting-process rows (entry, time], "
                        "as R's Surv(start, stop, event): time-varying covariates, delayed "
                        "entry; each entry below its row's time (optional)")
    p.add_argument("--robust", action=argparse.BooleanOptionalAction, default=None,
                   help="report the robust (sandwich) standard errors, R's coxph(robust = TRUE); "
                        "the summary shows the model-based ones beside them. Default, as R's: "
                        "robust when --cluster is given or some weight is not an integer; "
                        "--no-robust keeps the model-based ones")
    p.add_argument("--cluster", metavar="COL",
                   help="cluster id column (numbers or text): cluster-robust standard errors, "
                        "R's + cluster(id); implies --robust (optional)")
    p.add_argument("--covariates", metavar="A,B,C", help="comma-separated covariate columns")
    p.add_argument("--ties", choices=("efron", "breslow"), default="efron",
                   help="tie handling (default efron)")
    p.add_argument("--penalizer", type=float, default=0.0,
                   help="L2 penalty: maximise loglik - 0.5*X*||beta||^2 (default 0)")
    p.add_argument("--tol", type=positive_finite, default=1e-9,
                   help="convergence tolerance on the log-likelihood's relative change, R's "
                        "coxph.control(eps =) (default 1e-9, R's)")
    p.add_argument("--max-iter", type=int_in(1), default=50, metavar="N",
                   help="most Newton steps (default 50; R's iter.max is 20)")
    p.add_argument("--predict", metavar="ROWS", help=PREDICT_HELP)
    p.add_argument("--sep", metavar="CHAR", default=None,
                   help="field separator of DATA and ROWS (default: a tab for .tsv/.tab "
                        "names, compressed too, else a comma); write '\\t' for a tab")
    add_shared_options(p, json=True,
                       plot="the hazard ratios with their 95%% intervals to FILE.png and the "
                            "baseline survival of each stratum to FILE.survival.png",
                       output="the summary (.json or .csv; the baseline survival goes beside it, "
                              "see below)")
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
        covs = [c.strip() for c in args.covariates.split(",")]
        if "" in covs:
            raise ValueError(f"--covariates {args.covariates!r}: an empty column name (two "
                             "commas, or one at an end); write names separated by single "
                             "commas, e.g. age,sex")
    entry = getattr(args, "entry", None)
    cluster = getattr(args, "cluster", None)
    if (entry is not None or cluster is not None) and covs is None:
        roles = {args.time, args.event, args.strata, args.weights, args.offset, entry, cluster}
        covs = [c for c in table if c not in roles]
    kw = pick_columns(table, args.data, args.time, args.event, strata=args.strata,
                      weights=args.weights, offset=args.offset, covariates=covs,
                      levels=getattr(table, "levels", None))
    if entry is not None:
        kw["entry"] = _entry_column(table, args.data, entry, kw["time"])
    if cluster is not None:
        kw["cluster"] = _cluster_column(table, args.data, cluster)
    return kw


def _cluster_column(table, path: str, name: str) -> np.ndarray:
    """The --cluster column (numbers or text, no missing value); errors name file and line."""
    if name not in table:
        raise ValueError(f"{path}: no column {name!r} (for --cluster); the columns are "
                         + ", ".join(repr(c) for c in table))
    ids = np.asarray(table[name])
    if ids.dtype.kind == "f" and np.isnan(ids).any():
        row = int(np.argmax(np.isnan(ids)))
        raise ValueError(f"{table.where(name, row)}: cluster id is missing (nan)")
    return ids


def _entry_column(table, path: str, name: str, time: np.ndarray) -> np.ndarray:
    """The --entry column, finite and below --time on every row; errors name file and line."""
    from graphpar._cox_reader import Table
    from graphpar._validation import first_invalid

    if not isinstance(table, Table):
        table = Table(table, path)
    if name not in table:
        raise ValueError(f"{path}: no column {name!r} (for --entry); the columns are "
                         + ", ".join(repr(c) for c in table))
    entry = np.asarray(table[name], dtype=np.float64)
    bad = first_invalid(entry)
    if bad is not None:
        raise ValueError(f"{table.where(name, bad[0])}: entry {bad[1]}")
    late = ~(entry < time)
    if late.any():
        i = int(np.argmax(late))
        raise ValueError(f"{table.where(name, i)}: entry must be less than time, got entry "
                         f"{entry[i]} and time {time[i]}")
    return entry


def _read(args, ctx) -> dict:
    """The ``CoxPH.fit`` arguments of the table: all its rows, or under MPI this rank's."""
    if ctx.mpi:
        from graphpar.mpi import read_table_rows

        table, _ = read_table_rows(args.data, ctx.comm)
        # a text column's levels are every rank's labels, so that all ranks encode alike
        text = {c: sorted(set(v.tolist())) for c, v in table.items()
                if np.asarray(v).dtype == object}
        merged: dict = {}
        for part in ctx.comm.allgather(text):
            for c, lv in part.items():
                merged.setdefault(c, set()).update(lv)
        table.levels = {c: sorted(v) for c, v in merged.items()}
    else:
        from graphpar._cox_reader import read_table

        table = read_table(args.data, _sep(args))
    return ctx.collectively(lambda: fit_args(args, table))


def _sep(args) -> str | None:
    sep = getattr(args, "sep", None)
    if sep is None:
        return None
    sep = {"\\t": "\t", "tab": "\t"}.get(sep, sep)
    if len(sep) != 1 or sep in "\"'\r\n ":
        raise ValueError(f"--sep must be one character such as ',', ';' or '\\t', got {sep!r}")
    return sep


def output_paths(output: str, predict: bool) -> dict:
    """The files ``-o FILE`` writes: ``summary``, ``baseline`` and (with --predict) ``survival``.

    Examples
    --------
    >>> output_paths("runs/fit.json", True)["survival"]
    'runs/fit.survival.csv'
    >>> output_paths("fit.txt", False)
    Traceback (most recent call last):
    ...
    ValueError: -o/--output must end in .json or .csv, got 'fit.txt'
    """
    low = output.lower()
    if not low.endswith((".json", ".csv")):
        raise ValueError(f"-o/--output must end in .json or .csv, got {output!r}")
    stem = output[: output.rfind(".")]
    paths = {"summary": output, "baseline": stem + ".baseline.csv"}
    if predict:
        paths["survival"] = stem + ".survival.csv"
    if len(set(paths.values())) != len(paths):
        raise ValueError(f"-o/--output {output!r} would be overwritten by its own side files: "
                         "choose another name")
    return paths


def refuse_overwriting_inputs(paths: dict, args) -> None:
    """Refuse side files of ``-o`` (``FILE.baseline.csv``, ...) that are an input.

    The driver checks ``-o`` itself against every input; these names it cannot know.
    """
    from graphpar.cli._driver import refuse_overwriting_an_input

    for what, path in paths.items():
        if what != "summary":
            label = f"-o/--output {args.output}'s {what} file {path}"
            refuse_overwriting_an_input(args, path, label)


def read_predict_rows(args, kw: dict) -> dict:
    """The ``predict_*`` arguments of ``--predict ROWS``: X, strata and offset, checked.

    A missing column or a bad cell is an error naming the file, the line and
    the column.
    """
    from graphpar._cox_reader import TableColumns, read_table
    from graphpar._validation import first_invalid

    table = read_table(args.predict, _sep(args))
    design = kw.design
    need = [(c, "covariate") for c in design.factors]
    if args.strata:
        need.append((args.strata, "--strata"))
    if args.offset:
        need.append((args.offset, "--offset"))
    for name, role in need:
        if name not in table:
            raise ValueError(f"{args.predict}: no column {name!r} (the fit's {role}); "
                             "the columns are " + ", ".join(repr(c) for c in table))
        if role == "covariate" and design.factors[name].levels is not None:
            continue
        if np.asarray(table[name]).dtype == object:
            continue
        bad = first_invalid(np.asarray(table[name], dtype=np.float64))
        if bad is not None:
            raise ValueError(f"{table.where(name, bad[0])}: {role} {bad[1]}")
    n = len(table[need[0][0]])
    if n == 0:
        raise ValueError(f"{args.predict}: no rows to predict")
    X = design.matrix(TableColumns(table))
    return {"X": X, "strata": table[args.strata] if args.strata else None,
            "offset": table[args.offset] if args.offset else None}


def _write_csv(path: str, header: list[str], columns: list[np.ndarray]) -> None:
    from graphpar.io import atomic_write

    with atomic_write(path, "w", newline="") as f:
        f.write(",".join(header) + "\n")
        rows = np.column_stack(columns) if columns else np.zeros((0, 0))
        for row in rows:
            f.write(",".join(_cell(v) for v in row) + "\n")


def _json_ready(value):
    """Plain Python values for JSON; a non-finite float as the string ``"inf"``, ``"nan"``."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value


def _cell(v) -> str:
    return repr(float(v)) if isinstance(v, (float, np.floating)) else str(v)


def write_outputs(model, fields: dict, paths: dict, strata_name: str | None,
                  rows: dict | None) -> None:
    """Write the summary, the baseline survival and the predicted curves to ``paths``."""
    import json

    from graphpar.io import atomic_write

    summary = model.summary_table()
    if paths["summary"].lower().endswith(".json"):
        with atomic_write(paths["summary"], "w") as f:
            json.dump(_json_ready(fields), f, indent=1)
            f.write("\n")
    else:
        cols = [getattr(summary, a) for a in ("coef", "exp_coef", "se", "z", "p", "lower",
                                              "upper")]
        _write_csv(paths["summary"], ["covariate", *SUMMARY_COLUMNS],
                   [np.asarray(summary.names, dtype=object)] + cols)
    base = model.baseline_cumulative_hazard_
    header, labels, times, values = [], [], [], []
    for label, curve in base.items():
        labels.append(np.full(curve.time.size, label, dtype=object))
        times.append(curve.time)
        values.append(curve.value)
    t, h = np.concatenate(times), np.concatenate(values)
    columns = [t, h, np.exp(-h)]
    header = ["time", "cumulative_hazard", "survival"]
    if strata_name is not None:
        header.insert(0, strata_name)
        columns.insert(0, np.concatenate(labels))
    _write_csv(paths["baseline"], header, columns)
    if rows is not None:
        t, S = model.predict_survival_function(rows["X"], strata=rows["strata"],
                                               offset=rows["offset"])
        _write_csv(paths["survival"], ["time"] + [f"row{i + 1}" for i in range(S.shape[1])],
                   [t] + [S[:, i] for i in range(S.shape[1])])


def plot_paths(path: str) -> dict:
    """The pictures ``--plot FILE.png`` writes: hazard ratios to FILE.png, survival beside it.

    Examples
    --------
    >>> plot_paths("out/fit.png")["survival"]
    'out/fit.survival.png'
    """
    from graphpar.cli._driver import PLOT_SUFFIXES, check_suffix

    check_suffix("--plot", path, *PLOT_SUFFIXES)  # as the driver did before the run
    return {"coefficients": path, "survival": path[:-4] + ".survival.png"}


def write_plots(model, path: str) -> None:
    """Draw the hazard ratios and the baseline survival curves (:mod:`graphpar.plot`)."""
    paths = plot_paths(path)
    model.plot_coefficients(paths["coefficients"])
    model.plot_survival(path=paths["survival"])


def run(args, ctx) -> int:
    """Run ``graphpar cox`` in the context ``ctx`` (serial or one MPI rank); return 0."""
    paths = None
    if args.output is not None or args.predict is not None:
        def check_output():
            if args.output is None:
                raise ValueError("--predict needs -o/--output FILE: the survival curves are "
                                 "written to FILE's stem + '.survival.csv'")
            paths = output_paths(args.output, args.predict is not None)
            refuse_overwriting_inputs(paths, args)
            return paths

        paths = ctx.collectively(check_output)
    # --plot's name (.png) was checked by the driver before the run (check_output_paths)
    kw, load_s = ctx.timed(lambda: _read(args, ctx))
    rows = None
    if args.predict is not None:
        rows = ctx.collectively(lambda: read_predict_rows(args, kw) if ctx.is_root else None)
    show = ctx.is_root and not getattr(args, "quiet", False)
    if ctx.mpi:
        from graphpar.mpi import CoxPH

        model = CoxPH(ties=args.ties, penalizer=args.penalizer, tol=args.tol,
                      max_iter=args.max_iter, comm=ctx.comm)
    else:
        from graphpar import CoxPH

        model = CoxPH(ties=args.ties, penalizer=args.penalizer, tol=args.tol,
                      max_iter=args.max_iter)
    fit_kw = dict(kw)
    if getattr(args, "robust", None) is not None:
        fit_kw["robust"] = args.robust
    _, seconds = ctx.timed(lambda: model.fit(**fit_kw, progress=show), start_together=True)
    summary = model.summary_table()
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

    if paths is not None:
        ctx.write(lambda: write_outputs(model, fields, paths, args.strata, rows))
    if getattr(args, "plot", None):
        ctx.write(lambda: write_plots(model, args.plot))
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
