"""What CoxPH takes for a DataFrame: one definition (``graphpar._validation.is_frame``) everywhere.

A pandas DataFrame (anything with ``columns``, ``to_numpy``, ``dtypes`` and
``iloc``) is read by column name; a plain array by position. An object that
merely looks like a table (named columns but not pandas' interface: a polars
DataFrame, a numpy structured array, anything with a ``columns`` attribute) is
refused with one message, whether it reaches ``fit`` (array- or DataFrame-style),
a ``predict_*`` method or ``check_cox_matrix``: before, some paths read it by
name, others by position (so a frame-fitted model predicted from its columns in
the wrong order), and others failed with an AttributeError.
"""

import subprocess
import sys

import numpy as np
import pytest

from graphpar import CoxPH
from graphpar._validation import check_cox_matrix, is_frame

N = 30
RNG = np.random.default_rng(7)
VALUES = np.column_stack([RNG.normal(50, 10, N), RNG.normal(0, 1, N)])
NAMES = ["age", "dose"]
TIME = RNG.integers(1, 40, N).astype(float)
EVENT = RNG.integers(0, 2, N)


class TableLike:
    """A table over a numpy array with only the DataFrame attributes named in ``attrs``."""

    def __init__(self, values, names, attrs):
        self._values = np.asarray(values, dtype=np.float64)
        self._names = list(names)
        self._attrs = tuple(attrs)

    def __getattr__(self, attr):
        if attr.startswith("_") or attr not in self._attrs:
            raise AttributeError(attr)
        return {"columns": self._names,
                "to_numpy": lambda dtype=None: self._values,
                "dtypes": [self._values.dtype] * len(self._names),
                "iloc": object(),
                "to_pandas": lambda: None}[attr]

    def __len__(self):
        return len(self._values)

    def __getitem__(self, name):
        return self._values[:, self._names.index(name)]

    def __array__(self, dtype=None, copy=None):  # as polars: np.asarray gives the values
        return self._values if dtype is None else self._values.astype(dtype)


def structured(values, names):
    out = np.zeros(len(values), dtype=[(n, np.float64) for n in names])
    for j, n in enumerate(names):
        out[n] = values[:, j]
    return out


LOOKALIKES = {
    "columns_iloc_no_dtypes": ("columns", "to_numpy", "iloc"),
    "polars_like_no_iloc": ("columns", "to_numpy", "dtypes", "to_pandas"),
    "columns_only": ("columns",),
}


def lookalike(kind, values=VALUES, names=NAMES):
    if kind == "structured":
        return structured(values, names)
    return TableLike(values, names, LOOKALIKES[kind])


KINDS = sorted(LOOKALIKES) + ["structured"]


def messages(calls):
    """The TypeError message of each call (each must raise one)."""
    out = []
    for call in calls:
        with pytest.raises(TypeError) as info:
            call()
        out.append(str(info.value))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_a_lookalike_is_refused_with_one_message_on_every_path(kind):
    obj = lookalike(kind)
    model = CoxPH().fit(VALUES, TIME, EVENT, feature_names=NAMES)
    calls = [
        lambda: check_cox_matrix(obj),
        lambda: CoxPH().fit(obj, TIME, EVENT),
        lambda: CoxPH().fit(obj, duration_col="time", event_col="event"),
        lambda: CoxPH().fit(obj),
        lambda: model.predict_risk(obj),
        lambda: model.predict_log_partial_hazard(obj),
        lambda: model.predict_partial_hazard(obj),
        lambda: model.predict_survival_function(obj),
        lambda: model.predict_cumulative_hazard(obj),
        lambda: model.predict_median(obj),
    ]
    got = messages(calls)
    assert len(set(got)) == 1, got
    assert not is_frame(obj)
    assert "not a pandas DataFrame" in got[0]
    assert "X is a " in got[0]


@pytest.mark.parametrize("kind", KINDS)
def test_a_dataframe_fit_refuses_lookalikes_as_the_array_fit_does(kind):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(VALUES, columns=NAMES).assign(time=TIME, event=EVENT)
    model = CoxPH().fit(df, duration_col="time", event_col="event")
    rows = lookalike(kind, VALUES[:, ::-1], NAMES[::-1])  # the fit's columns, reordered
    got = messages([lambda: model.predict_risk(rows),
                    lambda: model.predict_log_partial_hazard(rows),
                    lambda: model.predict_survival_function(rows),
                    lambda: model.predict_median(rows)])
    assert len(set(got)) == 1, got
    assert got[0] == messages([lambda: check_cox_matrix(rows)])[0]
    # the same rows as a pandas DataFrame are read by name
    back = pd.DataFrame(VALUES[:, ::-1], columns=NAMES[::-1])
    np.testing.assert_allclose(model.predict_risk(back), model.predict_risk(df[NAMES]))


def test_messages_name_the_type_what_is_missing_and_the_way_out():
    (msg,) = messages([lambda: check_cox_matrix(lookalike("columns_iloc_no_dtypes"))])
    assert msg.startswith("X is a test_cox_frame_like.TableLike with columns, but not a pandas "
                          "DataFrame (it has no dtypes)")
    assert "pandas.DataFrame(X)" in msg and "np.asarray(X)" in msg
    (msg,) = messages([lambda: check_cox_matrix(lookalike("polars_like_no_iloc"))])
    assert "(it has no iloc)" in msg and "X.to_pandas()" in msg
    (msg,) = messages([lambda: check_cox_matrix(lookalike("columns_only"))])
    assert "(it has no to_numpy, dtypes, iloc)" in msg
    (msg,) = messages([lambda: check_cox_matrix(structured(VALUES, NAMES), "Z")])
    assert msg.startswith("Z is a numpy structured array (fields 'age', 'dose'), not a pandas "
                          "DataFrame")


def test_one_definition_and_pandas_stays_optional():
    from graphpar import _cox_frame, _validation

    assert _cox_frame.is_frame is _validation.is_frame
    assert not is_frame([[1.0]]) and not is_frame(np.zeros((2, 2)))
    assert is_frame(TableLike(VALUES, NAMES, ("columns", "to_numpy", "dtypes", "iloc")))
    code = ("import sys; from graphpar._validation import is_frame, check_cox_matrix; "
            "is_frame(object()); check_cox_matrix([[1.0]]); "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=600)
    assert out.stdout.strip() == "False"


def test_plain_arrays_and_pandas_frames_are_unchanged():
    assert check_cox_matrix(VALUES)[1] is None
    with pytest.raises(TypeError, match=r"^time must be an array, got the string 'time'"):
        CoxPH().fit(VALUES, "time", EVENT)
    with pytest.raises(TypeError, match=r"^duration_col='time' name DataFrame columns, but X is "
                                        r"a ndarray"):
        CoxPH().fit(VALUES, duration_col="time")
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(VALUES, columns=NAMES)
    assert check_cox_matrix(df)[1] == NAMES
    assert CoxPH().fit(df, TIME, EVENT).feature_names_in_ == NAMES
