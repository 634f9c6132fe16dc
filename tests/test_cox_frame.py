"""CoxPH on pandas DataFrames: lifelines' keywords, categorical encoding, formulas, errors.

References: R's coxph with factors and interactions on survival's veteran data
(datasets/survival/r_factor_reference.json, made by make_factor_reference.R),
and the array fit of hand-built dummy columns.
"""

import json

import numpy as np
import pytest
from r_reference import DATA as HERE
from r_reference import reference

from graphpar import CoxPH
from graphpar._cox_frame import Design, parse_formula

pd = pytest.importorskip("pandas")
REF = reference("r_factor_reference.json")


def frame(name):
    return pd.read_csv(HERE / name)


# graphpar's formula for each R call (same terms; R names a factor column celltypelarge)
CASES = {
    "celltype": ("efron", {"formula": "age + celltype + karno"}),
    "celltype_breslow": ("breslow", {"formula": "age + C(celltype) + karno"}),
    "interactions": ("efron", {"formula": "age + celltype + karno + karno:celltype + age:trt"}),
    "no_main_effect": ("efron", {"formula": "karno + celltype:trt"}),
    "integer_codes": ("efron", {"formula": "age + celltype + karno",
                                "categorical": ["celltype"]}),
    "strata_text": ("efron", {"formula": "age + karno", "strata": "celltype"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_factor_fits_equal_r(name):
    ties, kw = CASES[name]
    ref = REF[name]
    df = frame(ref["data"])
    m = CoxPH(ties=ties).fit(df, duration_col="time", event_col="status", **kw)
    assert len(m.feature_names_in_) == len(ref["names"])
    se = np.asarray(ref["se"])
    # R stops its Newton iterations earlier than graphpar on the ill-conditioned
    # interaction model (same log-likelihood to 1e-13): compare on the scale of the se
    diff = np.abs(m.coef_ - ref["coef"])
    assert np.all(diff <= 1e-8 * np.abs(ref["coef"]) + 1e-6 * se), diff
    np.testing.assert_allclose(m.se_, se, rtol=1e-7)
    np.testing.assert_allclose(m.log_likelihood_, ref["loglik"][1], rtol=1e-10)


def test_names_follow_patsy_and_reference_level_is_the_first_sorted():
    df = frame("veteran_factor.csv")
    m = CoxPH().fit(df, duration_col="time", event_col="status",
                    formula="age + celltype + karno + karno:celltype")
    assert m.feature_names_in_ == [
        "age", "celltype[T.large]", "celltype[T.smallcell]", "celltype[T.squamous]", "karno",
        "karno:celltype[T.large]", "karno:celltype[T.smallcell]",
        "karno:celltype[T.squamous]"]
    # without its main effect, an interaction codes every level (as R)
    m1 = CoxPH().fit(df, duration_col="time", event_col="status", formula="age + karno:celltype")
    assert m1.feature_names_in_[1:] == [f"karno:celltype[{lv}]" for lv in
                                        ("adeno", "large", "smallcell", "squamous")]
    # no formula: every other column is a covariate, strings one-hot encoded
    m2 = CoxPH().fit(df, duration_col="time", event_col="status")
    assert m2.feature_names_in_ == ["trt", "celltype[T.large]", "celltype[T.smallcell]",
                                    "celltype[T.squamous]", "karno", "diagtime", "age", "prior"]
    # the same fit from hand-made dummy columns
    X = np.column_stack([df.trt] + [(df.celltype == lv).to_numpy(float)
                                    for lv in ("large", "smallcell", "squamous")]
                        + [df.karno, df.diagtime, df.age, df.prior])
    arr = CoxPH().fit(X, df.time.to_numpy(), df.status.to_numpy())
    np.testing.assert_allclose(m2.coef_, arr.coef_, rtol=1e-12)


def test_pandas_categorical_keeps_category_order_and_integer_codes_need_marking():
    df = frame("veteran.csv")
    as_numbers = CoxPH().fit(df[["time", "status", "celltype", "age"]],
                             duration_col="time", event_col="status")
    assert as_numbers.feature_names_in_ == ["celltype", "age"]
    marked = CoxPH().fit(df[["time", "status", "celltype", "age"]], duration_col="time",
                         event_col="status", categorical=["celltype"])
    assert marked.feature_names_in_ == ["celltype[T.2]", "celltype[T.3]", "celltype[T.4]",
                                        "age"]
    cat = df[["time", "status", "celltype", "age"]].copy()
    cat["celltype"] = pd.Categorical(cat["celltype"], categories=[4, 3, 2, 1])
    m = CoxPH().fit(cat, duration_col="time", event_col="status")
    assert m.feature_names_in_ == ["celltype[T.3]", "celltype[T.2]", "celltype[T.1]", "age"]
    # a different reference level: same likelihood, same other fit
    np.testing.assert_allclose(m.log_likelihood_, marked.log_likelihood_, rtol=1e-12)


def test_prediction_encodes_new_rows_like_the_fit():
    df = frame("veteran_factor.csv")
    m = CoxPH().fit(df, duration_col="time", event_col="status",
                    formula="age + celltype + karno")
    rows = df.iloc[[5, 60, 100]]
    X = Design.learn(df, formula="age + celltype + karno").matrix(rows)
    np.testing.assert_allclose(m.predict_partial_hazard(rows), m.predict_partial_hazard(X))
    t1, s1 = m.predict_survival_function(rows)
    t2, s2 = m.predict_survival_function(X)
    np.testing.assert_array_equal(s1, s2)
    bad = rows.copy()
    bad.iloc[1, bad.columns.get_loc("celltype")] = "giant"
    with pytest.raises(ValueError, match=r"^column 'celltype', row 1: label 'giant' is not "
                                         r"one of the fit's levels 'adeno', "):
        m.predict_partial_hazard(bad)
    st = CoxPH().fit(df, duration_col="time", event_col="status", formula="age + karno",
                     strata="celltype")
    a = st.predict_median(rows)  # the strata come from the rows' celltype column
    b = st.predict_median(rows[["age", "karno"]].to_numpy(), strata=rows.celltype.to_numpy())
    np.testing.assert_array_equal(a, b)


def test_after_an_array_fit_every_prediction_takes_a_dataframes_columns_by_name():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2)) * [10.0, 1.0] + [60.0, 0.0]
    t = rng.exponential(size=300) * np.exp(-0.03 * (X[:, 0] - 60) - 0.5 * X[:, 1])
    e = rng.random(300) < 0.8
    m = CoxPH().fit(X, t, e, feature_names=["age", "dose"])
    rows = X[[3, 50, 200]]
    swapped = pd.DataFrame({"dose": rows[:, 1], "age": rows[:, 0], "extra": 7.0})
    # before, predict_risk read a DataFrame by position (here ~1e-9 instead of ~1)
    for method in ("predict_risk", "predict_partial_hazard", "predict_log_partial_hazard",
                   "predict_median"):
        np.testing.assert_array_equal(getattr(m, method)(swapped), getattr(m, method)(rows),
                                      err_msg=method)
    for method in ("predict_survival_function", "predict_cumulative_hazard"):
        np.testing.assert_array_equal(getattr(m, method)(swapped).value,
                                      getattr(m, method)(rows).value, err_msg=method)
    with pytest.raises(ValueError, match=r"^X has no column\(s\) 'age' of the fit; its "
                                         r"columns are 'dose', 'extra'"):
        m.predict_risk(swapped[["dose", "extra"]])
    unnamed = CoxPH().fit(X, t, e)  # x0, x1: a DataFrame of two columns, in their order
    np.testing.assert_array_equal(unnamed.predict_risk(pd.DataFrame(rows, columns=["a", "b"])),
                                  unnamed.predict_risk(rows))


def test_weights_strata_columns_and_lists():
    df = frame("veteran_factor.csv")
    w = 1.0 + (np.arange(len(df)) % 3) / 2
    dfw = df.assign(w=w)
    m = CoxPH().fit(dfw, duration_col="time", event_col="status", weights_col="w",
                    strata=["celltype", "trt"], formula="age + karno")
    labels = np.array([f"celltype={c}, trt={t}" for c, t in
                       zip(df.celltype, df.trt, strict=True)])
    ref = CoxPH().fit(df[["age", "karno"]].to_numpy(), df.time, df.status, strata=labels,
                      weights=w)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-12)
    assert "celltype=adeno, trt=1" in m.baseline_survival_


