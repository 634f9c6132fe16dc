"""The Slurm and PBS job scripts of examples/, run as the schedulers would run them.

Each script runs under ``bash`` with the variables its scheduler sets in a
job. Slurm scripts launch their ranks with ``$LAUNCH`` (``srun`` in a job),
here ``mpiexec -launcher fork -n K``; PBS scripts call a bare ``mpiexec``, which reads the
hosts of ``$PBS_NODEFILE`` as it does under PBS. The checks: exit status 0,
the outputs written and right (against scipy's Dijkstra, R's coxph, the
known accuracy of a GCN on Cora), and the Numba threads per rank that the
scheduler's variables ask for (reported by ``--json``). With one rank on
this machine's cores the default would be every core, so a count of 1
shows that the variable was read.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import QUIET_WAITING, ROOT, data_root, mpiexec
from naive_formats import min_dict, read_gr_naive
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from graphpar.threads import max_threads

pytestmark = pytest.mark.mpi

EXAMPLES = ROOT / "examples"
SAMPLES = ROOT / "datasets" / "samples"
SURVIVAL = ROOT / "datasets" / "survival"
TIMEOUT = 900  # a cold Numba cache is compiled by the script's first step
JOB_ID = "4242"
SCHEDULER_PREFIXES = ("SLURM_", "SLURMD_", "SRUN_", "PBS_")
# variables a test of a scheduler's thread count must not inherit from the caller
UNSET = ("GRAPHPAR_NUM_THREADS", "NCPUS", "OMP_NUM_THREADS", "OUTDIR", "LAUNCH", "ARGS",
         "GRAPH", "TABLE")


def base_env() -> dict:
    """The caller's environment minus scheduler and thread variables, graphpar on PATH."""
    env = {k: v for k, v in {**QUIET_WAITING, **os.environ}.items()
           if not k.startswith(SCHEDULER_PREFIXES) and k not in UNSET}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def slurm_env(submit_dir: Path, ntasks: int, cpus_per_task: int) -> dict:
    """What Slurm sets in a one-node batch job (sbatch -n NTASKS -c CPUS_PER_TASK)."""
    host = socket.gethostname()
    return {
        "SLURM_JOB_ID": JOB_ID, "SLURM_JOBID": JOB_ID, "SLURM_JOB_NAME": "graphpar-test",
        "SLURM_SUBMIT_DIR": str(submit_dir), "SLURM_SUBMIT_HOST": host,
        "SLURM_NTASKS": str(ntasks), "SLURM_NPROCS": str(ntasks),
        "SLURM_CPUS_PER_TASK": str(cpus_per_task),
        "SLURM_CPUS_ON_NODE": str(ntasks * cpus_per_task),
        "SLURM_JOB_NUM_NODES": "1", "SLURM_NNODES": "1",
        "SLURM_JOB_NODELIST": host, "SLURM_NODELIST": host, "SLURMD_NODENAME": host,
        "SLURM_TASKS_PER_NODE": str(ntasks), "SLURM_NTASKS_PER_NODE": str(ntasks),
        "SLURM_JOB_CPUS_PER_NODE": str(ntasks * cpus_per_task),
        "SLURM_CLUSTER_NAME": "test", "SLURM_JOB_PARTITION": "test",
        # the scripts' launcher: srun in a job, mpiexec here. Seeing SLURM_JOBID,
        # MPICH's mpiexec would start its proxies with srun: start them directly
        "LAUNCH": f"{mpiexec()} -launcher fork -n {ntasks}",
    }


def pbs_env(workdir: Path, tmp: Path, mpiprocs: int, ncpus: int,
            ompthreads: int | None) -> dict:
    """What PBS Pro sets in a one-chunk job (select=1:ncpus=N:mpiprocs=M[:ompthreads=T])."""
    nodefile = tmp / f"{JOB_ID}.pbs.nodes"
    nodefile.write_text(f"{socket.gethostname()}\n" * mpiprocs)
    env = {
        "PBS_JOBID": f"{JOB_ID}.pbs01", "PBS_JOBNAME": "graphpar-test",
        "PBS_O_WORKDIR": str(workdir), "PBS_O_HOST": socket.gethostname(),
        "PBS_ENVIRONMENT": "PBS_BATCH", "PBS_NODEFILE": str(nodefile),
        "PBS_QUEUE": "workq", "NCPUS": str(ncpus),
    }
    if ompthreads is not None:
        env["OMP_NUM_THREADS"] = str(ompthreads)
    return env


