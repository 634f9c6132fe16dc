"""Graph I/O: readers against independent references, round trips, and malformed-file errors."""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive_container import graph_edge_dict, same_edges
from naive_formats import min_dict, read_gr_naive
from scipy.sparse.csgraph import dijkstra

from graphpar import Graph, read_graph, write_graph
from graphpar.io import GraphFormatError, LimitError, detect_format
from graphpar.io._lines import line_number, line_range
from graphpar.io._text import body_error, parse_body, parse_header, read_header

SUFFIXES = ["gr", "mtx", "el", "wel", "txt", "npz"]
COMPRESSIONS = ["", ".gz", ".bz2", ".xz"]


def _write(tmp_path, name, text, comp=None):
    path = tmp_path / name
    data = text.encode() if isinstance(text, str) else text
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(comp)
    if opener is None:
        path.write_bytes(data)
    else:
        with opener(path, "wb") as f:
            f.write(data)
    return path


def _edges(g):
    return graph_edge_dict(g)


# ---------------------------------------------------------------- the real Rome graph


def test_rome99_matches_an_independent_parse_and_scipy(rome_path):
    g = read_graph(rome_path)
    n, arcs = read_gr_naive(rome_path)
    assert g.n == n == 3353 and g.directed
    ref = min_dict(arcs)
    assert _edges(g) == ref
    rows, cols = zip(*ref.keys(), strict=True)
    A = sp.csr_array((list(ref.values()), (rows, cols)), shape=(n, n))
    sources = [0, 1, 1000, 2500, 3352]
    np.testing.assert_array_equal(
        dijkstra(g.to_scipy(), indices=sources), dijkstra(A, indices=sources)
    )


def test_rome99_compressed_copy_reads_the_same(rome_path, tmp_path):
    data = rome_path.read_bytes()
    g = read_graph(rome_path)
    for comp in COMPRESSIONS[1:]:
        h = read_graph(_write(tmp_path, f"rome.gr{comp}", data, comp))
        assert np.array_equal(h.indptr, g.indptr) and np.array_equal(h.weights, g.weights)


# ---------------------------------------------------------------- format detection


@pytest.mark.parametrize(
    "name, expected",
    [
        ("a.gr", ("gr", None)), ("a.GR.GZ", ("gr", ".gz")), ("x.y.mtx.bz2", ("mtx", ".bz2")),
        ("e.txt.xz", ("el", ".xz")), ("e.el", ("el", None)), ("w.wel", ("wel", None)),
        ("g.npz", ("npz", None)), ("m.mm", ("mtx", None)),
    ],
)
def test_detect_format(name, expected):
    assert detect_format(name) == expected


def test_format_argument_overrides_the_suffix(tmp_path):
    p = _write(tmp_path, "edges.csv", "0 1 2.5\n1 2 1\n")
    assert _edges(read_graph(p, format="wel")) == {(0, 1): 2.5, (1, 2): 1.0}
    assert _edges(read_graph(p, "edgelist")) == {(0, 1): 2.5, (1, 2): 1.0}
    # a .csv file is a CSV edge list with a header (tests/test_labels.py): this one is not
    with pytest.raises(ValueError, match=r"edges\.csv: line 1: the header has one column"):
        read_graph(p)
    with pytest.raises(ValueError, match="cannot tell the graph format of .*edges.dat"):
        read_graph(p.with_suffix(".dat"))
    with pytest.raises(ValueError, match="format must be one of"):
        read_graph(p, format="graphml")
    with pytest.raises(ValueError, match="cannot tell the graph format"):
        write_graph(Graph.from_edges([0], [1]), tmp_path / "out.json")


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        read_graph(tmp_path / "nope.gr")


# ---------------------------------------------------------------- DIMACS details


def test_gr_parsing_details(tmp_path):
    text = (
        "c leading comment\r\n"
        "\r\n"
        "p   sp\t4  5\r\n"
        "c comment between arcs\r\n"
        "a 1 2 10\r\n"
        "\ta\t2 3  +7 \r\n"
        "a 3 4 2.5e1\r\n"
        "\n"
        "a 4 1 0\r\n"
        "a 1 2 3"  # no final newline, duplicate keeps min
    )
    g = read_graph(_write(tmp_path, "d.gr", text))
    assert g.n == 4 and g.directed
    assert _edges(g) == {(0, 1): 3.0, (1, 2): 7.0, (2, 3): 25.0, (3, 0): 0.0}
    u = read_graph(tmp_path / "d.gr", directed=False)
    assert not u.directed and _edges(u)[(1, 0)] == 3.0


