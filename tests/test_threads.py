"""Threads per process: one rule (graphpar.threads.decide_threads), its precedence and errors.

--threads > GRAPHPAR_NUM_THREADS > SLURM_CPUS_PER_TASK > PBS (OMP_NUM_THREADS, NCPUS)
> cores / ranks on the node (under MPI) or Numba's setting (serial).
"""

from __future__ import annotations

import json
import re

import numba
import numpy as np
import pytest
from capped import assert_one_line_error, run_capped
from conftest import ROOT
from thread_count import at_threads

from graphpar.threads import decide_threads, max_threads, set_threads

TINY = ROOT / "datasets" / "samples" / "tiny.gr"
LIMIT = max_threads()
PBS = {"PBS_JOBID": "42.pbs01"}


@pytest.mark.parametrize("threads, env, cores, ranks, expected", [
    # an explicit argument beats every variable
    (1, {"GRAPHPAR_NUM_THREADS": "2", "SLURM_CPUS_PER_TASK": "2"}, None, 1, (1, "threads")),
    # GRAPHPAR_NUM_THREADS beats the schedulers
    (None, {"GRAPHPAR_NUM_THREADS": "1", "SLURM_CPUS_PER_TASK": "2", **PBS,
            "OMP_NUM_THREADS": "2"}, None, 1, (1, "GRAPHPAR_NUM_THREADS")),
    # Slurm beats PBS and the node's cores
    (None, {"SLURM_CPUS_PER_TASK": "1", **PBS, "OMP_NUM_THREADS": "2"}, 64, 1,
     (1, "SLURM_CPUS_PER_TASK")),
    # PBS: OMP_NUM_THREADS (ompthreads), then NCPUS / ranks on the node
    (None, {**PBS, "OMP_NUM_THREADS": "1", "NCPUS": "64"}, 64, 1, (1, "OMP_NUM_THREADS")),
    (None, {**PBS, "NCPUS": "8"}, 64, 8, (1, "NCPUS")),
    # OMP_NUM_THREADS outside a PBS job is not a scheduler's allocation
    (None, {"OMP_NUM_THREADS": "1"}, 8, 8, (1, "cores/ranks")),
    (None, {"OMP_NUM_THREADS": "1"}, None, 1, (None, "numba")),
    # nothing set: cores / ranks under MPI, Numba's own setting serially
    (None, {}, 64, 64, (1, "cores/ranks")),
    (None, {"GRAPHPAR_NUM_THREADS": " ", "SLURM_CPUS_PER_TASK": ""}, None, 1, (None, "numba")),
])
def test_precedence(threads, env, cores, ranks, expected):
    assert decide_threads(threads, cores=cores, ranks_on_node=ranks, environ=env) == expected


@pytest.mark.skipif(LIMIT < 2, reason="needs 2 Numba threads")
def test_scheduler_counts_are_capped_at_the_ranks_share():
    # an allocation larger than this rank's share of the cores (or than Numba's
    # maximum) is lowered; ranks times threads never exceeds the cores
    assert decide_threads(environ={"SLURM_CPUS_PER_TASK": "2"}, cores=2, ranks_on_node=2) \
        == (1, "SLURM_CPUS_PER_TASK")
    assert decide_threads(environ={"SLURM_CPUS_PER_TASK": str(LIMIT + 7)}) \
        == (LIMIT, "SLURM_CPUS_PER_TASK")
    assert decide_threads(environ={"SLURM_CPUS_PER_TASK": "2"}) == (2, "SLURM_CPUS_PER_TASK")
    # PBS Pro's OMP_NUM_THREADS defaults to the chunk's ncpus: with several
    # ranks per chunk each gets NCPUS / ranks
    env = {**PBS, "NCPUS": "2", "OMP_NUM_THREADS": "2"}
    assert decide_threads(environ=env, cores=64, ranks_on_node=2) == (1, "OMP_NUM_THREADS")
    assert decide_threads(environ={**PBS, "OMP_NUM_THREADS": "2,1"}) == (2, "OMP_NUM_THREADS")


