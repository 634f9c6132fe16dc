"""``graphpar generate`` through a subprocess: files equal to the Python API, clear errors."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest
from conftest import graphpar_cmd

from graphpar import generate, read_graph

TIMEOUT = 600


def _run(*args, env=None):
    return subprocess.run(
        [*graphpar_cmd(), "generate", *map(str, args)],
        capture_output=True, text=True, timeout=TIMEOUT, env=env,
    )


def _same(a, b):
    return (
        a.n == b.n
        and a.directed == b.directed
        and np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.indices, b.indices)
        and np.array_equal(a.weights, b.weights)
    )


SUMMARY = re.compile(r"^(\w+): n=(\d+) nnz=(\d+) \((un)?directed\) generated in [\d.]+ s "
                     r"\(\d+ threads\), wrote .* in [\d.]+ s$")


def test_kron_writes_the_api_graph(tmp_path):
    out = tmp_path / "k.npz"
    r = _run("kron", "--scale", 9, "--edgefactor", 6, "--seed", 4, "--threads", 1, "-o", out)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    m = SUMMARY.match(lines[0])
    assert m, lines[0]
    expected = generate.kronecker(9, 6, seed=4)
    assert (m.group(1), int(m.group(2)), int(m.group(3))) == ("kron", expected.n, expected.nnz)
    assert _same(read_graph(out), expected)


def test_kron_options_and_compressed_text_output(tmp_path):
    out = tmp_path / "k.gr.gz"
    r = _run("kron", "--scale", 7, "--edgefactor", 3, "--weights", "real", "--directed",
             "-a", 0.5, "-b", 0.2, "-c", 0.2, "-o", out)
    assert r.returncode == 0, r.stderr
    expected = generate.kronecker(7, 3, a=0.5, b=0.2, c=0.2, weights="real", directed=True)
    assert _same(read_graph(out), expected)


def test_uniform_grid_and_sbm(tmp_path):
    r = _run("uniform", "--n", 300, "--m", 2000, "--undirected", "--weights", "none",
             "--seed", 2, "-o", tmp_path / "u.mtx")
    assert r.returncode == 0, r.stderr
    assert _same(read_graph(tmp_path / "u.mtx"),
                 generate.uniform(300, 2000, seed=2, weights=None, directed=False))
    r = _run("grid", "--rows", 6, "--cols", 9, "--max-weight", 20, "--seed", 1,
             "-o", tmp_path / "g.wel")
    assert r.returncode == 0, r.stderr
    assert _same(read_graph(tmp_path / "g.wel"), generate.grid_road(6, 9, seed=1, max_weight=20))
    r = _run("delaunay", "--points", 500, "--extra", 0.5, "--seed", 3, "-o", tmp_path / "d.gr")
    assert r.returncode == 0, r.stderr
    # a .gr file holds directed arcs: the graph read back is the same arcs, flagged directed
    back, api = read_graph(tmp_path / "d.gr"), generate.delaunay_road(500, seed=3, extra=0.5)
    assert (back.n, back.indptr.tolist(), back.indices.tolist(), back.weights.tolist()) == (
        api.n, api.indptr.tolist(), api.indices.tolist(), api.weights.tolist())
    r = _run("delaunay", "--points", 300, "--weights", "real", "--side", 10, "-o",
             tmp_path / "d.npz")
    assert r.returncode == 0, r.stderr
    assert _same(read_graph(tmp_path / "d.npz"),
                 generate.delaunay_road(300, weights="real", side=10.0))
    r = _run("sbm", "--blocks", "20,30", "--p-in", 0.3, "--p-out", 0.05,
             "-o", tmp_path / "s.el", "--format", "el", "--labels", tmp_path / "y.npy")
    assert r.returncode == 0, r.stderr
    g, labels = generate.sbm([20, 30], 0.3, 0.05)
    assert _same(read_graph(tmp_path / "s.el"), g)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), labels)


def test_same_file_at_one_and_two_threads(tmp_path):
    for t in (1, 2):
        r = _run("uniform", "--n", 5000, "--m", 40000, "--threads", t, "-o", tmp_path / f"{t}.npz")
        assert r.returncode == 0, r.stderr
    assert _same(read_graph(tmp_path / "1.npz"), read_graph(tmp_path / "2.npz"))


@pytest.mark.parametrize(
    "args, message",
    [
        (["kron", "--scale", 5, "-o", "OUT/g.json"], "cannot tell the graph format"),
        (["kron", "--scale", "abc", "-o", "OUT/g.npz"],
         r"argument --scale: must be an integer in \[1, 40\], got 'abc'"),
        (["kron", "--scale", 0, "-o", "OUT/g.npz"],
         r"argument --scale: must be an integer in \[1, 40\], got '0'"),
        (["kron", "--scale", 41, "-o", "OUT/g.npz"],
         r"argument --scale: must be an integer in \[1, 40\], got '41'"),
        (["kron", "--scale", 5, "--edgefactor", -1, "-o", "OUT/g.npz"],
         r"argument --edgefactor: must be an integer >= 0, got '-1'"),
        (["kron", "--scale", 5, "-a", 1.5, "-o", "OUT/g.npz"],
         r"argument -a: must be a probability in \[0, 1\], got '1.5'"),
        (["kron", "--scale", 5, "--seed", -1, "-o", "OUT/g.npz"], r"argument --seed: .*got '-1'"),
        (["kron", "--scale", 5, "--max-weight", 0, "-o", "OUT/g.npz"],
         r"argument --max-weight: must be an integer in \[1, 9007199254740992\], got '0'"),
        # sizes within range but beyond the memory budget: refused before any allocation
        (["kron", "--scale", 40, "-o", "OUT/g.npz"],
         r"--scale 40 --edgefactor 16 \(1099511627776 vertices, 17592186044416 edges\) "
         r"needs about .* more than the .* \(set GRAPHPAR_MAX_MEMORY"),
        (["uniform", "--n", 10, "--m", 10**12, "-o", "OUT/u.gr"],
         r"--n 10 --m 1000000000000 .* GRAPHPAR_MAX_MEMORY"),
        (["uniform", "--n", 10**15, "--m", 1, "-o", "OUT/u.gr"],
         r"--n 1000000000000000 --m 1 .* GRAPHPAR_MAX_MEMORY"),
        (["grid", "--rows", 10**9, "-o", "OUT/g.gr"],
         r"--rows 1000000000 --cols 1000000000 .* GRAPHPAR_MAX_MEMORY"),
        (["grid", "--rows", 3, "--cols", 10**12, "-o", "OUT/g.gr"],
         r"--rows 3 --cols 1000000000000 .* GRAPHPAR_MAX_MEMORY"),
        (["grid", "--rows", 3, "--cols", 0, "-o", "OUT/g.gr"],
         r"argument --cols: must be an integer >= 1, got '0'"),
        (["delaunay", "--points", 10**12, "-o", "OUT/d.gr"],
         r"--points 1000000000000 \(1000000000000 vertices\) .* GRAPHPAR_MAX_MEMORY"),
        (["delaunay", "--points", 2, "-o", "OUT/d.gr"],
         r"argument --points: must be an integer >= 3, got '2'"),
        (["delaunay", "--points", 9, "--side", "-1", "-o", "OUT/d.gr"],
         r"argument --side: must be a positive finite number, got '-1'"),
        (["delaunay", "--points", 9, "--extra", "2", "-o", "OUT/d.gr"],
         r"argument --extra: must be a probability in \[0, 1\], got '2'"),
        (["sbm", "--blocks", "100000000", "--p-in", 0.5, "--p-out", 0, "-o", "OUT/s.npz"],
         r"--blocks with 100000000 vertices, --p-in 0.5 --p-out 0.0 .* GRAPHPAR_MAX_MEMORY"),
        (["sbm", "--blocks", "3,-1", "--p-in", 0.5, "--p-out", 0, "-o", "OUT/s.npz"],
         r"argument --blocks: expected comma-separated integers >= 0"),
        (["kron", "--scale", 5, "--weights", "float", "-o", "OUT/g.npz"],
         "argument --weights: expected int, real or none"),
        (["kron", "--scale", 5], "the following arguments are required: -o/--output"),
        (["uniform", "--n", 10, "--m", -1, "-o", "OUT/u.gr"],
         "argument --m: must be an integer >= 0, got '-1'"),
        (["uniform", "--n", 0, "--m", 1, "-o", "OUT/u.gr"],
         "argument --n: must be an integer >= 1, got '0'"),
        (["sbm", "--blocks", "3,x", "--p-in", 0.1, "--p-out", 0.1, "-o", "OUT/s.npz"],
         "argument --blocks: expected comma-separated integers"),
        (["sbm", "--blocks", "3,3", "--p-in", 2, "--p-out", 0.1, "-o", "OUT/s.npz"],
         r"argument --p-in: must be a probability in \[0, 1\], got '2'"),
        (["grid", "--rows", 3, "--threads", 99, "-o", "OUT/g.gr"], "threads must be between"),
        (["grid", "--rows", 3, "-o", "OUT/missing_dir/g.gr"], "missing_dir does not exist"),
        (["ring", "-o", "OUT/g.gr"], "invalid choice: 'ring'"),
    ],
)
def test_bad_arguments_print_one_error_line(tmp_path, args, message):
    args = [str(a).replace("OUT", str(tmp_path)) for a in args]
    r = _run(*args)
    assert r.returncode == 2
    err = r.stderr.strip().splitlines()
    assert len(err) == 1, r.stderr
    assert err[0].startswith("graphpar: error: ")
    assert re.search(message, err[0]), err[0]
    assert "Traceback" not in r.stderr
    assert not any(tmp_path.iterdir())  # nothing written


def test_help_lists_the_generators():
    r = _run("--help")
    assert r.returncode == 0
    for name in ("kron", "uniform", "grid", "delaunay", "sbm"):
        assert name in r.stdout
    r = _run("kron", "--help")
    assert r.returncode == 0 and "--edgefactor" in r.stdout and "--weights" in r.stdout


@pytest.mark.parametrize("blocks", ["5,,5", "5,5,"])
def test_sbm_blocks_with_an_empty_item_are_refused(tmp_path, blocks):
    """Skipping the empty item would silently make another graph (5,,5 as 5,5)."""
    r = subprocess.run([*graphpar_cmd(), "generate", "sbm", "--blocks", blocks, "--p-in", "0.5",
                        "--p-out", "0.1", "-o", str(tmp_path / "s.npz")], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 2
    assert f"expected comma-separated integers >= 0 like 100,100, got {blocks!r}" in r.stderr
    assert not (tmp_path / "s.npz").exists()