def test_gr_isolated_vertices_and_no_arcs(tmp_path):
    g = read_graph(_write(tmp_path, "e.gr", "p sp 6 0\n"))
    assert g.n == 6 and g.nnz == 0


# ---------------------------------------------------------------- Matrix Market


def test_mtx_against_scipy_mmread_and_mmwrite(tmp_path):
    rng = np.random.default_rng(0)
    A = sp.random_array((20, 20), density=0.2, rng=rng, format="coo")
    p = tmp_path / "a.mtx"
    scipy.io.mmwrite(p, A)  # an independent writer
    g = read_graph(p)
    assert g.directed
    ref = Graph.from_scipy(scipy.io.mmread(p))
    assert same_edges(_edges(g), _edges(ref))


def test_mtx_symmetric_is_undirected_by_default(tmp_path):
    text = (
        "%%MatrixMarket matrix coordinate integer symmetric\n"
        "% a comment\n"
        "\n"
        "3 3 3\n"
        "2 1 4\n"
        "3 3 1\n"
        "3 2 6\n"
    )
    p = _write(tmp_path, "s.mtx", text)
    g = read_graph(p)
    assert not g.directed
    expected = {(1, 0): 4.0, (0, 1): 4.0, (2, 2): 1.0, (2, 1): 6.0, (1, 2): 6.0}
    assert _edges(g) == expected
    d = read_graph(p, directed=True)
    assert d.directed and _edges(d) == expected
    ref = Graph.from_scipy(scipy.io.mmread(p))
    assert _edges(ref) == expected


def test_mtx_pattern_and_real(tmp_path):
    p = _write(
        tmp_path, "p.mtx",
        "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n",
    )
    assert _edges(read_graph(p)) == {(0, 1): 1.0, (1, 0): 1.0}
    p = _write(
        tmp_path, "r.mtx",
        "%%matrixmarket MATRIX Coordinate REAL General\n2 2 2\n1 2 -1.5e-3\n2 1 .25\n",
    )
    assert _edges(read_graph(p)) == {(0, 1): -0.0015, (1, 0): 0.25}


@pytest.mark.parametrize(
    "banner, expected",
    [
        ("%%MatrixMarket matrix array real general", "expected the 'coordinate' format"),
        ("%%MatrixMarket matrix coordinate complex general",
         "expected the field real, integer or pattern"),
        ("%%MatrixMarket matrix coordinate real skew-symmetric",
         "expected the symmetry general or symmetric"),
        ("%%MatrixMarket vector coordinate real general", "expected the Matrix Market banner"),
        ("3 3 1", "expected the Matrix Market banner"),
    ],
)
def test_mtx_unsupported_banners(tmp_path, banner, expected):
    p = _write(tmp_path, "b.mtx", f"{banner}\n3 3 1\n1 1 1\n")
    with pytest.raises(GraphFormatError, match=rf"b\.mtx: line 1: {re.escape(expected)}"):
        read_graph(p)


# ---------------------------------------------------------------- edge lists


def test_snap_edge_list_header(tmp_path):
    text = (
        "# Undirected graph (each unordered pair of nodes is saved once): demo\n"
        "# Nodes: 10 Edges: 3\n"
        "# FromNodeId\tToNodeId\n"
        "0\t1\n"
        "1\t2\n"
        "% another comment style\n"
        "4\t2\n"
    )
    p = _write(tmp_path, "snap.txt", text)
    g = read_graph(p)
    assert g.n == 10 and not g.directed
    assert set(_edges(g)) == {(0, 1), (1, 0), (1, 2), (2, 1), (4, 2), (2, 4)}
    d = read_graph(p, directed=True)
    assert d.directed and set(_edges(d)) == {(0, 1), (1, 2), (4, 2)}


def test_edge_list_ids_beyond_the_nodes_count_extend_n(tmp_path):
    p = _write(tmp_path, "e.el", "# Directed graph\n# Nodes: 3 Edges: 1\n0 7 2\n")
    g = read_graph(p)
    assert g.n == 8 and g.directed and _edges(g) == {(0, 7): 2.0}


def test_weighted_edge_list_needs_three_columns(tmp_path):
    p = _write(tmp_path, "w.wel", "# c\n0 1\n")
    msg = r"w\.wel: line 2: expected 3 columns 'u v w', got 2"
    with pytest.raises(GraphFormatError, match=msg):
        read_graph(p)
    p = _write(tmp_path, "x.el", "0 1 2 3\n")
    with pytest.raises(GraphFormatError, match=r"x\.el: line 1: expected 2 or 3 columns"):
        read_graph(p)


