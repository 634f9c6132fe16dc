"""Hostile command lines for ``sssp``, ``generate`` and ``demo``, serially and under mpiexec.

Every case runs as a subprocess under a memory cap and a timeout
(``tests/capped.py``), so that a size that slips past its check fails the test
instead of exhausting the machine. A bad argument or an oversized request must
give one ``graphpar: error:`` line that names the option and the value (and,
for sizes, the limit and ``GRAPHPAR_MAX_MEMORY``), a non-zero exit and no
traceback; under ``mpiexec -n 2`` and ``-n 4`` exactly the same, printed once.
Also: a user error on one rank only, errors that cannot be rebuilt from their
message on the other ranks, and Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from capped import MEMORY_CAP, assert_one_line_error, limit_memory, run_capped
from conftest import mpi_env, mpiexec, run_mpi_script

MEMORY = "GRAPHPAR_MAX_MEMORY"
RANKS = [None, 2, 4]  # None: serially

# (arguments, what the error line must contain)
SSSP_CASES = [
    # sizes: range checks, then the memory a generated graph would need
    (["--generate", "kron:40"], ["--generate kron:40", "needs about", MEMORY]),
    (["--generate", "kron:41"], ["--generate kron:41", "SCALE must be in [1, 40], got 41"]),
    (["--generate", "kron:0"], ["--generate kron:0", "got 0"]),
    (["--generate", "kron:20:100000000"], ["--generate kron:20:100000000", MEMORY]),
    (["--generate", "grid:100000000"], ["--generate grid:100000000", MEMORY]),
    (["--generate", "grid:2:10000000000000"], ["--generate grid:2:10000000000000", MEMORY]),
    (["--generate", "grid:3:0"], ["--generate grid:3:0", "COLS must be >= 1, got 0"]),
    (["--generate", "uniform:10:100000000000"], ["--generate uniform:10:100000000000", MEMORY]),
    (["--generate", "uniform:1000000000000000"], ["--generate uniform:1000000000000000",
                                                  MEMORY]),
    (["--generate", "uniform:0"], ["--generate uniform:0", "N must be >= 1, got 0"]),
    (["--generate", "ring:5"], ["--generate must be", "'ring:5'"]),
    # the other options
    (["--generate", "kron:8", "--source", "99999999999999999999"],
     ["--source", "99999999999999999999", "out of range"]),
    (["--generate", "kron:8", "--source", "-257"], ["--source", "-257", "256 vertices"]),
    (["--generate", "kron:8", "--source", "1.5"], ["argument --source", "'1.5'"]),
    (["--generate", "kron:8", "--delta", "0"], ["argument --delta", "got '0'"]),
    (["--generate", "kron:8", "--delta", "nan"], ["argument --delta", "got 'nan'"]),
    (["--generate", "kron:8", "--delta=-inf"], ["argument --delta", "got '-inf'"]),
    (["--generate", "kron:8", "--limit", "-1"], ["argument --limit", "must be a number >= 0",
                                                 "got '-1'"]),
    (["--generate", "kron:8", "--limit", "nan"], ["argument --limit", "got 'nan'"]),
    (["--generate", "kron:8", "-o", "d.txt"], ["--output d.txt", ".npz, .csv or .npy"]),
    (["--generate", "kron:8", "--threads", "0"], ["argument --threads", "'0'"]),
    (["--generate", "kron:8", "--seed", "-1"], ["argument --seed", "'-1'"]),
    (["--generate", "kron:8", "--seed", str(2**64)], ["argument --seed", str(2**64)]),
    ([], ["give a GRAPH_FILE or --generate"]),
    (["g.gr", "--generate", "kron:8"], ["either GRAPH_FILE or --generate"]),
    (["/nonexistent/g.gr"], ["/nonexistent/g.gr"]),
    (["--generate", "kron:8", "--bogus"], ["unrecognized arguments: --bogus"]),
]

GENERATE_CASES = [
    (["kron", "--scale", "40"], ["--scale 40 --edgefactor 16", MEMORY]),
    (["kron", "--scale", "41"], ["argument --scale", "[1, 40]", "'41'"]),
    (["kron", "--scale", "0"], ["argument --scale", "'0'"]),
    (["kron", "--scale", "20", "--edgefactor", "100000000"],
     ["--scale 20 --edgefactor 100000000", MEMORY]),
    (["kron", "--scale", "8", "--edgefactor", "-3"], ["argument --edgefactor", "'-3'"]),
    (["kron", "--scale", "8", "-c", "nan"], ["argument -c", "'nan'"]),
    (["uniform", "--n", "10", "--m", "100000000000"], ["--n 10 --m 100000000000", MEMORY]),
    (["uniform", "--n", "1000000000000000", "--m", "1"], ["--n 1000000000000000", MEMORY]),
    (["uniform", "--n", "-5", "--m", "1"], ["argument --n", "'-5'"]),
    (["grid", "--rows", "1000000000"], ["--rows 1000000000 --cols 1000000000", MEMORY]),
    (["grid", "--rows", "5", "--cols", "-1"], ["argument --cols", "'-1'"]),
    (["grid", "--rows", "5", "--max-weight", "0"], ["argument --max-weight", "'0'"]),
    (["sbm", "--blocks", "100000000", "--p-in", "0.5", "--p-out", "0"],
     ["--blocks with 100000000 vertices", MEMORY]),
    (["sbm", "--blocks", "3,-1", "--p-in", "0.5", "--p-out", "0"], ["argument --blocks",
                                                                    "'3,-1'"]),
    (["sbm", "--blocks", "3,3", "--p-in", "1.5", "--p-out", "0"], ["argument --p-in", "'1.5'"]),
]

DEMO_CASES = [
    (["--scale", "0"], ["argument --scale", "[1, 40]", "'0'"]),
    (["--scale", "41"], ["argument --scale", "'41'"]),
    (["--scale", "x"], ["argument --scale", "'x'"]),
    (["--scale", "30"], ["--scale 30", "needs about", MEMORY]),
    (["--seed", "-1"], ["argument --seed", "'-1'"]),
    (["--threads", "0"], ["argument --threads", "'0'"]),
]


def _case_id(case):
    return " ".join(case[0]) or "(none)"


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("args, needles", SSSP_CASES, ids=[_case_id(c) for c in SSSP_CASES])
def test_sssp_bad_arguments_and_sizes(args, needles, ranks, tmp_path):
    run = run_capped(["sssp", *args], ranks=ranks, cwd=tmp_path)
    line = assert_one_line_error(run, *needles)
    assert run.returncode == 2, run.output
    if MEMORY in needles:
        assert "more than the" in line  # the limit is named
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("ranks", RANKS)
def test_sssp_memory_limit_follows_the_variable(ranks):
    run = run_capped(["sssp", "--generate", "kron:12"], ranks=ranks, env={MEMORY: "1M"})
    assert_one_line_error(run, "--generate kron:12", "4096 vertices", "more than the 1.0 MiB",
                          MEMORY)
    assert run.returncode == 2


@pytest.mark.parametrize("ranks", RANKS)
def test_sssp_tiny_delta_still_gives_verified_distances(ranks, tmp_path):
    # a width whose bucket numbers would overflow an int64 is raised, not trusted
    out = tmp_path / "d.npy"
    run = run_capped(["sssp", "--generate", "kron:8", "--source", "3", "--delta", "1e-320",
                      "--verify", "--output", str(out)], ranks=ranks)
    assert run.returncode == 0, run.output
    assert "verified:" in run.stdout and "True" in run.stdout.split("verified:")[1]
    from scipy.sparse.csgraph import dijkstra

    from graphpar import generate

    ref = dijkstra(generate.kronecker(8).to_scipy(), indices=3)
    assert np.array_equal(np.load(out), ref)


@pytest.mark.parametrize("args, needles", GENERATE_CASES,
                         ids=[_case_id(c) for c in GENERATE_CASES])
def test_generate_bad_arguments_and_sizes(args, needles, tmp_path):
    run = run_capped(["generate", *args, "-o", str(tmp_path / "g.npz")])
    assert_one_line_error(run, *needles)
    assert run.returncode == 2
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("args, needles", DEMO_CASES, ids=[_case_id(c) for c in DEMO_CASES])
def test_demo_bad_arguments_and_sizes(args, needles):
    run = run_capped(["demo", *args])
    assert_one_line_error(run, *needles)
    assert run.returncode == 2
    assert "SSSP:" not in run.stdout  # refused before any step ran


# ---------------------------------------------------------------- failures on some ranks
MESSAGES = {
    "memory": "graphpar: error: out of memory",
    "eof": "graphpar: error: unexpected end of input: g.gr.gz: compressed file ended",
    "unicode": "graphpar: error: 'utf-8' codec can't decode byte 0xe9 in position 3",
    "interrupt": "graphpar: interrupted",
}


@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("mode", ["cli-one", "cli-agreed"])
@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_an_error_on_one_rank_is_one_line_and_ends_the_job(kind, mode, ranks):
    # cli-one: the last rank fails while the others wait in a collective (the job is
    # aborted); cli-agreed: it fails in a stage run collectively (every rank exits)
    proc = run_mpi_script("rank_raises.py", ranks, mode, kind)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "failed:" not in out, out
    assert out.count(MESSAGES[kind]) == 1, out
    assert proc.returncode == (130 if kind == "interrupt" else 2), out


# ---------------------------------------------------------------- Ctrl-C
def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry.name))
    return kids


def _has_open(pid: int, path: str) -> bool:
    """True when process ``pid`` holds ``path`` open."""
    try:
        return any(os.readlink(fd) == path for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


def _pythons_under(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            if Path(f"/proc/{p}/exe").resolve().name.startswith("python"):
                found.append(p)
        except OSError:
            pass
        todo.extend(_children(p))
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("ranks", [None, 2])
def test_ctrl_c_prints_interrupted_once(ranks, tmp_path):
    # The graph file is a FIFO that this test holds open for writing and never writes
    # to: the job blocks reading it until Ctrl-C, whatever the machine's speed.
    fifo = tmp_path / "never.gr.gz"
    os.mkfifo(fifo)
    keep = os.open(fifo, os.O_RDWR)
    cmd = [sys.executable, "-m", "graphpar", "sssp", str(fifo), "--source", "0"]
    if ranks is not None:
        cmd = [mpiexec(), "-n", str(ranks), *cmd]
    cap = limit_memory(MEMORY_CAP)

    def preexec():
        cap()
        # as from a terminal: a test runner started in the background (nohup, `&` in a
        # script) ignores SIGINT, and the job would inherit that and never see the Ctrl-C
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=mpi_env(1), preexec_fn=preexec)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if any(_has_open(p, str(fifo)) for p in _pythons_under(proc.pid)):
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.3)  # let the reader get from open() into read()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(keep)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err, err
    assert err.count("graphpar: interrupted") == 1, err
    assert proc.returncode == 130, (proc.returncode, err)
