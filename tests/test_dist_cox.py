"""Distributed Cox under ``mpiexec -n 1, 2, 3, 4`` against the serial fit.

One launch per rank count runs every check of ``tests/mpi/cox_checks.py``:
:func:`graphpar.mpi.distribute_cox`'s log-likelihood, gradient and Hessian
against the O(n^2) reference, and :class:`graphpar.mpi.CoxPH`'s coefficients
(to 1e-12 relative), standard errors, iterations and printed summary against
:class:`graphpar.CoxPH`, with ties and strata spanning rank boundaries, weights,
offsets, timefix on and off, string strata, and errors on one rank's rows.
"""

from __future__ import annotations

import pytest
from conftest import run_mpi_script, run_mpiexec

pytestmark = pytest.mark.mpi

# as in the serial runs: one OpenMP thread per rank, and no warnings in the output
QUIET = {"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4])
def test_cox_equals_serial(nprocs):
    res = run_mpi_script("cox_checks.py", nprocs, env=QUIET)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ALL OK:" in res.stdout and f"on {nprocs} ranks" in res.stdout, res.stdout


@pytest.mark.parametrize("nprocs", [2, 3])
def test_cox_residuals_equal_serial_and_r(nprocs):
    """tests/mpi/cox_residual_checks.py: score, martingale, Schoenfeld and dfbeta residuals.

    Each rank's own rows' residuals, gathered in rank order, against the serial
    fit's (1e-10) and R's (1e-8): strata, weights, offsets, both tie methods,
    ``(entry, time]`` rows, rows split evenly, all on rank 0, reversed and
    shuffled, and one tie group holding every row.
    """
    res = run_mpi_script("cox_residual_checks.py", nprocs, env=QUIET)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ALL OK:" in res.stdout and f"on {nprocs} ranks" in res.stdout, res.stdout


def _write_table(path, n=600, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    t = np.round(rng.exponential(np.exp(-(X @ [0.4, -0.3]))), 1)  # heavy ties
    e = (rng.random(n) < 0.7).astype(int)
    s = rng.integers(0, 3, n)
    with open(path, "w") as f:
        f.write("age,time,dose,event,site\n")
        for i in range(n):
            f.write(f"{float(X[i, 0])!r},{float(t[i])!r},{float(X[i, 1])!r},{e[i]},{s[i]}\n")
    np.savez(str(path)[:-4] + ".npz", age=X[:, 0], time=t, dose=X[:, 1], event=e, site=s)


def test_cli_under_mpiexec_prints_the_serial_fit(tmp_path):
    import json
    import subprocess

    from conftest import graphpar_cmd

    csv = tmp_path / "surv.csv"
    _write_table(csv)
    flags = ["--time", "time", "--event", "event", "--strata", "site", "--json"]
    serial = subprocess.run(graphpar_cmd() + ["cox", str(csv), *flags], capture_output=True,
                            text=True, timeout=600)
    assert serial.returncode == 0, serial.stderr
    ref = json.loads(serial.stdout)
    for data in (csv, tmp_path / "surv.npz"):
        res = run_mpiexec(3, ["-m", "graphpar", "cox", data, *flags])
        assert res.returncode == 0, res.stderr[-3000:]
        lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
        assert len(lines) == 1, res.stdout  # rank 0 alone prints
        got = json.loads(lines[0])
        assert got["ranks"] == 3
        for name, value in ref["coef"].items():
            assert abs(got["coef"][name] - value) <= 1e-10 * abs(value), (name, data)
        assert got["iterations"] == ref["iterations"]
        assert got["n_samples"] == ref["n_samples"] and got["n_events"] == ref["n_events"]


def test_cli_under_mpiexec_bad_cell_is_one_error(tmp_path):
    csv = tmp_path / "bad.csv"
    _write_table(csv, n=50)
    lines = csv.read_text().splitlines()
    cells = lines[40].split(",")
    cells[2] = "n/a"
    lines[40] = ",".join(cells)
    csv.write_text("\n".join(lines) + "\n")
    res = run_mpiexec(2, ["-m", "graphpar", "cox", csv, "--time", "time", "--event", "event"])
    assert res.returncode == 2
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("graphpar: error:")]
    assert errors == [f"graphpar: error: {csv}, line 41, column 3 ('dose'): non-numeric value "
                      "'n/a' (every cell must be a number; missing values are not supported)"]