def test_empty_edge_list(tmp_path):
    g = read_graph(_write(tmp_path, "empty.el", "# nothing here\n"))
    assert g.n == 0 and g.nnz == 0


# ---------------------------------------------------------------- exact weights


number_texts = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda x: f"{x:.6f}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.3e}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.17E}"),
    st.integers(-(10**25), 10**25).map(str),
    st.tuples(st.integers(10**14, 10**18 - 1), st.integers(-24, 24)).map(
        lambda t: f"{t[0]}e{t[1]}"
    ),
    st.tuples(st.integers(0, 10**9), st.integers(0, 10**9)).map(lambda t: f"{t[0]}.{t[1]:09d}"),
    st.sampled_from(["inf", "-inf", "+Infinity", "1e400", "-1e-400", "0", "-0.0", ".5", "5.",
                     "000123.4500", "1E5", "+3", "4.9e-324", "2.2250738585072014e-308"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(number_texts, min_size=1, max_size=20))
def test_weights_are_parsed_exactly_like_python_float(tokens):
    header = parse_header(b"", "wel")
    body = "".join(f"{i} {i + 1} {t}\n" for i, t in enumerate(tokens)).encode()
    r = parse_body(body, header)
    assert r.error is None
    expected = np.array([float(t) for t in tokens])
    np.testing.assert_array_equal(r.weights, expected)
    assert np.array_equal(np.signbit(r.weights), np.signbit(expected))
    np.testing.assert_array_equal(r.src, np.arange(len(tokens)))


def test_many_long_decimals_are_exact():
    rng = np.random.default_rng(11)
    x = np.concatenate([
        rng.random(40_000),
        rng.random(20_000) * 10.0 ** rng.integers(-20, 20, 20_000),
        np.ldexp(rng.random(20_000) + 1.0, rng.integers(-60, 60, 20_000)),
    ])
    texts = [repr(v) for v in x.tolist()] + [f"{v:.18e}" for v in x[:20_000].tolist()]
    header = parse_header(b"", "wel")
    body = "".join(f"0 1 {t}\n" for t in texts).encode()
    r = parse_body(body, header)
    assert r.error is None
    np.testing.assert_array_equal(r.weights, [float(t) for t in texts])


def test_decimal_values_certifies_long_mantissas_exactly():
    # 16 to 18 digit mantissas: certified by the double-double residual, or left NaN
    # for the correctly rounded slow parser, never a wrong value
    from graphpar.kernels.parse import decimal_values

    rng = np.random.default_rng(5)
    k = 40_000
    mant = rng.integers(10**15, 10**18, k)
    exp = rng.integers(-22, 23, k)
    neg = rng.random(k) < 0.5
    out = np.empty(k)
    decimal_values(mant, 2 * exp + neg, out)
    expected = np.array([float(f"{'-' if s else ''}{m}e{e}")
                         for m, e, s in zip(mant.tolist(), exp.tolist(), neg.tolist(),
                                             strict=True)])
    done = ~np.isnan(out)
    np.testing.assert_array_equal(out[done], expected[done])
    assert done.mean() > 0.99  # the slow path is for rare near-ties only


def test_decimal_values_short_mantissas_and_signed_zeros():
    from graphpar.kernels.parse import decimal_values

    mant = np.array([0, 0, 7, 123456789012345, 5, 999999999999999])
    e10 = np.array([0, 1, 2 * 22, 2 * -22 + 1, 2 * -1, 2 * 7])
    out = np.empty(mant.size)
    decimal_values(mant, e10, out)
    expected = [0.0, -0.0, 7e22, -123456789012345e-22, 0.5, 999999999999999e7]
    np.testing.assert_array_equal(out, expected)
    assert np.signbit(out).tolist() == [False, True, False, True, False, False]


def test_exact_weights_when_the_records_fill_several_buffers(monkeypatch):
    # the slow path and the certified path in a body parsed in several pieces
    import graphpar.io._text as text

    monkeypatch.setattr(text, "_CHUNK_RECORDS", 7)
    rng = np.random.default_rng(3)
    values = rng.random(50) * 10.0 ** rng.integers(-30, 30, 50)
    tokens = [repr(v) for v in values.tolist()] + ["inf", "-0", "1e400", "12.5"]
    body = "".join(f"{i} {i + 1} {t}\n" for i, t in enumerate(tokens)).encode()
    r = parse_body(body, parse_header(b"", "wel"))
    assert r.error is None
    np.testing.assert_array_equal(r.weights, [float(t) for t in tokens])
    assert np.signbit(r.weights[-3])


# ---------------------------------------------------------------- round trips


@st.composite
def graphs(draw):
    n = draw(st.integers(0, 15))
    m = draw(st.integers(0, 40)) if n else 0
    src = draw(st.lists(st.integers(0, max(n - 1, 0)), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, max(n - 1, 0)), min_size=m, max_size=m))
    kind = draw(st.sampled_from(["int", "real", "ones"]))
    if kind == "int":
        w = draw(st.lists(st.integers(0, 10**12), min_size=m, max_size=m))
    elif kind == "real":
        w = draw(
            st.lists(
                st.floats(allow_nan=False, allow_infinity=True, width=64), min_size=m, max_size=m
            )
        )
    else:
        w = [1.0] * m
    directed = draw(st.booleans())
    return Graph.from_edges(
        np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
        np.array(w, dtype=np.float64), n=n, directed=directed,
    )


