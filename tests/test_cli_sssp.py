"""``graphpar sssp`` through a subprocess, and its report and demo helpers in-process."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import graphpar_cmd, run_mpi_script, run_mpiexec
from scipy.sparse.csgraph import dijkstra

import graphpar
from graphpar.cli import main
from graphpar.cli._driver import print_report
from graphpar.cli.sssp import demo, generate_size, parse_generate

TIMEOUT = 300


def run_cli(*args, cwd=None):
    return subprocess.run(
        graphpar_cmd() + ["sssp", *map(str, args)],
        capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd,
    )


def test_rome_verify_json_and_output(rome_path, tmp_path):
    out = tmp_path / "d.npy"
    res = run_cli(rome_path, "--source", 7, "--verify", "--json", "--output", out,
                  "--threads", 2)
    assert res.returncode == 0, res.stderr
    stats = json.loads(res.stdout)
    g = graphpar.read_graph(rome_path)
    ref = dijkstra(g.to_scipy(), indices=7)
    np.testing.assert_array_equal(np.load(out), ref)
    assert stats["verified"] is True
    assert stats["reached"] == int(np.isfinite(ref).sum())
    assert stats["max_distance"] == float(ref[np.isfinite(ref)].max())
    assert stats["vertices"] == g.n and stats["source"] == 7 and stats["threads"] == 2
    assert stats["time_s"] > 0 and stats["mteps"] > 0


def test_generated_undirected_text_report(tmp_path):
    out = tmp_path / "d.npy"
    res = run_cli("--generate", "grid:20:15", "--seed", 4, "--source", 3, "--undirected",
                  "--output", out, "--delta", 50)
    assert res.returncode == 0, res.stderr
    g = graphpar.generate.grid_road(20, 15, seed=4)
    ref = dijkstra(g.to_scipy(), indices=3, directed=False)
    np.testing.assert_array_equal(np.load(out), ref)
    lines = dict(line.split(":", 1) for line in res.stdout.strip().splitlines())
    assert int(lines["reached"]) == 300
    assert float(lines["max_distance"]) == ref.max()
    assert float(lines["delta"]) == 50.0
    for key in ("time_s", "mteps", "vertices", "edges"):
        assert key in lines


def test_limit_flag(tmp_path):
    out = tmp_path / "d.npy"
    res = run_cli("--generate", "kron:8", "--source", 1, "--limit", 200, "--output", out,
                  "--verify")
    assert res.returncode == 0, res.stderr
    g = graphpar.generate.kronecker(8, seed=0)
    np.testing.assert_array_equal(np.load(out), dijkstra(g.to_scipy(), indices=1, limit=200))


def _one_error_line(res, *fragments):
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.stderr
    for frag in fragments:
        assert frag in lines[0], lines[0]


def test_bad_inputs_give_one_error_line(tmp_path):
    # -q throughout: with a cold Numba cache a run also prints its compile notice
    _one_error_line(run_cli("-q", tmp_path / "missing.gr"), "missing.gr")
    bad = tmp_path / "bad.gr"
    bad.write_text("p sp 3 2\na 1 2 5\na 2 x 1\n")
    _one_error_line(run_cli("-q", bad), "bad.gr", "line 3")
    neg = tmp_path / "neg.gr"
    neg.write_text("p sp 3 2\na 1 2 5\na 2 3 -1\n")
    _one_error_line(run_cli("-q", neg), "neg.gr", "line 3", "negative edge weight")
    good = tmp_path / "good.gr"
    good.write_text("p sp 3 2\na 1 2 5\na 2 3 1\n")
    _one_error_line(run_cli("-q", good, "--source", 3), "--source = 3 is out of range")
    _one_error_line(run_cli("-q", good, "--delta", 0),
                    "argument --delta: must be a positive finite number")
    _one_error_line(run_cli("-q", "--generate", "kron:x"), "--generate must be")
    _one_error_line(run_cli("-q"), "give a GRAPH_FILE or --generate")
    _one_error_line(run_cli("-q", good, "--source", "abc"),
                    "argument --source: expected a vertex number", "'abc'")
    _one_error_line(run_cli("-q", good, "--source", "0,7"), "--source[1] = 7 is out of range")
    ids = tmp_path / "ids.txt"
    ids.write_text("1\n2\nx\n")
    _one_error_line(run_cli("-q", good, "--sources", ids), "ids.txt, line 3", "'x'")
    _one_error_line(run_cli("-q", good, "--sources", tmp_path / "none.txt"), "none.txt")
    _one_error_line(run_cli("-q", good, "--all-pairs", "--source", "1"), "not allowed with")


def test_verify_fails_with_status_1(tmp_path, monkeypatch):
    # a deliberately broken kernel result must make --verify exit with status 1
    from graphpar import _shortest_paths

    real = _shortest_paths._solve

    def broken(*a, **k):
        dist, pred, stats = real(*a, **k)
        dist[0, -1] += 1.0
        return dist, pred, stats

    monkeypatch.setattr(_shortest_paths, "_solve", broken)
    argv = ["sssp", "--generate", "grid:6", "--verify", "--json"]
    assert main(argv) == 1
    monkeypatch.setattr(_shortest_paths, "_solve", real)
    assert main(argv) == 0


def test_print_report_prints_every_key(capsys):
    stats = {"reached": 5, "time_s": 0.5, "ranks": 4, "rounds": 17, "bytes_exchanged": 1024,
             "max_distance": np.float64(3.5)}
    print_report(stats, as_json=True)
    assert json.loads(capsys.readouterr().out) == {**stats, "max_distance": 3.5}
    print_report(stats, as_json=False)
    text = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in text] == list(stats)
    assert text[2].split() == ["ranks:", "4"]


def test_parse_generate():
    assert parse_generate("kron:12") == ("kron", 12, None)
    assert parse_generate("uniform:100:400") == ("uniform", 100, 400)
    assert parse_generate("road:30") == ("grid", 30, None)
    with pytest.raises(ValueError, match="got 'grid'"):
        parse_generate("grid")


def test_demo_step_verifies(capsys):
    from argparse import Namespace

    assert demo(Namespace(scale=9, seed=2)) is True
    out = capsys.readouterr().out
    assert "Kronecker scale 9" in out
    assert out.count("verified against Dijkstra") == 4


def test_generate_size_checks_every_number():
    assert generate_size("kron:12:8") == ("kron", 12, 8, 4096, 8 * 4096, False)
    assert generate_size("uniform:100") == ("uniform", 100, 800, 100, 800, True)
    assert generate_size("road:3:4") == ("grid", 3, 4, 12, 3 * 3 + 2 * 4, False)
    for spec, message in [("kron:0", r"SCALE must be in \[1, 40\], got 0"),
                          ("kron:41", r"SCALE must be in \[1, 40\], got 41"),
                          ("uniform:0", "N must be >= 1, got 0"),
                          ("grid:0", "ROWS must be >= 1, got 0"),
                          ("grid:3:0", "COLS must be >= 1, got 0")]:
        with pytest.raises(ValueError, match=f"--generate {spec}: {message}"):
            generate_size(spec)


CYCLE = "# Directed graph\n0 1 1\n1 2 1\n2 0 10\n"  # from 2: directed 10, 11; undirected 2, 1


def test_undirected_verify_checks_the_users_graph(tmp_path, monkeypatch, capsys):
    # a symmetrisation that does nothing makes the search run on the directed graph;
    # --verify checks the graph the user asked for (--undirected) and must catch it
    from graphpar import Graph

    path = tmp_path / "cycle.wel"
    path.write_text(CYCLE)
    argv = ["sssp", str(path), "--undirected", "--verify", "--source", "2", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["max_distance"] == 2.0
    monkeypatch.setattr(Graph, "symmetrized", lambda self: self)
    assert main(argv) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["max_distance"] == 11.0 and report["verified"] is False


@pytest.mark.parametrize("ranks", [2, 4])
def test_undirected_verify_checks_the_users_graph_under_mpi(tmp_path, ranks):
    path = tmp_path / "cycle.wel"
    path.write_text(CYCLE)
    proc = run_mpi_script("rank_raises.py", ranks, "cli-faulty-symmetrisation", path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "verified:        False" in proc.stdout
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("ranks", [None, 1, 2, 4])
def test_subnormal_and_zero_weights_match_scipy(tmp_path, ranks):
    # 5e-324 arcs made the default delta 0 (ZeroDivisionError); any delta must give
    # scipy's distances exactly, serially and under MPI
    from graphpar import Graph, write_graph

    g = graphpar.generate.uniform(300, 3000, seed=2)
    w = np.full(g.nnz, 5e-324)
    w[::7] = 0.0
    w[::11] = 1e-310
    w[::13] = 2.0
    path = tmp_path / "sub.wel"
    write_graph(Graph(g.indptr, g.indices, w), path)
    ref = dijkstra(graphpar.read_graph(path).to_scipy(), indices=3)
    assert np.isfinite(ref).sum() > 100
    for delta in ([], ["--delta", "5e-324"]):
        out = tmp_path / "dist.npy"
        args = ["-m", "graphpar", "sssp", path, "--source", 3, "--output", out, "--verify",
                *delta]
        if ranks is None:
            proc = subprocess.run([sys.executable, *map(str, args)], capture_output=True,
                                  text=True, timeout=TIMEOUT)
        else:
            proc = run_mpiexec(ranks, args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert np.array_equal(np.load(out), ref)
        out.unlink()


def _check_npz(path, A, sources, directed=True, limit=np.inf):
    from scipy.sparse.csgraph import reconstruct_path

    with np.load(path) as z:
        dist, pred, src = z["distances"], z["predecessors"], z["sources"]
    want = dijkstra(A, directed=directed, indices=sources, limit=limit)
    np.testing.assert_array_equal(dist, want)
    np.testing.assert_array_equal(src, sources)
    assert pred.dtype == np.int32 and pred.shape == dist.shape
    np.testing.assert_array_equal(pred == -9999,
                                  ~np.isfinite(dist) | (np.arange(A.shape[0]) == src[:, None]))
    for row, s in zip(pred, src, strict=True):
        reconstruct_path(A, row, directed=directed)
        for v in np.flatnonzero(row >= 0):  # every tree edge is tight
            u = row[v]
            w = A[[u], [v]][0] if directed else min(x for x in (A[[u], [v]][0], A[[v], [u]][0])
                                                    if x > 0)
            assert dist[list(src).index(s), u] + w == dist[list(src).index(s), v]


@pytest.mark.parametrize("extra", [[], ["--delta", "40"], ["--threads", "1"]])
def test_several_sources_write_npz_and_plot(tmp_path, extra):
    out, png = tmp_path / "paths.npz", tmp_path / "hist.png"
    res = run_cli("--generate", "grid:12:9", "--seed", 3, "--source", "0,5,100,5", "--output",
                  out, "--plot", png, "--verify", "--json", *extra)
    assert res.returncode == 0, res.stderr
    stats = json.loads(res.stdout)
    A = graphpar.generate.grid_road(12, 9, seed=3).to_scipy()
    _check_npz(out, A, np.array([0, 5, 100, 5]))
    assert stats["sources"] == 4 and stats["verified"] is True
    assert stats["reached"] == int(np.isfinite(dijkstra(A, indices=[0, 5, 100, 5])).sum())
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files


def test_sources_file_all_pairs_and_npy(tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("# sources\n7\n\n-1\n")
    out = tmp_path / "d.npy"
    res = run_cli("--generate", "uniform:60:300", "--sources", ids, "--output", out,
                  "--undirected", "--limit", 3)
    assert res.returncode == 0, res.stderr
    A = graphpar.generate.uniform(60, 300, seed=0).to_scipy()
    np.testing.assert_array_equal(np.load(out),
                                  dijkstra(A, directed=False, indices=[7, 59], limit=3))
    out = tmp_path / "all.npz"
    res = run_cli("--generate", "uniform:60:300", "--all-pairs", "--output", out, "--undirected")
    assert res.returncode == 0, res.stderr
    _check_npz(out, A, np.arange(60), directed=False)


def test_progress_of_several_sources_on_stderr_unless_quiet(tmp_path):
    import os

    env = {**os.environ, "GRAPHPAR_PROGRESS_INTERVAL": "0"}  # a line per update

    def run(*extra):
        return subprocess.run(graphpar_cmd() + ["sssp", "--generate", "grid:8", "--all-pairs",
                                                "--json", *extra],
                              capture_output=True, text=True, timeout=TIMEOUT, env=env)

    res = run()
    assert res.returncode == 0, res.stderr
    assert "shortest paths" in res.stderr and "64/64" in res.stderr and "\r" not in res.stderr
    res = run("--quiet")
    assert res.returncode == 0 and "shortest paths" not in res.stderr


@pytest.mark.parametrize("ranks", [1, 2])
def test_several_sources_under_mpi(tmp_path, ranks):
    out = tmp_path / "paths.npz"
    proc = run_mpiexec(ranks, ["-m", "graphpar", "sssp", "--generate", "grid:10:7", "--source",
                               "3,0,69", "--output", str(out), "--verify", "--json"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stats = json.loads(proc.stdout)
    assert stats["sources"] == 3 and stats["verified"] is True and stats["ranks"] == ranks
    _check_npz(out, graphpar.generate.grid_road(10, 7, seed=0).to_scipy(), np.array([3, 0, 69]))


def _labelled_csv(tmp_path):
    """A directed CSV edge list with string ids (dyadic weights: sums are exact) and the
    same graph in networkx."""
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(5)
    names = [f"city {i}" if i % 3 else f"c,{i}" for i in rng.permutation(30)]  # quoted too
    G = nx.DiGraph()
    lines = ["from,to,km"]
    for _ in range(120):
        u, v = rng.choice(30, size=2, replace=False)
        if G.has_edge(names[u], names[v]):
            continue
        w = float(rng.integers(1, 64)) / 4
        G.add_edge(names[u], names[v], weight=w)
        lines.append(f'"{names[u]}","{names[v]}",{w}')
    path = tmp_path / "roads.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, G, list(G.nodes)


def _check_csv_rows(out, G, sources):
    import csv

    nx = pytest.importorskip("networkx")
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["source", "target", "distance", "predecessor"]
    got = {}
    for s, t, d, p in rows[1:]:
        got.setdefault(s, {})[t] = (float(d), p)
    assert list(got) == list(dict.fromkeys(sources))
    for s in sources:
        ref = nx.single_source_dijkstra_path_length(G, s)
        assert {t: d for t, (d, _) in got[s].items()} == ref  # by label, every vertex reached
        for t, (d, p) in got[s].items():
            if t == s:
                assert p == "" and d == 0
            else:  # a tight tree edge (ties may pick another predecessor than networkx)
                assert got[s][p][0] + G[p][t]["weight"] == d


def test_labelled_graph_csv_output_matches_networkx_by_label(tmp_path):
    path, G, nodes = _labelled_csv(tmp_path)
    sources = [nodes[4], nodes[0]]
    out = tmp_path / "paths.csv"
    res = run_cli(path, "--source", ",".join(s for s in sources if "," not in s) or nodes[1],
                  "--output", out)
    assert res.returncode == 0, res.stderr
    picked = [s for s in sources if "," not in s] or [nodes[1]]
    _check_csv_rows(out, G, picked)
    # --sources FILE by label (a label with a comma is fine there), and a CSV again
    ids = tmp_path / "ids.txt"
    ids.write_text("# from\n" + "\n".join(sources) + "\n")
    res = run_cli(path, "--sources", ids, "--output", out)
    assert res.returncode == 0, res.stderr
    _check_csv_rows(out, G, sources)


def test_labelled_graph_npz_has_labels_and_sources_file_errors_name_the_line(tmp_path):
    path, G, nodes = _labelled_csv(tmp_path)
    ids = tmp_path / "ids.txt"
    ids.write_text(f"{nodes[2]}\n{nodes[7]}\n")
    out = tmp_path / "paths.npz"
    res = run_cli(path, "--sources", ids, "--output", out)
    assert res.returncode == 0, res.stderr
    nx = pytest.importorskip("networkx")
    with np.load(out) as z:  # no pickle needed
        labels, dist, src = z["labels"], z["distances"], z["sources"]
    assert sorted(labels.tolist()) == sorted(G.nodes)
    for row, s in zip(dist, src, strict=True):
        ref = nx.single_source_dijkstra_path_length(G, str(labels[s]))
        assert {str(labels[v]): row[v] for v in np.flatnonzero(np.isfinite(row))} == ref
    assert [str(labels[s]) for s in src] == [nodes[2], nodes[7]]
    ids.write_text(f"{nodes[2]}\n\n# next\nAtlantis\n")
    res = run_cli(path, "--sources", ids, "-q")
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and f"{ids}, line 4:" in res.stderr
    assert "Atlantis" in res.stderr
    # an unlabelled graph: numbers, a bad one named by line; CSV output by number
    ids.write_text("0\n99\n")
    res = run_cli("--generate", "grid:3", "--sources", ids)
    assert res.returncode == 2 and f"{ids}, line 2:" in res.stderr and "99" in res.stderr
    out = tmp_path / "grid.csv"
    res = run_cli("--generate", "grid:3", "--source", "4", "--output", out)
    assert res.returncode == 0, res.stderr
    A = graphpar.generate.grid_road(3, seed=0).to_scipy()
    ref = dijkstra(A, indices=4)
    rows = out.read_text().splitlines()
    assert rows[0] == "source,target,distance,predecessor" and len(rows) == 10
    assert {int(r.split(",")[1]): float(r.split(",")[2]) for r in rows[1:]} == dict(
        enumerate(ref.tolist()))


def test_csv_columns_and_relabel_by_name_equal_networkx(tmp_path):
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(11)
    ids = rng.choice(10**9, size=40, replace=False)  # sparse integer ids
    src, dst = rng.integers(0, 40, size=(2, 160))
    km = rng.integers(1, 100, size=160)
    path = tmp_path / "roads.csv"
    rows = [f"{ids[a]},{ids[b]},{w},x" for a, b, w in zip(src, dst, km, strict=True)]
    path.write_text("from,to,km,note\n" + "\n".join(rows) + "\n")
    out = tmp_path / "d.csv"
    proc = run_cli(path, "--source-col", "from", "--target-col", "to", "--weight-col",
                   "km", "--relabel", "--source", str(ids[src[0]]), "-o", out, "--quiet")
    assert proc.returncode == 0, proc.stderr
    G = nx.DiGraph()
    for a, b, w in zip(src, dst, km, strict=True):
        if not G.has_edge(ids[a], ids[b]) or G[ids[a]][ids[b]]["weight"] > w:
            G.add_edge(int(ids[a]), int(ids[b]), weight=int(w))
    want = nx.single_source_dijkstra_path_length(G, int(ids[src[0]]))
    lines = out.read_text().splitlines()[1:]
    got = {int(t): float(d) for _, t, d, _ in (line.split(",") for line in lines)}
    assert got == {k: float(v) for k, v in want.items()}


# ---------------------------------------------------------------- the probe's defects
def _commas_csv(tmp_path):
    path = tmp_path / "comma.csv"
    path.write_text('from,to,km\n"Rome, IT",Paris,3\nParis,Pisa,2\n"say ""hi""",Pisa,1\n')
    return path


