"""Reference Cox fits for ``benchmarks/cox.py``: R's ``coxph`` and scikit-survival.

Each function fits the benchmark's data with one tool and returns what
``cox.py`` prints for a case: the median fit time over ``repeat`` fits, CPU
time, iterations and the largest coefficient error against the true values.
R runs in its own ``Rscript`` process on the same arrays (written once as raw
float64, read with ``readBin``); only ``coxph`` is inside R's timer
(``system.time``), not R's start-up or the read. Both tools fit on one core.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

R_FIT = r"""
args <- commandArgs(TRUE)
n <- as.integer(args[2]); p <- as.integer(args[3]); ties <- args[4]
reps <- as.integer(args[5])
con <- file(args[1], "rb")
X <- matrix(readBin(con, "double", n * p), n, p)
time <- readBin(con, "double", n); status <- readBin(con, "double", n)
close(con)
suppressPackageStartupMessages(library(survival))
wall <- numeric(reps); cpu <- numeric(reps)
for (i in seq_len(reps)) {
  s <- system.time(fit <- coxph(Surv(time, status) ~ X, ties = ties))
  wall[i] <- s[["elapsed"]]; cpu[i] <- s[["user.self"]] + s[["sys.self"]]
}
cat(median(wall), median(cpu), fit$iter, coef(fit), "\n")
"""


def r_available() -> bool:
    """True when ``Rscript`` is on the path and has the survival package."""
    if shutil.which("Rscript") is None:
        return False
    r = subprocess.run(["Rscript", "-e", "library(survival)"], capture_output=True)
    return r.returncode == 0


def r_coxph(X, t, event, true_beta, ties: str, repeat: int, timeout: float) -> dict:
    """Fit with R's ``coxph(Surv(time, status) ~ X, ties=ties)``; ``repeat`` fits."""
    n, p = X.shape
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.bin"
        with open(data, "wb") as f:
            np.asfortranarray(X, dtype=np.float64).T.tofile(f)  # R matrices: by column
            np.asarray(t, dtype=np.float64).tofile(f)
            np.asarray(event, dtype=np.float64).tofile(f)
        script = Path(tmp) / "fit.R"
        script.write_text(R_FIT)
        r = subprocess.run(["Rscript", str(script), str(data), str(n), str(p), ties,
                            str(repeat)], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"Rscript failed: {r.stderr[-1000:]}")
    values = [float(v) for v in r.stdout.split()]
    wall, cpu, iters, coef = values[0], values[1], int(values[2]), np.array(values[3:])
    return dict(fit_s=wall, cpu_s=cpu, iters=iters, iter_s=float("nan"),
                coef_err=float(np.max(np.abs(coef - true_beta))))


def sksurv_coxph(X, t, event, true_beta, ties: str, repeat: int) -> dict:
    """Fit with scikit-survival's ``CoxPHSurvivalAnalysis(ties=ties)``; ``repeat`` fits."""
    from sksurv.linear_model import CoxPHSurvivalAnalysis
    from sksurv.util import Surv

    y = Surv.from_arrays(event=np.asarray(event, dtype=bool), time=t)
    fits, cpus = [], []
    model = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        model = CoxPHSurvivalAnalysis(ties=ties).fit(X, y)
        fits.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return dict(fit_s=statistics.median(fits), fits=fits, cpu_s=statistics.median(cpus),
                iters=-1, iter_s=float("nan"),
                coef_err=float(np.max(np.abs(model.coef_ - true_beta))))
