"""Labelled graphs and the formats people have: CSV/TSV, networkx, pandas, PyG edge_index.

References: networkx's ``single_source_dijkstra_path_length`` by label (on
Rome and on random graphs with string labels), scipy's construction of the
same matrix, and files written by hand.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from capped import assert_one_line_error, run_capped

import graphpar
from graphpar import Graph
from graphpar.errors import GraphFormatError, LimitError
from graphpar.io import read_graph, write_graph


def _random_labelled(seed: int, n: int = 60, m: int = 240, directed: bool = True):
    """A networkx graph with string labels, duplicate edges and integral/real weights."""
    rng = np.random.default_rng(seed)
    names = [f"v{rng.integers(10**6)}-{i}" for i in range(n)]
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(names)  # isolated vertices too
    for _ in range(m):
        u, v = rng.integers(n, size=2)
        w = float(rng.integers(1, 20)) if rng.random() < 0.5 else float(rng.random() * 10)
        if G.has_edge(names[u], names[v]):
            w = min(w, G[names[u]][names[v]]["weight"])
        G.add_edge(names[u], names[v], weight=w)
    return G


def _assert_matches_networkx(g: Graph, G, sources) -> None:
    for s in sources:
        want = nx.single_source_dijkstra_path_length(G, s, weight="weight")
        dist = graphpar.sssp(g, s)
        got = {g.label_of(i): float(d) for i, d in enumerate(dist) if np.isfinite(d)}
        assert got.keys() == want.keys()
        for k, v in want.items():
            assert got[k] == pytest.approx(v, rel=1e-12, abs=0), (s, k)


# --------------------------------------------------------------------------- networkx
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_string_labels_match_networkx(seed, directed):
    G = _random_labelled(seed, directed=directed)
    g = Graph.from_networkx(G)
    assert g.directed == directed
    assert g.labels.dtype.kind == "U" and g.labels.tolist() == list(G)
    rng = np.random.default_rng(seed)
    _assert_matches_networkx(g, G, rng.choice(list(G), size=4, replace=False).tolist())
    # several labels at once: one row per source, by label
    srcs = list(G)[:3]
    rows = graphpar.sssp(g, srcs)
    for s, row in zip(srcs, rows, strict=True):
        np.testing.assert_array_equal(row, graphpar.sssp(g, s))


def test_rome_as_labelled_graph_matches_networkx(rome_path, tmp_path):
    rome = read_graph(rome_path)
    rows = rome.row_ids()
    names = np.array([f"junction-{i + 1}" for i in range(rome.n)])
    f = tmp_path / "rome.csv"
    pd.DataFrame({"from": names[rows], "to": names[rome.indices], "km": rome.weights}).to_csv(
        f, index=False)
    g = read_graph(f, source="from", target="to", weight="km")
    assert (g.n, g.nnz) == (rome.n, rome.nnz)
    G = nx.DiGraph()
    G.add_weighted_edges_from(zip(names[rows].tolist(), names[rome.indices].tolist(),
                                  rome.weights.tolist(), strict=True))
    _assert_matches_networkx(g, G, ["junction-1", "junction-1000", "junction-3353"])
    # the labelled graph gives the unlabelled one's distances, vertex for vertex
    d = graphpar.sssp(g, "junction-1000")
    np.testing.assert_array_equal(d[g.index_of(names)], graphpar.sssp(rome, 999))


def test_networkx_round_trip_and_multigraph():
    G = _random_labelled(5, directed=False)
    H = Graph.from_networkx(G).to_networkx()
    assert type(H) is nx.Graph and list(H) == list(G)
    assert {frozenset(e) for e in H.edges} == {frozenset(e) for e in G.edges}
    for u, v, w in G.edges(data="weight"):
        assert H[u][v]["weight"] == w
    M = nx.MultiDiGraph()
    M.add_edge((0, 1), (1, 1), weight=5.0)
    M.add_edge((0, 1), (1, 1), weight=2.0)
    M.add_edge((1, 1), (2, 2))  # no weight attribute: 1, as networkx's dijkstra uses
    g = Graph.from_networkx(M)
    assert g.labels.dtype == object  # tuple nodes stay tuples
    assert graphpar.sssp(g, (0, 1)).tolist() == [0.0, 2.0, 3.0]
    want = nx.single_source_dijkstra_path_length(M, (0, 1))
    assert want == {(0, 1): 0, (1, 1): 2.0, (2, 2): 3.0}
    with pytest.raises(TypeError, match=r"edge \('a', 'b'\) has weight='heavy'"):
        Graph.from_networkx(nx.Graph([("a", "b", {"weight": "heavy"})]))


def test_wrong_input_names_the_expected_types():
    G = nx.path_graph(3)
    with pytest.raises(TypeError, match=r"got networkx\.Graph; convert it with "
                                         r"graphpar\.Graph\.from_networkx"):
        graphpar.sssp(G, 0)
    with pytest.raises(ValueError, match=r"got shape \(2, 5\).*Graph\.from_edge_index"):
        graphpar.sssp(np.array([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]]), 0)
    with pytest.raises(TypeError, match=r"got pandas\.DataFrame; .*Graph\.from_pandas"):
        graphpar.sssp(pd.DataFrame({"a": [0], "b": [1]}), 0)


# --------------------------------------------------------------------------- labels
def test_label_lookup_and_errors():
    g = Graph.from_edges([0, 1], [1, 2], [1.0, 2.0], labels=["Rome", "Milan", "Pisa"])
    assert g.index_of("Pisa") == 2
    np.testing.assert_array_equal(g.index_of(np.array([["Pisa", "Rome"]])), [[2, 0]])
    assert g.label_of(1) == "Milan"
    np.testing.assert_array_equal(g.label_of([2, 0]), ["Pisa", "Rome"])
    assert graphpar.sssp(g, "Rome").tolist() == [0.0, 1.0, 3.0]
    with pytest.raises(KeyError, match="did you mean 'Rome'"):
        graphpar.sssp(g, "Roma")
    with pytest.raises(KeyError, match=r"source\[1\] = 'Paris' is not a vertex"):
        graphpar.sssp(g, ["Rome", "Paris"])
    # an integer is not silently a vertex number (nor the label "0") of a labelled graph
    with pytest.raises(TypeError, match=r"labels are strings.*pass g\.labels\[0\]"):
        graphpar.sssp(g, 0)
    with pytest.raises(TypeError, match="not a label"):
        g.index_of(["Rome", 1])
    with pytest.raises(ValueError, match="'a' labels vertices 0 and 2"):
        Graph.from_edges([0], [1], n=3, labels=["a", "b", "a"])
    with pytest.raises(ValueError, match="has 2 entries but the graph has 3 vertices"):
        Graph.from_edges([0], [2], labels=["a", "b"])
    with pytest.raises(TypeError, match="has no labels"):
        graphpar.sssp(Graph.from_edges([0], [1]), "Rome")
    # no conversion across kinds: 1 and "1" are two labels
    h = Graph.from_edges([0], [1], labels=[1, "1"])
    assert h.index_of("1") == 1 and h.index_of(1) == 0
    # labels survive symmetrisation (the undirected search)
    assert graphpar.sssp(g, "Pisa", directed=False).tolist() == [3.0, 2.0, 0.0]


def test_verify_sssp_takes_labels():
    g = Graph.from_edges([0, 1], [1, 2], [1.0, 2.0], labels=["a", "b", "c"])
    assert graphpar.verify_sssp(g, "b", graphpar.sssp(g, "b"), against_dijkstra=True)


# --------------------------------------------------------------------------- pandas, PyG
def test_from_pandas_against_scipy_and_networkx():
    rng = np.random.default_rng(3)
    m = 300
    df = pd.DataFrame({"u": rng.integers(0, 50, m) * 7, "v": rng.integers(0, 50, m) * 7,
                       "w": rng.random(m)})
    g = Graph.from_pandas(df, source="u", target="v", weight="w")
    # labels in order of first appearance, as networkx numbers the nodes
    G = nx.from_pandas_edgelist(df, "u", "v", edge_attr="w", create_using=nx.DiGraph)
    assert g.labels.tolist() == list(G)
    # networkx keeps the last of duplicate edges, graphpar the smallest: the reference
    # graph keeps the smallest too
    for u, v, w in zip(df.u, df.v, df.w, strict=True):
        G[u][v]["w"] = min(G[u][v]["w"], w)
    codes = g.index_of(df[["u", "v"]].to_numpy())
    ref = sp.coo_array((df["w"], (codes[:, 0], codes[:, 1])), shape=(g.n, g.n)).tocsr()
    # duplicates: the smallest weight (scipy sums them, so compare edge by edge)
    want = {}
    for a, b, w in zip(codes[:, 0].tolist(), codes[:, 1].tolist(), df["w"], strict=True):
        want[a, b] = min(w, want.get((a, b), np.inf))
    coo = g.to_scipy().tocoo()
    assert dict(zip(zip(coo.row.tolist(), coo.col.tolist(), strict=True), coo.data.tolist(),
                    strict=True)) == want
    assert ref.nnz == len(want)
    for s in g.labels[:3].tolist():
        want_d = nx.single_source_dijkstra_path_length(G, s, weight="w")
        d = graphpar.sssp(g, s)
        assert {g.label_of(i): x for i, x in enumerate(d.tolist()) if np.isfinite(x)} == \
            pytest.approx(want_d)
    u = Graph.from_pandas(df.assign(u=df.u.astype(str), v=df.v.astype(str)), "u", "v",
                          directed=False)
    assert not u.directed and u.labels.dtype.kind == "U"
    np.testing.assert_array_equal(u.weights, 1.0)


def test_from_pandas_errors():
    df = pd.DataFrame({"a": ["x", None], "b": ["y", "z"], "w": [1.0, np.nan]})
    with pytest.raises(KeyError, match=r"source='from' is not a column of df \(its columns: "
                                       r"'a', 'b', 'w'\)"):
        Graph.from_pandas(df, source="from", target="b")
    with pytest.raises(ValueError, match="column 'a' .source. has a missing value at row 1"):
        Graph.from_pandas(df, source="a", target="b")
    with pytest.raises(ValueError, match="column 'w' .weight. has a missing value at row 1"):
        Graph.from_pandas(df.fillna({"a": "q"}), source="a", target="b", weight="w")


def test_from_edge_index_against_scipy():
    rng = np.random.default_rng(7)
    ei = rng.integers(0, 40, size=(2, 500))
    w = rng.random(500)
    g = Graph.from_edge_index(ei, w, num_nodes=45)
    ref = Graph.from_scipy(sp.coo_array((w, (ei[0], ei[1])), shape=(45, 45)))
    # from_scipy keeps the smallest of duplicates too: identical CSR
    np.testing.assert_array_equal(g.indptr, ref.indptr)
    np.testing.assert_array_equal(g.indices, ref.indices)
    np.testing.assert_array_equal(g.weights, ref.weights)
    assert g.labels is None and g.n == 45
    assert Graph.from_edge_index(ei, w[:, None]).n == int(ei.max()) + 1
    with pytest.raises(ValueError, match=r"shape \(2, E\).*got shape \(500, 2\) \(transpose"):
        Graph.from_edge_index(ei.T)
    with pytest.raises(ValueError, match=r"weight must have shape \(500,\)"):
        Graph.from_edge_index(ei, w[:10])
    with pytest.raises(ValueError, match="outside"):
        Graph.from_edge_index(ei, num_nodes=10)


def test_from_edge_index_refuses_nan_weights_and_non_arrays():
    ei = np.array([[0, 1, 2], [1, 2, 0]])
    with pytest.raises(ValueError, match=r"weight\[2\] is NaN \(edge 2: 2 -> 0\)"):
        Graph.from_edge_index(ei, np.array([1.0, 2.0, np.nan]))
    g = Graph.from_edge_index(ei, np.array([1.0, np.inf, 0.5]))  # inf: no edge in effect
    assert graphpar.sssp(g, 0).tolist() == [0.0, 1.0, np.inf]
    with pytest.raises(TypeError, match=r"edge_index must be an integer array of shape "
                                        r"\(2, E\) \(numpy or torch\), got the string 'abc'"):
        Graph.from_edge_index("abc")
    with pytest.raises(ValueError, match=r"shape \(2, E\) \(numpy or torch\).*given a "
                                         r"numpy\.ndarray, got shape \(3,\)"):
        Graph.from_edge_index(np.arange(3))


def test_boolean_weights_and_labels_are_refused_alike():
    G = nx.DiGraph()
    G.add_edge("a", "b", w=True)
    with pytest.raises(TypeError, match=r"w=True.*booleans are not weights"):
        Graph.from_networkx(G, weight="w")
    df = pd.DataFrame({"source": ["a", "b"], "target": ["b", "c"], "w": [True, False]})
    with pytest.raises(TypeError, match=r"weight column 'w' holds booleans.*booleans are not "
                                        r"weights"):
        Graph.from_pandas(df, weight="w")
    mixed = df.astype({"w": object})
    mixed.loc[0, "w"] = 2.5
    with pytest.raises(TypeError, match=r"weight column 'w' holds the boolean False at row 1"):
        Graph.from_pandas(mixed, weight="w")
    with pytest.raises(TypeError, match="booleans are not weights"):
        Graph.from_edge_index(np.array([[0], [1]]), np.array([True]))
    # a boolean node: refused, and the message says why (True == 1 would merge them)
    H = nx.Graph()
    H.add_edge(True, "x")
    with pytest.raises(TypeError) as info:
        Graph.from_networkx(H)
    msg = str(info.value)
    assert "the boolean True at index 0" in msg and "booleans are refused" in msg
    assert "True == 1" in msg and "must be strings, numbers or hashable" not in msg


class _FakeTensor:
    """Quacks like a torch tensor (its class lives in a module named torch...)."""

    __module__ = "torch.fake"

    def __init__(self, a):
        self.a = np.asarray(a)
        self.calls = []

    def detach(self):
        self.calls.append("detach")
        return self

    def cpu(self):
        self.calls.append("cpu")
        return self

    def numpy(self):
        self.calls.append("numpy")
        return self.a


def test_from_edge_index_converts_tensors_without_torch():
    ei, w = _FakeTensor([[0, 1, 2], [1, 2, 0]]), _FakeTensor([1.0, 2.0, 3.0])
    g = Graph.from_edge_index(ei, w)
    assert ei.calls == w.calls == ["detach", "cpu", "numpy"]
    assert graphpar.sssp(g, 0).tolist() == [0.0, 1.0, 3.0]


def test_from_edge_index_torch_tensor():
    torch = pytest.importorskip("torch")
    ei = torch.tensor([[0, 1, 2], [1, 2, 0]])
    g = Graph.from_edge_index(ei, torch.tensor([1.0, 2.0, 3.0], requires_grad=True))
    assert graphpar.sssp(g, 0).tolist() == [0.0, 1.0, 3.0]


# --------------------------------------------------------------------------- CSV files
def test_read_csv_named_columns_and_compressions(tmp_path):
    text = "id,from,to,km\n1,Rome,Florence,273.5\n2,Florence,Pisa,85.2\n\n3,Rome,Pisa,350\n"
    paths = [tmp_path / "r.csv"]
    paths[0].write_text(text)
    for suffix, mod in ((".gz", gzip), (".bz2", bz2), (".xz", lzma)):
        p = tmp_path / f"r.csv{suffix}"
        with mod.open(p, "wb") as f:
            f.write(text.encode())
        paths.append(p)
    tsv = tmp_path / "r.tsv"
    tsv.write_text(text.replace(",", "\t").replace("\n", "\r\n"))
    paths.append(tsv)
    for p in paths:
        g = read_graph(p, source="from", target="to", weight="km")
        assert g.labels.tolist() == ["Rome", "Florence", "Pisa"], p
        assert graphpar.sssp(g, "Rome").tolist() == [0.0, 273.5, 350.0]
    g = read_graph(paths[0], source=1, target=2)  # positions; 4 columns: unweighted
    np.testing.assert_array_equal(g.weights, 1.0)


def test_read_csv_quoted_fields_and_spaces(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text('from,to,weight\n"Rome, IT", Pisa ,1.5\n Pisa,"say ""hi""",2\n')
    g = read_graph(p)
    assert g.labels.tolist() == ["Rome, IT", "Pisa", 'say "hi"']
    np.testing.assert_array_equal(g.weights, [1.5, 2.0])


