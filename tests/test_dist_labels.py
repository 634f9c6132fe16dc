"""Labelled graphs and CSV/TSV edge lists under mpiexec equal the serial reader's, by label.

References: the serial reader (:func:`graphpar.read_graph`, byte for byte,
labels and messages included), scipy's Dijkstra and networkx's
``single_source_dijkstra_path_length`` by label; every file is read at 2 and 3
ranks (``tests/mpi/label_agree.py``) and by the CLI under ``mpiexec``.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import json

import networkx as nx
import numpy as np
import pytest
from capped import assert_one_line_error, run_capped
from conftest import run_mpi_script

pytestmark = pytest.mark.mpi


def _labelled_edges(seed: int, n: int = 70, m: int = 400):
    """Edges between string labels (a few isolated by direction, duplicates, real weights)."""
    rng = np.random.default_rng(seed)
    names = [f"v{int(rng.integers(10**6))}-{i}" for i in range(n)]
    rows = []
    for _ in range(m):
        u, v = rng.integers(n, size=2)
        w = float(rng.integers(1, 20)) if rng.random() < 0.5 else round(float(rng.random()), 6)
        rows.append((names[u], names[v], w))
    return rows


def _csv_text(rows, delim=",", header=("from", "to", "km"), newline="\n") -> str:
    lines = [delim.join(header)] + [delim.join(str(x) for x in r) for r in rows]
    return newline.join(lines) + newline


def _put(folder, name: str, data, options: dict | None = None) -> None:
    raw = data.encode() if isinstance(data, str) else data
    if name.endswith(".gz"):
        raw = gzip.compress(raw)
    elif name.endswith(".bz2"):
        raw = bz2.compress(raw)
    (folder / name).write_bytes(raw)
    if options:
        (folder / f"{name}.json").write_text(json.dumps(options))


def _files(folder):
    folder.mkdir()
    rows = _labelled_edges(1)
    text = _csv_text(rows)
    _put(folder, "strings.csv", text)
    _put(folder, "strings.csv.gz", text)
    _put(folder, "strings.tsv", _csv_text(rows, "\t"))
    _put(folder, "strings.tsv.bz2", _csv_text(rows, "\t"))
    _put(folder, "crlf_blank.csv", text.replace("\n", "\r\n").replace("\r\nv", "\r\n\r\n v", 7))
    _put(folder, "undirected.csv", text, {"directed": False})
    # named columns in another order, an extra column
    named = [f"{i},{d},note {i},{s},{w}" for i, (s, d, w) in enumerate(rows)]
    _put(folder, "named.csv", "id,dst,note,src,cost\n" + "\n".join(named) + "\n",
         {"source": "src", "target": "dst", "weight": "cost"})
    _put(folder, "unweighted.csv", _csv_text([r[:2] for r in rows], header=("a", "b")))
    # non-ASCII labels, and labels that look like numbers mixed with words
    uni = [(f"Zürich{u % 9}", f"東京{v % 7}", w) for u, v, w in
           np.random.default_rng(2).integers(1, 30, size=(120, 3)).tolist()]
    _put(folder, "unicode.csv", _csv_text(uni))
    _put(folder, "mixed.csv", _csv_text([("007", "7", 1.5), ("7", "x", 2), ("-1", "007", 3)]
                                        * 40))
    # quoted fields (read on rank 0 and distributed)
    quoted = [(f'"{s}, Italy"', f'"{d}"', w) for s, d, w in rows[:80]]
    _put(folder, "quoted.csv", _csv_text(quoted))
    # numeric ids: sparse with relabel (CSV and a whitespace edge list), dense without
    rng = np.random.default_rng(3)
    ids = rng.choice(10**9, size=60, replace=False)
    sparse = [(int(ids[a]), int(ids[b]), int(c)) for a, b, c in
              rng.integers([0, 0, 1], [60, 60, 9], size=(300, 3))]
    _put(folder, "sparse.csv", _csv_text(sparse), {"relabel": True})
    _put(folder, "sparse.el", "".join(f"{a} {b}\n" for a, b, _ in sparse), {"relabel": True})
    _put(folder, "sparse_far.csv", _csv_text(sparse))  # vertex limit: names the line
    few = [(int(a) * 50, int(b) * 50, 1) for a, b in rng.integers(0, 60, size=(200, 2))]
    _put(folder, "sparse_warns.csv", _csv_text(few))  # the sparse-id warning
    _put(folder, "dense.csv", _csv_text([(a % 50, b % 50, c) for a, b, c in sparse]))
    # bad files: the first problem in file order, whichever rank holds it
    late = text.splitlines()
    late[-5] += ",9"
    _put(folder, "bad_fields.csv", "\n".join(late) + "\n")
    two = text.splitlines()
    two[3] = "," + two[3].split(",", 1)[1]  # empty source id early ...
    two[-3] += ",1"  # ... and a field count error late: the serial reader reports this one
    _put(folder, "bad_two.csv", "\n".join(two) + "\n")
    neg = text.splitlines()
    neg[-10] = neg[-10].rsplit(",", 1)[0] + ",-2"
    _put(folder, "bad_negative.csv", "\n".join(neg) + "\n")
    word = text.splitlines()
    word[-2] = word[-2].rsplit(",", 1)[0] + ",far"
    _put(folder, "bad_weight.csv.gz", "\n".join(word) + "\n")
    utf = text.encode().splitlines()
    utf[-4] = b"\xff\xfe" + utf[-4]
    _put(folder, "bad_utf8.csv", b"\n".join(utf) + b"\n")
    nul = text.encode().splitlines()
    nul[-6] += b"\x00"
    _put(folder, "bad_nul.csv", b"\n".join(nul) + b"\n")
    _put(folder, "bad_column.csv", text, {"weight": "miles"})
    _put(folder, "header_only.csv", "a,b\n")
    _put(folder, "empty.csv", "")
    return folder


@pytest.mark.parametrize("nranks", [2, 3])
def test_parallel_csv_reader_agrees_with_the_serial_one(tmp_path, nranks):
    folder = _files(tmp_path / "files")
    proc = run_mpi_script("label_agree.py", nranks, folder)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    files = sorted(p.name for p in folder.iterdir() if p.suffix != ".json")
    assert f"DONE {len(files)}" in proc.stdout, out
    for name in files:
        assert f"SAME {name}\n" in proc.stdout, (name, out)


def _networkx_distances(rows, source):
    G = nx.DiGraph()
    for u, v, w in rows:
        if not G.has_edge(u, v) or G[u][v]["weight"] > w:
            G.add_edge(u, v, weight=w)
    return nx.single_source_dijkstra_path_length(G, source)


@pytest.mark.parametrize("nranks", [2, 3])
def test_cli_sssp_by_label_under_mpiexec_equals_networkx(tmp_path, nranks):
    rows = _labelled_edges(5)
    path = tmp_path / "roads.csv.gz"
    path.write_bytes(gzip.compress(_csv_text(rows).encode()))
    source = rows[7][0]
    out = tmp_path / "from.csv"
    run = run_capped(["sssp", str(path), "--source", source, "--weight-col", "km",
                      "--output", str(out), "--json"], ranks=nranks)
    assert run.returncode == 0, run.output
    report = json.loads(run.stdout)
    assert report["source_label"] == source and report["ranks"] == nranks
    with open(out, newline="") as f:
        got = {r["target"]: float(r["distance"]) for r in csv.DictReader(f)
               if r["source"] == source}
    want = _networkx_distances(rows, source)
    assert got.keys() == want.keys()
    for label, d in want.items():
        assert got[label] == pytest.approx(d, rel=1e-12, abs=0), label


@pytest.mark.parametrize("nranks", [2, 3])
def test_cli_relabel_and_sources_file_under_mpiexec(tmp_path, nranks):
    rng = np.random.default_rng(6)
    ids = rng.choice(10**12, size=40, replace=False)
    rows = [(int(ids[a]), int(ids[b]), float(c)) for a, b, c in
            rng.integers([0, 0, 1], [40, 40, 9], size=(200, 3))]
    path = tmp_path / "ids.tsv"
    path.write_text(_csv_text(rows, "\t", header=("s", "t", "w")))
    srcs = tmp_path / "sources.txt"
    srcs.write_text(f"{rows[0][0]}\n# a comment\n{rows[3][0]}\n")
    args = ["sssp", str(path), "--relabel", "--sources", str(srcs)]
    serial = run_capped([*args, "--output", str(tmp_path / "serial.npz")])
    assert serial.returncode == 0, serial.output
    run = run_capped([*args, "--output", str(tmp_path / "mpi.npz")], ranks=nranks)
    assert run.returncode == 0, run.output
    a, b = np.load(tmp_path / "serial.npz"), np.load(tmp_path / "mpi.npz")
    for key in ("distances", "sources", "labels"):  # predecessors: ties may differ
        assert np.array_equal(a[key], b[key]), key
    best = {}
    for u, v, w in rows:
        best[u, v] = min(w, best.get((u, v), np.inf))
    labels = b["labels"].tolist()
    for row, s in enumerate((rows[0][0], rows[3][0])):
        want = _networkx_distances(rows, s)
        dist, pred = b["distances"][row], b["predecessors"][row]
        got = {labels[v]: d for v, d in enumerate(dist) if np.isfinite(d)}
        assert got == pytest.approx(want), s
        for v in np.flatnonzero(np.isfinite(dist)):  # a shortest-path tree, by label
            if labels[v] != s:
                u = int(pred[v])
                assert dist[u] + best[labels[u], labels[v]] == dist[v], (s, labels[v])


@pytest.mark.parametrize("nranks", [2, 3])
def test_cli_bad_labelled_input_under_mpiexec_is_one_line(tmp_path, nranks):
    rows = _labelled_edges(7)
    lines = _csv_text(rows).splitlines()
    lines[-3] = lines[-3].rsplit(",", 1)[0] + ",abc"
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(lines) + "\n")
    serial = run_capped(["sssp", str(path), "--source", rows[0][0]])
    run = run_capped(["sssp", str(path), "--source", rows[0][0]], ranks=nranks)
    msg = assert_one_line_error(run, str(path), f"line {len(lines) - 2}", "'abc'")
    assert msg == assert_one_line_error(serial)
    good = tmp_path / "good.csv"
    good.write_text(_csv_text(rows))
    run = run_capped(["sssp", str(good), "--source", rows[0][0] + "x"], ranks=nranks)
    assert_one_line_error(run, "--source", repr(rows[0][0] + "x"), "did you mean")