def _same_graph(a, b):
    return (
        a.n == b.n
        and np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.indices, b.indices)
        and np.array_equal(a.weights, b.weights)
    )


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(g=graphs(), suffix=st.sampled_from(SUFFIXES), comp=st.sampled_from(COMPRESSIONS))
def test_every_format_round_trips(tmp_path, g, suffix, comp):
    path = tmp_path / f"g.{suffix}{comp}"
    write_graph(g, path)
    # .gr has no notion of undirected: read its arcs back as the same kind of graph
    h = read_graph(path, directed=None if suffix != "gr" else g.directed)
    assert h.directed == g.directed
    if suffix in ("el", "wel", "txt") and g.n and g.nnz == 0:
        assert h.n == g.n  # kept by the '# Nodes:' comment
    assert _same_graph(g, h), (suffix, comp)


def test_write_accepts_scipy_and_dense(tmp_path):
    A = sp.csr_array(np.array([[0, 2.0], [0.5, 0]]))
    write_graph(A, tmp_path / "a.gr")
    write_graph(A.toarray(), tmp_path / "b.mtx")
    assert _edges(read_graph(tmp_path / "a.gr")) == {(0, 1): 2.0, (1, 0): 0.5}
    assert _edges(read_graph(tmp_path / "b.mtx")) == {(0, 1): 2.0, (1, 0): 0.5}


def test_written_files_look_like_their_format(tmp_path):
    g = Graph.from_edges([0, 1], [1, 2], [3.0, 4.0], directed=False)
    write_graph(g, tmp_path / "g.gr")
    write_graph(g, tmp_path / "g.mtx")
    write_graph(g, tmp_path / "g.el")
    gr = (tmp_path / "g.gr").read_text().splitlines()
    assert "p sp 3 4" in gr and "a 1 2 3" in gr and "a 2 1 3" in gr
    mtx = (tmp_path / "g.mtx").read_text().splitlines()
    assert mtx[0] == "%%MatrixMarket matrix coordinate integer symmetric"
    assert mtx[1:] == ["3 3 2", "2 1 3", "3 2 4"]
    el = (tmp_path / "g.el").read_text().splitlines()
    assert el[0].startswith("# Undirected graph") and "# Nodes: 3 Edges: 2" in el
    assert el[-2:] == ["0 1 3", "1 2 4"]
    # scipy reads what we write
    M = scipy.io.mmread(tmp_path / "g.mtx").toarray()
    np.testing.assert_array_equal(M, g.to_scipy().toarray())


# ---------------------------------------------------------------- npz


def test_npz_keeps_arrays_and_direction(tmp_path):
    g = Graph.from_edges([0, 2], [1, 1], [0.5, 2.0], n=4, directed=False)
    write_graph(g, tmp_path / "g.npz")
    with np.load(tmp_path / "g.npz", allow_pickle=False) as z:
        assert int(z["format_version"]) == 1 and int(z["n"]) == 4 and not bool(z["directed"])
    h = read_graph(tmp_path / "g.npz")
    assert _same_graph(g, h) and not h.directed
    assert read_graph(tmp_path / "g.npz", directed=True).directed


def test_npz_directed_read_as_undirected_is_symmetrized(tmp_path):
    g = Graph.from_edges([0], [1], [2.0])
    write_graph(g, tmp_path / "d.npz")
    u = read_graph(tmp_path / "d.npz", directed=False)
    assert not u.directed and _edges(u) == {(0, 1): 2.0, (1, 0): 2.0}