def test_csv_round_trips(tmp_path):
    G = _random_labelled(11, directed=False)
    G.add_edge("a,b", 'quote"d', weight=0.1)
    g = Graph.from_networkx(G)
    for name in ("g.csv", "g.tsv.gz", "g.npz", "g.npz.xz"):
        f = tmp_path / name
        write_graph(g, f)
        h = read_graph(f, directed=False) if ".npz" not in name else read_graph(f)
        assert not h.directed
        # the same graph by label, vertex numbers aside
        perm = h.index_of(g.labels)
        np.testing.assert_array_equal(h.labels[perm], g.labels)
        a = g.to_scipy().toarray()
        b = h.to_scipy().toarray()[np.ix_(perm, perm)]
        np.testing.assert_array_equal(a, b)
        if ".npz" in name:
            np.testing.assert_array_equal(h.labels, g.labels)
    # the .npz labels load without pickle
    with np.load(tmp_path / "g.npz", allow_pickle=False) as z:
        assert z["labels"].dtype.kind == "U"
    # an unlabelled graph: numeric ids, read back as vertex numbers
    u = Graph.from_edges([0, 2], [1, 0], [0.5, 3.0])
    write_graph(u, tmp_path / "u.csv")
    assert (tmp_path / "u.csv").read_text() == "source,target,weight\n0,1,0.5\n2,0,3.0\n"
    v = read_graph(tmp_path / "u.csv")
    assert v.labels is None
    np.testing.assert_array_equal(v.to_scipy().toarray(), u.to_scipy().toarray())


