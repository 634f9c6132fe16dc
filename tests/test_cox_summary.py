"""The Cox summary: lifelines' DataFrame columns, alpha, the likelihood-ratio test, AIC, plots.

References: R's summary(coxph) (logtest, conf.int at 95% and 90%, AIC) in
datasets/survival/r_factor_reference.json; lifelines' summary columns and
concordance_index when lifelines is installed.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphpar import CoxPH, CoxSummary, concordance_index

pd = pytest.importorskip("pandas")
HERE = Path(__file__).resolve().parent.parent / "datasets" / "survival"
REF = json.loads((HERE / "r_factor_reference.json").read_text())


def fitted(alpha=0.05):
    df = pd.read_csv(HERE / "veteran_factor.csv")
    return CoxPH(alpha=alpha).fit(df, duration_col="time", event_col="status",
                                  formula="age + celltype + karno")


def test_summary_frame_equals_r():
    ref = REF["celltype"]
    m = fitted()
    s = m.summary()
    assert isinstance(s, pd.DataFrame)
    assert list(s.columns) == ["coef", "exp(coef)", "se(coef)", "coef lower 95%",
                               "coef upper 95%", "exp(coef) lower 95%", "exp(coef) upper 95%",
                               "cmp to", "z", "p", "-log2(p)"]
    assert list(s.index) == m.feature_names_in_
    np.testing.assert_allclose(s["exp(coef) lower 95%"], ref["lower_95"], rtol=1e-8)
    np.testing.assert_allclose(s["exp(coef) upper 95%"], ref["upper_95"], rtol=1e-8)
    np.testing.assert_allclose(s["p"], ref["p"], rtol=1e-7)
    np.testing.assert_allclose(s["-log2(p)"], -np.log2(ref["p"]), rtol=1e-8)
    s90 = m.summary(alpha=0.1)
    np.testing.assert_allclose(s90["exp(coef) lower 90%"], ref["lower_90"], rtol=1e-8)
    np.testing.assert_allclose(fitted(alpha=0.1).summary()["exp(coef) upper 90%"],
                               ref["upper_90"], rtol=1e-8)
    np.testing.assert_allclose(m.hazard_ratios_.loc[m.feature_names_in_],
                               np.exp(ref["coef"]), rtol=1e-8)
    assert m.AIC_partial_ == pytest.approx(ref["aic"], rel=1e-12)


@pytest.mark.parametrize("name", ["celltype", "celltype_breslow", "interactions",
                                  "no_main_effect", "strata_text"])
def test_likelihood_ratio_test_equals_r_logtest(name):
    from tests.test_cox_frame import CASES

    ties, kw = CASES[name]
    df = pd.read_csv(HERE / REF[name]["data"])
    m = CoxPH(ties=ties).fit(df, duration_col="time", event_col="status", **kw)
    stat, dof, p = m.log_likelihood_ratio_test()
    r = REF[name]["logtest"]
    assert stat == pytest.approx(r[0], rel=1e-9)
    assert dof == r[1]
    assert p == pytest.approx(r[2], rel=1e-6)


def test_tiny_p_values_print_as_a_bound_not_zero():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 2))
    t = rng.exponential(np.exp(-(X @ [2.0, 0.0])))
    m = CoxPH().fit(X, t, np.ones(3000), feature_names=["strong", "null"])
    s = m.summary_table()
    assert s.p[0] == 0.0 or s.p[0] < 1e-16
    text = str(s)
    line = next(ln for ln in text.splitlines() if ln.startswith("strong"))
    assert "<1e-16" in line and " 0 " not in line
    assert "likelihood ratio test" in text and "p <1e-16" in text
    frame = m.summary()
    assert np.isfinite(frame.loc["strong", "-log2(p)"]) and frame.loc["strong", "-log2(p)"] > 60


def test_summary_without_pandas_is_the_object():
    code = ("import sys; sys.modules['pandas'] = None\n"
            "import numpy as np\nfrom graphpar import CoxPH, CoxSummary\n"
            "X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])\n"
            "m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])\n"
            "assert isinstance(m.summary(), CoxSummary)\n"
            "assert isinstance(m.hazard_ratios_, np.ndarray)\nprint('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.strip() == "ok", out.stderr


def test_alpha_is_checked():
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        fitted().summary(alpha=95)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        fitted(alpha=0.0)


def test_summary_table_matches_frame():
    m = fitted()
    s = m.summary_table()
    assert isinstance(s, CoxSummary)
    np.testing.assert_array_equal(s.coef, m.summary()["coef"].to_numpy())


def test_concordance_keywords_are_opposite_and_positional_use_is_refused():
    m = fitted()
    df = pd.read_csv(HERE / "veteran_factor.csv")
    risk = m.predict_partial_hazard(df)
    c = concordance_index(df.time, event=df.status, risk=risk)
    assert concordance_index(df.time, event=df.status, predicted_survival=-risk) == c
    assert 0.6 < c < 0.8
    with pytest.raises(TypeError, match=r"by keyword.*risk=scores.*predicted_survival=scores"):
        concordance_index(df.time, -risk, df.status)
    with pytest.raises(TypeError, match="exactly one of risk="):
        concordance_index(df.time, event=df.status, risk=risk, predicted_survival=risk)
    lifelines = pytest.importorskip("lifelines.utils")
    assert lifelines.concordance_index(df.time, -risk, df.status) == pytest.approx(c, abs=1e-12)
    assert concordance_index(df.time, event=df.status,
                             predicted_survival=m.predict_median(df)) == pytest.approx(
        lifelines.concordance_index(df.time, m.predict_median(df), df.status), abs=1e-12)


def test_lifelines_summary_has_the_same_columns():
    lifelines = pytest.importorskip("lifelines")
    df = pd.read_csv(HERE / "veteran.csv")
    ll = lifelines.CoxPHFitter().fit(df, duration_col="time", event_col="status")
    m = CoxPH().fit(df, duration_col="time", event_col="status")
    assert list(m.summary().columns) == list(ll.summary.columns)
    # lifelines stops its iterations earlier: agree to a thousandth of a standard error
    np.testing.assert_allclose(m.summary()["coef"], ll.summary["coef"],
                               atol=1e-3 * m.se_.min())


def _png(path):
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plots_write_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    m = fitted()
    df = pd.read_csv(HERE / "veteran_factor.csv")
    fig = m.plot_survival(df.iloc[:3], path=tmp_path / "rows.png")
    assert len(fig.axes[0].get_lines()) == 3 and _png(tmp_path / "rows.png")
    fig = m.plot_coefficients(path=tmp_path / "hr.png")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == m.feature_names_in_
    assert _png(tmp_path / "hr.png")
    st = CoxPH().fit(df, duration_col="time", event_col="status", formula="age + karno",
                     strata="celltype")
    fig = st.plot_survival(path=tmp_path / "strata.png")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == [f"stratum {s}" for s in ("adeno", "large", "smallcell", "squamous")]
    assert _png(tmp_path / "strata.png")
    # the drawn baseline is the baseline survival
    line = fig.axes[0].get_lines()[0]
    t, s = st.baseline_survival_["adeno"]
    np.testing.assert_allclose(np.interp(t, line.get_xdata(), line.get_ydata()), s, rtol=1e-12)
