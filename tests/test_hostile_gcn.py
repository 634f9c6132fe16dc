"""Hostile input for ``graphpar gcn`` (Planetoid files and numeric options), serial and MPI.

Classes of issue 10 covered here: a Planetoid split that is checked against
the data (a duplicate or out-of-range ``test.index`` entry is an error naming
the file and line, never 999 test vertices), pickles that declare more than
they hold (refused before anything is allocated), graph dicts with ids that
are not integers, and meaningless numeric options. Each run is a capped
subprocess (tests/capped.py: 1.5 GiB of address space and a timeout), with
``GRAPHPAR_DATA`` pointed at a temporary folder that holds all eight files and
``--no-download``, so nothing is ever downloaded.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from capped import assert_one_line_error, run_capped
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_datasets import fake_planetoid, write_fake

from graphpar import datasets
from graphpar.datasets import PLANETOID_NAMES, known_sums, load_planetoid, planetoid_files
from graphpar.errors import GraphFormatError


def unverified_name() -> str:
    """A Planetoid name without kept SHA-256 sums: its files are read, not refused unread."""
    sums = known_sums()
    for name in PLANETOID_NAMES:
        if not set(planetoid_files(name)) & set(sums):
            return name
    pytest.skip("every Planetoid name has kept sums: no name loads edited files")


class Reduce:
    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return (self.func, self.args)


def _huge_csr():
    m = sp.csr_matrix(np.eye(2, dtype=np.float32))
    m._shape = (2, 10**12)
    return m


def _index_lines(folder: Path, name: str) -> list[str]:
    return (folder / f"ind.{name}.test.index").read_text().split()


def _duplicate(folder, name):
    lines = _index_lines(folder, name)
    lines[4] = lines[1]
    return "test.index", ("\n".join(lines) + "\n").encode()


def _out_of_range(folder, name):
    lines = _index_lines(folder, name)
    lines[6] = "400000000"
    return "test.index", ("\n".join(lines) + "\n").encode()


# What each hostile data set replaces, and what its one error line must say.
HOSTILE = {
    "ndarray_bomb": (lambda f, n: ("x", pickle.dumps(Reduce(np.ndarray, ((10**13,),)),
                                                      protocol=2)),
                     ["ind.{name}.x", "shape (10000000000000,)", "bytes of the file"]),
    "reconstruct_bomb": (
        lambda f, n: ("allx", pickle.dumps(
            Reduce(np.zeros(0).__reduce__()[0], (np.ndarray, (10**13,), b"b")), protocol=2)),
        ["ind.{name}.allx", "shape (10000000000000,)"]),
    "sparse_bomb": (lambda f, n: ("tx", pickle.dumps(_huge_csr(), protocol=2)),
                    ["ind.{name}.tx", "(2, 1000000000000)", "GRAPHPAR_MAX_MEMORY"]),
    "duplicate_test_vertex": (_duplicate,
                              ["ind.{name}.test.index", "line 5: test vertex",
                               "listed twice (first on line 2)"]),
    "test_vertex_400000000": (_out_of_range,
                              ["ind.{name}.test.index", "line 7: test vertex 400000000 is "
                               "outside [510, 522)"]),
    "graph_string_keys": (lambda f, n: ("graph", pickle.dumps({"0": [1]}, protocol=2)),
                          ["ind.{name}.graph", "'0' (str)"]),
    "graph_huge_id": (lambda f, n: ("graph", pickle.dumps({0: [10**12]}, protocol=2)),
                      ["ind.{name}.graph", "1000000000001 vertices", "GRAPHPAR_MAX_VERTICES"]),
}


def hostile_root(tmp_path: Path, case: str) -> tuple[Path, str]:
    """A GRAPHPAR_DATA folder with the fake Planetoid files, one replaced by ``case``."""
    name = unverified_name()
    objs, test_index = fake_planetoid(np.random.default_rng(0))
    folder = tmp_path / "data" / "planetoid"
    write_fake(folder, name, objs, test_index)
    part, raw = HOSTILE[case][0](folder, name)
    (folder / f"ind.{name}.{part}").write_bytes(raw)
    assert all((folder / fn).is_file() for fn in planetoid_files(name))  # nothing to fetch
    return tmp_path / "data", name


def run_gcn(root: Path, name: str, *extra, ranks=None):
    env = {"GRAPHPAR_DATA": str(root), "HOME": str(root)}  # no ~/.cache either
    return run_capped(["gcn", "--dataset", name, "--no-download", "--epochs", "3", *extra],
                      ranks=ranks, env=env)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_planetoid_serial(tmp_path, case):
    root, name = hostile_root(tmp_path, case)
    run = run_gcn(root, name)
    assert run.returncode == 2, run.output
    assert_one_line_error(run, *(n.format(name=name) for n in HOSTILE[case][1]))


@pytest.mark.parametrize("ranks, case", [
    (2, "ndarray_bomb"), (2, "sparse_bomb"), (2, "duplicate_test_vertex"),
    (2, "test_vertex_400000000"), (4, "ndarray_bomb"), (4, "duplicate_test_vertex"),
])
def test_hostile_planetoid_mpi(tmp_path, ranks, case):
    root, name = hostile_root(tmp_path, case)
    run = run_gcn(root, name, ranks=ranks)
    assert run.returncode == 2, run.output
    assert_one_line_error(run, *(n.format(name=name) for n in HOSTILE[case][1]))


def test_edited_cora_refused_by_its_checksum(tmp_path, planetoid_dir):
    """Cora has kept sums: an edited file is refused before it is unpickled."""
    folder = tmp_path / "data" / "planetoid"
    folder.mkdir(parents=True)
    for fn in planetoid_files("cora"):
        (folder / fn).write_bytes((planetoid_dir / fn).read_bytes())
    lines = (folder / "ind.cora.test.index").read_text().split()
    lines[4] = lines[1]
    (folder / "ind.cora.test.index").write_text("\n".join(lines) + "\n")
    for ranks in (None, 2):
        run = run_gcn(tmp_path / "data", "cora", ranks=ranks)
        assert_one_line_error(run, "ind.cora.test.index has SHA-256", "expected")


@pytest.mark.parametrize("ranks", [None, 2])
def test_negative_seed_one_line(tmp_path, ranks):
    root, name = tmp_path, "sbm"
    run = run_gcn(root, name, "--seed", "-1", ranks=ranks)
    assert run.returncode == 2, run.output
    assert_one_line_error(run, "--seed", "-1")


def test_real_cora_trains_as_before(planetoid_dir):
    """The real Cora passes every check and trains to the paper's accuracy (capped run)."""
    run = run_capped(["gcn", "--dataset", "cora", "--no-download", "--json", "--seed", "0"],
                     env={"GRAPHPAR_DATA": str(planetoid_dir.parent)})
    assert run.returncode == 0, run.output
    got = json.loads(run.stdout)
    assert got["vertices"] == 2708 and got["epochs"] == 200
    assert got["test_accuracy"] > 0.79  # Kipf and Welling: 81.5%; seed 0 gives 0.82


