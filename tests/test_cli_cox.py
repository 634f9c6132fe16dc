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
