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