# ---------------------------------------------------------------- fuzz: test.index
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def fake_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets, "SUMS_FILE", tmp_path / "no-sums")
    objs, test_index = fake_planetoid(np.random.default_rng(0))
    folder = tmp_path / "fuzz"
    write_fake(folder, "citeseer", objs, test_index)
    return folder, objs, test_index


def _valid_split(values) -> bool:
    return (len(values) == 9 and len(set(values)) == 9
            and all(510 <= v < 522 for v in values) and min(values) == 510)


@FUZZ
@given(values=st.one_of(
    st.lists(st.integers(505, 525), min_size=1, max_size=12),
    st.permutations(range(510, 522)).map(lambda p: p[:9]),  # often a valid split
))
@example(values=[516, 510, 521, 512, 515, 518, 511, 519, 520])
def test_fuzz_test_index_values(fake_folder, values):
    """Near-valid splits: a load exactly when the split is valid, with the reference result."""
    import naive_gcn

    folder, objs, _ = fake_folder
    (folder / "ind.citeseer.test.index").write_text("\n".join(map(str, values)) + "\n")
    if not _valid_split(values):
        with pytest.raises(GraphFormatError, match=r"ind\.citeseer\.test\.index"):
            load_planetoid("citeseer", root=folder, download=False)
        return
    graph = objs["graph"]
    if max(values) < 521:  # vertex 521 of the graph has no features then
        with pytest.raises(GraphFormatError, match=r"ind\.citeseer\.graph: names vertex 521"):
            load_planetoid("citeseer", root=folder, download=False)
        return
    data = load_planetoid("citeseer", root=folder, download=False)
    ref = naive_gcn.planetoid_reference(objs["x"], objs["y"], objs["tx"], objs["ty"],
                                        objs["allx"], objs["ally"], graph, values)
    np.testing.assert_array_equal(data.labels, ref[2])
    np.testing.assert_allclose(data.features.toarray(), ref[1], rtol=1e-7)
    np.testing.assert_array_equal(data.test_mask, ref[5])