def test_numeric_ids_sparse_warning_and_relabel(tmp_path):
    p = tmp_path / "ids.csv"
    p.write_text("a,b\n1000000,2000000\n2000000,7\n")
    with pytest.warns(UserWarning, match=r"largest vertex id is 2000000 but only 3 distinct "
                                         r"ids.*relabel=True"):
        g = read_graph(p)
    assert g.n == 2000001 and g.labels is None  # as today: ids are vertex numbers
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = read_graph(p, relabel=True)
    assert r.labels.tolist() == [7, 1000000, 2000000]
    assert graphpar.sssp(r, 1000000).tolist() == [2.0, 0.0, 1.0]
    # the same rule for SNAP-style whitespace edge lists
    el = tmp_path / "ids.el"
    el.write_text("# Directed graph\n1000000 2000000\n")
    with pytest.warns(UserWarning, match="relabel=True"):
        assert read_graph(el).n == 2000001
    assert read_graph(el, relabel=True).labels.tolist() == [1000000, 2000000]
    # ids far beyond the vertex limit are fine as labels
    far = tmp_path / "far.el"
    far.write_text("3000000000 5\n5 4000000000\n")
    g = read_graph(far, relabel=True)
    assert g.labels.tolist() == [5, 3000000000, 4000000000]
    assert graphpar.sssp(g, 3000000000).tolist() == [1.0, 0.0, 2.0]
    with pytest.raises(ValueError, match="vertex id 4000000000"):
        read_graph(far)
    # a compact numbering does not warn
    small = tmp_path / "small.el"
    small.write_text("0 1\n1 2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_graph(small).n == 3
    with pytest.raises(ValueError, match="relabel=True applies to edge lists"):
        read_graph(el, format="gr", relabel=True)


@pytest.mark.parametrize("body, kwargs, message", [
    ("from,to,km\nRome,Pisa\n", {}, r"r\.csv: line 2: expected 3 comma-separated fields "
                                    r"\(as in the header\), found 2"),
    ("from,to,km\nRome,Pisa,1\nPisa,Lucca,x\n", {"weight": "km"},
     r"line 3, column 'km': expected a number \(the edge weight\), got 'x'"),
    ("from,to,km\nRome,Pisa,1\nPisa,Lucca,x\n", {},
     r"got 'x'; it was taken as the weight column by default: pass weight=False"),
    ("from,to,km\nRome,,1\n", {}, r"line 2, column 'to': empty target id"),
    ("from,to,km\nRome,Pisa,-1\n", {"weights": "nonnegative"},
     r"line 2, column 'km': negative edge weight -1"),
    ("from,to,km\nRome,Pisa,nan\n", {}, r"line 2, column 'km': edge weight nan .* not a number"),
    ("from\tto\nRome\tPisa\n", {}, r"line 1: the header has one column .*format='tsv'"),
    ("", {}, r"line 1: empty file"),
    ("from,to\nRome,Pisa\n", {"weight": "km"},
     r"weight='km' is not a column of .*r\.csv \(its columns: 'from', 'to'\)"),
    ("from,to\nR\xf6me,Pisa\n".encode("latin-1"), {}, r"line 2: the id b'R\\xf6me' is not "
                                                       r"UTF-8"),
])
def test_csv_errors_name_file_line_and_column(tmp_path, body, kwargs, message):
    p = tmp_path / "r.csv"
    if isinstance(body, bytes):
        p.write_bytes(body)
    else:
        p.write_text(body)
    with pytest.raises(ValueError, match=message) as info:
        read_graph(p, **kwargs)
    assert isinstance(info.value, GraphFormatError) or "not a column" in message


def test_csv_limits(tmp_path, monkeypatch):
    p = tmp_path / "big.csv"
    p.write_text("a,b\n0,123456789012\n")
    with pytest.raises(LimitError, match=r"big\.csv: line 2: has vertex id 123456789012"):
        read_graph(p)
    assert read_graph(p, relabel=True).labels.tolist() == [0, 123456789012]
    z = tmp_path / "bomb.csv.gz"
    with gzip.open(z, "wb") as f:
        f.write(b"a,b\n" + b"0,1\n" * (1 << 20))
    monkeypatch.setenv("GRAPHPAR_MAX_DECOMPRESSED", "1M")
    with pytest.raises(LimitError, match="decompresses to more than"):
        read_graph(z)


def test_write_labels_to_a_format_without_them_warns(tmp_path):
    g = Graph.from_edges([0], [1], labels=["a", "b"])
    with pytest.warns(UserWarning, match="labels are not written"):
        write_graph(g, tmp_path / "g.el")
    with pytest.raises(TypeError, match="without pickle"):
        write_graph(Graph.from_edges([0], [1], labels=[(0, 1), (1, 1)]), tmp_path / "g.npz")


# --------------------------------------------------------------------------- CLI
def test_cli_source_by_label(tmp_path):
    p = tmp_path / "roads.csv"
    p.write_text("from,to,km\nRome,Florence,273.5\nFlorence,Pisa,85.2\n")
    out = run_capped(["sssp", str(p), "--source", "Florence", "--json"])
    assert out.returncode == 0, out.output
    rep = json.loads(out.stdout)
    assert rep["source_label"] == "Florence" and rep["source"] == 1
    assert rep["max_distance"] == 85.2 and rep["reached"] == 2
    assert_one_line_error(run_capped(["sssp", str(p), "--source", "Roma"]),
                          "did you mean 'Rome'?")
    # on a graph labelled by strings, "0" is a label too, never silently vertex 0
    assert_one_line_error(run_capped(["sssp", str(p), "--source", "0"]),
                          "'0' is not a vertex of this graph")