def _run_main(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_source_labels_with_commas_are_given_in_double_quotes(tmp_path, capsys):
    path, out = _commas_csv(tmp_path), tmp_path / "paths.csv"
    status, _, err = _run_main(["sssp", str(path), "--source", '"Rome, IT", Paris',
                                "-o", str(out), "-q"], capsys)
    assert status == 0, err
    rows = out.read_text().splitlines()
    assert rows == ["source,target,distance,predecessor", '"Rome, IT","Rome, IT",0.0,',
                    '"Rome, IT",Paris,3.0,"Rome, IT"', '"Rome, IT",Pisa,5.0,Paris',
                    "Paris,Paris,0.0,", "Paris,Pisa,2.0,Paris"]
    # a quote inside a label is doubled, as in the CSV file
    status, _, err = _run_main(["sssp", str(path), "--source", '"say ""hi"""', "-q"], capsys)
    assert status == 0, err
    # unquoted, the comma splits: the hint says what to type, shell quotes included
    status, _, err = _run_main(["sssp", str(path), "--source", "Rome, IT", "-q"], capsys)
    assert status == 2 and err.count("\n") == 1
    assert "--source[0] = 'Rome' is not a vertex" in err
    assert """did you mean 'Rome, IT'? (type it as --source '"Rome, IT"'""" in err
    # a quote left open is refused, not guessed at
    status, _, err = _run_main(["sssp", str(path), "--source", '"Rome, IT', "-q"], capsys)
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("graphpar: error: argument --source:") and "'\"Rome, IT'" in err
    help_text = subprocess.run(graphpar_cmd() + ["sssp", "--help"], capture_output=True,
                               text=True, timeout=TIMEOUT).stdout
    assert "double quotes" in " ".join(help_text.split())
    assert """--source '"Rome, IT",Paris'""" in help_text  # an example, on one line


def test_parse_source_list_reads_csv():
    from graphpar.cli.sssp import parse_source_list

    g = graphpar.Graph.from_edges([0, 1], [1, 2], labels=["Rome, IT", "Paris", 'a "b"'])
    assert parse_source_list('"Rome, IT",Paris', g) == [0, 1]
    assert parse_source_list('Paris, "a ""b"""', g) == [1, 2]
    assert parse_source_list("0, 5,9") == [0, 5, 9]
    assert parse_source_list('"7"') == [7]


def test_sources_file_errors_name_the_entry_not_source_0(tmp_path, capsys):
    path = _commas_csv(tmp_path)
    ids = tmp_path / "srcs.txt"
    ids.write_text("Paris\n# a comment\n\nRome, IT\nnobody here\n")
    status, _, err = _run_main(["sssp", str(path), "--sources", str(ids), "-q"], capsys)
    assert status == 2 and err.count("\n") == 1
    assert f"{ids}, line 5: --sources[2] = 'nobody here' is not a vertex" in err
    ids.write_text("0\n1\n99\n")
    status, _, err = _run_main(["sssp", "--generate", "grid:3", "--sources", str(ids), "-q"],
                               capsys)
    assert status == 2
    assert f"{ids}, line 3: --sources[2] = 99 is out of range" in err


SSSP_OUTPUT_REFUSED = (
    "the name must end in .npz, .csv or .npy (the distances and predecessors are written "
    "as an .npz archive or as CSV, the distances alone as a float64 .npy array)"
)


@pytest.mark.parametrize("name", ["d.txt", "out", "d.npy.gz", "paths.csv.gz"])
def test_an_output_not_named_npz_csv_or_npy_is_refused_before_the_graph_is_read(
        name, tmp_path, capsys, monkeypatch):
    # the driver's check_output_paths applies the rule sssp declares (OUTPUT_SUFFIXES)
    from graphpar.cli import sssp as cli_sssp

    def no_work(*a, **k):
        raise AssertionError("the graph was read before the output name was checked")

    monkeypatch.setattr(cli_sssp, "_load", no_work)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "G.gr").write_text("p sp 3 2\na 1 2 5\na 2 3 1\n")
    status, out, err = _run_main(["sssp", "G.gr", "--output", name, "-q"], capsys)
    assert status == 2 and out == ""
    assert err == f"graphpar: error: --output {name}: {SSSP_OUTPUT_REFUSED}\n"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["G.gr"]