def run_script(script: str, *args, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """``bash examples/SCRIPT ARGS`` in ``cwd`` with ``env`` on top of :func:`base_env`."""
    cmd = ["bash", str(EXAMPLES / script), *map(str, args)]
    # its own process group, so that a timeout ends mpiexec and the ranks too
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", env={**base_env(), **env}, cwd=cwd,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"timed out after {TIMEOUT} s: {' '.join(cmd)}\n{out[-3000:]}\n"
                    f"{err[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def report(proc, outdir: Path, *files: str) -> dict:
    """The JSON report in the job's log, after checking the job wrote ``files`` in ``outdir``."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    for name in files:
        assert (outdir / name).is_file() and (outdir / name).stat().st_size, \
            (name, proc.stdout, proc.stderr)
    assert not list(outdir.glob(".*")), list(outdir.iterdir())  # no temporary file left
    return json.loads(proc.stdout.strip().splitlines()[-1])


def scipy_distances(gr_gz: Path, tmp: Path, source: int) -> np.ndarray:
    plain = tmp / "graph.gr"
    plain.write_bytes(gzip.decompress(gr_gz.read_bytes()))
    n, arcs = read_gr_naive(plain)
    arcs = min_dict(arcs)
    u, v = np.array(list(arcs)).T
    a = csr_matrix((np.array(list(arcs.values())), (u, v)), shape=(n, n))
    return dijkstra(a, indices=source)


needs_two_threads = pytest.mark.skipif(
    max_threads() < 2, reason="a count of 1 shows the variable was read only when 2 are possible")


def test_slurm_sssp_two_ranks(tmp_path):
    graph = SAMPLES / "grid_8x8.gr.gz"
    proc = run_script("slurm/sssp.sbatch", graph, "--source", 5,
                      env=slurm_env(tmp_path, ntasks=2, cpus_per_task=1), cwd=tmp_path)
    out = tmp_path / f"graphpar-sssp-{JOB_ID}"
    got = report(proc, out, "dist.npy")
    assert got["ranks"] == 2 and got["threads"] == 1 and got["source"] == 5
    np.testing.assert_array_equal(np.load(out / "dist.npy"),
                                  scipy_distances(graph, tmp_path, 5))


@needs_two_threads
def test_slurm_cox_one_rank_takes_cpus_per_task(tmp_path):
    ref = next(f for f in json.loads((SURVIVAL / "r_reference.json").read_text())["fits"]
               if f["name"] == "lung" and f["ties"] == "efron" and f["penalizer"] == 0
               and f["strata"] is None and f["weights"] is None and f["offset"] is None)
    proc = run_script("slurm/cox.sbatch", SURVIVAL / "lung.csv", "--time", "time",
                      "--event", "status", "--covariates", ",".join(ref["covariates"]),
                      env=slurm_env(tmp_path, ntasks=1, cpus_per_task=1), cwd=tmp_path)
    out = tmp_path / f"graphpar-cox-{JOB_ID}"
    got = report(proc, out, "cox.json", "cox.baseline.csv")
    assert json.loads((out / "cox.json").read_text())["coef"] == got["coef"]
    assert got["ranks"] == 1 and got["threads_per_rank"] == 1
    np.testing.assert_allclose([got["coef"][c] for c in ref["covariates"]], ref["coef"],
                               rtol=1e-6)
    np.testing.assert_allclose([got["se"][c] for c in ref["covariates"]], ref["se"], rtol=1e-6)


@needs_two_threads
def test_slurm_gcn_on_cora(tmp_path):
    root = data_root()
    if root is None or not (root / "planetoid" / "ind.cora.graph").is_file():
        pytest.skip("Cora not found: set GRAPHPAR_DATA")
    env = {**slurm_env(tmp_path, ntasks=1, cpus_per_task=1), "GRAPHPAR_DATA": str(root)}
    proc = run_script("slurm/gcn.sbatch", "--dataset", "cora", "--epochs", "60", env=env,
                      cwd=tmp_path)
    out = tmp_path / f"graphpar-gcn-{JOB_ID}"
    got = report(proc, out, "model.npz", "history.csv", "predictions.npy")
    assert got["threads"] == 1 and got["epochs"] == 60
    assert got["test_accuracy"] >= 0.7  # Kipf and Welling's GCN: about 0.81 on Cora
    pred = np.load(out / "predictions.npy")
    assert pred.shape == (2708,) and set(np.unique(pred)) <= set(range(7))
    assert len((out / "history.csv").read_text().splitlines()) == 61  # a header, 60 epochs


@needs_two_threads
def test_pbs_sssp_takes_ompthreads(tmp_path):
    graph = SAMPLES / "grid_8x8.gr.gz"
    env = {**pbs_env(tmp_path, tmp_path, mpiprocs=1, ncpus=2, ompthreads=1),
           "GRAPH": str(graph), "ARGS": "--source 9 --undirected"}
    proc = run_script("pbs/sssp.pbs", env=env, cwd=ROOT)  # the script moves to PBS_O_WORKDIR
    out = tmp_path / f"graphpar-sssp-{JOB_ID}"
    got = report(proc, out, "dist.npy")
    assert got["threads"] == 1 and got["source"] == 9
    assert got.get("ranks", 1) == 1
    # --undirected: the distances of the symmetrised graph
    d = np.load(out / "dist.npy")
    ref = scipy_distances(graph, tmp_path, 9)
    assert d.shape == ref.shape and np.all(d <= ref) and d[9] == 0


@needs_two_threads
def test_pbs_gcn_takes_ncpus(tmp_path):
    env = {**pbs_env(tmp_path, tmp_path, mpiprocs=1, ncpus=1, ompthreads=None),
           "ARGS": "--dataset sbm --epochs 5 --seed 3"}
    proc = run_script("pbs/gcn.pbs", env=env, cwd=ROOT)
    got = report(proc, tmp_path / f"graphpar-gcn-{JOB_ID}", "model.npz", "history.csv",
                 "predictions.npy")
    assert got["threads"] == 1 and got["epochs"] == 5


def test_pbs_cox_two_ranks_share_ncpus(tmp_path):
    # no ompthreads: each of the 2 ranks gets NCPUS / 2
    env = {**pbs_env(tmp_path, tmp_path, mpiprocs=2, ncpus=2, ompthreads=None),
           "TABLE": str(SURVIVAL / "lung.csv"),
           "ARGS": "--time time --event status --covariates age,sex"}
    proc = run_script("pbs/cox.pbs", env=env, cwd=ROOT)
    got = report(proc, tmp_path / f"graphpar-cox-{JOB_ID}", "cox.json", "cox.baseline.csv")
    assert got["ranks"] == 2 and got["threads_per_rank"] == 1
    serial = subprocess.run(
        [sys.executable, "-m", "graphpar", "cox", str(SURVIVAL / "lung.csv"), "--time", "time",
         "--event", "status", "--covariates", "age,sex", "--json", "--quiet"],
        capture_output=True, text=True, timeout=TIMEOUT, env=base_env())
    ref = json.loads(serial.stdout)
    for name in ("age", "sex"):
        assert got["coef"][name] == pytest.approx(ref["coef"][name], rel=1e-9)


@pytest.mark.parametrize("script, env, needle", [
    ("slurm/sssp.sbatch", {}, "usage: sbatch sssp.sbatch GRAPH"),
    ("slurm/cox.sbatch", {}, "usage: sbatch cox.sbatch TABLE"),
    ("pbs/sssp.pbs", {}, "give the graph file: qsub -v GRAPH=path"),
    ("pbs/cox.pbs", {"TABLE": "t.csv"}, "give at least --time COL --event COL in ARGS"),
])
def test_missing_arguments_say_how_to_submit(tmp_path, script, env, needle):
    full = {**slurm_env(tmp_path, 1, 1), **pbs_env(tmp_path, tmp_path, 1, 1, None), **env}
    proc = run_script(script, env=full, cwd=tmp_path)
    assert proc.returncode != 0
    assert needle in proc.stderr
    assert not list(tmp_path.glob("graphpar-*"))  # refused before doing anything