@pytest.mark.parametrize("call, pattern", [
    (lambda m, df: m.fit(df, "time", "status"),
     r"^fit\(df, 'time', 'status'\): with a DataFrame name the columns by keyword: "
     r"fit\(df, duration_col='time', event_col='status'\)$"),
    (lambda m, df: m.fit(df), r"^fit\(df\): name the duration and event columns"),
    (lambda m, df: m.fit(df, duration_col="time"), r"name the event column"),
    (lambda m, df: m.fit(df, duration_col="weeks", event_col="status"),
     r"^duration_col='weeks' is not a column; the columns are 'time', "),
    (lambda m, df: m.fit(df.to_numpy(), duration_col="time", event_col="status"),
     r"name DataFrame columns, but X is a ndarray"),
    (lambda m, df: m.fit(df, duration_col="time", event_col="status", formula="age + log(k)"),
     r"cannot read 'log\(k\)'"),
    (lambda m, df: m.fit(df, duration_col="time", event_col="status", formula="age + wt"),
     r"^no column 'wt' in the DataFrame \(formula 'age \+ wt'\)"),
    (lambda m, df: m.fit(df.assign(celltype=df.celltype.where(df.index != 7)),
                         duration_col="time", event_col="status"),
     r"^column 'celltype' has a missing value at row 7"),
    (lambda m, df: m.fit(df.assign(celltype=df.celltype.where(df.index != 7))
                         .set_axis([f"p{i}" for i in range(len(df))]),
                         duration_col="time", event_col="status"),
     r"^column 'celltype' has a missing value at index 'p7' \(row 7\)"),
])
def test_mistaken_calls_say_what_to_write(call, pattern):
    df = frame("veteran_factor.csv")
    with pytest.raises((TypeError, ValueError), match=pattern):
        call(CoxPH(), df)


