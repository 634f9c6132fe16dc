"""``graphpar gcn`` and its demo step: output, JSON, progress bar, errors."""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import subprocess

import numpy as np
import pytest
from conftest import graphpar_cmd

from graphpar import train_gcn
from graphpar.cli import main
from graphpar.cli.gcn import demo
from graphpar.datasets import load_planetoid, synthetic_sbm


def run_json(capsys, *argv):
    assert main(["gcn", *argv, "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    return json.loads(out[0])


@pytest.mark.parametrize("extra, kw", [
    ((), {"bias": True}),  # the estimator's default: biases
    (("--no-bias",), {"bias": False}),
    (("--hidden", "12,6"), {"hidden": (12, 6), "bias": True}),
    (("--hidden", " 10 ", "--no-bias"), {"hidden": 10, "bias": False}),
])
def test_sbm_json_matches_python_api(capsys, extra, kw):
    got = run_json(capsys, "--dataset", "sbm", "--epochs", "40", "--seed", "3", "--threads", "1",
                   *extra)
    ref = train_gcn(synthetic_sbm(3), epochs=40, seed=3, **kw)
    for key in ("test_accuracy", "val_accuracy", "train_accuracy"):
        assert got[key] == pytest.approx(getattr(ref, key))
    assert got["epochs"] == 40 and got["seconds"] > 0 and got["threads"] == 1
    assert got["vertices"] == 2100 and got["classes"] == 7


def test_synthetic_sbm_planted():
    d = synthetic_sbm(1)
    assert (d.train_mask.sum(), d.val_mask.sum(), d.test_mask.sum()) == (140, 500, 1000)
    assert not (d.train_mask & d.test_mask).any() and not (d.val_mask & d.test_mask).any()
    np.testing.assert_array_equal(np.bincount(d.labels[d.train_mask]), [20] * 7)
    A = d.adjacency.tocoo()
    same = d.labels[A.row] == d.labels[A.col]
    assert same.mean() > 0.6  # edges mostly inside the planted blocks


def test_cora_json_matches_python_api(capsys, planetoid_dir):
    got = run_json(capsys, "--dataset", "cora", "--data-dir", str(planetoid_dir),
                   "--no-download", "--epochs", "50", "--hidden", "8", "--lr", "0.02",
                   "--dropout", "0.3", "--weight-decay", "1e-3", "--seed", "2")
    ref = train_gcn(load_planetoid("cora", planetoid_dir), epochs=50, hidden=8, lr=0.02,
                    dropout=0.3, weight_decay=1e-3, seed=2, bias=True)
    assert got["test_accuracy"] == pytest.approx(ref.test_accuracy)
    assert got["val_accuracy"] == pytest.approx(ref.val_accuracy)
    assert got["vertices"] == 2708


def test_early_stopping_flag(capsys):
    got = run_json(capsys, "--dataset", "sbm", "--epochs", "300", "--lr", "0.05",
                   "--early-stopping", "5")
    assert got["epochs"] < 300


def test_text_output_and_plain_progress_lines_without_tty():
    env = dict(os.environ, GRAPHPAR_NUM_THREADS="1", GRAPHPAR_PROGRESS_INTERVAL="0")
    p = subprocess.run([*graphpar_cmd(), "gcn", "--dataset", "sbm", "--epochs", "20"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    assert "\r" not in p.stdout and "training GCN" not in p.stdout
    assert "test accuracy" in p.stdout and "20 epochs in" in p.stdout
    # progress on stderr as whole lines, the last one the finished bar
    assert "\r" not in p.stderr and "\x1b" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("training GCN")]
    assert len(lines) >= 2 and "20/20" in lines[-1] and "100%" in lines[-1], p.stderr
    quiet = subprocess.run([*graphpar_cmd(), "gcn", "--dataset", "sbm", "--epochs", "20",
                            "--quiet"], capture_output=True, text=True, timeout=300, env=env)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert "test accuracy" in quiet.stdout


def test_progress_bar_on_tty():
    import fcntl
    import struct
    import termios

    leader, follower = pty.openpty()
    # a fresh pty is 0 columns wide; give it a terminal's size
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = dict(os.environ, GRAPHPAR_NUM_THREADS="1")
    p = subprocess.Popen([*graphpar_cmd(), "gcn", "--dataset", "sbm", "--epochs", "15"],
                         stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    try:
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        out = p.communicate(timeout=300)[0].decode()
        os.close(leader)
    text = b"".join(chunks).decode()
    assert p.returncode == 0
    assert "training GCN" in text and "15/15" in text and "\r" in text  # a live bar
    assert "test accuracy" in out and "training GCN" not in out


def test_errors(capsys, tmp_path):
    assert main(["gcn", "--dataset", "cora", "--data-dir", str(tmp_path), "--no-download"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("graphpar: error: ") and "ind.cora.x" in err
    assert "GRAPHPAR_DATA" in err and len(err.strip().splitlines()) == 1
    assert main(["gcn", "--dataset", "sbm", "--epochs", "0"]) == 2
    assert "epochs must be a positive integer" in capsys.readouterr().err
    assert main(["gcn", "--dataset", "sbm", "--dropout", "1.5"]) == 2
    assert "dropout must be in [0, 1)" in capsys.readouterr().err
    assert main(["gcn", "--dataset", "reddit"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("graphpar: error: argument --dataset: ")
    assert "'reddit'" in err[0]


def test_demo_on_sbm_without_data(capsys, monkeypatch):
    monkeypatch.delenv("GRAPHPAR_DATA", raising=False)
    assert demo(argparse.Namespace(seed=0, threads=None, scale=10)) is True
    out = capsys.readouterr().out
    assert "generated SBM" in out and "GCN check: test accuracy" in out and "ok" in out


def test_demo_on_cora(capsys, monkeypatch, planetoid_dir):
    monkeypatch.setenv("GRAPHPAR_DATA", str(planetoid_dir.parent))
    assert demo(argparse.Namespace(seed=0, threads=None, scale=10)) is True
    out = capsys.readouterr().out
    assert "GCN on cora" in out and ">= 0.78: ok" in out


SEE_HELP = " (see 'graphpar gcn --help')"


@pytest.mark.parametrize("argv, needle", [
    (["--seed", "-1"], "argument --seed: must be an integer in [0, 18446744073709551615], "
                       "got '-1'" + SEE_HELP),
    (["--epochs", "-3"], "--epochs must be a positive integer, got -3"),
    (["--hidden", "0"], "--hidden must be a positive integer, got 0"),
    (["--hidden", "64,0"], "--hidden[1] must be a positive integer, got 0"),
    (["--hidden", "64,,8"], "argument --hidden: must be a positive integer or a comma-separated "
                            "list of them (64,32), got '64,,8'" + SEE_HELP),
    (["--lr", "nan"], "--lr must be a finite number > 0, got nan"),
    (["--lr=-inf"], "--lr must be a finite number > 0, got -inf"),
    (["--lr", "0"], "--lr must be a finite number > 0, got 0.0"),
    (["--dropout", "nan"], "--dropout must be in [0, 1), got nan"),
    (["--dropout", "1"], "--dropout must be in [0, 1), got 1.0"),
    (["--weight-decay=-1e-3"], "--weight-decay must be a finite number >= 0, got -0.001"),
    (["--weight-decay", "inf"], "--weight-decay must be a finite number >= 0, got inf"),
    (["--early-stopping", "0"], "--early-stopping must be a positive integer, got 0"),
    (["--threads", "-2"], "argument --threads: must be an integer >= 1, got '-2'" + SEE_HELP),
])
@pytest.mark.parametrize("dataset", ["sbm", "cora"])
def test_numeric_options_refused_before_loading(capsys, tmp_path, argv, needle, dataset):
    # an empty --data-dir: the option is refused before any file is looked for
    assert main(["gcn", "--dataset", dataset, "--data-dir", str(tmp_path), "--no-download",
                 *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [f"graphpar: error: {needle}"]


# ---------------------------------------------------------------- the user's own data
def user_files(tmp_path, *, index_split=True, sparse=False, seed=0):
    """A planted graph as the files a user has: edge list, features, labels, split."""
    import scipy.sparse as sp
    from test_gcn_model import planted

    from graphpar import write_graph

    A, X, y, tr, va, te = planted(np.random.default_rng(seed))
    write_graph(sp.csr_array(A), tmp_path / "g.mtx")
    if sparse:
        sp.save_npz(tmp_path / "X.npz", sp.csr_array(X))
    else:
        np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    masks = {"train": tr, "val": va, "test": te}
    if index_split:
        masks = {k: np.flatnonzero(m) for k, m in masks.items()}
    np.savez(tmp_path / "split.npz", **masks)
    paths = {"graph": str(tmp_path / "g.mtx"),
             "features": str(tmp_path / ("X.npz" if sparse else "X.npy")),
             "labels": str(tmp_path / "y.npy"), "split": str(tmp_path / "split.npz")}
    return (A, X, y, tr, va, te), paths


def user_argv(paths, *extra):
    return ["gcn", "--graph", paths["graph"], "--features", paths["features"], "--labels",
            paths["labels"], "--split", paths["split"], *extra]


@pytest.mark.parametrize("index_split, sparse, hidden", [(True, False, "16"),
                                                          (False, True, "8,4")])
def test_user_data_trains_as_the_python_api(capsys, tmp_path, index_split, sparse, hidden):
    import csv

    from graphpar import GCN, read_graph

    (A, X, y, tr, va, te), paths = user_files(tmp_path, index_split=index_split,
                                              sparse=sparse)
    out = {k: str(tmp_path / f) for k, f in (("model", "m.npz"), ("pred", "p.npy"),
                                              ("hist", "h.csv"))}
    assert main(user_argv(paths, "--epochs", "100", "--seed", "2", "--json", "--save-model",
                          out["model"], "-o", out["pred"], "--history", out["hist"],
                          "--hidden", hidden)) == 0
    got = json.loads(capsys.readouterr().out)
    import scipy.sparse as sp

    widths = tuple(int(w) for w in hidden.split(","))
    ref = train_gcn(A, sp.csr_array(X) if sparse else X, y, tr, va, te, epochs=100, seed=2,
                    hidden=widths, bias=True)
    for key in ("train_accuracy", "val_accuracy", "test_accuracy"):
        assert got[key] == pytest.approx(getattr(ref, key)), key
    assert got["vertices"] == 120 and got["classes"] == 3 and got["dataset"] == paths["graph"]
    assert ref.test_accuracy > 0.5  # it learned: chance is 1/3
    # the saved model, reloaded, predicts what --output holds; both equal the reference's
    model = GCN.load(out["model"])
    assert model.hidden == widths and model.bias and len(model.biases_) == len(widths) + 1
    pred = np.load(out["pred"], allow_pickle=False)
    assert pred.dtype == np.int64 and pred.shape == (120,)
    np.testing.assert_array_equal(pred, model.predict(read_graph(paths["graph"]), X))
    np.testing.assert_array_equal(pred, ref.model.predict(A, X))
    assert np.mean(pred[te] == y[te]) == pytest.approx(got["test_accuracy"])
    with open(out["hist"], newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["epoch"]) for r in rows] == list(range(1, 101))
    for key in ("loss", "train_accuracy", "val_loss", "val_accuracy"):
        assert [float(r[key]) for r in rows] == ref.history[key], key
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # atomic writes leave no temporary files


def test_plot_writes_a_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    _, paths = user_files(tmp_path)
    png = tmp_path / "curves.png"
    assert main(user_argv(paths, "--epochs", "5", "--plot", str(png), "--quiet")) == 0
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 1000


def _one_line_error(capsys, argv, *needles):
    # -q: with a cold Numba cache the run would also print its compile notice
    assert main([*argv, "-q"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphpar: error: "), captured.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def test_user_data_errors_name_the_file(capsys, tmp_path):
    (A, X, y, tr, va, te), paths = user_files(tmp_path)
    bad = tmp_path / "bad"
    bad.mkdir()
    np.save(bad / "X.npy", X[:80])
    _one_line_error(capsys, user_argv(dict(paths, features=str(bad / "X.npy"))),
                    str(bad / "X.npy"), "has 80 rows but the graph has 120 vertices")
    np.save(bad / "X1.npy", X[0])
    _one_line_error(capsys, user_argv(dict(paths, features=str(bad / "X1.npy"))),
                    "X1.npy must be 2-D")
    Xn = X.copy()
    Xn[7, 2] = np.inf
    np.save(bad / "Xn.npy", Xn)
    _one_line_error(capsys, user_argv(dict(paths, features=str(bad / "Xn.npy"))),
                    "Xn.npy contains inf (row 7, column 2)")
    np.save(bad / "yf.npy", y.astype(float))
    _one_line_error(capsys, user_argv(dict(paths, labels=str(bad / "yf.npy"))),
                    "yf.npy must be integers", "float64")
    np.save(bad / "ys.npy", y[:50])
    _one_line_error(capsys, user_argv(dict(paths, labels=str(bad / "ys.npy"))),
                    "ys.npy must have shape (120,)", "got shape (50,)")
    yneg = y.copy()
    yneg[np.flatnonzero(te)[3]] = -1
    np.save(bad / "yneg.npy", yneg)
    _one_line_error(capsys, user_argv(dict(paths, labels=str(bad / "yneg.npy"))),
                    "yneg.npy: vertex", "has label -1 but is in 'test' of", "split.npz")
    for name, masks, needles in [
        ("range", {"train": [0, 120]}, ["range.npz: 'train' lists vertex 120", "outside [0, 120)"]),
        ("neg", {"train": [0], "val": [-3]}, ["neg.npz: 'val' lists vertex -3"]),
        ("short", {"train": tr[:10]}, ["short.npz: 'train' must have shape (120,)"]),
        ("dup", {"train": [4, 5, 4]}, ["dup.npz: 'train' lists vertex 4 twice"]),
        ("zeroone", {"train": tr.astype(int)}, ["a 0/1 mask must be boolean"]),
        ("float", {"train": [1.0, 2.0]}, ["float.npz: 'train' must be a boolean mask",
                                           "float64"]),
        ("none", {"train": np.zeros(120, bool)}, ["none.npz: 'train' selects no vertices"]),
        ("nokey", {"train_mask": tr}, ["nokey.npz: needs 'train'", "'train_mask'"]),
        ("big", {"train": np.arange(1000)}, ["big.npz: 'train' has shape (1000,)"]),
    ]:
        np.savez(bad / f"{name}.npz", **masks)
        _one_line_error(capsys, user_argv(dict(paths, split=str(bad / f"{name}.npz"))),
                        *needles)
    (bad / "text.npy").write_text("0 1 2\n")
    _one_line_error(capsys, user_argv(dict(paths, labels=str(bad / "text.npy"))),
                    "text.npy: not an .npy file saved with numpy.save")
    np.save(bad / "obj.npy", np.array([1, "a"], dtype=object))
    _one_line_error(capsys, user_argv(dict(paths, labels=str(bad / "obj.npy"))),
                    "obj.npy: holds Python objects (dtype object)")
    _one_line_error(capsys, user_argv(dict(paths, features=str(bad / "missing.npy"))),
                    "missing.npy")


def test_option_combinations_and_outputs_refused_before_training(capsys, tmp_path):
    _, paths = user_files(tmp_path)
    _one_line_error(capsys, ["gcn", "--graph", paths["graph"], "--labels", paths["labels"]],
                    "--graph needs --features, --split too")
    _one_line_error(capsys, ["gcn", "--dataset", "sbm", "--features", paths["features"]],
                    "--features go with --graph, not --dataset")
    _one_line_error(capsys, ["gcn", "--dataset", "sbm", "--graph", paths["graph"]],
                    "not allowed with argument")
    missing = tmp_path / "no" / "such" / "m.npz"
    _one_line_error(capsys, user_argv(paths, "--save-model", str(missing)),
                    "--save-model", "does not exist")
    same = str(tmp_path / "same")
    _one_line_error(capsys, user_argv(paths, "--history", same, "-o", same),
                    "--history and --output name the same file")


@pytest.mark.parametrize("flag, name, suffix", [
    ("-o", "pred.txt", ".npy"),          # was written, .npy bytes under a .txt name
    ("--output", "pred", ".npy"),        # numpy.save adds no suffix to an open file
    ("--save-model", "model.txt", ".npz"),
    ("--save-model", "model.npy", ".npz"),
    ("--history", "history.npy", ".csv"),
    ("--plot", "curves.jpg", ".png"),    # was written, PNG bytes under a .jpg name
    ("--plot", "curves.svg", ".png"),
])
def test_outputs_named_for_another_format_are_refused_before_loading(capsys, tmp_path, flag,
                                                                       name, suffix):
    _, paths = user_files(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    assert main(user_argv(paths, "--epochs", "2", flag, str(out / name), "-q")) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    option = "--output" if flag == "-o" else flag
    assert line.startswith(f"graphpar: error: {option} {out / name}: the name must end in "
                           f"{suffix} ("), line
    assert captured.out == ""  # not even "loaded ...": nothing was read or trained
    assert list(out.iterdir()) == []


@pytest.mark.mpi
def test_user_data_under_mpiexec_equals_serial(tmp_path):
    from conftest import run_mpiexec

    _, paths = user_files(tmp_path)
    flags = user_argv(paths, "--epochs", "30", "--json", "--partition", "block")
    env = {"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    serial = run_mpiexec(None, ["-m", "graphpar", *flags, "-o", str(tmp_path / "s.npy")],
                         env=env)
    assert serial.returncode == 0, serial.stderr
    res = run_mpiexec(2, ["-m", "graphpar", *flags, "-o", str(tmp_path / "m.npy"),
                          "--save-model", str(tmp_path / "m.npz")], env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    ref = json.loads(serial.stdout.splitlines()[-1])
    got = json.loads([ln for ln in res.stdout.splitlines() if ln.startswith("{")][-1])
    for key in ("train_accuracy", "val_accuracy", "test_accuracy", "epochs", "vertices"):
        assert got[key] == ref[key], key
    assert got["ranks"] == 2
    np.testing.assert_array_equal(np.load(tmp_path / "m.npy"), np.load(tmp_path / "s.npy"))
    assert (tmp_path / "m.npz").stat().st_size > 0


@pytest.mark.parametrize("compressed", [False, True])
def test_split_rows_are_the_slices_of_the_whole_split(tmp_path, compressed):
    """Each rank's rows of a split (boolean masks read for those rows only, index arrays
    whole) equal the rows of the serial reader's masks, compressed archive or not."""
    from graphpar.cli.gcn import read_split, read_split_rows

    n = 50
    rng = np.random.default_rng(0)
    path = tmp_path / "s.npz"
    save = np.savez_compressed if compressed else np.savez
    save(path, train=rng.permutation(n)[:17], val=rng.random(n) < 0.3)
    whole = read_split(str(path), n)
    assert whole["train"].sum() == 17 and not whole["test"].any()
    for lo, hi in [(0, n), (0, 0), (3, 20), (20, 50), (49, 50)]:
        rows = read_split_rows(str(path), n, lo, hi)
        for key in ("train", "val", "test"):
            np.testing.assert_array_equal(rows[key], whole[key][lo:hi], err_msg=key)
    # an index repeated or outside the graph is refused the same way on every rank
    np.savez(path, train=np.array([4, 9, 4]))
    for lo, hi in [(0, 5), (30, 50)]:
        with pytest.raises(ValueError, match=r"s\.npz: 'train' lists vertex 4 twice "
                                             r"\(positions 0 and 2\)"):
            read_split_rows(str(path), n, lo, hi)
    np.savez(path, train=np.zeros(n + 1, bool))
    with pytest.raises(ValueError, match=r"'train' has shape \(51,\), more entries than the "
                                         "50 vertices"):
        read_split_rows(str(path), n, 0, 10)


@pytest.mark.parametrize("fmt, compressed", [("csr", True), ("csr", False), ("csc", True)])
def test_sparse_feature_rows_are_the_slices_of_the_matrix(tmp_path, fmt, compressed,
                                                          monkeypatch):
    """A rank's rows of scipy sparse features (CSR cut on disk, other formats read whole)
    equal the rows of scipy's own reader."""
    import scipy.sparse as sp

    import graphpar.io._npy as npy
    from graphpar.mpi.features import read_sparse_rows

    X = sp.random_array((40, 7), density=0.2, rng=np.random.default_rng(1), format=fmt)
    path = tmp_path / "X.npz"
    sp.save_npz(path, X, compressed=compressed)
    ref = sp.csr_array(sp.load_npz(path)).toarray()
    checks = []
    real_check = npy.open_sparse_npz
    monkeypatch.setattr(npy, "open_sparse_npz",
                        lambda *a, **k: checks.append(a) or real_check(*a, **k))
    for lo, hi in [(0, 40), (0, 0), (5, 17), (39, 40)]:
        got = read_sparse_rows(path, lo, hi, 40)
        assert sp.issparse(got) and got.shape == (hi - lo, 7)
        np.testing.assert_array_equal(got.toarray(), ref[lo:hi])
    assert len(checks) == 4  # one open and check per read, whole-file formats too
    with pytest.raises(ValueError, match=r"X\.npz: the features have 40 rows but the graph "
                                         "has 41 vertices"):
        read_sparse_rows(path, 0, 1, 41)
    np.save(tmp_path / "plain.npy", np.ones(3))
    with pytest.raises(ValueError, match=r"plain\.npy: not a scipy sparse matrix"):
        read_sparse_rows(tmp_path / "plain.npy", 0, 1, 3)



def _rewritten_npz(src, dst, **members) -> None:
    """``dst``: the archive ``src`` with the ``.npy`` members ``members`` (arrays, raw
    bytes, or None to leave the member out) put in place of (or beside) its own."""
    import io
    import zipfile

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            if name[:-4] not in members:
                zout.writestr(name, zin.read(name))
        for key, raw in members.items():
            if raw is None:  # left out
                continue
            if not isinstance(raw, bytes):
                buf = io.BytesIO()
                np.save(buf, raw, allow_pickle=True)
                raw = buf.getvalue()
            zout.writestr(key + ".npy", raw)


def _declared_npy(shape) -> bytes:
    """An ``.npy`` of float64 that declares ``shape`` and holds 64 bytes of data."""
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buf.getvalue() + bytes(64)


def _damaged_member(good, bad, where: str) -> None:
    """``bad``: the (compressed) archive ``good`` with its member ``data.npy`` damaged:
    its local header (``where="header"``) or the middle of its compressed data."""
    import zipfile

    raw = bytearray(good.read_bytes())
    with zipfile.ZipFile(good) as zf:
        info = zf.getinfo("data.npy")
    assert info.compress_type == zipfile.ZIP_DEFLATED and info.compress_size > 200
    if where == "header":
        raw[info.header_offset + 3] ^= 0xFF  # PK\x03\x04: the signature
    else:
        mid = info.header_offset + 30 + len("data.npy") + info.compress_size // 2
        raw[mid:mid + 40] = bytes(40)
    bad.write_bytes(bytes(raw))


# name: how the file is made from the good X.npz, and what the error must say
SPARSE_FEATURE_CASES = {
    "truncated": (lambda good, bad: bad.write_bytes(good.read_bytes()[:-40]),
                  "a zip archive cut short or damaged"),
    "empty": (lambda good, bad: bad.write_bytes(b""), "not a zip archive: it starts b''"),
    "dense": (lambda good, bad: np.savez(bad, X=np.ones((120, 3))), "(it holds X)"),
    "no_shape": (lambda good, bad: np.savez(bad, format=np.array("csr"), data=np.ones(1)),
                 "(it holds data, format)"),
    "lil": (lambda good, bad: _rewritten_npz(good, bad, format=np.array("lil")),
            "(Load is not implemented for sparse matrix of format lil.)"),
    "unknown_format": (lambda good, bad: _rewritten_npz(good, bad, format=np.array("xyz")),
                       "(Unknown format \"xyz_array\")"),
    "pickled_data": (lambda good, bad: _rewritten_npz(
        good, bad, data=np.array([object()] * 3, dtype=object)),
        "'data' holds Python objects (dtype object), which graphpar does not unpickle"),
    "damaged_member_header": (lambda good, bad: _damaged_member(good, bad, "header"),
                              "(Bad magic number for file header)"),
    "damaged_member_data": (lambda good, bad: _damaged_member(good, bad, "data"),
                            "not a scipy sparse matrix saved with scipy.sparse.save_npz ("),
    "declared_huge": (lambda good, bad: _rewritten_npz(good, bad,
                                                       data=_declared_npy((10**12,))),
                      "'data' declares an array of shape (1000000000000,)"),
    "no_indptr": (lambda good, bad: _rewritten_npz(good, bad, indptr=None),
                  "(a csr matrix needs data, indices, indptr; it holds _is_array, data, "
                  "format, indices, shape)"),
    "float_indices": (lambda good, bad: _rewritten_npz(good, bad,
                                                       indices=np.zeros(2400)),
                      "('indices' holds float64)"),
    "short_indptr": (lambda good, bad: _rewritten_npz(good, bad, indptr=np.zeros(100, int)),
                     "('indptr' has shape (100,), not (121,) for a csr matrix of shape "
                     "(120, 20))"),
}


@pytest.mark.parametrize("case", sorted(SPARSE_FEATURE_CASES))
def test_bad_sparse_features_name_the_file(tmp_path, capsys, case):
    """A features .npz that is no scipy sparse matrix is refused in one line naming the
    file and what is wrong with it (never numpy's allow_pickle advice, never a traceback
    or an allocation of what a header declares); the per-rank reader uses the same words
    (graphpar.io._npy.open_sparse_npz and load_sparse_npz), in every case."""
    from graphpar.mpi.features import read_sparse_rows

    _, paths = user_files(tmp_path, sparse=True)
    make, needle = SPARSE_FEATURE_CASES[case]
    bad = tmp_path / f"{case}.npz"
    make(tmp_path / "X.npz", bad)
    line = _one_line_error(capsys, user_argv(dict(paths, features=str(bad))), str(bad), needle)
    assert "allow_pickle" not in line
    # one rank with every row, and the last of two: a rank reads a CSR member up to its
    # last row only, so the rows before a damaged stretch of 'data' are read (0:1 here)
    for lo, hi in [(0, 120), (60, 120)]:
        with pytest.raises(ValueError) as exc:
            read_sparse_rows(bad, lo, hi, 120)
        assert line == f"graphpar: error: {exc.value}", (lo, hi)


@pytest.mark.mpi
@pytest.mark.parametrize("case", ["lil", "damaged_member_data", "damaged_member_header"])
def test_bad_sparse_features_under_mpiexec(tmp_path, capsys, case):
    """Under mpiexec, a sparse .npz scipy cannot load, or one with a damaged member, is
    refused with the serial command line's one line, never a traceback (the damage of a
    data member seen by one rank only)."""
    from capped import assert_one_line_error, run_capped

    _, paths = user_files(tmp_path, sparse=True)
    make, needle = SPARSE_FEATURE_CASES[case]
    bad = tmp_path / f"{case}.npz"
    make(tmp_path / "X.npz", bad)
    argv = user_argv(dict(paths, features=str(bad)), "--epochs", "2")
    line = _one_line_error(capsys, argv, str(bad), needle)
    run = run_capped([*argv, "-q"], ranks=2)
    assert assert_one_line_error(run, str(bad), needle) == line


def test_one_npy_check_for_the_cli_and_the_row_reader(tmp_path, capsys):
    """The serial CLI and the per-rank reader refuse a bad .npy with the same words
    (graphpar.io.check_npy)."""
    from graphpar.io import check_npy
    from graphpar.mpi.features import read_rows

    _, paths = user_files(tmp_path)
    bad = tmp_path / "obj.npy"
    np.save(bad, np.array([1, "a"], dtype=object))
    short = tmp_path / "short.npy"
    short.write_bytes((tmp_path / "X.npy").read_bytes()[:-8])
    for path, what, needle in [(bad, "labels", "holds Python objects (dtype object)"),
                               (short, "features", "declares an array of shape (120, ")]:
        with pytest.raises(ValueError) as exc:
            check_npy(path, what)
        assert needle in str(exc.value)
        with pytest.raises(ValueError, match=re.escape(str(exc.value))):
            read_rows(path, 0, 1, 120, ndim=1 if what == "labels" else 2, what=what)
        _one_line_error(capsys, user_argv(dict(paths, **{what: str(path)})), str(exc.value))
