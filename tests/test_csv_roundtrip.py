"""CSV/TSV edge lists: line endings, quoted fields, numeric ids, and files that read back.

References: RFC 4180 (a quoted field is its content, ``""`` a quote), pandas'
``read_csv`` (which keeps the spaces of a quoted field), the serial reader
against :func:`graphpar.mpi.io.read_graph` (``tests/mpi/label_agree.py``), and
graphs built by hand or from networkx.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from capped import assert_one_line_error, run_capped
from conftest import run_mpi_script
from hypothesis import given, settings
from hypothesis import strategies as st

import graphpar
from graphpar import Graph
from graphpar.errors import GraphFormatError
from graphpar.io import read_graph, write_graph


def _write(path, text: str):
    with open(path, "w", newline="") as f:
        f.write(text)
    return path


# --------------------------------------------------------------------------- line endings
@pytest.mark.parametrize("text, line", [
    ("s,t,w\ra,b,1\rb,c,2\r", 1),  # old Mac line endings: the header is the first line
    ("s,t,w\na,b,1\rb,c,2\n", 2),  # a bare CR in the body
    ("s,t\nx,y\na\rb,c\n", 3),  # one that would otherwise be part of a label
    ('s,t,w\n"a b",c,1\nd,e\r,2\n', 3),  # a file with quotes (another splitter)
])
def test_bare_carriage_return_is_a_format_error_naming_file_and_line(tmp_path, text, line):
    p = _write(tmp_path / "cr.csv", text)
    with pytest.raises(GraphFormatError, match=rf"cr\.csv: line {line}: a carriage return") \
            as info:
        read_graph(p)
    assert "\\r\\n" in str(info.value)  # says which line endings are read


def test_bare_carriage_return_in_the_cli_is_one_line(tmp_path):
    p = _write(tmp_path / "cr.csv", "s,t,w\ra,b,1\rb,c,2\r")
    assert_one_line_error(run_capped(["sssp", str(p), "--source", "a"]), "cr.csv",
                          "line 1", "carriage return")


def test_crlf_and_quoted_carriage_returns_still_read(tmp_path):
    g = read_graph(_write(tmp_path / "crlf.csv", "s,t,w\r\na,b,1\r\nb,c,2\r"))
    assert g.labels.tolist() == ["a", "b", "c"] and g.weights.tolist() == [1.0, 2.0]
    g = read_graph(_write(tmp_path / "q.csv", 's,t,w\r\n"a\rb",c,1\r\n'))
    assert g.labels.tolist() == ["a\rb", "c"]


def test_other_csv_errors_name_file_and_line(tmp_path):
    p = _write(tmp_path / "open.csv", 's,t,w\na,b,1\n"c,d,2\ne,f,3\n')
    with pytest.raises(GraphFormatError, match=r"open\.csv: line 3: .*quote.* never closed"):
        read_graph(p)
    p = _write(tmp_path / "after.csv", 's,t,w\na,b,1\n"c"x,d,2\n')
    with pytest.raises(GraphFormatError, match=r"after\.csv: line 3: .*closing quote.*'x'"):
        read_graph(p)


# --------------------------------------------------------------------------- quoted fields
def test_quoted_fields_keep_their_spaces(tmp_path):
    g = read_graph(_write(tmp_path / "q.csv", 's,t,w\n" a",a,1\n" ",b,2\n  c , " d " ,3\n'))
    want = pd.read_csv(tmp_path / "q.csv", skipinitialspace=True)
    assert g.labels.tolist() == [" a", "a", " ", "b", "c", " d "]
    assert want["s"].tolist()[:2] == [" a", " "]  # pandas keeps them too
    assert g.nnz == 3 and g.to_scipy()[0, 1] == 1.0  # " a" -> "a", no self-loop
    # a quoted field spanning lines; the next line number is still right
    p = _write(tmp_path / "nl.csv", 's,t,w\n"a\n",b,1\nc,d,x\n')
    with pytest.raises(GraphFormatError, match=r"line 4, column 'w'.*got 'x'"):
        read_graph(p)


def test_labels_with_spaces_round_trip(tmp_path):
    G = nx.DiGraph()
    G.add_edge(" sp ", "x", weight=2.0)
    G.add_edge("x", "sp", weight=1.0)
    G.add_edge("sp", "tab\t", weight=3.0)
    G.add_edge("tab\t", "new\nline", weight=4.0)
    g = Graph.from_networkx(G)
    for name in ("g.csv", "g.tsv"):
        write_graph(g, tmp_path / name)
        h = read_graph(tmp_path / name)
        assert h.labels.tolist() == g.labels.tolist(), name
        np.testing.assert_array_equal(h.to_scipy().toarray(), g.to_scipy().toarray())


# --------------------------------------------------------------------------- the writer
def test_writer_refuses_labels_that_read_back_as_numbers(tmp_path):
    G = nx.DiGraph()
    G.add_edge("1", "2", weight=1.0)
    G.add_edge("2", "3", weight=1.0)
    g = Graph.from_networkx(G)
    p = tmp_path / "num.csv"
    with pytest.raises(ValueError, match=r"num\.csv: every label is an integer .*\('1', '2', "
                                         r"'3'\).*vertex numbers.*\.npz"):
        write_graph(g, p)
    assert not p.exists()
    # "007" is not written as a number: such labels read back as labels
    G.add_edge("2", "007", weight=1.0)
    g = Graph.from_networkx(G)
    write_graph(g, p)
    h = read_graph(p)
    assert h.labels.tolist() == ["1", "2", "3", "007"] and h.n == 4 and h.nnz == 3


def test_writer_refuses_isolated_vertices(tmp_path):
    G = nx.DiGraph()
    G.add_edge("a", "b", weight=1.0)
    G.add_node("iso")
    p = tmp_path / "iso.csv"
    with pytest.raises(ValueError, match=r"iso\.csv: vertex 2 \('iso'\) is in no edge.*\.npz"):
        write_graph(Graph.from_networkx(G), p)
    assert not p.exists()
    # an unlabelled graph loses its last vertices the same way
    with pytest.raises(ValueError, match=r"vertex 2 is in no edge.*2 vertices instead of 4"):
        write_graph(Graph.from_edges([0], [1], n=4), p)
    write_graph(Graph.from_edges([0], [2], n=3), p)  # vertex 1: still n = max id + 1
    assert read_graph(p).n == 3
    # integer labels: read back with relabel=True, so every label must be in an edge
    with pytest.raises(ValueError, match=r"vertex 1 \(5\) is in no edge"):
        write_graph(Graph.from_edges([0], [2], labels=[3, 5, 9]), p)
    # .npz keeps them
    write_graph(Graph.from_networkx(G), tmp_path / "iso.npz")
    assert read_graph(tmp_path / "iso.npz").labels.tolist() == ["a", "b", "iso"]


_LABELS = st.lists(st.text(st.sampled_from(list('a07 \t,"\r\n')), min_size=1, max_size=5),
                   min_size=1, max_size=7, unique=True)


@settings(max_examples=150, deadline=None)
@given(labels=_LABELS, data=st.data(), fmt=st.sampled_from(["csv", "tsv"]))
def test_written_labels_read_back_or_are_refused(labels, data, fmt):
    n = len(labels)
    m = data.draw(st.integers(1, 10))
    ends = st.lists(st.integers(0, n - 1), min_size=m, max_size=m)
    src, dst = data.draw(ends), data.draw(ends)
    g = Graph.from_edges(src, dst, np.arange(1.0, m + 1), n=n, labels=labels)
    path = Path(tempfile.mkdtemp()) / f"g.{fmt}"
    isolated = set(range(n)) - set(src) - set(dst)
    numbers = all(t == "0" or (t.isdigit() and t[0] != "0") for t in labels)
    try:
        write_graph(g, path)
    except ValueError as exc:
        assert isolated or numbers, exc
        assert ("in no edge" if isolated else "every label is an integer") in str(exc)
        return
    assert not isolated and not numbers
    h = read_graph(path)
    assert sorted(h.labels.tolist()) == sorted(labels)  # verbatim: spaces, quotes, newlines
    perm = h.index_of(g.labels)
    np.testing.assert_array_equal(h.to_scipy().toarray()[np.ix_(perm, perm)],
                                  g.to_scipy().toarray())


def test_writer_refuses_labels_that_print_alike(tmp_path):
    g = Graph.from_edges([0], [1], labels=np.array([1, "1"], dtype=object))
    with pytest.raises(ValueError, match=r"vertices 0 and 1 are both written as '1'"):
        write_graph(g, tmp_path / "g.csv")


# --------------------------------------------------------------------------- numeric ids
def test_leading_zeros_make_every_id_a_label(tmp_path):
    g = read_graph(_write(tmp_path / "lz.csv", "s,t,w\n007,7,1.0\n7,8,2.0\n"))
    assert g.labels.tolist() == ["007", "7", "8"] and g.n == 3
    assert graphpar.sssp(g, "007").tolist() == [0.0, 1.0, 3.0]
    for ids in ("0,00", "+5,5", "0,1"):  # "0" alone is a number
        g = read_graph(_write(tmp_path / "ids.csv", f"s,t\n{ids}\n"))
        assert (g.labels is None) == (ids == "0,1"), ids


def test_ids_up_to_int64_are_numbers(tmp_path):
    big = 1234567890123456789
    g = read_graph(_write(tmp_path / "i64.csv", f"s,t\n{big},1\n"), relabel=True)
    assert g.labels.dtype == np.int64 and g.labels.tolist() == [1, big]
    assert graphpar.sssp(g, big).tolist() == [1.0, 0.0]
    top = np.iinfo(np.int64).max
    g = read_graph(_write(tmp_path / "top.csv", f"s,t\n{top},1\n"), relabel=True)
    assert g.labels.tolist() == [1, top]
    # beyond int64: string labels, in order of first appearance
    g = read_graph(_write(tmp_path / "far.csv", f"s,t\n{top + 1},1\n"), relabel=True)
    assert g.labels.tolist() == [str(top + 1), "1"]


# --------------------------------------------------------------------------- under mpiexec
@pytest.mark.mpi
@pytest.mark.parametrize("nranks", [2, 3])
def test_parallel_reader_agrees_on_these_files(tmp_path, nranks):
    folder = tmp_path / "files"
    folder.mkdir()
    body = "".join(f"v{i},v{(i * 7) % 50},{i % 5 + 1}\n" for i in range(200))
    files = {
        "cr.csv": "s,t,w\r" + body.replace("\n", "\r"),
        "cr_late.csv": "s,t,w\n" + body[:-40] + "x\ry,1\n" + body[-40:],
        "zeros.csv": "s,t,w\n" + "".join(f"{i % 30},{(i * 3) % 30},1\n" for i in range(200))
                     + "007,7,1\n",
        "zeros_first.csv": "s,t,w\n007,7,1\n" + "".join(f"{i},{i + 1},2\n" for i in range(200)),
        "int64.csv": "s,t\n" + "".join(f"{1234567890123456789 + i},{i}\n" for i in range(200)),
        "beyond.csv": "s,t\n" + "".join(f"{i},{i + 1}\n" for i in range(200))
                      + "9223372036854775808,1\n",
        "spaces.csv": 's,t,w\n" a",a,1\n" ",b,2\n' + body,
    }
    for name, text in files.items():
        _write(folder / name, text)
    (folder / "int64.csv.json").write_text(json.dumps({"relabel": True}))
    proc = run_mpi_script("label_agree.py", nranks, folder, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for name in files:
        assert f"SAME {name}\n" in proc.stdout, (name, out)