def test_array_fit_with_a_column_name_says_to_pass_a_dataframe():
    with pytest.raises(TypeError, match=r"time must be an array, got the string 'week'"):
        CoxPH().fit(np.zeros((3, 1)), "week", [1, 0, 1])


def test_formula_parser():
    assert parse_formula("a:b + a") == [(("a", False),), (("a", False), ("b", False))]
    assert parse_formula("`odd name` + C(x)") == [(("odd name", False),), (("x", True),)]
    with pytest.raises(ValueError, match="right-hand side only"):
        parse_formula("Surv(t, e) ~ a")
    with pytest.raises(ValueError, match="empty term"):
        parse_formula("a + ")


def test_entry_and_cluster_columns_map_to_the_array_keywords():
    import inspect

    params = inspect.signature(CoxPH.fit).parameters
    if "entry" not in params or "cluster" not in params:
        pytest.skip("entry=/cluster= not in CoxPH.fit yet")
    df = frame("veteran_factor.csv")
    start = np.where(np.arange(len(df)) % 4 == 0, 0.5 * df.time, 0.0)
    ids = np.arange(len(df)) // 3
    d2 = df.assign(start=start, id=ids)
    m = CoxPH().fit(d2, duration_col="time", event_col="status", entry_col="start",
                    cluster_col="id", formula="age + karno")
    ref = CoxPH().fit(df[["age", "karno"]].to_numpy(), df.time, df.status, entry=start,
                      cluster=ids)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-12)
    np.testing.assert_allclose(m.se_, ref.se_, rtol=1e-12)


# ------------------------------------------------------------------ the CLI
def _cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "graphpar", "cox", *map(str, args)],
                          capture_output=True, text=True, timeout=600)