def test_upper_case_suffix_is_accepted(tmp_path, capsys):
    out = tmp_path / "D.NPY"
    status, _, err = _run_main(["sssp", "--generate", "grid:3", "-o", str(out), "-q"], capsys)
    assert status == 0, err
    assert np.load(out).shape == (9,)


@pytest.mark.parametrize("argv, words", [
    (["--weight-col", "miles"], ["--weight-col 'miles' is not a column of", "'km'"]),
    (["--source-col", "x"], ["--source-col 'x' is not a column of"]),
    (["--target-col", "from"], ["--source-col and --target-col are the same column"]),
    (["--source", "A", "--limit", "-1"], ["argument --limit", "'-1'"]),
    (["--source", "A", "--limit", "nan"], ["argument --limit", "'nan'"]),
    (["--source", "A", "--delta", "0"], ["argument --delta", "'0'"]),
])
def test_errors_name_the_flags_not_python_keywords(argv, words, tmp_path, capsys):
    path = tmp_path / "ab.csv"
    path.write_text("from,to,km\nA,B,3\n")
    status, _, err = _run_main(["sssp", str(path), *argv, "-q"], capsys)
    assert status == 2 and err.count("\n") == 1, err
    for w in words:
        assert w in err
    for keyword in ("weight=", "source=", "target=", "limit must", "delta must"):
        assert keyword not in err