def test_bad_npz_files(tmp_path):
    p = tmp_path / "bad.npz"
    p.write_bytes(b"not a zip file")
    with pytest.raises(GraphFormatError, match=r"bad\.npz: not a valid \.npz file"):
        read_graph(p)
    np.savez(tmp_path / "keys.npz", indptr=np.array([0]), indices=np.array([], dtype=np.int32))
    with pytest.raises(GraphFormatError, match=r"keys\.npz: not a graphpar \.npz graph.*missing"):
        read_graph(tmp_path / "keys.npz")
    arrays = dict(
        indptr=np.array([0, 1, 1]), indices=np.array([1], dtype=np.int32),
        weights=np.array([1.0]), n=np.int64(2), directed=np.bool_(True),
        format_version=np.int64(99),
    )
    np.savez(tmp_path / "new.npz", **arrays)
    with pytest.raises(GraphFormatError, match="version 99 is newer"):
        read_graph(tmp_path / "new.npz")
    arrays["format_version"] = np.int64(1)
    arrays["indices"] = np.array([5], dtype=np.int32)
    np.savez(tmp_path / "range.npz", **arrays)
    with pytest.raises(GraphFormatError, match=r"range\.npz: invalid graph arrays.*outside"):
        read_graph(tmp_path / "range.npz")
    arrays["indices"] = np.array([object()], dtype=object)
    np.savez(tmp_path / "pickle.npz", **arrays)
    with pytest.raises(GraphFormatError, match=r"pickle\.npz: cannot load"):
        read_graph(tmp_path / "pickle.npz")


# ---------------------------------------------------------------- malformed files


GR_ERRORS = [
    ("", r"line 1: expected the problem line 'p sp n m' \(missing 'p' line\)"),
    ("c only a comment\n", r"line 2: expected the problem line 'p sp n m' \(missing 'p' line\)"),
    ("c x\na 1 2 3\n", r"line 2: expected the problem line 'p sp n m' before the first arc"),
    ("p sp 3\n", r"line 1: expected the problem line 'p sp n m', got 'p sp 3'"),
    ("p max 3 1\n", r"line 1: expected the problem line 'p sp n m'"),
    ("p sp x 1\n", r"line 1: expected the vertex count n of 'p sp n m' .*got 'x'"),
    ("q 3 1\n", r"line 1: expected a comment 'c \.\.\.' or the problem line"),
    ("p sp 3 2\na 1 2 3\n",
     r"line 2: expected 2 arcs as announced by the 'p' line \(line 1\), but the file ends "
     r"after 1 \(truncated file\?\)"),
    ("p sp 3 2\na 1 2 3\na 2 3",
     r"line 3: expected the weight w of 'a u v w', but the line ends \(truncated file\?\)"),
    ("p sp 3 2\na 1 2 3\na 2\n", r"line 3: expected the head v of 'a u v w', but the line ends"),
    ("p sp 3 1\na 1 2 3\nc\na 2 3 4\n",
     r"line 4: expected 1 arcs as announced by the 'p' line \(line 1\), but the file has more"),
    ("p sp 3 1\na 1 4 3\n",
     r"line 2: vertex id 4 \(the head v of 'a u v w'\) is out of range: expected 1\.\.3 as "
     r"given by the 'p' line \(line 1\)"),
    ("p sp 3 1\na 0 1 3\n", r"line 2: vertex id 0 \(the tail u of 'a u v w'\) is out of range"),
    ("p sp 3 1\na 1 x2 3\n",
     r"line 2: expected an integer vertex id \(the head v of 'a u v w'\), got 'x2'"),
    ("p sp 3 1\na -1 2 3\n", r"line 2: expected an integer vertex id .*got '-1'"),
    ("p sp 3 1\na 1.0 2 3\n", r"line 2: expected an integer vertex id .*got '1.0'"),
    ("p sp 3 1\na 1 2 3x\n", r"line 2: expected a number \(the weight w of 'a u v w'\), got '3x'"),
    ("p sp 3 1\na 1 2 infx\n", r"line 2: expected a number .*got 'infx'"),
    ("p sp 3 1\na 1 2 1e\n", r"line 2: expected a number .*got '1e'"),
    ("p sp 3 1\na 1 2 3 4\n",
     r"line 2: expected the end of the line after 3 columns, got '4'"),
    ("p sp 3 1\np sp 3 1\n", r"line 2: expected an arc 'a u v w' or a comment 'c \.\.\.'"),
    ("p sp 3 1\narc 1 2 3\n", r"line 2: expected an arc 'a u v w' or a comment"),
    ("p sp 3 1\na 1 2 99999999999999999999\na 2 3 x\n",
     r"line 3: expected an arc|line 3: expected 1 arcs"),
    ("p sp 3 2\na 1 2 1e999x\na 2 3 1\n", r"line 2: expected a number .*got '1e999x'"),
    ("p sp 3 1\na 1 12345678901234567890123 1\n", r"line 2: vertex id 1234.* is too large"),
]