@FUZZ
@given(raw=st.binary(max_size=300))
def test_fuzz_test_index_bytes(fake_folder, raw):
    """Arbitrary bytes: a load or one error naming the file, never anything else."""
    folder, _, _ = fake_folder
    (folder / "ind.citeseer.test.index").write_bytes(raw)
    try:
        load_planetoid("citeseer", root=folder, download=False)
    except GraphFormatError as exc:
        assert "ind.citeseer.test.index" in str(exc) and "\n" not in str(exc)


# ---------------------------------------------------------------- model files (GCN.load)
def _npy_bytes(header: dict, payload: bytes = b"\0" * 64) -> bytes:
    """An .npy whose header says ``header`` (it may declare far more than it holds)."""
    import io

    from numpy.lib import format as npy

    buf = io.BytesIO()
    npy.write_array_header_1_0(buf, header)
    return buf.getvalue() + payload


def _zip(path: Path, members: dict) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for name, raw in members.items():
            z.writestr(name, raw)
    return path


def _saved_model(tmp_path: Path) -> tuple[Path, dict]:
    import io

    from graphpar import GCN

    path = tmp_path / "good.npz"
    GCN(hidden=(4,)).init_weights(3, 2).save(path)
    with np.load(path, allow_pickle=False) as npz:
        members = {}
        for k in npz.files:
            buf = io.BytesIO()
            np.save(buf, npz[k])
            members[k + ".npy"] = buf.getvalue()
    return path, members


def _config(members: dict) -> dict:
    import io

    return json.loads(str(np.load(io.BytesIO(members["config.npy"]))))


def _with_config(members: dict, **changes) -> dict:
    import io

    cfg = dict(_config(members), **changes)
    buf = io.BytesIO()
    np.save(buf, np.array(json.dumps(cfg)))
    return dict(members, **{"config.npy": buf.getvalue()})


def _with_array(members: dict, key: str, arr) -> dict:
    import io

    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return dict(members, **{key + ".npy": buf.getvalue()})


