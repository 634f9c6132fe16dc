"""The one CLI driver: MPI decided once, shared options, one-line errors, serial-only commands."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from capped import assert_one_line_error, run_capped

import graphpar
import graphpar.mpi
from graphpar.cli import SUBCOMMANDS, Parser, build_parser, main
from graphpar.cli._driver import SHARED_HELP, Context, print_report

PACKAGE = Path(graphpar.__file__).resolve().parent
LUNG = PACKAGE.parent / "datasets" / "survival" / "lung.csv"


def _subparsers(parser) -> dict:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _commands() -> dict:
    """Every command's parser by name; each generator of ``generate`` is one."""
    out = {}
    for name, p in _subparsers(build_parser()).items():
        inner = _subparsers(p)
        out.update({f"{name} {k}": q for k, q in inner.items()} if inner else {name: p})
    return out


# The shared options each command opts in to.
HAS = {
    "demo": {"--threads", "--seed", "--json", "--quiet"},
    "sssp": {"--threads", "--seed", "--json", "--output", "--quiet"},
    "gcn": {"--threads", "--seed", "--json", "--output", "--quiet"},
    "cox": {"--threads", "--json", "--output", "--quiet"},
    "compile": {"--threads", "--json", "--quiet"},
    **{f"generate {g}": {"--threads", "--seed", "--json", "--output", "--quiet"}
       for g in ("kron", "uniform", "grid", "delaunay", "sbm")},
}
SHARED = ("--threads", "--seed", "--json", "--output", "--quiet")


def _option(parser, flag):
    return next((a for a in parser._actions if flag in a.option_strings), None)


def test_every_command_is_listed():
    assert set(_commands()) == set(HAS)
    assert {name.split()[0] for name in HAS} == set(SUBCOMMANDS)


@pytest.mark.parametrize("name", sorted(HAS))
def test_shared_options_have_one_spelling_type_and_help(name):
    parser = _commands()[name]
    assert isinstance(parser, Parser)  # one-line usage errors
    present = {flag for flag in SHARED if _option(parser, flag) is not None}
    assert present == HAS[name]
    for flag in present:
        action = _option(parser, flag)
        key = flag[2:]
        if flag == "--output":
            assert action.option_strings == ["-o", "--output"]
            assert action.help.startswith("write ") and action.metavar in action.help
            continue
        assert action.help == SHARED_HELP[key]
        if flag in ("--json", "--quiet"):
            assert action.nargs == 0 and action.const is True and action.default is False
            continue
        assert action.default == (None if flag == "--threads" else 0)
        lo, bad = (1, ["0", "-2", "1.5", "x"]) if flag == "--threads" else \
            (0, ["-1", str(2**64), "x"])
        assert action.type(str(lo)) == lo and action.type("7") == 7
        for text in bad:
            with pytest.raises(argparse.ArgumentTypeError, match=re.escape(repr(text))):
                action.type(text)