@pytest.mark.parametrize("threads, env, kind, needle", [
    (None, {"SLURM_CPUS_PER_TASK": "four"}, ValueError,
     "SLURM_CPUS_PER_TASK must be a positive integer, got 'four'"),
    (None, {"SLURM_CPUS_PER_TASK": "0"}, ValueError,
     "SLURM_CPUS_PER_TASK must be a positive integer, got '0'"),
    (None, {**PBS, "NCPUS": "-1"}, ValueError, "NCPUS must be a positive integer, got '-1'"),
    (None, {**PBS, "OMP_NUM_THREADS": "x"}, ValueError,
     "OMP_NUM_THREADS must be a positive integer, got 'x'"),
    (None, {"GRAPHPAR_NUM_THREADS": "2.5"}, ValueError,
     "GRAPHPAR_NUM_THREADS must be a positive integer, got '2.5'"),
    (None, {"GRAPHPAR_NUM_THREADS": str(LIMIT + 1)}, ValueError,
     f"GRAPHPAR_NUM_THREADS must be between 1 and {LIMIT} (NUMBA_NUM_THREADS), "
     f"got {LIMIT + 1}"),
    (LIMIT + 1, {}, ValueError, f"threads must be between 1 and {LIMIT}"),
    (0, {}, ValueError, "threads must be between 1"),
    (1.5, {}, TypeError, "threads must be an integer, got 1.5"),
    (True, {}, TypeError, "threads must be an integer, got True"),
    (float("nan"), {}, TypeError, "threads must be an integer, got nan"),
    ("2", {}, TypeError, "threads must be an integer, got '2'"),
])
def test_bad_counts_name_the_argument_or_variable(threads, env, kind, needle):
    with pytest.raises(kind) as info:
        decide_threads(threads, environ=env)
    assert needle in str(info.value)


@pytest.mark.parametrize("cores, kind, needle", [
    (0, ValueError, "cores must be a positive integer, got 0"),
    (-4, ValueError, "cores must be a positive integer, got -4"),
    (np.int64(0), ValueError, "cores must be a positive integer, got 0"),
    (1.5, TypeError, "cores must be an integer, got 1.5"),
    (0.5, TypeError, "cores must be an integer, got 0.5"),
    (True, TypeError, "cores must be an integer, got True"),
    (False, TypeError, "cores must be an integer, got False"),
    (float("nan"), TypeError, "cores must be an integer, got nan"),
    (float("inf"), TypeError, "cores must be an integer, got inf"),
    ("8", TypeError, "cores must be an integer, got '8'"),
])
def test_bad_core_counts_name_the_argument(monkeypatch, cores, kind, needle):
    """``cores`` is a count like ``threads``: not silently raised to 1 (cores=0 gave 1)."""
    monkeypatch.setenv("GRAPHPAR_NUM_THREADS", "1")  # refused even when it would not be used
    calls = [lambda: decide_threads(cores=cores, environ={}),
             lambda: decide_threads(1, cores=cores, environ={}),
             lambda: set_threads(cores=cores),
             lambda: set_threads(1, cores=cores, ranks_on_node=2)]

    def check():
        for call in calls:
            with pytest.raises(kind) as info:
                call()
            assert needle in str(info.value)
        assert numba.get_num_threads() == LIMIT  # nothing was set

    at_threads(LIMIT, check)


@pytest.mark.parametrize("ranks, kind, needle", [
    (0, ValueError, "ranks_on_node must be a positive integer, got 0"),
    (-3, ValueError, "ranks_on_node must be a positive integer, got -3"),
    (2.7, TypeError, "ranks_on_node must be an integer, got 2.7"),
    (None, TypeError, "ranks_on_node must be an integer, got None"),
])
def test_bad_rank_counts_name_the_argument(ranks, kind, needle):
    """0 and -3 had meant one rank, 2.7 two."""
    for call in (lambda: decide_threads(cores=8, ranks_on_node=ranks, environ={}),
                 lambda: decide_threads(1, cores=8, ranks_on_node=ranks, environ={})):
        with pytest.raises(kind, match=re.escape(needle)):
            call()


def test_integral_core_counts_are_ints():
    # None keeps Numba's setting; an integral float counts as its integer, as for threads
    assert decide_threads(cores=None, environ={}) == (None, "numba")
    for cores in (1, np.int64(1), 1.0):
        n, source = decide_threads(cores=cores, environ={})
        assert (n, source) == (1, "cores/ranks") and type(n) is int
    n, _ = decide_threads(cores=float(LIMIT + 3), environ={})
    assert n == LIMIT and type(n) is int