MODEL_CASES = {
    "not_a_zip": (lambda m: b"hello", "not a model written by GCN.save (not an .npz archive: "
                                      "it starts with b'hello')"),
    "truncated": (lambda m: "TRUNCATE", "not a model written by GCN.save"),
    "no_config": (lambda m: {k: v for k, v in m.items() if k != "config.npy"},
                  "no 'config' entry"),
    "config_not_json": (lambda m: _with_array(m, "config", np.array("{nope")),
                        "'config' is not JSON"),
    "config_not_text": (lambda m: _with_array(m, "config", np.zeros(3)),
                        "'config' must be text"),
    "other_format": (lambda m: _with_config(m, format="sklearn"), "does not describe a graphpar"),
    "version_99": (lambda m: _with_config(m, version=99), "version 99"),
    "bad_dropout": (lambda m: _with_config(m, dropout=2.0), "'config': dropout must be in"),
    "bad_dtype": (lambda m: _with_config(m, dtype="int8"), "dtype must be float32 or float64"),
    "missing_key": (lambda m: _with_array(m, "config", np.array(json.dumps(
                        {k: v for k, v in _config(m).items() if k != "seed"}))),
                    "'config' lacks seed"),
    "wrong_shape": (lambda m: _with_array(m, "weight_0", np.zeros((5, 4), np.float32)),
                    "'weight_0' must be floats of shape (3, 4), got float32 of shape (5, 4)"),
    "nan_weight": (lambda m: _with_array(m, "weight_1", np.full((4, 2), np.nan, np.float32)),
                   "'weight_1' contains nan (entry (0, 0))"),
    "cached_input": (lambda m: _with_array(m, "X", np.ones((3, 3))), "holds 'X'"),
    "pickled_member": (lambda m: _with_array(m, "weight_0", np.array([{}] * 12).reshape(3, 4)),
                       "'weight_0' must be floats"),
    "header_bomb": (lambda m: dict(m, **{"weight_0.npy": _npy_bytes(
        {"descr": "<f4", "fortran_order": False, "shape": (10**7, 10**6)})}),
        "'weight_0' must be floats of shape (3, 4), got float32 of shape (10000000, 1000000)"),
    "declared_huge": (lambda m: _with_config(m, n_features=10**12), "GRAPHPAR_MAX_MEMORY"),
}


@pytest.mark.parametrize("case", sorted(MODEL_CASES))
def test_hostile_model_files(tmp_path, case):
    """GCN.load: one ValueError naming the file and what is wrong; nothing unpickled."""
    from graphpar import GCN

    good, members = _saved_model(tmp_path)
    make, needle = MODEL_CASES[case]
    out = make(members)
    path = tmp_path / "hostile.npz"
    if out == "TRUNCATE":
        path.write_bytes(good.read_bytes()[:200])
    elif isinstance(out, bytes):
        path.write_bytes(out)
    else:
        _zip(path, out)
    with pytest.raises(ValueError) as info:
        GCN.load(path)
    msg = str(info.value)
    assert msg.startswith(str(path)) and needle in msg and "\n" not in msg, msg
    assert "allow_pickle" not in msg and "unsafe" not in msg, msg  # never advise unpickling


def test_model_file_single_array(tmp_path):
    from graphpar import GCN

    np.save(tmp_path / "w.npy", np.ones(3))
    with pytest.raises(ValueError, match=r"w\.npy: not a model written by GCN.save"):
        GCN.load(tmp_path / "w.npy")


# ---------------------------------------------------------------- user files (--graph)
def _user_dir(tmp_path: Path) -> dict:
    import scipy.sparse as sp

    from graphpar import write_graph

    rng = np.random.default_rng(0)
    n = 30
    a = sp.random_array((n, n), density=0.1, rng=rng, format="csr")
    write_graph(sp.csr_array(((a + a.T) > 0).astype(float)), tmp_path / "g.mtx")
    np.save(tmp_path / "X.npy", rng.random((n, 5)))
    np.save(tmp_path / "y.npy", rng.integers(0, 3, n))
    np.savez(tmp_path / "split.npz", train=np.arange(10), val=np.arange(10, 20))
    return {k: str(tmp_path / f) for k, f in (("graph", "g.mtx"), ("features", "X.npy"),
                                              ("labels", "y.npy"), ("split", "split.npz"))}


