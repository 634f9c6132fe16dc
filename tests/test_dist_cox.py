"""Distributed Cox under ``mpiexec -n 1, 2, 3, 4`` against the serial fit.

One launch per rank count runs every check of ``tests/mpi_gcn_cox/cox_checks.py``:
log-likelihood, gradient and Hessian against the O(n^2) reference, and the
fitted coefficients, standard errors, iterations and printed summary against
:class:`graphpar.CoxPH`, with ties and strata spanning rank boundaries.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import mpiexec

sys.path.insert(0, str(Path(__file__).resolve().parent / "mpi_gcn_cox"))
from launch import run_script  # noqa: E402

pytestmark = pytest.mark.mpi


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4])
def test_cox_equals_serial(nprocs):
    res = run_script(mpiexec(), nprocs, "cox_checks.py")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ALL OK:" in res.stdout and f"on {nprocs} ranks" in res.stdout, res.stdout