def test_a_weight_column_taken_by_default_names_the_flag(tmp_path, capsys):
    path = tmp_path / "w.csv"
    path.write_text("a,b,c\nA,B,x\n")
    status, _, err = _run_main(["sssp", str(path), "-q"], capsys)
    assert status == 2 and "weight=" not in err and "--weight-col" in err


def test_column_flags_on_a_gr_file_name_the_flags(tmp_path, capsys):
    path = tmp_path / "g.gr"
    path.write_text("p sp 2 1\na 1 2 1\n")
    status, _, err = _run_main(["sssp", str(path), "--weight-col", "km"], capsys)
    assert status == 2 and "--source-col, --target-col and --weight-col" in err
    status, _, err = _run_main(["sssp", str(path), "--relabel"], capsys)
    assert status == 2 and "--relabel applies to edge lists" in err and "=True" not in err


def test_sparse_ids_mention_relabel_as_one_line(tmp_path):
    far = tmp_path / "far.csv"
    far.write_text("a,b\n5,999999999\n")
    res = run_cli(far, "--source", 5, "-q")
    _one_error_line(res, "999999999", "--relabel")
    sparse = tmp_path / "sparse.csv"
    sparse.write_text("a,b\n5,99999\n")
    for quiet in ([], ["-q"]):
        res = run_cli(sparse, "--source", 5, "--json", *quiet)
        assert res.returncode == 0, res.stderr
        warning = [ln for ln in res.stderr.splitlines() if "warning" in ln.lower()]
        assert len(warning) == 1, res.stderr
        assert warning[0].startswith("graphpar: warning: ")
        assert "99999" in warning[0] and "--relabel" in warning[0]
        assert "relabel=True" not in res.stderr and "UserWarning" not in res.stderr
        assert "g.labels" not in res.stderr
    res = run_cli(sparse, "--source", 5, "--relabel", "-q")
    assert res.returncode == 0 and res.stderr == ""


