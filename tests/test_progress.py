"""Progress reports (plain lines in logs, off by default, --quiet) and atomic output files."""

from __future__ import annotations

import io
import logging
import os
import subprocess

import numpy as np
import pytest
from conftest import graphpar_cmd

import graphpar.generate as generate_module
from graphpar import Graph, generate, read_graph, write_graph
from graphpar.cli._driver import Context
from graphpar.progress import progress

TIMEOUT = 900


def _same(a, b):
    return (a.n == b.n and a.directed == b.directed and np.array_equal(a.indptr, b.indptr)
            and np.array_equal(a.indices, b.indices) and np.array_equal(a.weights, b.weights))


# ---------------------------------------------------------------- progress
def test_progress_to_a_file_is_plain_lines_with_percent(monkeypatch):
    monkeypatch.setenv("GRAPHPAR_PROGRESS_INTERVAL", "0")
    out = io.StringIO()
    with progress(4, "work", enabled=True, stream=out) as bar:
        for _ in range(4):
            bar.update()
    text = out.getvalue()
    assert "\r" not in text
    assert text.splitlines()[-1].startswith("work: 100%")


def test_a_long_description_keeps_the_percent_and_counts_in_a_log(monkeypatch):
    # a log line was cut at 80 columns: a long file name left "...graph.gr: 100" and no counts
    monkeypatch.setenv("GRAPHPAR_PROGRESS_INTERVAL", "0")
    desc = "reading " + "/very/long/directory" * 8 + "/graph.gr"
    out = io.StringIO()
    with progress(12_345_678, desc, unit="B", enabled=True, stream=out) as bar:
        for _ in range(3):
            bar.update(4_115_226)
    last = out.getvalue().splitlines()[-1]
    assert last.startswith(f"{desc}: 100%|")
    assert "12.3M/12.3M [" in last and last.endswith("B/s]")


def test_disabled_progress_and_quiet_context_write_nothing(capsys):
    with progress(3, "off") as bar:  # off by default
        bar.update(3)
    with Context(no_progress=True).progress(3, "quiet") as bar:
        bar.update(3)
    with Context(rank=1).progress(3, "not rank 0") as bar:
        bar.update(3)
    assert capsys.readouterr().err == ""
    assert not Context(rank=1).shows_progress and Context().shows_progress


def test_generators_report_pieces_and_give_the_same_graph(monkeypatch, capsys):
    monkeypatch.setattr(generate_module, "_PIECE_MIN", 100)  # many pieces on a small graph
    monkeypatch.setenv("GRAPHPAR_PROGRESS_INTERVAL", "0")
    g = generate.kronecker(9, 8, seed=5, progress=True)
    err = capsys.readouterr().err
    assert "generating kronecker edges" in err and "100%" in err and "\r" not in err
    assert _same(g, generate.kronecker(9, 8, seed=5))
    s, labels = generate.sbm([300, 200], 0.05, 0.01, seed=2, progress=True)
    assert "drawing sbm pairs" in capsys.readouterr().err
    s2, labels2 = generate.sbm([300, 200], 0.05, 0.01, seed=2)
    assert _same(s, s2) and np.array_equal(labels, labels2)


def test_short_work_writes_no_line_in_a_log(monkeypatch):
    monkeypatch.setenv("GRAPHPAR_PROGRESS_INTERVAL", "30")
    out = io.StringIO()
    with progress(4, "quick", enabled=True, stream=out) as bar:
        bar.update(4)
    assert out.getvalue() == ""


