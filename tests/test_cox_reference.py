"""CoxPH against R's survival::coxph on real data sets (values recorded by R, with the R call).

The reference values and the exact R calls are in datasets/survival/r_reference.json,
written by datasets/survival/make_reference.R; R is not needed to run this test.
"""

from __future__ import annotations

import numpy as np
import pytest
from r_reference import DATA, reference
from r_reference import offset as _offset

from graphpar import CoxPH
from graphpar._cox_reader import read_csv

FITS = reference("r_reference.json")["fits"]


@pytest.mark.parametrize("ref", FITS, ids=lambda f: f"{f['name']}-{f['ties']}-pen{f['penalizer']}")
@pytest.mark.usefixtures("cox_evaluation")
def test_matches_r_coxph(ref):
    table = read_csv(DATA / ref["data"])
    X = np.column_stack([table[c] for c in ref["covariates"]])
    m = CoxPH(ties=ref["ties"], penalizer=ref["penalizer"]).fit(
        X, table[ref["time"]], table[ref["event"]],
        strata=table[ref["strata"]] if ref["strata"] else None,
        weights=table[ref["weights"]] if ref["weights"] else None,
        offset=_offset(table, ref["offset"]) if ref["offset"] else None,
        feature_names=ref["covariates"],
    )
    assert m.converged_, ref["r_call"]
    assert m.n_iter_ == ref["iter"], ref["r_call"]  # R's iteration, so R's stopping point
    np.testing.assert_allclose(m.coef_, ref["coef"], rtol=1e-8, err_msg=ref["r_call"])
    # the reference holds R's model-based se (naive.var); for non-integer weights R, and
    # graphpar with it, reports the robust se by default
    np.testing.assert_allclose(m.se_model_, ref["se"], rtol=1e-8, err_msg=ref["r_call"])
    weights = table[ref["weights"]] if ref["weights"] else None
    assert m.robust_ == (weights is not None and bool(np.any(weights != np.floor(weights))))
    assert m.log_likelihood_ == pytest.approx(ref["loglik"], rel=1e-9), ref["r_call"]
    assert m.log_likelihood_null_ == pytest.approx(ref["loglik_null"], rel=1e-9), ref["r_call"]


def test_r_reference_covers_ties_strata_weights_offset_penalty():
    kinds = {(f["ties"], bool(f["strata"]), bool(f["weights"]), bool(f["offset"]),
              f["penalizer"] > 0) for f in FITS}
    for ties in ("efron", "breslow"):
        assert (ties, True, False, False, False) in kinds
        assert (ties, True, True, False, False) in kinds
        assert (ties, False, False, True, False) in kinds
        assert (ties, False, False, False, True) in kinds
