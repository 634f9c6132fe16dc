"""``graphpar cox`` through a subprocess: table, JSON, .npz, and bad files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import graphpar_cmd

from graphpar import CoxPH

LUNG = Path(__file__).resolve().parent.parent / "datasets" / "survival" / "lung.csv"


def run(*args, timeout=600):
    return subprocess.run([*graphpar_cmd(), "cox", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def lung_fit(covs, **kw):
    data = np.genfromtxt(LUNG, delimiter=",", names=True)
    X = np.column_stack([data[c] for c in covs])
    return CoxPH(**kw).fit(X, data["time"], data["status"], feature_names=covs)


def test_json_output_matches_the_library():
    r = run(LUNG, "--time", "time", "--event", "status", "--covariates", "age,sex,ph_ecog",
            "--ties", "breslow", "--json", "--threads", "1")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    m = lung_fit(["age", "sex", "ph_ecog"], ties="breslow")
    assert list(out["coef"]) == ["age", "sex", "ph_ecog"]
    np.testing.assert_allclose([out["coef"][k] for k in out["coef"]], m.coef_, rtol=1e-12)
    np.testing.assert_allclose([out["se"][k] for k in out["se"]], m.se_, rtol=1e-12)
    assert out["log_likelihood"] == pytest.approx(m.log_likelihood_, rel=1e-12)
    assert out["iterations"] == m.n_iter_


def test_tol_and_max_iter_reach_the_fit():
    covs = ["age", "sex", "ph_ecog"]
    tight = lung_fit(covs, tol=1e-13, max_iter=100)
    assert tight.n_iter_ > lung_fit(covs).n_iter_  # the option changes the fit
    r = run(LUNG, "--time", "time", "--event", "status", "--covariates", ",".join(covs),
            "--tol", "1e-13", "--max-iter", "100", "--json", "--threads", "1")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["iterations"] == tight.n_iter_ and out["converged"]
    np.testing.assert_allclose(list(out["coef"].values()), tight.coef_, rtol=1e-12)
    r = run(LUNG, "--time", "time", "--event", "status", "--covariates", ",".join(covs),
            "--max-iter", "1", "--json")
    assert r.returncode == 0 and "no convergence in max_iter=1" in r.stderr
    assert json.loads(r.stdout)["iterations"] == 1


@pytest.mark.parametrize("args, message", [
    (["--tol", "0"], "argument --tol: must be a positive finite number, got '0'"),
    (["--tol", "nan"], "argument --tol: must be a positive finite number, got 'nan'"),
    (["--max-iter", "2.5"], "argument --max-iter: must be an integer >= 1, got '2.5'"),
])
def test_bad_tol_and_max_iter_name_the_option(args, message):
    r = run(LUNG, "--time", "time", "--event", "status", *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_table_uses_every_other_column_with_strata(tmp_path):
    r = run(LUNG, "--time", "time", "--event", "status", "--strata", "inst", "--penalizer", "0.5")
    assert r.returncode == 0, r.stderr
    for name in ("age", "sex", "ph_ecog", "ph_karno", "wt_loss", "exp(coef)", "log-likelihood"):
        assert name in r.stdout
    assert "inst" not in r.stdout.split("log-likelihood")[0].split("\n", 2)[2]


def test_npz_input_equals_csv(tmp_path):
    data = np.genfromtxt(LUNG, delimiter=",", names=True)
    path = tmp_path / "lung.npz"
    np.savez(path, **{k: data[k] for k in ("time", "status", "age", "sex")})
    a = run(path, "--time", "time", "--event", "status", "--json")
    b = run(LUNG, "--time", "time", "--event", "status", "--covariates", "age,sex", "--json")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert json.loads(a.stdout)["coef"] == pytest.approx(json.loads(b.stdout)["coef"])


@pytest.mark.parametrize(
    "body, pattern",
    [
        ("time,event,x\n1,1,2\n3,0\n", r"bad\.csv, line 3: expected 3 .*found 2"),
        ("time,event,x\n1,1,2\n3,0,abc\n", r"bad\.csv, line 3, column 3 \('x'\): non-numeric"),
        ("time,event,x\n1,1,2\n3,,4\n", r"bad\.csv, line 3, column 2 \('event'\): an empty"),
        ("time,evt,x\n1,1,2\n3,0,4\n", r"bad\.csv: no column 'event'"),
    ],
)
def test_malformed_csv_names_file_line_and_column(tmp_path, body, pattern):
    import re

    path = tmp_path / "bad.csv"
    path.write_text(body)
    r = run(path, "--time", "time", "--event", "event")
    assert r.returncode == 2
    assert r.stderr.startswith("graphpar: error: ")
    assert re.search(pattern, r.stderr), r.stderr


def test_bad_values_and_missing_file(tmp_path):
    path = tmp_path / "neg.csv"
    path.write_text("time,event,x\n1,1,2\n-3,0,4\n2,1,5\n")
    r = run(path, "--time", "time", "--event", "event")
    assert r.returncode == 2
    assert f"{path}, line 3, column 1 ('time'): time must be nonnegative, got -3.0" in r.stderr
    r = run(tmp_path / "nope.csv", "--time", "t", "--event", "e")
    assert r.returncode == 2 and "no such file" in r.stderr


def test_demo_step_recovers_coefficients(capsys):
    import argparse

    from graphpar.cli.cox import demo

    assert demo(argparse.Namespace(seed=3)) is True
    out = capsys.readouterr().out
    assert "true coef" in out and "OK" in out


# ------------------------------------------------------------------ -o and --predict
def read_csv_columns(path):
    lines = Path(path).read_text().splitlines()
    header = lines[0].split(",")
    rows = [ln.split(",") for ln in lines[1:]]
    return header, rows


def lung_rows(tmp_path, n=3, drop=None):
    lines = LUNG.read_text().splitlines()
    header = lines[0].split(",")
    keep = [j for j, c in enumerate(header) if c != drop]
    body = [",".join(ln.split(",")[j] for j in keep) for ln in lines[: n + 1]]
    path = tmp_path / "rows.csv"
    path.write_text("\n".join(body) + "\n")
    data = np.genfromtxt(LUNG, delimiter=",", names=True)
    return path, data[:n]


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_output_writes_summary_baseline_and_predictions(tmp_path, suffix):
    rows, first = lung_rows(tmp_path)
    out = tmp_path / f"fit{suffix}"
    r = run(LUNG, "--time", "time", "--event", "status", "--covariates", "age,ph_ecog",
            "--strata", "sex", "--ties", "breslow", "-o", out, "--predict", rows, "--json",
            "--threads", "1")
    assert r.returncode == 0, r.stderr
    data = np.genfromtxt(LUNG, delimiter=",", names=True)
    X = np.column_stack([data["age"], data["ph_ecog"]])
    m = CoxPH(ties="breslow").fit(X, data["time"], data["status"], strata=data["sex"],
                                  feature_names=["age", "ph_ecog"])
    if suffix == ".json":
        saved = json.loads(out.read_text())
        assert saved["coef"] == json.loads(r.stdout)["coef"]
        np.testing.assert_allclose(list(saved["coef"].values()), m.coef_, rtol=1e-12)
        assert saved["n_events"] == m.n_events_
    else:
        header, body = read_csv_columns(out)
        assert header == ["covariate", "coef", "exp_coef", "se", "z", "p", "lower_95",
                          "upper_95"]
        assert [b[0] for b in body] == ["age", "ph_ecog"]
        np.testing.assert_allclose([float(b[1]) for b in body], m.coef_, rtol=1e-12)
        np.testing.assert_allclose([float(b[3]) for b in body], m.se_, rtol=1e-12)
    header, body = read_csv_columns(tmp_path / "fit.baseline.csv")
    assert header == ["sex", "time", "cumulative_hazard", "survival"]
    got = np.array(body, dtype=float)
    for label, curve in m.baseline_cumulative_hazard_.items():
        part = got[got[:, 0] == label]
        np.testing.assert_array_equal(part[:, 1], curve.time)
        np.testing.assert_allclose(part[:, 2], curve.value, rtol=1e-12)
        np.testing.assert_allclose(part[:, 3], np.exp(-curve.value), rtol=1e-12)
    assert got.shape[0] == sum(c.time.size for c in m.baseline_cumulative_hazard_.values())
    header, body = read_csv_columns(tmp_path / "fit.survival.csv")
    assert header == ["time", "row1", "row2", "row3"]
    got = np.array(body, dtype=float)
    t, S = m.predict_survival_function(np.column_stack([first["age"], first["ph_ecog"]]),
                                       strata=first["sex"])
    np.testing.assert_array_equal(got[:, 0], t)
    np.testing.assert_allclose(got[:, 1:], S, rtol=1e-12)


def test_output_without_strata_and_progress_on_stderr(tmp_path):
    import os

    out = tmp_path / "fit.json"
    # GRAPHPAR_PROGRESS_INTERVAL=0: a line at once (by default work this short prints none)
    r = subprocess.run([*graphpar_cmd(), "cox", str(LUNG), "--time", "time", "--event",
                        "status", "--covariates", "age", "-o", str(out)], capture_output=True,
                       text=True, timeout=600,
                       env={**os.environ, "GRAPHPAR_PROGRESS_INTERVAL": "0"})
    assert r.returncode == 0, r.stderr
    assert "cox: Newton steps" in r.stderr and "\r" not in r.stderr
    header, _ = read_csv_columns(tmp_path / "fit.baseline.csv")
    assert header == ["time", "cumulative_hazard", "survival"]
    q = run(LUNG, "--time", "time", "--event", "status", "--covariates", "age", "--quiet")
    assert q.returncode == 0 and q.stderr == "", q.stderr


@pytest.mark.parametrize(
    "extra, pattern",
    [
        (["--predict", "ROWS"], r"--predict needs -o/--output FILE"),
        (["-o", "fit.txt"], r"-o/--output must end in .json or .csv, got '.*fit.txt'"),
        (["-o", "fit.json", "--predict", "ROWS_NO_AGE"],
         r"rows.csv: no column 'age' \(the fit's covariate\)"),
        (["-o", "fit.json", "--predict", "ROWS_NAN"],
         r"rows.csv, line 3, column 4 \('age'\): covariate contains nan"),
    ],
)
def test_output_and_predict_errors_are_one_line(tmp_path, extra, pattern):
    import re

    rows, _ = lung_rows(tmp_path)
    if "ROWS_NO_AGE" in extra:
        rows, _ = lung_rows(tmp_path, drop="age")
    if "ROWS_NAN" in extra:
        lines = rows.read_text().splitlines()
        cells = lines[2].split(",")
        cells[3] = "nan"
        lines[2] = ",".join(cells)
        rows.write_text("\n".join(lines) + "\n")
    extra = [str(rows) if e.startswith("ROWS") else
             str(tmp_path / e) if e.startswith("fit.") else e for e in extra]
    r = run(LUNG, "--time", "time", "--event", "status", "--covariates", "age,ph_ecog",
            *extra)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("graphpar: error: ")]
    assert len(lines) == 1 and re.search(pattern, lines[0]), r.stderr
    assert not (tmp_path / "fit.json").exists()
    assert not (tmp_path / "fit.baseline.csv").exists()


@pytest.mark.mpi
@pytest.mark.parametrize("nprocs", [2, 3])
def test_output_under_mpiexec_equals_serial(tmp_path, nprocs):
    from conftest import run_mpiexec

    rows, _ = lung_rows(tmp_path)
    flags = ["--time", "time", "--event", "status", "--covariates", "age,ph_ecog",
             "--strata", "inst", "--predict", rows, "-q"]
    serial = run(LUNG, *flags, "-o", tmp_path / "serial.json", "--threads", "1")
    assert serial.returncode == 0, serial.stderr
    res = run_mpiexec(nprocs, ["-m", "graphpar", "cox", LUNG, *flags, "-o",
                               tmp_path / "dist.json"])
    assert res.returncode == 0, res.stderr[-3000:]
    a = json.loads((tmp_path / "serial.json").read_text())
    b = json.loads((tmp_path / "dist.json").read_text())
    np.testing.assert_allclose(list(b["coef"].values()), list(a["coef"].values()), rtol=1e-10)
    for side in ("baseline", "survival"):
        ha, ra = read_csv_columns(tmp_path / f"serial.{side}.csv")
        hb, rb = read_csv_columns(tmp_path / f"dist.{side}.csv")
        assert ha == hb
        np.testing.assert_allclose(np.array(rb, dtype=float), np.array(ra, dtype=float),
                                   rtol=1e-10)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["rows.csv"] + [f"{w}.{s}" for w in ("serial", "dist")
                        for s in ("json", "baseline.csv", "survival.csv")])


def test_side_files_of_output_never_overwrite_an_input(tmp_path):
    """-o FILE.json also writes FILE.baseline.csv (and FILE.survival.csv with --predict)."""
    data = tmp_path / "x.baseline.csv"
    data.write_bytes(LUNG.read_bytes())
    r = run(data, "--time", "time", "--event", "status", "--covariates", "age", "-q",
            "-o", tmp_path / "x.json")
    assert r.returncode == 2
    assert "'s baseline file" in r.stderr and "would overwrite the input DATA" in r.stderr
    assert data.read_bytes() == LUNG.read_bytes()
    rows = tmp_path / "z.survival.csv"
    rows.write_text("age\n60\n")
    r = run(LUNG, "--time", "time", "--event", "status", "--covariates", "age", "-q",
            "-o", tmp_path / "z.json", "--predict", rows)
    assert r.returncode == 2 and "the input --predict" in r.stderr
    assert rows.read_text() == "age\n60\n"
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "z.json").exists()


@pytest.mark.parametrize("covs", ["age,", "age,,sex", ",age"])
def test_an_empty_covariate_name_is_refused_not_dropped(covs):
    r = run(LUNG, "--time", "time", "--event", "status", "--covariates", covs, "-q")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"graphpar: error: --covariates {covs!r}: an empty column name (two commas, or one at "
        "an end); write names separated by single commas, e.g. age,sex"]