def test_an_error_under_mpiexec_is_one_line(tmp_path):
    from capped import assert_one_line_error, run_capped

    path = _commas_csv(tmp_path)
    run = run_capped(["sssp", str(path), "--source", "Rome, IT", "-q"], ranks=2)
    assert_one_line_error(run, "did you mean", """--source '"Rome, IT"'""")
    assert run.returncode == 2
    run = run_capped(["sssp", str(path), "--weight-col", "miles", "-o", str(path)], ranks=2)
    assert_one_line_error(run, "--output", str(path), "GRAPH_FILE")
    assert run.returncode == 2
    run = run_capped(["sssp", str(path), "--weight-col", "miles"], ranks=2)
    assert_one_line_error(run, "--weight-col 'miles'")
    ids = tmp_path / "ids.txt"
    ids.write_text("Paris\nnobody\n")
    run = run_capped(["sssp", str(path), "--sources", str(ids), "-q"], ranks=2)
    assert_one_line_error(run, "line 2: --sources[1] = 'nobody'")


def test_a_quoted_label_keeps_its_spaces_on_the_command_line(tmp_path):
    """A CSV id '" Rome"' is the label ' Rome' (the reader keeps quoted spaces); --source and
    --sources take it in the same quotes."""
    import subprocess
    import sys

    g = tmp_path / "g.csv"
    g.write_text('src,dst,w\n" Rome",Pisa,2\nRome,Pisa,5\n')
    srcs = tmp_path / "s.txt"
    srcs.write_text('" Rome"  # with its space\n')
    out = {}
    for key, flag in (("inline", ["--source", '" Rome"']), ("file", ["--sources", srcs])):
        path = tmp_path / f"{key}.csv"
        r = subprocess.run([sys.executable, "-m", "graphpar", "sssp", g, *map(str, flag), "-q",
                            "-o", path], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        out[key] = path.read_text()
    assert out["inline"] == out["file"]
    # from ' Rome' (2), not from 'Rome' (5); written quoted, so that it reads back
    assert out["inline"].splitlines()[1:] == ['" Rome"," Rome",0.0,', '" Rome",Pisa,2.0," Rome"']
    r = subprocess.run([sys.executable, "-m", "graphpar", "sssp", g, "--source", "Romee", "-q"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 2