def test_cli_reads_text_columns_tsv_gz_and_sep_and_plots(tmp_path):
    import gzip

    df = frame("veteran_factor.csv")
    tsv = tmp_path / "v.tsv.gz"
    with gzip.open(tsv, "wt") as f:
        df.to_csv(f, sep="\t", index=False)
    semi = tmp_path / "v.txt"
    df.to_csv(semi, sep=";", index=False)
    ref = REF["celltype"]
    for path, extra in ((tsv, []), (semi, ["--sep", ";"])):
        out = tmp_path / "fit.json"
        r = _cli(path, "--time", "time", "--event", "status", "--covariates",
                 "age,celltype,karno", "-o", out, "--quiet", *extra)
        assert r.returncode == 0, r.stderr
        got = json.loads(out.read_text())
        np.testing.assert_allclose(list(got["coef"].values()), ref["coef"], rtol=1e-8)
        assert list(got["coef"])[1] == "celltype[T.large]"
        assert got["likelihood_ratio_test"]["statistic"] == pytest.approx(ref["logtest"][0],
                                                                          rel=1e-9)
    png = tmp_path / "fit.png"
    r = _cli(tsv, "--time", "time", "--event", "status", "--strata", "celltype",
             "--covariates", "age,karno", "--plot", png, "--quiet")
    assert r.returncode == 0, r.stderr
    for p in (png, tmp_path / "fit.survival.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_text_errors_name_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("time,status,age\n5,1,60\n3,0,seventy\n4,1,55\n")
    r = _cli(bad, "--time", "time", "--event", "status")
    assert r.returncode != 0
    assert r.stderr.strip().splitlines() == [
        f"graphpar: error: {bad}, line 3, column 3 ('age'): non-numeric value 'seventy' "
        "(every cell must be a number; missing values are not supported)"]
    # a column is text when its first row is: a number later in it is named
    bad.write_text("time,status,race\n5,1,white\n3,0,7\n")
    r = _cli(bad, "--time", "time", "--event", "status")
    assert r.stderr.strip().splitlines() == [
        f"graphpar: error: {bad}, line 3, column 3 ('race'): number '7' in a column of text "
        "labels (a column is all numbers or all labels)"]
    bad.write_text("time,status,race\n5,1,NA\n3,0,white\n")
    r = _cli(bad, "--time", "time", "--event", "status")
    assert "line 2, column 3 ('race'): non-numeric value 'NA'" in r.stderr
    bad.write_text("time,status,age\nfive,1,60\nthree,0,70\n")
    r = _cli(bad, "--time", "time", "--event", "status")
    assert "line 2, column 1 ('time'): --time must be numbers, got text 'five'" in r.stderr


def _read_columns(path):
    lines = path.read_text().splitlines()
    return lines[0].split(","), np.array([ln.split(",") for ln in lines[1:]], dtype=float)


def test_cli_predicts_text_rows_as_the_dataframe_fit(tmp_path):
    """One encoder for both paths: the CLI's --predict rows equal the DataFrame prediction."""
    df = frame("veteran_factor.csv")
    data = tmp_path / "v.csv"
    df.to_csv(data, index=False)
    rows = df.iloc[[3, 40, 90, 120]][["age", "celltype", "karno"]]
    new = tmp_path / "rows.csv"
    rows.to_csv(new, index=False)
    out = tmp_path / "fit.json"
    r = _cli(data, "--time", "time", "--event", "status", "--covariates", "age,celltype,karno",
             "-o", out, "--predict", new, "--quiet")
    assert r.returncode == 0, r.stderr
    m = CoxPH().fit(df, duration_col="time", event_col="status",
                    formula="age + celltype + karno")
    assert list(json.loads(out.read_text())["coef"]) == m.summary_table().names
    header, got = _read_columns(tmp_path / "fit.survival.csv")
    t, S = m.predict_survival_function(rows)
    np.testing.assert_array_equal(got[:, 0], t)
    np.testing.assert_allclose(got[:, 1:], S, rtol=1e-12)
    # a label the fit did not see, named by file, line and column
    new.write_text("age,celltype,karno\n60,large,70\n61,giant,80\n")
    r = _cli(data, "--time", "time", "--event", "status", "--covariates", "age,celltype,karno",
             "-o", out, "--predict", new, "--quiet")
    assert r.returncode != 0
    assert r.stderr.strip().splitlines() == [
        f"graphpar: error: {new}, line 3, column 2 ('celltype'): label 'giant' is not one of "
        "the fit's levels 'adeno', 'large', 'smallcell', 'squamous'"]


@pytest.mark.mpi
def test_cli_under_mpiexec_encodes_text_columns_with_every_ranks_levels(tmp_path):
    """Rows sorted by celltype: no rank sees every level, yet the fit is the serial one."""
    from conftest import run_mpiexec

    df = frame("veteran_factor.csv").sort_values("celltype", kind="stable")
    data = tmp_path / "v.csv"
    df.to_csv(data, index=False)
    flags = ["--time", "time", "--event", "status", "--covariates", "age,celltype,karno", "-q"]
    serial = _cli(data, *flags, "-o", tmp_path / "serial.json")
    assert serial.returncode == 0, serial.stderr
    res = run_mpiexec(3, ["-m", "graphpar", "cox", data, *flags, "-o", tmp_path / "dist.json"])
    assert res.returncode == 0, res.stderr[-3000:]
    a = json.loads((tmp_path / "serial.json").read_text())
    b = json.loads((tmp_path / "dist.json").read_text())
    assert list(b["coef"]) == list(a["coef"]) == [
        "age", "celltype[T.large]", "celltype[T.smallcell]", "celltype[T.squamous]", "karno"]
    np.testing.assert_allclose(list(b["coef"].values()), REF["celltype"]["coef"], rtol=1e-8)


def test_levels_merged_from_parts_equal_the_whole_frames():
    """What the ranks of graphpar.mpi.CoxPH agree on: each part's levels, merged."""
    from graphpar._cox_frame import merge_levels

    df = frame("veteran_factor.csv").sort_values("celltype", kind="stable")
    df["grade"] = pd.Categorical(np.where(df["karno"] > 50, "high", "low"),
                                 categories=["low", "high"])
    formula = "age + celltype + grade + karno:celltype"
    whole = Design.learn(df, formula=formula)
    parts = [Design.learn(df.iloc[:40], formula=formula),
             Design.learn(df.iloc[40:], formula=formula)]
    assert parts[0].names != whole.names  # the first part lacks levels
    merged = merge_levels([p.levels() for p in parts])
    assert merged == whole.levels()
    again = parts[0].with_levels(merged)
    assert again.names == whole.names
    np.testing.assert_array_equal(again.matrix(df.iloc[:40]), whole.matrix(df.iloc[:40]))
    numeric = Design.learn(df.assign(celltype=1.0), formula=formula)
    with pytest.raises(TypeError, match="'celltype' is numeric on some ranks"):
        merge_levels([parts[0].levels(), numeric.levels()])


def test_a_categorical_column_with_one_level_is_refused_not_dropped():
    """Coded against its reference level, a one-level column gives no covariate: refused, as
    R's coxph refuses it ("contrasts can be applied only to factors with 2 or more levels")."""
    df = frame("veteran_factor.csv")[["time", "status", "age", "celltype"]]
    one = df.assign(celltype="squamous")
    with pytest.raises(ValueError, match="categorical column 'celltype' has only the level "
                                         "'squamous' in the data"):
        CoxPH().fit(one, duration_col="time", event_col="status")
    declared = df.assign(celltype=pd.Categorical(["large"] * len(df),
                                                 categories=["large", "small"]))
    with pytest.raises(ValueError, match="only the level 'large'"):
        CoxPH().fit(declared, duration_col="time", event_col="status")
    with pytest.raises(ValueError, match="categorical column 'trt' has only the level 1"):
        CoxPH().fit(df.assign(trt=1), duration_col="time", event_col="status",
                    formula="age + C(trt)")
    # not coded against a reference level (no main effect), it is one column: accepted
    m = CoxPH().fit(one.assign(karno=frame("veteran_factor.csv")["karno"]),
                    duration_col="time", event_col="status", formula="age + karno:celltype")
    assert m.feature_names_in_ == ["age", "karno:celltype[squamous]"]


LEVELS = reference("r_level_order_reference.json")


def _with_text_levels(df):
    """The two text columns make_level_order_reference.R derives from veteran_factor.csv."""
    df = df.copy()
    df["kgroup"] = np.where(df.karno <= 50, "<=50", np.where(df.karno <= 70, "50-70", ">70"))
    df["cell"] = df.celltype.map({"adeno": "adeno", "large": "Large",
                                  "smallcell": "smallcell", "squamous": "Squamous"})
    return df[["time", "status", "age", "kgroup", "cell"]]


@pytest.mark.parametrize("name", sorted(LEVELS))
def test_text_levels_sort_by_code_point_and_a_categorical_gives_rs_order(name):
    # R's factor() sorts levels by the locale's collation (recorded with the reference);
    # graphpar, patsy and lifelines by code point. Same model, another reference level.
    ref = LEVELS[name]
    df = _with_text_levels(frame(ref["data"]))
    m = CoxPH(ties=ref["ties"]).fit(df, duration_col="time", event_col="status")
    assert m.feature_names_in_ == ["age", "kgroup[T.<=50]", "kgroup[T.>70]",
                                   "cell[T.Squamous]", "cell[T.adeno]", "cell[T.smallcell]"]
    np.testing.assert_allclose(m.log_likelihood_, ref["loglik"][1], rtol=1e-10)
    # graphpar's coefficients are R's reparametrised: beta_R[l] = beta[l] - beta[R's first]
    beta = dict(zip(m.feature_names_in_, m.coef_, strict=True))
    as_r = [beta["age"]]
    for col in ("kgroup", "cell"):
        levels = ref[f"{col}_levels"]
        b = {lv: beta.get(f"{col}[T.{lv}]", 0.0) for lv in levels}
        as_r += [b[lv] - b[levels[0]] for lv in levels[1:]]
    np.testing.assert_allclose(as_r, ref["coef"], rtol=1e-8)
    # a Categorical with R's levels is coded as R codes it
    for col in ("kgroup", "cell"):
        df[col] = pd.Categorical(df[col], categories=ref[f"{col}_levels"])
    m = CoxPH(ties=ref["ties"]).fit(df, duration_col="time", event_col="status")
    assert [n.replace("[T.", "").rstrip("]") for n in m.feature_names_in_] == ref["names"]
    np.testing.assert_allclose(m.coef_, ref["coef"], rtol=1e-8)
    np.testing.assert_allclose(m.se_, ref["se"], rtol=1e-8)