def test_generation_progress_follows_logging(caplog, monkeypatch):
    monkeypatch.setenv("GRAPHPAR_PROGRESS_INTERVAL", "0")
    with caplog.at_level(logging.INFO, logger="graphpar"):
        generate.grid_road(20, progress=None)
    assert any("generating grid edges" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("name", ["g.gr", "g.mtx.gz", "g.el.bz2", "g.npz", "g.npz.xz"])
def test_reading_reports_bytes(tmp_path, name, capsys, monkeypatch):
    monkeypatch.setenv("GRAPHPAR_PROGRESS_INTERVAL", "0")
    g = generate.uniform(200, 3000, seed=1)
    write_graph(g, tmp_path / name)
    back = read_graph(tmp_path / name, progress=True)
    err = capsys.readouterr().err
    assert "reading g." in err and "100%" in err and "\r" not in err
    assert back.nnz == g.nnz
    read_graph(tmp_path / name)
    assert capsys.readouterr().err == ""


def test_cli_progress_goes_to_a_log_and_quiet_silences_it(tmp_path):
    env = {**os.environ, "GRAPHPAR_PROGRESS_INTERVAL": "0"}
    args = [*graphpar_cmd(), "generate", "kron", "--scale", 10, "-o", tmp_path / "k.npz"]
    r = subprocess.run(list(map(str, args)), capture_output=True, text=True, env=env,
                       timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert "generating kronecker edges" in r.stderr and "\r" not in r.stderr
    q = subprocess.run([*map(str, args), "--quiet"], capture_output=True, text=True, env=env,
                       timeout=TIMEOUT)
    assert q.returncode == 0 and q.stderr == ""
    assert q.stdout == "" or "generated in" in q.stdout


# ---------------------------------------------------------------- atomic writes
class Boom(RuntimeError):
    pass


@pytest.mark.parametrize("name", ["g.gr", "g.mtx.gz", "g.wel.bz2", "g.el.xz", "g.npz",
                                  "g.npz.gz"])
def test_a_write_that_fails_part_way_leaves_the_old_file(tmp_path, name, monkeypatch):
    path = tmp_path / name
    old = Graph.from_edges([0], [1], [3.0])
    write_graph(old, path)
    before = path.read_bytes()
    big = generate.uniform(2000, 20000, seed=1)

    import graphpar.io._atomic as atomic

    real_fsync = atomic.os.fsync

    def fail_after_writing(fd):
        assert os.fstat(fd).st_size > 0  # some bytes were written before the failure
        raise Boom("disk died")

    monkeypatch.setattr(atomic.os, "fsync", fail_after_writing)
    with pytest.raises(Boom):
        write_graph(big, path)
    monkeypatch.setattr(atomic.os, "fsync", real_fsync)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary file left
    assert _same(read_graph(path), old)
    write_graph(big, path)  # and a write that succeeds replaces it whole
    assert _same(read_graph(path), big)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_failing_new_file_leaves_nothing(tmp_path, monkeypatch):
    import graphpar.io._text as text

    def broken(*args, **kwargs):
        raise Boom("formatter failed")

    import graphpar.io._formats as formats

    monkeypatch.setattr(formats, "format_records", broken)
    with pytest.raises(Boom):
        write_graph(Graph.from_edges([0], [1]), tmp_path / "new.gr.gz")
    assert list(tmp_path.iterdir()) == []
    assert text.format_records is not broken


def test_killed_generate_leaves_no_partial_file(tmp_path):
    """A ``graphpar generate`` killed while writing leaves no output and no temporary file."""
    import signal

    from conftest import interrupt_generate_while_writing

    interrupt_generate_while_writing(tmp_path, signal.SIGKILL, timeout=TIMEOUT)
    assert not (tmp_path / "big.el").exists()
    # a kill cannot clean up: the temporary file is hidden and never under the name
    assert all(p.name.startswith(".big.el.") and p.name.endswith(".tmp")
               for p in tmp_path.iterdir())


def test_a_terminal_that_reports_no_size_still_gets_a_bar():
    """A fresh pseudo-terminal reports 0 x 0; the live bar is then drawn 80 columns wide."""
    pty = pytest.importorskip("pty")
    import sys

    code = ("import os, sys\n"
            "assert os.get_terminal_size(2).columns == 0\n"
            "from graphpar.progress import progress\n"
            "with progress(10, 'demo', enabled=True) as bar:\n"
            "    bar.update(10)\n")
    pid, fd = pty.fork()
    if pid == 0:  # the child: stderr is the new pseudo-terminal, which has no size yet
        try:
            os.execv(sys.executable, [sys.executable, "-c", code])
        finally:
            os._exit(3)
    out = b""
    while True:
        try:
            piece = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not piece:
            break
        out += piece
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, out
    last = out.decode().replace("\r\n", "\r").split("\r")[-2]  # the final redraw
    assert last.startswith("demo: 100%|") and "10/10" in last
    assert len(last) == 80