USER_CASES = {
    # a header that declares 80 TB: memory-mapped, so refused against the file's size
    "features_header_bomb": ("features", "X.npy", lambda: _npy_bytes(
        {"descr": "<f8", "fortran_order": False, "shape": (10**12, 10)}),
        ["X.npy: declares an array of shape (1000000000000, 10)", "holds 64 bytes"]),
    "labels_header_bomb": ("labels", "y.npy", lambda: _npy_bytes(
        {"descr": "<i8", "fortran_order": False, "shape": (10**13,)}),
        ["y.npy: declares an array of shape (10000000000000,)"]),
    "split_member_bomb": ("split", "split.npz", lambda: {"train.npy": _npy_bytes(
        {"descr": "<i8", "fortran_order": False, "shape": (10**13,)})},
        ["split.npz: 'train' has shape (10000000000000,)", "30 vertices"]),
    "split_pickled": ("split", "split.npz", lambda: {"train.npy": _npy_bytes(
        {"descr": "|O", "fortran_order": False, "shape": (3,)})}, ["split.npz"]),
    "features_garbage": ("features", "X.npy", lambda: b"\x93NUMPY garbage" * 10, ["X.npy"]),
    # numpy would read it as a pickle and advise allow_pickle
    "features_npz_not_a_zip": ("features", "X.npz", lambda: b"this is not a zip file",
                               ["X.npz: not a scipy sparse matrix saved with "
                                "scipy.sparse.save_npz (not a zip archive: it starts "
                                "b'this is '"]),
    "features_nan": ("features", "X.npy", lambda: _saved(_nan_at(30, 5, 7, 2)),
                     ["X.npy contains nan (row 7, column 2)"]),
    # vertices numbered in the order their names appear: rows would pair with the wrong ones
    "graph_named_vertices": ("graph", "g.csv", lambda: "src,dst\n" + "".join(
        f"v{(7 * i) % 30},v{(7 * i + 1) % 30}\n" for i in range(30)),
        ["g.csv names its vertices ('v0', 'v1', 'v7', ...): row i of --features"]),
}


def _nan_at(n: int, f: int, i: int, j: int) -> np.ndarray:
    X = np.random.default_rng(0).random((n, f))
    X[i, j] = np.nan
    return X


def _saved(arr: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


@pytest.mark.parametrize("ranks", [None, 2])
@pytest.mark.parametrize("case", sorted(USER_CASES))
def test_hostile_user_files(tmp_path, case, ranks):
    paths = _user_dir(tmp_path)
    opt, name, make, needles = USER_CASES[case]
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    target = hostile / name
    raw = make()
    if isinstance(raw, dict):
        _zip(target, raw)
    elif isinstance(raw, str):
        target.write_text(raw)
    else:
        target.write_bytes(raw)
    paths[opt] = str(target)
    argv = ["gcn", "--epochs", "2", "--quiet"]
    for key in ("graph", "features", "labels", "split"):
        argv += [f"--{key}", paths[key]]
    run = run_capped(argv, ranks=ranks)
    assert run.returncode == 2, run.output
    assert_one_line_error(run, str(target), *needles)
    assert "allow_pickle" not in run.output and "unsafe" not in run.output


@pytest.mark.parametrize("ranks", [None, 2])
def test_overlapping_split_and_unseen_test_class_warn_once(tmp_path, ranks):
    """Serially and under mpiexec: one warning line each, naming the first vertex."""
    paths = _user_dir(tmp_path)
    y = np.load(paths["labels"])
    y[25] = 9
    np.save(paths["labels"], y)
    np.savez(paths["split"], train=np.arange(10), val=np.arange(5, 20), test=np.arange(20, 30))
    argv = ["gcn", "--epochs", "2"]
    for key in ("graph", "features", "labels", "split"):
        argv += [f"--{key}", paths[key]]
    run = run_capped(argv, ranks=ranks)
    assert run.returncode == 0, run.output
    warned = [ln for ln in run.stderr.splitlines() if ln.startswith("graphpar: warning:")]
    assert warned == [
        "graphpar: warning: the train and val masks share 5 vertices (the first: vertex 5): "
        "the val accuracy is then measured partly on vertices the model trained on",
        "graphpar: warning: 1 test vertices have a label no train or val vertex has (the "
        "first: label 9 at vertex 25; the classes are 0..2): the model cannot predict them"]