def test_set_threads_applies_the_rule(monkeypatch):
    for var in ("GRAPHPAR_NUM_THREADS", "SLURM_CPUS_PER_TASK", "PBS_JOBID"):
        monkeypatch.delenv(var, raising=False)

    def check():
        monkeypatch.setenv("SLURM_CPUS_PER_TASK", "1")
        assert set_threads() == 1 and numba.get_num_threads() == 1
        monkeypatch.delenv("SLURM_CPUS_PER_TASK")
        # nothing set: the count in force is kept
        assert set_threads() == 1
        assert set_threads(cores=LIMIT, ranks_on_node=1) == LIMIT == numba.get_num_threads()

    at_threads(LIMIT, check)


def _env(**extra):
    """The ranks' environment with GRAPHPAR_NUM_THREADS unset (blank) and ``extra``."""
    return {"GRAPHPAR_NUM_THREADS": "", **extra}


@pytest.mark.skipif(LIMIT < 2, reason="needs 2 Numba threads")
def test_cli_serial_takes_slurm_cpus_per_task():
    run = run_capped(["sssp", TINY, "--json"], env=_env(SLURM_CPUS_PER_TASK="1"))
    assert run.returncode == 0, run.output
    assert json.loads(run.stdout)["threads"] == 1
    run = run_capped(["sssp", TINY, "--json"], env=_env())
    assert json.loads(run.stdout)["threads"] == LIMIT
    run = run_capped(["sssp", TINY, "--json", "--threads", "2"],
                     env=_env(SLURM_CPUS_PER_TASK="1"))
    assert json.loads(run.stdout)["threads"] == 2


def test_cli_bad_scheduler_variable_is_one_line():
    run = run_capped(["sssp", TINY], env=_env(SLURM_CPUS_PER_TASK="lots"))
    assert_one_line_error(run, "SLURM_CPUS_PER_TASK must be a positive integer, got 'lots'")


@pytest.mark.mpi
@pytest.mark.skipif(LIMIT < 2, reason="needs 2 Numba threads")
def test_mpi_ranks_take_slurm_then_pbs():
    # one rank alone on the node would get every core; Slurm says 1
    run = run_capped(["sssp", TINY, "--json"], ranks=1, env=_env(SLURM_CPUS_PER_TASK="1"))
    assert run.returncode == 0, run.output
    assert json.loads(run.stdout)["threads"] == 1
    run = run_capped(["sssp", TINY, "--json"], ranks=1,
                     env=_env(**PBS, NCPUS="2", OMP_NUM_THREADS="1"))
    assert run.returncode == 0, run.output
    assert json.loads(run.stdout)["threads"] == 1
    run = run_capped(["sssp", TINY, "--json"], ranks=1, env=_env(**PBS, NCPUS="2"))
    assert json.loads(run.stdout)["threads"] == 2


_FORK_CHILD = """
import os, sys
import numpy as np, scipy.sparse as sp
import graphpar
from graphpar import _csgraph, csgraph
from graphpar.kernels import sssp as k
from scipy.sparse.csgraph import dijkstra

_csgraph.SERIAL_WORK = 0  # the many-source search on 2 threads whatever the size

graphpar.set_threads(2)
g = graphpar.Graph.from_scipy(sp.random(3000, 3000, density=0.01, random_state=0,
                                        format="csr"))
rng = np.random.default_rng(0)
X = rng.normal(size=(20000, 2))
T = rng.exponential(size=20000)
E = rng.random(20000) < 0.7


def both():
    d = np.full(g.n, np.inf)
    parallel = k.delta_stepping(g.indptr, g.indices, g.weights, 0, 0.01, np.inf, False, 2,
                                d)[2]
    assert parallel > 0 and np.array_equal(d, dijkstra(g.to_scipy(), indices=0))
    src = np.arange(0, 3000, 97)
    assert np.array_equal(csgraph.dijkstra(g.to_scipy(), indices=src),
                          dijkstra(g.to_scipy(), indices=src))
    assert _csgraph._helpers().helpers == 1
    return graphpar.CoxPH().fit(X, T, E).coef_


coef = both()  # the parent's pools now hold threads
pid = os.fork()
if pid == 0:
    ok = np.array_equal(both(), coef)
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(LIMIT < 2 or not hasattr(__import__("os"), "fork"),
                    reason="needs 2 Numba threads and fork()")
def test_a_forked_child_runs_two_thread_searches_and_fits():
    # the worker pools of the parallel search, of the Cox passes and of the many-source
    # search are the parent's threads: a fork's child has none, and must start its own
    # instead of waiting forever
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _FORK_CHILD], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "child exit 0" in r.stdout, (r.stdout, r.stderr[-2000:])