@pytest.mark.parametrize("argv", [
    ["demo", "--bogus"], ["sssp", "--bogus"], ["gcn", "--dataset", "sbm", "--bogus"],
    ["cox", "x.csv", "--time", "t", "--event", "e", "--bogus"], ["generate"],
    ["generate", "grid", "--rows", "3", "-o", "g.gr", "--bogus"], ["bogus"],
    ["sssp", "--threads", "0"], ["gcn", "--dataset", "sbm", "--seed", "-1"],
])
def test_a_bad_command_line_is_one_line_and_status_2(argv, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphpar: error: "), captured.err
    assert captured.out == ""


def test_help_and_version_return_0(capsys):
    assert main(["--version"]) == 0
    assert graphpar.__version__ in capsys.readouterr().out
    assert main(["cox", "--help"]) == 0
    assert SHARED_HELP["json"] in " ".join(capsys.readouterr().out.split())


def test_building_the_parser_imports_no_numba_or_scipy():
    # --help and usage errors need the parser only; Numba's import alone costs 0.6 s,
    # scipy.sparse's 0.3 s
    code = ("import sys; from graphpar.cli import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'scipy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_main_decides_mpi_once(monkeypatch, tmp_path, capsys):
    calls = []

    def counted():
        calls.append(1)
        return False

    monkeypatch.setattr(graphpar.mpi, "launched_under_mpi", counted)
    runs = [
        (["generate", "grid", "--rows", "3", "-o", str(tmp_path / "g.gr")], 0),
        (["sssp", "--generate", "grid:4", "--json", "--verify"], 0),
        (["cox", str(LUNG), "--time", "time", "--event", "status", "--json"], 0),
        (["gcn", "--dataset", "sbm", "--epochs", "2", "--json"], 0),
        (["sssp"], 2),
        (["sssp", "--bogus"], 2),
    ]
    for argv, status in runs:
        calls.clear()
        assert main(argv) == status, capsys.readouterr()
        assert len(calls) == 1, argv


def _sources():
    return sorted(p for p in PACKAGE.rglob("*.py"))


def test_mpi_is_detected_only_by_main():
    # graphpar.mpi defines it (and calls it in its doctest); graphpar.cli.main is its one caller
    callers = {p.relative_to(PACKAGE).as_posix() for p in _sources()
               if "launched_under_mpi(" in p.read_text()}
    assert callers == {"mpi/__init__.py", "cli/__init__.py"}
    assert (PACKAGE / "cli" / "__init__.py").read_text().count("launched_under_mpi(") == 1
    assert not any("_one_line_errors" in p.read_text() for p in _sources())


def test_the_cli_imports_no_private_helper():
    imported = re.compile(r"^\s*from\s+graphpar[\w.]*\s+import\s+(\([^)]*\)|[^\n]*)", re.M)
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        for names in imported.findall(path.read_text()):
            for name in names.split(","):
                name = name.strip(" ()\n").split(" as ")[0]
                private = name.startswith("_") and not name.endswith("__")  # not __version__
                assert not private, (path.name, name)


def test_context_prints_and_writes_on_rank_0_only(capsys):
    written = []
    for ctx in (Context(threads=2), Context(rank=1, size=2, threads=2)):
        ctx.print("hello")
        ctx.report({"a": 1})
        ctx.write(lambda: written.append(1))
        assert ctx.collectively(lambda: 6 * 7) == 42
    assert capsys.readouterr().out == "hello\na: 1\n" and written == [1]
    Context(as_json=True).report({"a": np.int64(3), "b": np.float64(np.inf)})
    assert json.loads(capsys.readouterr().out) == {"a": 3, "b": "inf"}


def test_refuse_mpi_only_with_more_than_one_rank():
    Context().refuse_mpi("not under mpiexec")  # serial: nothing to refuse
    Context(size=1).refuse_mpi("not under mpiexec")


def test_print_report_text_and_json(capsys):
    print_report({"reached": 5, "max_distance": -np.inf}, as_json=False)
    assert capsys.readouterr().out.splitlines() == ["reached:      5", "max_distance: -inf"]


# ---------------------------------------------------------------- under mpiexec
@pytest.mark.mpi
@pytest.mark.parametrize("argv, command, also", [
    (["generate", "grid", "--rows", "3", "-o", "g.gr"], "generate", "graphpar sssp --generate"),
    (["demo", "--scale", "4"], "demo", "without mpiexec"),
])
def test_serial_only_commands_refuse_under_mpiexec(argv, command, also, tmp_path):
    run = run_capped(argv, ranks=2, cwd=tmp_path)
    line = assert_one_line_error(run, f"graphpar {command} does not run under mpiexec", also)
    assert line.startswith("graphpar: error: ")
    assert run.returncode == 2, run.output
    assert run.stdout == "" and not any(tmp_path.iterdir())  # nothing run, nothing written


@pytest.mark.mpi
def test_generate_runs_under_a_single_rank(tmp_path):
    out = tmp_path / "g.npz"
    run = run_capped(["generate", "kron", "--scale", "6", "--seed", "2", "-o", str(out)],
                     ranks=1)
    assert run.returncode == 0, run.output
    got, want = graphpar.read_graph(out), graphpar.generate.kronecker(6, seed=2)
    assert np.array_equal(got.indptr, want.indptr) and np.array_equal(got.indices, want.indices)
    assert np.array_equal(got.weights, want.weights)


def test_quiet_turns_progress_off_and_only_rank_0_reports():
    from graphpar.cli._driver import _context

    loud = _context(argparse.Namespace(quiet=False, threads=1), None)
    quiet = _context(argparse.Namespace(quiet=True, threads=1, json=True), None)
    assert loud.shows_progress and not quiet.shows_progress and quiet.as_json
    assert not Context(rank=1, size=2).shows_progress
    assert main(["generate", "grid", "--rows", "2", "--quiet", "-o", "/nonexistent/x.gr"]) == 2


def test_sigterm_removes_the_temporary_file_and_says_terminated_once(tmp_path):
    """What Slurm sends at the time limit: no output, no ``.NAME.*.tmp``, status 143."""
    import signal

    from conftest import interrupt_generate_while_writing

    done = interrupt_generate_while_writing(tmp_path, signal.SIGTERM)
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip() == "graphpar: terminated"
    assert list(tmp_path.iterdir()) == []  # neither the target nor a temporary file


def test_sigterm_in_process_is_one_line_and_status_143(monkeypatch, capsys):
    import os
    import signal

    import graphpar.cli.sssp as cli_sssp

    def killed(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("SIGTERM did not stop the run")

    monkeypatch.setattr(cli_sssp, "run", killed)
    monkeypatch.setattr(cli_sssp, "_load", killed)
    status = main(["sssp", "--generate", "grid:3", "--quiet"])
    assert status == 143
    assert capsys.readouterr().err.strip() == "graphpar: terminated"
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the handler is put back


# one output check in the driver, before any work: a bad folder costs no compute
OUTPUT_CASES = [
    ["generate", "grid", "--rows", "3", "-o", "{missing}/g.gr"],
    ["sssp", "--generate", "grid:3", "-o", "{missing}/d.npz"],
    ["sssp", "--generate", "grid:3", "--plot", "{missing}/h.png"],
    ["cox", "{lung}", "--time", "time", "--event", "status", "-o", "{missing}/fit.json"],
    ["gcn", "--dataset", "sbm", "--epochs", "1", "--history", "{missing}/h.csv"],
]


@pytest.mark.parametrize("argv", OUTPUT_CASES, ids=lambda a: f"{a[0]}-{a[-2]}")
def test_an_output_in_a_missing_folder_is_refused_before_any_work(argv, tmp_path, capsys):
    lung = Path(__file__).resolve().parents[1] / "datasets" / "survival" / "lung.csv"
    missing = tmp_path / "no-such-folder"
    args = [a.format(missing=missing, lung=lung) for a in argv]
    ran = []
    parsed = build_parser().parse_args(args)
    parsed.func = lambda *a: ran.append(a)  # the subcommand itself must never start
    from graphpar.cli._driver import run_command

    assert run_command(parsed, False) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"graphpar: error: {argv[-2]} {args[-1]}: "
                   f"the folder {missing} does not exist").replace("-o ", "--output ")
    assert not ran


def test_two_options_naming_one_output_file_are_refused(tmp_path, capsys):
    out = tmp_path / "same.png"
    status = main(["sssp", "--generate", "grid:3", "--quiet", "-o", str(out), "--plot", str(out)])
    assert status == 2
    assert capsys.readouterr().err.strip() == (
        f"graphpar: error: --plot and --output name the same file, {out}")


def test_a_bad_output_folder_under_mpi_is_one_error_line_and_no_hang(tmp_path):
    run = run_capped(["sssp", "--generate", "grid:3", "--quiet",
                      "-o", str(tmp_path / "missing" / "d.npz")], ranks=2)
    assert_one_line_error(run, "--output", "does not exist")


# an output that names one of the run's inputs would overwrite it: refused before any work
INPUT_CASES = [
    (["sssp", "{g}", "-o", "{g}"], "--output", "GRAPH_FILE", "{g}"),
    (["sssp", "{g}", "--plot", "{g}"], "--plot", "GRAPH_FILE", "{g}"),
    (["sssp", "{g}", "-o", "{link}"], "--output", "GRAPH_FILE", "{g}"),
    (["sssp", "{g}", "--sources", "{ids}", "-o", "{ids}"], "--output", "--sources", "{ids}"),
    (["gcn", "--graph", "{g}", "--features", "{x}", "--labels", "{y}", "--split", "{split}",
      "-o", "{x}"], "--output", "--features", "{x}"),
    (["gcn", "--graph", "{g}", "--features", "{x}", "--labels", "{y}", "--split", "{split}",
      "--history", "{split}"], "--history", "--split", "{split}"),
    (["cox", "{table}", "--time", "time", "--event", "status", "-o", "{table}"], "--output",
     "DATA", "{table}"),
]


@pytest.mark.parametrize("argv, flag, what, inp", INPUT_CASES,
                         ids=[f"{c[0][0]}-{c[1]}-{c[2]}-{c[0][-1][1:-1]}" for c in INPUT_CASES])
def test_an_output_naming_an_input_is_refused_before_any_work(argv, flag, what, inp,
                                                              tmp_path, capsys):
    import os

    files = {k: tmp_path / name for k, name in [("g", "g.csv"), ("ids", "ids.npy"),
                                                 ("x", "x.npy"), ("y", "y.npy"),
                                                 ("split", "split.csv"),
                                                 ("table", "t.csv")]}
    for f in files.values():
        f.write_text("precious\n")
    files["link"] = tmp_path / "link.csv"
    os.symlink(files["g"], files["link"])
    args = [a.format(**files) for a in argv]
    ran = []
    parsed = build_parser().parse_args(args)
    parsed.func = lambda *a: ran.append(a)  # the subcommand itself must never start
    from graphpar.cli._driver import run_command

    assert run_command(parsed, False) == 2
    out = args[args.index(flag if flag != "--output" else "-o") + 1]
    assert capsys.readouterr().err == (
        f"graphpar: error: {flag} {out} would overwrite the input {what} "
        f"{inp.format(**files)}; write it to another file\n")
    assert not ran
    assert all(f.read_text() == "precious\n" for f in files.values())


# an output whose name says another format than the one written there (every --plot is a
# PNG; gcn's -o an .npy, --save-model an .npz, --history CSV): refused before any work
PNG = "the picture is written as a PNG"
SUFFIX_CASES = [
    (["sssp", "--generate", "grid:3", "--plot", "{d}/h.jpg"], "--plot", ".png", PNG),
    (["sssp", "--generate", "grid:3", "--plot", "{d}/hist"], "--plot", ".png", PNG),
    (["cox", "{lung}", "--time", "time", "--event", "status", "--plot", "{d}/fit.svg"],
     "--plot", ".png", PNG),
    (["gcn", "--dataset", "sbm", "--plot", "{d}/curves.pdf"], "--plot", ".png", PNG),
    (["gcn", "--dataset", "sbm", "-o", "{d}/pred.txt"], "--output", ".npy",
     "the predictions are written as an int64 .npy array"),
    (["gcn", "--dataset", "sbm", "-o", "{d}/pred.npz"], "--output", ".npy",
     "the predictions are written as an int64 .npy array"),
    (["gcn", "--dataset", "sbm", "--save-model", "{d}/model.txt"], "--save-model", ".npz",
     "the model is written as an .npz archive that graphpar.GCN.load reads"),
    (["gcn", "--dataset", "sbm", "--save-model", "{d}/model.npy"], "--save-model", ".npz",
     "the model is written as an .npz archive that graphpar.GCN.load reads"),
    (["gcn", "--dataset", "sbm", "--history", "{d}/history.npy"], "--history", ".csv",
     "the history is written as CSV"),
    (["sssp", "--generate", "grid:3", "-o", "{d}/dist.txt"], "--output", ".npz, .csv or .npy",
     "the distances and predecessors are written as an .npz archive or as CSV, "
     "the distances alone as a float64 .npy array"),
]


@pytest.mark.parametrize("argv, flag, suffix, why", SUFFIX_CASES,
                         ids=[f"{c[0][0]}-{c[1]}-{c[0][-1].rsplit('/', 1)[1]}"
                              for c in SUFFIX_CASES])
def test_an_output_named_for_another_format_is_refused_before_any_work(
        argv, flag, suffix, why, tmp_path, capsys):
    args = [a.format(d=tmp_path, lung=LUNG) for a in argv]
    ran = []
    parsed = build_parser().parse_args(args)
    parsed.func = lambda *a: ran.append(a)  # the subcommand itself must never start
    from graphpar.cli._driver import run_command

    assert run_command(parsed, False) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"graphpar: error: {flag} {args[-1]}: the name must end in "
                            f"{suffix} ({why})\n")
    assert captured.out == "" and not ran and list(tmp_path.iterdir()) == []


def test_output_names_for_the_written_format_pass_in_any_case(tmp_path):
    from graphpar.cli._driver import check_output_paths

    for argv in (["gcn", "--dataset", "sbm", "--plot", "{d}/c.PNG", "-o", "{d}/p.Npy",
                  "--save-model", "{d}/m.NPZ", "--history", "{d}/h.CSV"],
                 ["gcn", "--dataset", "sbm", "--plot", "{d}/c.png", "-o", "{d}/p.npy",
                  "--save-model", "{d}/m.npz", "--history", "{d}/h.csv"],
                 ["sssp", "--generate", "grid:3", "--plot", "{d}/h.png", "-o", "{d}/d.npz"],
                 ["cox", "{lung}", "--time", "time", "--event", "status",
                  "--plot", "{d}/f.png", "-o", "{d}/f.json"]):
        check_output_paths(build_parser().parse_args(
            [a.format(d=tmp_path, lung=LUNG) for a in argv]))


def test_the_plot_name_check_imports_no_matplotlib(tmp_path):
    # every --plot is a PNG: its name is checked without loading matplotlib (0.3 s and more)
    argv = ["sssp", "--generate", "grid:3", "--plot", str(tmp_path / "h.png")]
    code = ("import sys; from graphpar.cli import build_parser; "
            "from graphpar.cli._driver import check_output_paths; "
            f"check_output_paths(build_parser().parse_args({argv!r})); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_an_output_beside_the_inputs_is_fine(tmp_path):
    from graphpar.cli._driver import check_output_paths

    g = tmp_path / "g.csv"
    g.write_text("a,b\n0,1\n")
    # a value that is not a file, and an output that does not exist yet, pass
    check_output_paths(build_parser().parse_args(
        ["sssp", str(g), "--format", "csv", "-o", str(tmp_path / "d.npy")]))
    check_output_paths(argparse.Namespace(output=str(g)))  # no inputs known: nothing to say


def test_warnings_are_one_graphpar_line(capsys):
    import warnings

    from graphpar.cli._driver import Context, _run

    def warn(args, ctx):
        warnings.warn("two\nlines", UserWarning, stacklevel=1)

    args = argparse.Namespace(func=warn, quiet=True)
    _run(args, Context(no_progress=True))
    assert capsys.readouterr().err == "graphpar: warning: two lines\n"
    _run(args, Context(rank=1, size=2))  # the rank that warns says it
    assert capsys.readouterr().err == "graphpar: warning: two lines\n"


@pytest.mark.parametrize("var, kind", [("GRAPHPAR_MAX_MEMORY", "a byte count"),
                                       ("GRAPHPAR_MAX_VERTICES", "a vertex count"),
                                       ("GRAPHPAR_MAX_DECOMPRESSED", "a byte count")])
def test_a_malformed_limit_variable_is_refused_on_every_run(tmp_path, var, kind):
    """Read only when a check needed it, a bad value passed on runs that never asked (a small
    .gr file, a Cox table)."""
    import os
    import subprocess
    import sys

    g = tmp_path / "g.gr"
    g.write_text("p sp 2 1\na 1 2 3\n")
    r = subprocess.run([sys.executable, "-m", "graphpar", "sssp", str(g), "-q"],
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, var: "garbage"})
    assert r.returncode == 2
    [line] = r.stderr.strip().splitlines()
    assert line.startswith(f"graphpar: error: {var} must be {kind} such as ")
    assert line.endswith("got 'garbage'")
