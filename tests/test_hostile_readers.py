"""Hostile input for the graph readers (.gr, .mtx, edge lists, .npz, compressed), serial and MPI.

Classes of issue 10 covered here: stored metadata checked against the data,
every line parsed by exactly one rank, nothing allocated in proportion to a
number a file declares, no traceback from corrupt compressed data, and
messages that name the file and the line. Fuzz tests run in-process on small
inputs with small limits; the memory bombs run in capped subprocesses
(tests/capped.py), serially and under mpiexec.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import struct
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from capped import MEMORY_CAP, assert_one_line_error, limit_memory, run_capped
from conftest import run_mpi_script
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from graphpar import Graph, read_graph, write_graph
from graphpar.io import GraphFormatError, LimitError
from graphpar.io._lines import byte_range, line_range, read_line_range
from graphpar.io._text import parse_body, parse_header

OPENERS = {"": open, ".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def _write(path: Path, data: bytes, comp: str = "") -> Path:
    with OPENERS[comp](path, "wb") as f:
        f.write(data)
    return path


@pytest.fixture
def small_limits(monkeypatch):
    """Limits small enough that a fuzzed input cannot make a test allocate much."""
    monkeypatch.setenv("GRAPHPAR_MAX_VERTICES", "10000")
    monkeypatch.setenv("GRAPHPAR_MAX_DECOMPRESSED", "1M")


# ---------------------------------------------------------------- one line, one rank


def _body_line(fmt: str, item) -> str:
    kind = item[0]
    if kind == "record":
        _, u, v, w = item
        return {"gr": f"a {u} {v} {w}", "mtx": f"{u} {v} {w}", "el": f"{u - 1} {v - 1} {w}"}[fmt]
    if kind == "comment":
        return {"gr": "c ", "mtx": "% ", "el": "# "}[fmt] + "x" * item[1]
    return item[1]  # a blank or whitespace-only line


lines_strategy = st.lists(
    st.one_of(
        st.tuples(st.just("record"), st.integers(1, 9), st.integers(1, 9),
                  st.integers(0, 10**6)),
        st.tuples(st.just("comment"), st.integers(0, 400)),
        st.tuples(st.just("blank"), st.sampled_from(["", " ", "\t \r", " \x0b\x0c "])),
    ),
    max_size=25,
)


def _text_file(fmt: str, items, final_newline: bool) -> bytes:
    body = "\n".join(_body_line(fmt, it) for it in items)
    if final_newline and items:
        body += "\n"
    m = sum(it[0] == "record" for it in items)
    head = {"gr": f"c lines\np sp 9 {m}\n",
            "mtx": f"%%MatrixMarket matrix coordinate integer general\n9 9 {m}\n",
            "el": ""}[fmt]
    return (head + body).encode()


@settings(max_examples=200, deadline=None)
@given(fmt=st.sampled_from(["gr", "mtx", "el"]), items=lines_strategy,
       final_newline=st.booleans(), ranks=st.integers(1, 8), piece=st.integers(1, 64))
@example(fmt="gr", items=[("record", 1, 2, 3), ("record", 2, 3, 4), ("record", 3, 4, 1)],
         final_newline=True, ranks=4, piece=1)  # a 3-arc file on 4 ranks
@example(fmt="el", items=[("record", 1, 2, 1), ("comment", 400), ("record", 2, 3, 1)],
         final_newline=False, ranks=8, piece=3)  # a line longer than a rank's range
def test_each_line_is_parsed_by_exactly_one_rank(fmt, items, final_newline, ranks, piece):
    data = _text_file(fmt, items, final_newline)
    header = parse_header(data, fmt)
    body = data[header.body_offset:]
    serial = parse_body(body, header, max_records=header.m)
    assert serial.error is None
    f = io.BytesIO(data)
    slices = []
    for rank in range(ranks):
        a, b = byte_range(len(body), rank, ranks)
        # the rank's stream reader and the pure splitter on the whole body agree
        piece_bytes = read_line_range(f, header.body_offset, a, b, piece=piece)
        start, stop = line_range(body, a, b)
        assert piece_bytes.tobytes() == body[start:stop]
        if start < stop:  # a slice starts at a line start that lies in the rank's range
            assert a <= start < b and (start == 0 or body[start - 1] == 10)
        slices.append(piece_bytes)
    assert b"".join(s.tobytes() for s in slices) == body  # each byte exactly once
    parts = [parse_body(s, header) for s in slices]
    assert all(p.error is None for p in parts)
    for name in ("src", "dst", "weights"):
        joined = np.concatenate([getattr(p, name) for p in parts])
        np.testing.assert_array_equal(joined, getattr(serial, name))


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.text(alphabet="ab ,\r", max_size=12), max_size=12),
       junk=st.binary(max_size=6), ranks=st.integers(1, 6), piece=st.integers(1, 16))
def test_read_line_range_stops_where_the_body_ends(rows, junk, ranks, piece):
    # a table's rows followed by bytes that are not rows (blank lines): with end=, no
    # rank reads past the rows, and the ranks' slices are the rows, each once
    body = "\n".join(rows).encode()
    f = io.BytesIO(b"time,event\n" + body + b"\n \n\n" + junk)
    pieces = body.split(b"\n")
    lines = [p + b"\n" for p in pieces[:-1]] + [pieces[-1]]
    starts = np.cumsum([0] + [len(x) for x in lines[:-1]])
    slices = []
    for rank in range(ranks):
        a, b = byte_range(len(body), rank, ranks)
        got = read_line_range(f, 11, a, b, end=len(body), piece=piece).tobytes()
        assert got == b"".join(x for s, x in zip(starts, lines, strict=True) if a <= s < b)
        slices.append(got)
    assert b"".join(slices) == body


def test_line_range_of_a_range_without_a_line_start_is_empty():
    body = b"a 1 2 3\na 2 3 4\na 3 4 1\n"  # 24 bytes, lines at 0, 8, 16
    assert [line_range(body, *byte_range(24, r, 4)) for r in range(4)] == [
        (0, 8), (8, 16), (16, 24), (24, 24)]
    long = b"0 1\n# " + b"x" * 100 + b"\n1 2\n"
    got = [line_range(long, *byte_range(len(long), r, 5)) for r in range(5)]
    assert got == [(0, 107), (107, 107), (107, 107), (107, 107), (107, 111)]


# ---------------------------------------------------------------- fuzzing every text reader

VALID = {
    "gr": b"c x\np sp 4 5\na 1 2 10\na 2 3 7\n\na 3 4 2.5\na 4 1 0\na 1 3 12\n",
    "mtx": b"%%MatrixMarket matrix coordinate real symmetric\n% c\n4 4 3\n1 2 1.5\n3 2 2\n4 1 7\n",
    "el": b"# Undirected graph\n# Nodes: 5\n0 1\n1 2\n  \n3 4\n",
    "wel": b"# Nodes: 5\n0 1 2\n1 2 3.5\n3 4 1e3\n",
}
TOKENS = [
    b"\n", b" ", b"\t", b"\r\n", b"-", b"+", b"0", b"9", b"99999999999", b"4294967296",
    b"1e308", b"1e999", b"5e-324", b"nan", b"inf", b"-5", b".", b"e", b"#", b"%", b"c ",
    b"a ", b"p sp ", b"\x00", b"\xff", b"\xe9", b"Nodes: 99999999999", b"general",
]
edits_strategy = st.lists(
    st.tuples(st.sampled_from(["insert", "delete", "replace"]), st.integers(0, 120),
              st.one_of(st.sampled_from(TOKENS), st.binary(max_size=4))),
    max_size=6,
)


def _mutate(data: bytes, edits) -> bytes:
    out = bytearray(data)
    for op, pos, junk in edits:
        pos = min(pos, len(out))
        if op == "insert":
            out[pos:pos] = junk
        elif op == "delete":
            del out[pos:pos + max(len(junk), 1)]
        else:
            out[pos:pos + len(junk)] = junk
    return bytes(out)


def _check_outcome(path: Path, rule: str):
    """A Graph that keeps the promises, or a one-line user error naming the file."""
    try:
        g = read_graph(path, weights=rule)
    except (GraphFormatError, LimitError) as exc:
        text = str(exc)
        assert text.startswith(f"{path}: "), text
        assert "\n" not in text
        return None
    assert isinstance(g, Graph)
    assert g.indptr.shape == (g.n + 1,) and g.indptr[-1] == g.nnz
    assert g.nnz == 0 or 0 <= int(g.indices.min()) <= int(g.indices.max()) < g.n
    assert not np.isnan(g.weights).any()
    if rule == "nonnegative":
        assert not (g.weights < 0).any()
    return g


@pytest.mark.parametrize("comp", ["", ".gz"])
@pytest.mark.parametrize("fmt", ["gr", "mtx", "el", "wel"])
@FUZZ
@given(data=st.one_of(st.binary(max_size=200), edits_strategy),
       rule=st.sampled_from(["any", "nonnegative", "finite"]))
def test_fuzzed_text_files_give_a_graph_or_a_one_line_error(
    tmp_path, small_limits, fmt, comp, data, rule
):
    raw = data if isinstance(data, bytes) else _mutate(VALID[fmt], data)
    path = _write(tmp_path / f"f.{fmt}{comp}", raw, comp)
    _check_outcome(path, rule)


@pytest.mark.parametrize("comp", [".gz", ".bz2", ".xz"])
@FUZZ
@given(edits=edits_strategy, cut=st.integers(0, 400))
def test_corrupt_or_truncated_compressed_files_are_format_errors(
    tmp_path, small_limits, comp, edits, cut
):
    packed = _write(tmp_path / f"ok.gr{comp}", VALID["gr"], comp).read_bytes()
    bad = _mutate(packed, edits)[: max(cut, 1)]
    path = tmp_path / f"bad.gr{comp}"
    path.write_bytes(bad)
    _check_outcome(path, "any")


@pytest.mark.parametrize("comp, message", [
    (".gz", "truncated file"), (".bz2", "truncated file"), (".xz", "truncated file"),
])
def test_truncated_compressed_file_names_the_file(tmp_path, comp, message):
    packed = _write(tmp_path / f"ok.gr{comp}", VALID["gr"] * 50, comp).read_bytes()
    path = tmp_path / f"cut.gr{comp}"
    path.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(GraphFormatError, match=rf"cut\.gr\{comp}: cannot decompress .*{message}"):
        read_graph(path)


def test_bad_zlib_and_lzma_data_name_the_file(tmp_path):
    gz = bytearray(gzip.compress(VALID["gr"] * 20))
    gz[12:20] = b"\xff" * 8  # inside the deflate stream
    (tmp_path / "z.gr.gz").write_bytes(bytes(gz))
    with pytest.raises(GraphFormatError, match=r"z\.gr\.gz: cannot decompress \(\.gz\): corrupt"):
        read_graph(tmp_path / "z.gr.gz")
    (tmp_path / "x.mtx.xz").write_bytes(b"\xfd7zXZ\x00" + b"\x01" * 40)
    with pytest.raises(GraphFormatError, match=r"x\.mtx\.xz: cannot decompress \(\.xz\)"):
        read_graph(tmp_path / "x.mtx.xz")


@pytest.mark.parametrize("fmt, text, line", [
    ("gr", b"p sp 3 1\na 1 2 3\xe9\n", 2),
    ("gr", b"c caf\xe9\np sp\xa0 3 1\n", 2),
    ("mtx", b"%%MatrixMarket matrix coordinate r\xe9al general\n", 1),
    ("el", b"0 1\n1 \xff\n", 2),
])
def test_non_utf8_bytes_are_format_errors_with_the_line(tmp_path, fmt, text, line):
    path = _write(tmp_path / f"latin.{fmt}", text)
    with pytest.raises(GraphFormatError, match=rf"latin\.{fmt}: line {line}: "):
        read_graph(path)


def test_a_latin1_comment_is_just_a_comment(tmp_path):
    g = read_graph(_write(tmp_path / "c.el", b"# caf\xe9\n0 1\n"))
    assert g.n == 2 and g.nnz == 1


# ---------------------------------------------------------------- blank lines, weights, lines


@pytest.mark.parametrize("fmt", ["gr", "mtx", "el", "wel"])
def test_whitespace_only_lines_are_accepted_everywhere(tmp_path, fmt):
    clean = {
        "gr": "c x\np sp 3 2\na 1 2 5\na 2 3 1\n",
        "mtx": "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 5\n2 3 1\n",
        "el": "# Nodes: 3\n0 1\n1 2\n",
        "wel": "0 1 5\n1 2 1\n",
    }[fmt]
    lines = clean.splitlines()
    blanks = [" ", "\t", "  \r", " \x0b "]
    # a whitespace-only line after every line but the first (a Matrix Market banner)
    dirty = lines[0] + "\n" + "".join(
        f"{blanks[i % 4]}\n{ln}\n" for i, ln in enumerate(lines[1:])) + " \t"
    a = read_graph(_write(tmp_path / f"a.{fmt}", clean.encode()))
    b = read_graph(_write(tmp_path / f"b.{fmt}", dirty.encode()))
    assert (a.n, a.directed) == (b.n, b.directed)
    for name in ("indptr", "indices", "weights"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


WEIGHT_CASES = [
    # (name, text, rule, expected message after "name: ")
    ("g.gr", "c x\np sp 3 3\n\na 1 2 4\nc y\na 2 3 -5\na 3 1 nan\n", "nonnegative",
     "line 6: negative edge weight -5 in arc 2 3 (weights must be >= 0)"),
    ("g.gr", "p sp 3 2\na 1 2 4\na 3 1 NaN\n", "any",
     "line 3: edge weight NaN in arc 3 1 is not a number"),
    ("g.mtx", "%%MatrixMarket matrix coordinate real symmetric\n%c\n3 3 2\n2 1 1\n3 2 -0.5\n",
     "nonnegative", "line 5: negative edge weight -0.5 in entry 3 2 (weights must be >= 0)"),
    ("g.wel", "# c\n0 1 2\n1 2 -inf\n", "nonnegative",
     "line 3: negative edge weight -inf in edge 1 2 (weights must be >= 0)"),
    ("g.wel", "0 1 2\n1 2 inf\n", "finite",
     "line 2: infinite edge weight inf in edge 1 2 (weights must be finite)"),
    ("g.el", "0 1 1\n1 2 3\n2 0 -1e3\n", "nonnegative",
     "line 3: negative edge weight -1e3 in edge 2 0 (weights must be >= 0)"),
]


@pytest.mark.parametrize("comp", ["", ".gz"])
@pytest.mark.parametrize("name, text, rule, message", WEIGHT_CASES)
def test_bad_weights_are_reported_with_file_line_and_ids_as_written(
    tmp_path, name, text, rule, message, comp
):
    path = _write(tmp_path / f"{name}{comp}", text.encode(), comp)
    with pytest.raises(GraphFormatError) as err:
        read_graph(path, weights=rule)
    assert str(err.value) == f"{path}: {message}"


def test_negative_weights_are_still_read_by_default(tmp_path):
    g = read_graph(_write(tmp_path / "n.gr", b"p sp 2 1\na 1 2 -5\n"))
    assert g.weights.tolist() == [-5.0]
    with pytest.raises(ValueError, match="weights must be one of"):
        read_graph(tmp_path / "n.gr", weights="positive")


def test_the_cli_names_the_file_and_line_of_a_negative_weight(tmp_path):
    path = _write(tmp_path / "neg.gr", b"c\np sp 3 2\na 1 2 1\na 2 3 -5\n")
    run = run_capped(["sssp", str(path), "--source", "1"], timeout=300)
    assert_one_line_error(run, f"{path}: line 4: negative edge weight -5 in arc 2 3")


# ---------------------------------------------------------------- .npz: stored metadata


GOOD = dict(
    indptr=np.array([0, 1, 2, 2]), indices=np.array([1, 2], dtype=np.int32),
    weights=np.array([1.5, 2.0]), n=np.int64(3), directed=np.bool_(True),
    format_version=np.int64(1),
)


def _npz(path: Path, **changes) -> Path:
    with open(path, "wb") as f:
        np.savez(f, **{**GOOD, **changes})
    return path


def test_npz_stored_undirected_flag_is_checked_against_the_arrays(tmp_path):
    path = _npz(tmp_path / "a.npz", directed=np.bool_(False))
    for directed in (None, False):
        with pytest.raises(GraphFormatError, match=re.escape(
                f"{path}: stores directed=False, but its arrays are not symmetric: stored edge "
                "0 (0 -> 1, weight 1.5) has no reverse 1 -> 0 of the same weight")):
            read_graph(path, directed=directed)
    # the same pairs both ways but with another weight one way is not symmetric either
    path = _npz(tmp_path / "w.npz", indptr=np.array([0, 1, 2, 2]),
                indices=np.array([1, 0], dtype=np.int32), weights=np.array([1.0, 2.0]),
                directed=np.bool_(False))
    with pytest.raises(GraphFormatError, match=r"w\.npz: stores directed=False"):
        read_graph(path)


def test_npz_written_undirected_graphs_still_read_back(tmp_path):
    g = Graph.from_edges([0, 1, 2, 0], [1, 2, 0, 1], [3.0, 1.0, 2.0, 0.5], directed=False)
    write_graph(g, tmp_path / "u.npz")
    h = read_graph(tmp_path / "u.npz")
    assert not h.directed and np.array_equal(h.weights, g.weights)
    assert read_graph(tmp_path / "u.npz", directed=True).directed


@pytest.mark.parametrize("changes, message", [
    (dict(n=np.array([3])), "cannot load the array 'n': expected a scalar, got shape (1,)"),
    (dict(n=np.int64(5)), "indptr has shape (4,), expected (6,) for the stored n=5"),
    (dict(directed=np.int64(1)), "cannot load the array 'directed': expected a boolean"),
    (dict(weights=np.array([1 + 2j, 3])), "cannot load the array 'weights': expected real "
     "numbers, got dtype complex128"),
    (dict(weights=np.array(["a", "b"])), "cannot load the array 'weights': expected real"),
    (dict(indptr=np.array([0.0, 1, 2, 2])), "cannot load the array 'indptr': expected "
     "integers, got dtype float64"),
    (dict(indices=np.array([[1, 2]])), "cannot load the array 'indices': expected a 1-D "
     "array, got shape (1, 2)"),
    (dict(format_version=np.array("1")), "cannot load the array 'format_version'"),
    (dict(weights=np.array([1.0, np.nan])), "edge weight nan in stored edge 1 (1 -> 2, "
     "0-based row and column) is not a number"),
])
def test_npz_arrays_of_the_wrong_kind_name_the_file(tmp_path, changes, message):
    path = _npz(tmp_path / "k.npz", **changes)
    with pytest.raises(GraphFormatError) as err:
        read_graph(path)
    assert str(err.value).startswith(f"{path}: {message}"), str(err.value)


def test_npz_negative_weight_names_the_file_and_edge(tmp_path):
    path = _npz(tmp_path / "neg.npz", weights=np.array([1.0, -4.0]))
    assert read_graph(path).weights.tolist() == [1.0, -4.0]
    with pytest.raises(GraphFormatError, match=re.escape(
            f"{path}: negative edge weight -4.0 in stored edge 1 (1 -> 2, 0-based row and "
            "column) (weights must be >= 0)")):
        read_graph(path, weights="nonnegative")


def _npy_bytes(shape: str, descr: str = "<i8", data: bytes = b"") -> bytes:
    head = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    head = head.ljust(117) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head + data


def _npy_of(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _zip_npz(path: Path, members: dict, method=zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", method) as z:
        for key, arr in GOOD.items():
            z.writestr(f"{key}.npy", members.get(key, _npy_of(arr)))
    return path


def test_npz_declared_shapes_are_checked_before_reading(tmp_path):
    path = _zip_npz(tmp_path / "huge.npz", {"indptr": _npy_bytes("(1000000000000,)")})
    with pytest.raises(GraphFormatError, match=re.escape(
            f"{path}: array 'indptr' declares shape (1000000000000,) (1000000000000 elements, "
            "8000000000000 bytes), but the archive holds only 0 bytes of it")):
        read_graph(path)
    path = _zip_npz(tmp_path / "short.npz",
                    {"weights": _npy_bytes("(2,)", "<f8", struct.pack("<d", 1.0))})
    with pytest.raises(GraphFormatError, match=r"short\.npz: array 'weights' declares shape"):
        read_graph(path)


def test_npz_members_that_expand_too_far_are_refused_before_decompression(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("GRAPHPAR_MAX_DECOMPRESSED", "1M")
    zeros = np.zeros(1 << 18, dtype=np.int64)  # 2 MiB of zeros, a few kB compressed
    path = _zip_npz(tmp_path / "zeros.npz", {"indptr": _npy_of(zeros)}, zipfile.ZIP_DEFLATED)
    with pytest.raises(LimitError, match=(
            r"zeros\.npz: array 'indptr' declares shape \(262144,\) \(262144 elements\) and "
            r"decompresses from \d+ to \d+ bytes, more than the 1048576 bytes allowed for it "
            r"\(set GRAPHPAR_MAX_DECOMPRESSED")):
        read_graph(path)
    monkeypatch.setenv("GRAPHPAR_MAX_DECOMPRESSED", "64M")
    with pytest.raises(GraphFormatError, match="indptr has shape"):  # the real data, checked
        read_graph(path)


def test_compressed_files_are_streamed_within_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHPAR_MAX_DECOMPRESSED", "1M")
    text = b"p sp 2 1\n" + b"c " + b"x" * 100 + b"\n" * 20_000 + b"a 1 2 3\n"
    for name in ("bomb.gr.gz", "bomb.gr.bz2", "bomb.gr.xz"):
        path = _write(tmp_path / name, text, Path(name).suffix)
        assert read_graph(path).nnz == 1
    path = _write(tmp_path / "big.gr.gz", b"p sp 2 0\n" + b"c\n" * (1 << 20), ".gz")
    with pytest.raises(LimitError, match=(
            rf"big\.gr\.gz: decompresses to more than 1048576 bytes \(from {os.path.getsize(path)}"
            r" compressed bytes\).*GRAPHPAR_MAX_DECOMPRESSED")):
        read_graph(path)
    npz = tmp_path / "g.npz.gz"
    ids = np.arange(200_000)
    write_graph(Graph.from_edges(ids, ids * 7 % ids.size), npz)  # about 4 MB of arrays
    with pytest.raises(LimitError, match=r"g\.npz\.gz: decompresses to more than"):
        read_graph(npz)


@pytest.mark.parametrize("name, text, needle", [
    ("p.gr", "c\np sp 1000000000 2\na 1 2 1\na 2 3 1\n",
     "p.gr: line 2: declares 1000000000 vertices but holds only 2 edges"),
    ("s.mtx", "%%MatrixMarket matrix coordinate pattern general\n%\n99999999 99999999 1\n1 2\n",
     "s.mtx: line 3: declares 99999999 vertices but holds only 1 edges"),
    ("n.el", "# Directed graph\n# Nodes: 1000000000 Edges: 1\n0 1\n",
     "n.el: line 2: declares 1000000000 vertices but holds only 1 edges"),
    ("i.wel", "0 1 1\n\n1 2147483648 2\n",
     "i.wel: line 3: has vertex id 2147483648, so needs 2147483649 vertices but holds only 2 "
     "edges"),
])
def test_declared_vertex_counts_beyond_the_edges_are_a_limit_error(tmp_path, name, text, needle):
    path = _write(tmp_path / name, text.encode())
    with pytest.raises(LimitError) as err:
        read_graph(path)
    assert needle in str(err.value) and "GRAPHPAR_MAX_VERTICES" in str(err.value)
    assert str(err.value).startswith(str(tmp_path))


def test_blank_lines_cost_no_record_buffers():
    # 16 million newlines: 640 MB of record buffers if they were sized by lines
    header = parse_header(b"p sp 2 1\n", "gr")
    body = np.frombuffer(b"\n" * (16 << 20) + b"a 1 2 3\n", dtype=np.uint8)
    tracemalloc.start()
    try:
        parsed = parse_body(body, header, max_records=header.m)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert parsed.error is None and parsed.src.tolist() == [0] and parsed.weights[0] == 3.0
    assert peak < 100 << 20, peak


# ---------------------------------------------------------------- capped subprocesses


def _gz_bomb(path: Path) -> Path:
    """About 2 MB of gzip members that expand to 512 MiB of comment lines."""
    line = b"c " + b"x" * 70 + b"\n"
    member = gzip.compress(line * ((8 << 20) // len(line)), 9)
    with open(path, "wb") as f:
        f.write(gzip.compress(b"p sp 2 0\n"))
        for _ in range(64):
            f.write(member)
    return path


def _zeros_npz(path: Path) -> Path:
    """A deflated .npz whose indptr is 320 MiB of zeros (under 1 MB on disk)."""
    count = (320 << 20) // 8
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        with z.open("indptr.npy", "w", force_zip64=True) as m:
            m.write(_npy_bytes(f"({count},)"))
            block = bytes(8 << 20)
            for _ in range(40):
                m.write(block)
        for key, arr in GOOD.items():
            if key != "indptr":
                z.writestr(f"{key}.npy", _npy_of(arr))
    return path


def _bombs(folder: Path) -> dict[str, tuple[Path, str]]:
    """Tiny files that declare (or expand to) far more than they hold: path, message needle."""
    folder.mkdir(exist_ok=True)
    out = {
        "p-line": (_write(folder / "p.gr", b"p sp 1000000000 2\na 1 2 3\na 2 1 4\n"),
                   "declares 1000000000 vertices"),
        "edge-id": (_write(folder / "id.el", b"0 2147483648\n"), "vertex id 2147483648"),
        "nodes": (_write(folder / "nodes.txt", b"# Nodes: 1000000000\n0 1\n"),
                  "declares 1000000000 vertices"),
        "mtx-size": (_write(folder / "s.mtx", b"%%MatrixMarket matrix coordinate real general\n"
                            b"1000000000 1000000000 1\n1 2 1\n"), "declares 1000000000 vertices"),
        "npy-header": (_zip_npz(folder / "h.npz", {"indptr": _npy_bytes("(1000000000000,)")}),
                       "declares shape (1000000000000,)"),
        "gz-bomb": (_gz_bomb(folder / "bomb.gr.gz"), "decompresses to more than 268435456"),
        "npz-zeros": (_zeros_npz(folder / "zeros.npz"), "more than the 268435456 bytes"),
    }
    return out


BOMBS = ["p-line", "edge-id", "nodes", "mtx-size", "npy-header", "gz-bomb", "npz-zeros"]


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    return _bombs(tmp_path_factory.mktemp("bombs"))


# Each bomb runs serially and under one MPI size (alternating 2 and 4), which keeps
# the number of slow MPI start-ups down while every class runs under both.
@pytest.mark.parametrize("ranks", [None, "mpi"])
@pytest.mark.parametrize("bomb", BOMBS)
def test_memory_bombs_end_with_one_line_naming_the_file_and_limit(bombs, bomb, ranks):
    path, needle = bombs[bomb]
    if ranks == "mpi":
        ranks = 2 if BOMBS.index(bomb) % 2 else 4
    run = run_capped(["sssp", str(path), "--source", "1"], ranks=ranks, timeout=300)
    line = assert_one_line_error(run, str(path), needle)
    limits = ("GRAPHPAR_MAX_VERTICES", "GRAPHPAR_MAX_DECOMPRESSED", "holds only")
    assert any(x in line for x in limits), line


# ---------------------------------------------------------------- serial and MPI agree


def _agreement_files(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    put = {
        "three.gr": b"p sp 4 3\na 1 2 3\na 2 3 4\na 3 4 1\n",
        "long_comment.gr": b"p sp 4 3\na 1 2 3\nc " + b"y" * 5000 + b"\na 2 3 4\na 3 4 1\n",
        "long_first.el": b"# " + b"z" * 3000 + b"\n0 1 2\n1 2 3\n",
        "one_long_line.wel": b"0 1 " + b"0" * 4000 + b"7\n",
        "blanks.mtx": b"%%MatrixMarket matrix coordinate real symmetric\n \n%c\n\t\n3 3 2\n"
                      b"  \n2 1 1\n \r\n3 2 5\n\n",
        "neg_late.gr": b"p sp 3 4\na 1 2 1\na 2 3 1\na 3 1 1\n\na 1 3 -2\n",
        "nan.wel": b"0 1 2\n1 2 nan\n",
        "too_few.gr": b"p sp 3 3\na 1 2 1\na 2 3 1\n",
        "too_many.mtx": b"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 1\n2 3 1\n",
        "bad_token.el": b"0 1\n1 2\n2 3\n3 4\n4 x\n",
        "latin.gr": b"p sp 3 1\na 1 2 3\xe9\n",
        "big_id.el": b"0 1\n1 2147483648\n",
        "nodes.el": b"# Nodes: 1000000000\n0 1\n",
        "p_line.gr": b"p sp 1000000000 2\na 1 2 3\na 2 1 4\n",
    }
    for name, data in put.items():
        _write(folder / name, data)
    _write(folder / "three.gr.gz", put["three.gr"], ".gz")
    packed = gzip.compress(put["long_comment.gr"])
    (folder / "truncated.gr.gz").write_bytes(packed[: len(packed) - 20])
    (folder / "corrupt.el.xz").write_bytes(b"\xfd7zXZ\x00" + b"\x01" * 40)
    _npz(folder / "asym.npz", directed=np.bool_(False))
    _npz(folder / "narray.npz", n=np.array([3]))
    _npz(folder / "neg.npz", weights=np.array([1.0, -4.0]))
    _zip_npz(folder / "header.npz", {"indptr": _npy_bytes("(1000000000000,)")})
    # random files: line lengths from 0 to past a rank's share, comments, blank lines
    rng = np.random.default_rng(10)
    for k in range(12):
        lines, m = [], 0
        for _ in range(int(rng.integers(0, 12))):
            kind = rng.integers(0, 4)
            if kind == 0:
                lines.append("c " + "x" * int(rng.integers(0, 300)))
            elif kind == 1:
                lines.append(" " * int(rng.integers(0, 3)))
            else:
                u, v = rng.integers(1, 6, 2)
                digits = "0" * int(rng.integers(0, 40))  # weights up to 48 characters
                lines.append(f"a {u} {v} {int(rng.integers(0, 10**9))}{digits}")
                m += 1
        text = f"p sp 5 {m}\n" + "\n".join(lines) + ("\n" if k % 2 else "")
        _write(folder / f"random{k}.gr", text.encode())
    return folder


@pytest.mark.mpi
@pytest.mark.parametrize("nranks", [4])  # other splits: the property test above, 1..8 ranks
def test_parallel_reader_agrees_with_the_serial_one(tmp_path, nranks):
    folder = _agreement_files(tmp_path / "files")
    proc = run_mpi_script("reader_agree.py", nranks, folder,
                          preexec_fn=limit_memory(MEMORY_CAP))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    files = sorted(p.name for p in folder.iterdir())
    assert f"DONE {len(files)}" in proc.stdout, out
    for name in files:
        assert f"SAME {name}\n" in proc.stdout, (name, out)