@pytest.mark.parametrize("text, message", GR_ERRORS)
def test_malformed_gr_files(tmp_path, text, message):
    p = _write(tmp_path, "bad.gr", text)
    with pytest.raises(GraphFormatError, match=r"bad\.gr: " + message):
        read_graph(p)


def test_errors_in_compressed_files_name_the_file_and_line(tmp_path):
    text = "c\nc\np sp 2 2\r\na 1 2 3\r\nc\r\na 2 x 3\r\n"
    for comp in COMPRESSIONS[1:]:
        p = _write(tmp_path, f"bad.gr{comp}", text, comp)
        with pytest.raises(GraphFormatError, match=rf"bad\.gr\{comp}: line 6: .*got 'x'"):
            read_graph(p)


def test_corrupt_compressed_file(tmp_path):
    p = tmp_path / "c.gr.gz"
    p.write_bytes(gzip.compress(b"p sp 2 1\na 1 2 3\n")[:-8] + b"garbage!")
    with pytest.raises(GraphFormatError, match=r"c\.gr\.gz: cannot decompress"):
        read_graph(p)


MTX_ERRORS = [
    ("%%MatrixMarket matrix coordinate real general\n% c\n",
     r"line 3: expected the size line 'rows columns entries', but the file ends"),
    ("%%MatrixMarket matrix coordinate real general\n3 3\n",
     r"line 2: expected the size line 'rows columns entries', got '3 3'"),
    ("%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 1\n",
     r"line 2: expected a square matrix .* got 3 x 4"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n",
     r"line 3: expected 2 entries as announced by the size line \(line 2\), but the file ends "
     r"after 1"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 4 1\n",
     r"line 3: vertex id 4 \(the column index j\) is out of range: expected 1\.\.3"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2\n",
     r"line 3: expected the value, but the line ends"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2 5\n",
     r"line 3: expected the end of the line after 2 columns, got '5'"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 1\n2 2 1\n",
     r"line 4: expected 1 entries as announced by the size line"),
]


@pytest.mark.parametrize("text, message", MTX_ERRORS)
def test_malformed_mtx_files(tmp_path, text, message):
    p = _write(tmp_path, "bad.mtx", text)
    with pytest.raises(GraphFormatError, match=r"bad\.mtx: " + message):
        read_graph(p)


EL_ERRORS = [
    ("0 1\n1 x\n", r"line 2: expected an integer vertex id \(the target vertex v\), got 'x'"),
    ("0 1\n-1 2\n", r"line 2: expected an integer vertex id \(the source vertex u\), got '-1'"),
    ("0 1 2\n1 2\n", r"line 2: expected the weight w, but the line ends"),
    ("0 1\n1 2 3\n", r"line 2: expected the end of the line after 2 columns, got '3'"),
    ("# c\n0 1 2\n1 2 nan?\n", r"line 3: expected a number \(the weight w\), got 'nan\?'"),
]


@pytest.mark.parametrize("text, message", EL_ERRORS)
def test_malformed_edge_lists(tmp_path, text, message):
    p = _write(tmp_path, "bad.el", text)
    with pytest.raises(GraphFormatError, match=r"bad\.el: " + message):
        read_graph(p)


def test_format_error_is_a_value_error():
    assert issubclass(GraphFormatError, ValueError)


# ---------------------------------------------------------------- building blocks for ranks


def _big_gr_text(rng, n=50, m=400):
    lines = ["c generated", f"p sp {n} {m}"]
    for k in range(m):
        if k % 37 == 0:
            lines.append("c a comment in the body")
        u, v = rng.integers(1, n + 1, 2)
        w = int(rng.integers(0, 1000)) if k % 3 else float(rng.random() * 100)
        lines.append(f"a {u} {v} {w!r}")
    return ("\n".join(lines) + "\n").encode()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 20000), max_size=6))
def test_body_slices_concatenate_to_the_whole(cuts):
    data = _big_gr_text(np.random.default_rng(2))
    header = parse_header(data, "gr")
    buf = np.frombuffer(data, dtype=np.uint8)
    body = buf[header.body_offset:]
    whole = parse_body(body, header, max_records=header.m)
    assert whole.error is None and whole.src.size == header.m
    bounds = sorted({0, body.size, *cuts})  # any cut points: line_range moves them to lines
    ranges = [line_range(body, a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    parts = [parse_body(body[a:b], header) for a, b in ranges]
    assert all(p.error is None for p in parts)
    for name in ("src", "dst", "weights"):
        joined = np.concatenate([getattr(p, name) for p in parts])
        np.testing.assert_array_equal(joined, getattr(whole, name))


def test_error_in_a_slice_gives_the_same_line_as_the_whole_file(tmp_path):
    data = bytearray(_big_gr_text(np.random.default_rng(3)))
    pos = data.index(b"\na ", len(data) // 2) + 3
    data[pos] = ord("z")  # corrupt a tail vertex in the second half
    p = _write(tmp_path, "big.gr", bytes(data))
    with pytest.raises(GraphFormatError) as whole:
        read_graph(p)
    header = read_header(p, "gr")
    buf = np.fromfile(p, dtype=np.uint8)
    start, _ = line_range(buf, len(data) // 3, buf.size)
    piece = buf[start:]
    res = parse_body(piece, header)
    assert res.error is not None
    err = body_error(piece, header, res.error, path=str(p), first_line=line_number(buf, start))
    assert str(err) == str(whole.value)
    assert re.search(r"big\.gr: line \d+: expected an integer vertex id", str(err))
    line = int(str(err).split("line ")[1].split(":")[0])
    assert line_number(buf, start + res.error.offset) == line


def test_read_header_from_paths_and_streams(tmp_path):
    p = _write(tmp_path, "h.gr", "c " + "x" * 100_000 + "\np sp 7 0\n")
    h = read_header(p, "gr")
    assert (h.n, h.m, h.body_line, h.header_line) == (7, 0, 3, 2)
    assert h.body_offset == p.stat().st_size
    with gzip.open(_write(tmp_path, "h.mtx.gz", "%%MatrixMarket matrix coordinate real "
                          "general\n2 2 0\n", ".gz"), "rb") as f:
        h = read_header(f, "mtx", path="h.mtx.gz")
    assert (h.n, h.m, h.field, h.symmetric) == (2, 0, "real", False)


def test_header_for_each_text_format():
    gr = parse_header(b"p sp 5 3\n", "gr")
    assert (gr.base, gr.ncols, gr.directed, gr.bound) == (1, 3, True, 5)
    mm = parse_header(b"%%MatrixMarket matrix coordinate pattern symmetric\n4 4 9\n", "mtx")
    assert (mm.ncols, mm.symmetric, mm.directed, mm.m) == (2, True, False, 9)
    el = parse_header(b"# Undirected graph\n# Nodes: 12 Edges: 4\n0 1 0.5\n", "el")
    assert (el.n, el.m, el.ncols, el.directed, el.base) == (12, None, 3, False, 0)
    assert el.body_offset == 0
    with pytest.raises(EOFError):
        parse_header(b"c no p line yet\n", "gr", eof=False)


# ---------------------------------------------------------------- shipped samples

SAMPLES = Path(__file__).resolve().parent.parent / "datasets" / "samples"


def test_sample_tiny_gr_matches_a_naive_parse_and_its_documented_distances():
    path = SAMPLES / "tiny.gr"
    g = read_graph(path)
    n, arcs = read_gr_naive(path)
    assert g.n == n == 6 and g.nnz == 9 and _edges(g) == min_dict(arcs)
    np.testing.assert_array_equal(dijkstra(g.to_scipy(), indices=0), [0, 7, 9, 20, 20, 11])


def test_sample_tiny_mtx_and_snap():
    m = read_graph(SAMPLES / "tiny.mtx")
    cycle = {(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 3)}
    assert m.n == 5 and not m.directed
    assert set(_edges(m)) == cycle | {(v, u) for u, v in cycle}
    assert set(_edges(m)) == set(_edges(Graph.from_scipy(scipy.io.mmread(SAMPLES / "tiny.mtx"))))
    s = read_graph(SAMPLES / "tiny_snap.txt")
    pairs = {(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (4, 5)}
    assert s.n == 7 and not s.directed
    assert set(_edges(s)) == pairs | {(v, u) for u, v in pairs}


def test_generated_samples_are_what_the_readme_says():
    from graphpar import generate

    grid = read_graph(SAMPLES / "grid_8x8.gr.gz", directed=False)
    assert _same_graph(grid, generate.grid_road(8, seed=1, max_weight=100))
    kron = read_graph(SAMPLES / "kron_s7.npz")
    expected = generate.kronecker(7, 4, seed=1)
    assert _same_graph(kron, expected) and not kron.directed and kron.nnz == 694


def test_absurd_vertex_counts_are_a_limit_error(tmp_path):
    p = _write(tmp_path, "huge.el", "0 1\n1 999999999999999999\n")
    with pytest.raises(LimitError, match=r"huge\.el: line 2: has vertex id 999999999999999999, "
                       r"so needs 1000000000000000000 vertices .*GRAPHPAR_MAX_VERTICES"):
        read_graph(p)


# ---------------------------------------------------------------- truncation and fuzzing

_VALID = {
    "gr": b"c x\np sp 4 5\na 1 2 10\na 2 3 7\na 3 4 2.5\na 4 1 0\na 1 3 12\n",
    "mtx": b"%%MatrixMarket matrix coordinate real general\n% c\n4 4 3\n1 2 1.5\n2 3 2\n4 1 7\n",
}


@settings(max_examples=150, deadline=None)
@given(fmt=st.sampled_from(sorted(_VALID)), data=st.data())
def test_a_file_cut_before_its_last_line_is_a_format_error(tmp_path_factory, fmt, data):
    text = _VALID[fmt]
    last_line = text.rstrip(b"\n").rfind(b"\n") + 1
    cut = data.draw(st.integers(0, last_line - 1))
    p = tmp_path_factory.mktemp("cut") / f"t.{fmt}"
    p.write_bytes(text[:cut])
    with pytest.raises(GraphFormatError, match=r"t\.(gr|mtx): line \d+: "):
        read_graph(p)


@settings(max_examples=300, deadline=None)
@given(
    fmt=st.sampled_from(["gr", "mtx", "el", "wel"]),
    edits=st.lists(st.tuples(st.integers(0, 80), st.binary(min_size=0, max_size=3)), max_size=4),
)
def test_corrupted_files_give_a_graph_or_a_format_error(tmp_path_factory, fmt, edits):
    text = bytearray(_VALID.get(fmt, b"# Nodes: 5\n0 1 2\n1 2 3.5\n3 4 1e3\n"))
    for pos, junk in edits:
        pos = min(pos, len(text))
        text[pos:pos + len(junk)] = junk
    p = tmp_path_factory.mktemp("fuzz") / f"f.{fmt}"
    p.write_bytes(bytes(text))
    try:
        g = read_graph(p)
    except (GraphFormatError, LimitError) as exc:
        assert re.match(r".*f\.\w+: line \d+: ", str(exc)), str(exc)
    else:
        assert g.indptr[-1] == g.nnz and g.indices.size == g.nnz


def test_nul_bytes_are_rejected(tmp_path):
    p = _write(tmp_path, "nul.gr", b"p sp 3 2\na 1 2 3\x00a 2 3 4\n")
    with pytest.raises(GraphFormatError, match=r"nul\.gr: line 2: expected a number"):
        read_graph(p)


def test_headers_longer_than_the_first_read(tmp_path):
    comments = "".join(f"c {'x' * 70} {i}\n" for i in range(5000))  # about 370 kB
    p = _write(tmp_path, "long.gr", comments + "p sp 2 1\na 1 2 5\n")
    assert _edges(read_graph(p)) == {(0, 1): 5.0}
    p = _write(tmp_path, "long.el", comments.replace("c ", "# ") + "0 1 5\n")
    assert _edges(read_graph(p)) == {(0, 1): 5.0}
    p = _write(tmp_path, "none.gr", comments)
    with pytest.raises(GraphFormatError, match=r"none\.gr: line 5001: expected the problem line"):
        read_graph(p)


def test_signed_dimacs_weights_are_read_and_left_to_the_validator(tmp_path):
    from graphpar import validate_graph

    g = read_graph(_write(tmp_path, "neg.gr", "p sp 2 2\r\na 1 2 -5\r\na 2 1 3\r\n"))
    assert _edges(g) == {(0, 1): -5.0, (1, 0): 3.0}
    with pytest.raises(ValueError, match=re.escape("edge (0, 1, -5.0)")):
        validate_graph(g)
