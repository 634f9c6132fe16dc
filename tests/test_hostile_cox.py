"""Hostile Cox inputs: every bad table gets one line naming file, line and column, everywhere.

In-process tests check the message of each case against the text written out
here; the subprocess tests run ``graphpar cox`` on the same files serially and
under ``mpiexec -n 2`` and ``-n 4`` (memory cap and timeout from
``tests/capped.py``) and require that exact line, once, without a traceback.
A simulation of the MPI reader (each rank's byte range parsed on its own, the
lowest failing rank's error winning, as :func:`graphpar.mpi.comm.agree_on_error`
does) is property-tested against the serial reader on generated and arbitrary
bytes.
"""

from __future__ import annotations

import argparse
import gzip
import io
import zipfile

import numpy as np
import pytest
from capped import assert_one_line_error, run_capped
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphpar import CoxPH, concordance_index
from graphpar._cox_reader import (
    CsvSource,
    Table,
    byte_range,
    count_lines,
    parse_lines,
    pick_columns,
    read_csv,
    read_npz,
    read_table,
)
from graphpar.cli.cox import fit_args
from graphpar.errors import USER_ERRORS, LimitError, error_message

HEADER = "time,event,age,dose\n"
FLAGS = ["--time", "time", "--event", "event", "--covariates", "age,dose"]
N = 200  # rows: the bad lines below sit on different ranks at -n 2 and -n 4


def good_rows(n=N, seed=0) -> list[str]:
    rng = np.random.default_rng(seed)
    age = np.round(rng.normal(60, 10, n), 1)
    dose = np.round(rng.uniform(0, 3, n), 2)
    t = np.round(rng.exponential(np.exp(-0.02 * (age - 60) + 0.3 * dose)) * 100, 1)
    e = (rng.random(n) < 0.7).astype(int)
    return [f"{t[i]},{e[i]},{age[i]},{dose[i]}\n" for i in range(n)]


def csv_with(edits: dict[int, str], header: str = HEADER) -> bytes:
    """The good table with file lines replaced (line 1 is the header)."""
    lines = [header, *good_rows()]
    for lineno, text in edits.items():
        lines[lineno - 1] = text
    return "".join(lines).encode()


def set_cell(lineno: int, col: int, value: str) -> dict[int, str]:
    cells = good_rows()[lineno - 2].rstrip("\n").split(",")
    cells[col] = value
    return {lineno: ",".join(cells) + "\n"}


def npy_member(arr: np.ndarray, rows: int | None = None) -> bytes:
    """A .npy file of ``arr`` whose header may declare another number of rows."""
    b = io.BytesIO()
    np.lib.format.write_array_header_1_0(b, {
        "descr": np.lib.format.dtype_to_descr(arr.dtype), "fortran_order": False,
        "shape": (arr.shape[0] if rows is None else rows,)})
    b.write(arr.tobytes())
    return b.getvalue()


def npz_bytes(cols: dict[str, np.ndarray], compress=zipfile.ZIP_STORED,
              declare: dict[str, int] | None = None) -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", compress) as z:
        for k, a in cols.items():
            z.writestr(k + ".npy", npy_member(np.asarray(a), (declare or {}).get(k)))
    return b.getvalue()


def good_columns(n=N) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {"time": rng.exponential(size=n) + 0.1, "event": (rng.random(n) < 0.7).astype(int),
            "age": rng.normal(60, 10, n), "dose": rng.uniform(0, 3, n)}


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6)


ZEROS_CSV = HEADER.encode() + b"1,1,0,0\n" * 400_000  # 3.2 MB of one repeated row

# name -> (file name, file bytes, extra CLI flags, extra env, the error after "graphpar: error: ")
CASES = {
    "nan-covariate": ("t.csv", csv_with(set_cell(150, 2, "nan")), [], {},
                      "{p}, line 150, column 3 ('age'): covariate contains nan"),
    "event-3": ("t.csv", csv_with(set_cell(190, 1, "3")), [], {},
                "{p}, line 190, column 2 ('event'): event must be 0/1 or boolean, got 3.0"),
    "negative-time": ("t.csv", csv_with(set_cell(120, 0, "-2.5")), [], {},
                      "{p}, line 120, column 1 ('time'): time must be nonnegative, got -2.5"),
    "infinite-dose": ("t.csv", csv_with(set_cell(201, 3, "inf")), [], {},
                      "{p}, line 201, column 4 ('dose'): covariate contains inf"),
    "earliest-value-error-wins": (
        "t.csv", csv_with({**set_cell(160, 0, "-1"), **set_cell(30, 3, "nan")}), [], {},
        "{p}, line 30, column 4 ('dose'): covariate contains nan"),
    "parse-error-before-value-error": (
        "t.csv", csv_with({**set_cell(20, 2, "nan"), 180: "1,1,2\n"}), [], {},
        "{p}, line 180: expected 4 comma-separated fields (as in the header), found 3"),
    "whitespace-line": ("t.csv", csv_with({101: "   \t \n"}), [], {},
                        "{p}, line 101: blank line (every line after the header must hold one "
                        "row of 4 comma-separated numbers)"),
    "empty-line": ("t.csv", csv_with({57: "\n"}), [], {},
                   "{p}, line 57: blank line (every line after the header must hold one "
                   "row of 4 comma-separated numbers)"),
    "latin-1-byte": ("t.csv", csv_with({170: "12.5,1,61\xe9,2\n"}).replace(
                         "61\xe9".encode(), b"61\xe9"), [], {},
                     "{p}, line 170: not UTF-8 text (byte 0xe9 at byte 10 of the line); "
                     "save the file as UTF-8"),
    "NA-cell": ("t.csv", csv_with(set_cell(140, 2, "NA")), [], {},
                "{p}, line 140, column 3 ('age'): non-numeric value 'NA' (every cell must be a "
                "number; missing values are not supported)"),
    "ragged-long": ("t.csv", csv_with({199: "1,1,2,3,4\n"}), [], {},
                    "{p}, line 199: expected 4 comma-separated fields (as in the header), "
                    "found 5"),
    "header-only": ("t.csv", HEADER.encode() + b"\n \n", [], {},
                    "{p}: no data rows after the header (line 1)"),
    "empty-file": ("t.csv", b"", [], {},
                   "{p}, line 1: empty file (expected a header of column names)"),
    "missing-column": ("t.csv", csv_with({}, header="time,status,age,dose\n"), [], {},
                       "{p}: no column 'event' (for --event); the columns are 'time', "
                       "'status', 'age', 'dose'"),
    "gz-bad-cell": ("t.csv.gz", gzip_bytes(csv_with(set_cell(175, 3, "x"))), [], {},
                    "{p}, line 175, column 4 ('dose'): non-numeric value 'x' (every cell must "
                    "be a number; missing values are not supported)"),
    "gz-bomb": ("t.csv.gz", gzip_bytes(ZEROS_CSV), [], {"GRAPHPAR_MAX_DECOMPRESSED": "1M"},
                "{p}: decompresses to more than 1048576 bytes ..."),
    "npz-nan": ("t.npz", npz_bytes({**good_columns(), "age": np.r_[np.ones(150), np.nan,
                                                                    np.ones(N - 151)]}), [], {},
                "{p}, array 'age', index 150: covariate contains nan"),
    "npz-complex": ("t.npz", npz_bytes({**good_columns(), "dose": np.ones(N) * (1 + 2j)}), [],
                    {}, "{p}: array 'dose' does not hold real numbers (dtype complex128); a "
                    "column must be bool, integer or float"),
    "npz-strings": ("t.npz", npz_bytes({**good_columns(), "age": np.array(["a"] * N)}), [], {},
                    "{p}: array 'age' does not hold real numbers (dtype <U1); a column must be "
                    "bool, integer or float"),
    "npz-declares-1e12-rows": (
        "t.npz", npz_bytes(good_columns(), declare={"age": 10**12}), [], {},
        "{p}: array 'age' declares 1000000000000 rows (8000000000128 bytes with its header) "
        "but the file stores 1728 bytes for it"),
    "npz-compressed-declares-1e12-rows": (
        "t.npz", npz_bytes(good_columns(), zipfile.ZIP_DEFLATED, declare={"time": 10**12}),
        [], {}, "{p}: array 'time' declares 1000000000000 rows (8000000000128 bytes with its "
        "header) but the file stores 1728 bytes for it"),
    "npz-bomb": ("t.npz", npz_bytes({k: np.zeros(200_000) for k in ("time", "event", "age")},
                                    zipfile.ZIP_DEFLATED), [],
                 {"GRAPHPAR_MAX_DECOMPRESSED": "1M"},
                 "{p}: its arrays expand to 4800384 bytes, more than the 1048576 allowed for a "
                 "{size}-byte file (set GRAPHPAR_MAX_DECOMPRESSED, e.g. "
                 "GRAPHPAR_MAX_DECOMPRESSED=4G, to raise it)"),
    "npz-unequal": ("t.npz", npz_bytes({**good_columns(), "dose": np.ones(N - 1)}), [], {},
                    "{p}: array 'dose' has 199 rows, array 'time' 200"),
    "npz-not-a-zip": ("t.npz", b"time,event\n1,1\n", [], {},
                      "{p}: not a readable .npz file (BadZipFile: File is not a zip file)"),
}
FAST = ["nan-covariate", "event-3", "whitespace-line", "latin-1-byte", "header-only",
        "parse-error-before-value-error", "earliest-value-error-wins", "gz-bomb", "npz-nan",
        "npz-complex", "npz-declares-1e12-rows", "npz-bomb"]


def matches(line: str, message: str) -> bool:
    """``line`` is ``message``, or starts with it when it ends with ``...``."""
    if message.endswith("..."):
        return line.startswith(message[:-3])
    return line == message


def write_case(tmp_path, name):
    fname, data, flags, env, message = CASES[name]
    path = tmp_path / fname
    path.write_bytes(data)
    return path, flags, env, message.format(p=path, size=len(data))


def load_in_process(path, flags):
    args = argparse.Namespace(data=str(path), time="time", event="event", strata=None,
                              weights=None, offset=None, covariates="age,dose")
    for k, v in zip(flags[::2], flags[1::2], strict=True):
        setattr(args, k.lstrip("-"), v)
    return fit_args(args, read_table(path))


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_is_one_message_naming_where(tmp_path, monkeypatch, name):
    path, flags, env, message = write_case(tmp_path, name)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(USER_ERRORS) as info:
        load_in_process(path, flags)
    assert matches(error_message(info.value), message), error_message(info.value)
    assert "\n" not in message


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_serial(tmp_path, name):
    path, flags, env, message = write_case(tmp_path, name)
    run = run_capped(["cox", str(path), *FLAGS, *flags], env=env)
    assert run.returncode == 2
    assert matches(assert_one_line_error(run), f"graphpar: error: {message}"), run.output


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("name", FAST)
def test_cli_under_mpiexec_gives_the_serial_line(tmp_path, name, ranks):
    path, flags, env, message = write_case(tmp_path, name)
    run = run_capped(["cox", str(path), *FLAGS, *flags], ranks=ranks, env=env, threads=1)
    assert run.returncode == 2, run.output
    assert matches(assert_one_line_error(run), f"graphpar: error: {message}"), run.output


def test_good_table_fits_the_same_from_csv_gz_and_npz(tmp_path):
    rows = good_rows()
    csv = tmp_path / "t.csv"
    csv.write_text(HEADER + "".join(rows) + "\n \n\r\n")  # trailing blank lines are fine
    (tmp_path / "t.csv.gz").write_bytes(gzip_bytes(csv.read_bytes()))
    table = np.loadtxt(io.StringIO("".join(rows)), delimiter=",")
    np.savez_compressed(tmp_path / "t.npz", time=table[:, 0], event=table[:, 1],
                        age=table[:, 2], dose=table[:, 3])
    ref = CoxPH().fit(table[:, 2:], table[:, 0], table[:, 1])
    for name in ("t.csv", "t.csv.gz", "t.npz"):
        kw = load_in_process(tmp_path / name, [])
        np.testing.assert_array_equal(kw["X"], table[:, 2:])
        kw.pop("feature_names")
        np.testing.assert_allclose(CoxPH().fit(**kw).coef_, ref.coef_, rtol=1e-12)


def test_bool_npz_column_with_stray_bytes_reads_as_0_1(tmp_path):
    raw = np.frombuffer(bytes([0, 2, 1, 255]), dtype=bool)
    path = tmp_path / "b.npz"
    path.write_bytes(npz_bytes({"event": raw, "time": np.arange(4.0)}))
    np.testing.assert_array_equal(read_npz(path)["event"], [0.0, 1.0, 1.0, 1.0])


def test_npz_rows_by_rank_concatenate_to_the_whole(tmp_path):
    cols = good_columns(37)
    for compress in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        path = tmp_path / "t.npz"
        path.write_bytes(npz_bytes(cols, compress))
        for k in (1, 2, 3, 8, 40):
            parts = [read_npz(path, r, k) for r in range(k)]
            assert [p.first_row for p in parts] == [37 * r // k for r in range(k)]
            for key, col in cols.items():
                np.testing.assert_array_equal(np.concatenate([p[key] for p in parts]), col)


def test_bad_header_cells_and_names_are_shown_short(tmp_path):
    path = tmp_path / "h.csv"
    path.write_bytes(b"time,event,time\n1,1,1\n")
    with pytest.raises(ValueError, match=r"line 1, column 3: duplicate column name 'time'"):
        read_csv(path)
    path.write_bytes(b"time,,x\n1,1,1\n")
    with pytest.raises(ValueError, match=r"line 1, column 2: empty column name"):
        read_csv(path)
    path.write_bytes(b"\xef\xbb\xbftime,event\n1,1\n")  # a byte-order mark is not a name
    assert list(read_csv(path)) == ["time", "event"]
    path.write_bytes(b"a,b\n1,1\n1," + b"9" * 10**6 + b"x\n")  # text in a numeric column
    with pytest.raises(ValueError) as info:
        read_csv(path)
    assert len(str(info.value)) < 300 and "(1000001 characters)" in str(info.value)


# ----------------------------------------------------------------------- Python arrays
def test_arrays_keep_naming_argument_row_and_column():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 2))
    t, e = rng.exponential(size=50), np.ones(50)
    X[29, 1] = np.nan
    with pytest.raises(ValueError, match=r"^X contains nan at row 29, column 'dose'$"):
        CoxPH().fit(X, t, e, feature_names=["age", "dose"])
    with pytest.raises(ValueError, match=r"^X contains nan at row 29, column 1$"):
        CoxPH().fit(X, t, e)
    e[7] = 3
    with pytest.raises(ValueError, match=r"^event must be 0/1 or boolean, got 3.0 at row 7$"):
        CoxPH().fit(np.nan_to_num(X), t, e)


def test_bool_events_with_stray_bytes_count_as_events():
    rng = np.random.default_rng(4)
    X, t = rng.normal(size=(40, 1)), rng.exponential(size=40)
    e = (np.arange(40) % 3 != 0).astype(np.uint8)
    stray = (e * 7).view(bool)  # bytes 0 and 7
    ref = CoxPH().fit(X, t, e)
    got = CoxPH().fit(X, t, stray)
    assert got.n_events_ == ref.n_events_
    np.testing.assert_array_equal(got.coef_, ref.coef_)


def test_pick_columns_on_a_plain_dict_names_the_source():
    t = {"time": np.array([1.0, np.nan]), "event": np.ones(2), "x": np.ones(2)}
    with pytest.raises(ValueError, match=r"^d\.csv, array 'time', index 1: time contains nan$"):
        pick_columns(t, "d.csv", "time", "event")


def test_a_text_covariate_with_one_label_is_refused_not_dropped():
    """Encoded against its only label it would give no column, and vanish from the fit."""
    t = {"time": np.array([1.0, 2.0, 3.0]), "event": np.ones(3),
         "race": np.array(["a", "a", "a"], dtype=object), "age": np.array([5.0, 6.0, 4.0])}
    with pytest.raises(ValueError, match=r"^d\.csv: categorical column 'race' has only the "
                                         r"level 'a' in the data: .* cannot be estimated .*"
                                         r"leave it out with --covariates"):
        pick_columns(t, "d.csv", "time", "event")
    # the levels of every rank (MPI) decide, not the rows at hand
    kw = pick_columns(t, "d.csv", "time", "event", levels={"race": ["a", "b"]})
    assert kw["feature_names"] == ["race[T.b]", "age"]
    assert pick_columns(t, "d.csv", "time", "event", covariates=["age"])["feature_names"] == [
        "age"]


@pytest.mark.parametrize(
    "args, pattern",
    [
        (([1, 2, 3], [1, 2], [1, 1, 1]), r"^risk has length 2 but time has length 3$"),
        (([1, 2, 3], [1, 2, 3], [1, 1]), r"^event has length 2 but time has length 3$"),
        (([1, 2, 3], [1, np.nan, 3], [1, 1, 1]), r"^risk contains nan at row 1$"),
        (([1, np.inf, 3], [1, 2, 3], [1, 1, 1]), r"^time contains inf at row 1$"),
        (([1, -2, 3], [1, 2, 3], [1, 1, 1]), r"^time must be nonnegative, got -2.0 at row 1$"),
        (([1, 2, 3], [1, 2, 3], [1, 2, 1]), r"^event must be 0/1 or boolean, got 2 at row 1$"),
        (([1, 2, 3], [1, 2, 3], [1, np.nan, 1]), r"^event must be 0/1 or boolean, got nan"),
        (([], [], []), r"^concordance_index: time, risk and event are empty$"),
        (([1, 2], [1, 2], [0, 0]), r"no comparable pairs"),
    ],
)
def test_concordance_index_names_bad_arguments(args, pattern):
    with pytest.raises(ValueError, match=pattern):
        concordance_index(args[0], event=args[2], risk=args[1])


def test_concordance_index_rejects_non_numeric():
    with pytest.raises(TypeError, match="risk must be numeric"):
        concordance_index([1, 2], event=[1, 1], risk=["a", "b"])


# ------------------------------------- pandas and odd containers: what, where, what instead
def fit_data(n=30, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, rng.exponential(size=n), rng.random(n) < 0.7


def labelled_frame(pd, n=30):
    """time ``t``, event ``e`` (numpy bool) and covariates ``a``, ``b``, index 'r0', 'r1', ..."""
    X, t, e = fit_data(n)
    return pd.DataFrame({"t": t, "e": e, "a": X[:, 0], "b": X[:, 1]},
                        index=[f"r{i}" for i in range(n)])


def test_nullable_boolean_event_with_na_names_column_and_index_label():
    pd = pytest.importorskip("pandas")
    df = labelled_frame(pd)
    df["e"] = df["e"].astype("boolean")
    df.loc[["r4", "r9"], "e"] = pd.NA
    with pytest.raises(ValueError, match=(
            r"^column 'e' \(event_col\) has a missing value \(<NA>\) at index 'r4' \(row 4\): "
            r"every row needs an event \(True/1 or False/0\); drop or fill such rows first, "
            r"e\.g\. df\.dropna\(subset=\['e'\]\)$")):
        CoxPH().fit(df, duration_col="t", event_col="e")
    # with the default index the label is the row
    with pytest.raises(ValueError, match=r"^column 'e' \(event_col\) has a missing value "
                                         r"\(<NA>\) at row 4: "):
        CoxPH().fit(df.reset_index(drop=True), duration_col="t", event_col="e")
    # the same column passed as an array names the row of the array
    X, t, _ = fit_data()
    with pytest.raises(ValueError, match=r"^event contains <NA> at row 4: each row needs an "
                                         r"event \(1/True or 0/False\); drop the row or fill "
                                         r"it in$"):
        CoxPH().fit(X, t, df["e"])


def test_nullable_boolean_event_without_na_fits_as_numpy_bool():
    pd = pytest.importorskip("pandas")
    df = labelled_frame(pd)
    ref = CoxPH().fit(df, duration_col="t", event_col="e")
    got = CoxPH().fit(df.astype({"e": "boolean"}), duration_col="t", event_col="e")
    assert got.n_events_ == ref.n_events_
    np.testing.assert_array_equal(got.coef_, ref.coef_)
    got = CoxPH().fit(df.astype({"e": "boolean", "t": "Float64"}), duration_col="t",
                      event_col="e")
    np.testing.assert_array_equal(got.coef_, ref.coef_)


def test_other_frame_columns_with_missing_values_name_column_and_index_label():
    pd = pytest.importorskip("pandas")
    df = labelled_frame(pd).assign(w=1.0)
    df.loc["r7", "t"] = np.nan
    with pytest.raises(ValueError, match=r"^column 't' \(duration_col\) has a missing value "
                                         r"\(nan\) at index 'r7' \(row 7\): every row needs a "
                                         r"follow-up time; .*subset=\['t'\]\)$"):
        CoxPH().fit(df, duration_col="t", event_col="e", weights_col="w")
    df = labelled_frame(pd).assign(w=pd.array([1.0] * 30, dtype="Float64"))
    df.loc["r2", "w"] = pd.NA
    with pytest.raises(ValueError, match=r"^column 'w' \(weights_col\) has a missing value "
                                         r"\(<NA>\) at index 'r2' \(row 2\): every row needs a "
                                         r"weight; "):
        CoxPH().fit(df, duration_col="t", event_col="e", weights_col="w")


SPARSE = ["csr_matrix", "csr_array", "coo_matrix", "csc_array"]


@pytest.mark.parametrize("kind", SPARSE)
def test_sparse_X_is_refused_with_the_dense_call(kind):
    import scipy.sparse

    X, t, e = fit_data()
    S = getattr(scipy.sparse, kind)(X)
    message = (rf"^X is a scipy sparse {kind}, and sparse X is not supported: pass a dense "
               r"array, X\.toarray\(\)$")
    with pytest.raises(TypeError, match=message):
        CoxPH().fit(S, t, e)
    m = CoxPH().fit(S.toarray(), t, e)
    for predict in (m.predict_risk, m.predict_log_partial_hazard, m.predict_partial_hazard,
                    m.predict_cumulative_hazard, m.predict_survival_function,
                    m.predict_median):
        with pytest.raises(TypeError, match=message):
            predict(S)


def test_one_dimensional_X_asks_for_one_column_per_covariate():
    X, t, e = fit_data()
    fit_message = (r"^X must be 2-D, one column per covariate \(n_samples, n_features\), got "
                   r"shape \(30,\): for one covariate pass X\.reshape\(-1, 1\)$")
    with pytest.raises(ValueError, match=fit_message):
        CoxPH().fit(X[:, 0], t, e)
    with pytest.raises(ValueError, match=fit_message):
        CoxPH().fit(X[:, 0].tolist(), t, e)
    assert CoxPH().fit(X[:, 0].reshape(-1, 1), t, e).n_features_in_ == 1
    # in a prediction a 1-D X may also be one row
    m = CoxPH().fit(X, t, e)
    with pytest.raises(ValueError, match=r"^X must be 2-D, one column per covariate "
                                         r"\(n_samples, n_features\), got shape \(2,\): for one "
                                         r"covariate pass X\.reshape\(-1, 1\), for one row "
                                         r"X\.reshape\(1, -1\)$"):
        m.predict_risk(X[0])
    with pytest.raises(ValueError, match=r"^X must be 2-D, one column per covariate "
                                         r"\(n_samples, n_features\), got shape \(2, 15, 2\)$"):
        CoxPH().fit(X.reshape(2, 15, 2), t, e)


@pytest.mark.parametrize("missing, shown", [(None, "None"), (np.nan, "nan"), ("NA", "<NA>")])
@pytest.mark.parametrize("labels", [["a", "b"], [1, 2]])
def test_missing_stratum_label_in_an_array_names_the_row(missing, shown, labels):
    """It was a TypeError about sorting, or (NaN in a list of strings) a stratum 'nan'."""
    X, t, e = fit_data()
    if missing == "NA":
        missing = pytest.importorskip("pandas").NA
    s = (labels * 15)[:]
    s[5] = missing
    message = (rf"^strata contains {shown} at row 5: each row needs a label; drop the row or "
               r"give it one$")
    with pytest.raises(ValueError, match=message):
        CoxPH().fit(X, t, e, strata=s)
    with pytest.raises(ValueError, match=message):
        CoxPH().fit(X, t, e, strata=np.array(s, dtype=object))
    # cluster ids share the check, under their own name
    with pytest.raises(ValueError, match=rf"^cluster contains {shown} at row 5: each row needs "
                                         r"a label; "):
        CoxPH().fit(X, t, e, cluster=s)


def test_float_strata_nan_keeps_its_message_and_says_what_to_do():
    X, t, e = fit_data()
    with pytest.raises(ValueError, match=r"^strata contains nan at row 3: each row needs a "
                                         r"label; drop the row or give it one$"):
        CoxPH().fit(X, t, e, strata=np.where(np.arange(30) == 3, np.nan, 1.0))


@pytest.mark.parametrize("column, shown", [
    ("text", "None"), ("float", "nan"), ("category", "nan"), ("Int64", "<NA>")])
def test_missing_value_in_a_frame_strata_column_names_column_and_index_label(column, shown):
    pd = pytest.importorskip("pandas")
    df = labelled_frame(pd)
    g = {"text": pd.Series(["x", "y"] * 15, index=df.index, dtype=object),
         "float": pd.Series([1.0, 2.0] * 15, index=df.index),
         "category": pd.Series(pd.Categorical(["x", "y"] * 15), index=df.index),
         "Int64": pd.Series(pd.array([1, 2] * 15, dtype="Int64"), index=df.index)}[column]
    g.loc["r5"] = None
    df["g"] = g
    message = (rf"^column 'g' \(strata\) has a missing value \({shown}\) at index 'r5' "
               r"\(row 5\): every row needs a stratum label; drop or fill such rows first, "
               r"e\.g\. df\.dropna\(subset=\['g'\]\)$")
    with pytest.raises(ValueError, match=message):
        CoxPH().fit(df, duration_col="t", event_col="e", strata="g")
    # with two strata columns the row was its own stratum 'g=None, h=1' before
    with pytest.raises(ValueError, match=message):
        CoxPH().fit(df.assign(h=1), duration_col="t", event_col="e", strata=["h", "g"])
    # a prediction reading the strata columns refuses it too
    m = CoxPH().fit(df.drop(index="r5"), duration_col="t", event_col="e", strata="g")
    with pytest.raises(ValueError, match=message):
        m.predict_cumulative_hazard(df)


@pytest.mark.parametrize("names, shown, columns", [
    (["a", "a"], "a", "0 and 1"), (["a", "b", "a"], "a", "0 and 2"),
    ([1, "1"], "1", "0 and 1")])
def test_repeated_feature_names_are_refused(names, shown, columns):
    X, t, e = fit_data()
    X = np.column_stack([X, X[:, 0] ** 2])[:, :len(names)]
    with pytest.raises(ValueError, match=rf"^feature_names repeats '{shown}' \(columns "
                                         rf"{columns}\): give each column of X its own name$"):
        CoxPH().fit(X, t, e, feature_names=names)


def test_repeated_frame_column_names_are_refused():
    pd = pytest.importorskip("pandas")
    df = labelled_frame(pd)
    repeated = df.set_axis(["t", "e", "a", "a"], axis=1)
    message = (r"^the DataFrame has 2 columns named '{}' \(positions {}\): columns are found by "
               r"name, so give each its own name \(df\.columns = \[\.\.\.\]\) or drop the "
               r"repeats$")
    with pytest.raises(ValueError, match=message.format("a", "2 and 3")):
        CoxPH().fit(repeated, duration_col="t", event_col="e")
    with pytest.raises(ValueError, match=message.format("a", "2 and 3")):
        CoxPH().fit(repeated, duration_col="t", event_col="e", formula="a")
    # a repeat the fit does not read is left alone
    CoxPH().fit(df.set_axis(["t", "e", "b", "b"], axis=1).assign(a=df.a), duration_col="t",
                event_col="e", formula="a")
    with pytest.raises(ValueError, match=message.format("t", "0 and 1")):
        CoxPH().fit(df.set_axis(["t", "t", "a", "b"], axis=1), duration_col="t", event_col="a")
    with pytest.raises(ValueError, match=message.format("g", "4 and 5")):
        CoxPH().fit(pd.concat([df, pd.DataFrame({"g": 1, "g2": 2}, index=df.index)
                               .set_axis(["g", "g"], axis=1)], axis=1),
                    duration_col="t", event_col="e", strata="g")
    # 1 and '1' are the same name once written out
    with pytest.raises(ValueError, match=message.format("1", "2 and 3")):
        CoxPH().fit(df.set_axis(["t", "e", 1, "1"], axis=1), duration_col="t", event_col="e")
    # predictions read columns by name, too
    m = CoxPH().fit(df, duration_col="t", event_col="e")
    with pytest.raises(ValueError, match=message.format("a", "2 and 3")):
        m.predict_partial_hazard(repeated)
    X, t, e = fit_data()
    m = CoxPH().fit(X, t, e, feature_names=["a", "b"])
    with pytest.raises(ValueError, match=message.format("a", "0 and 2")):
        m.predict_log_partial_hazard(df[["a", "b", "a"]])


def test_a_covariate_listed_twice_is_refused():
    t = {"time": np.array([1.0, 2.0, 3.0]), "event": np.ones(3), "age": np.array([5.0, 6, 4])}
    with pytest.raises(ValueError, match=r"^covariate column 'age' is listed twice: list each "
                                         r"column once$"):
        pick_columns(t, "d.csv", "time", "event", covariates=["age", "age"])


def test_an_encoded_name_clashing_with_a_column_is_refused():
    pd = pytest.importorskip("pandas")
    df = labelled_frame(pd).assign(race=["w", "b", "o"] * 10)
    df["race[T.w]"] = df.a ** 2
    with pytest.raises(ValueError, match=r"^two covariates are named 'race\[T\.w\]' \(a "
                                         r"column has the name of a categorical column's "
                                         r"level\): rename the column$"):
        CoxPH().fit(df, duration_col="t", event_col="e")


# ------------------------------------------------------ the MPI reader, simulated
def split_read(path, nranks):
    """What ``read_table_rows`` + ``fit_args`` give on nranks ranks: the table or the error.

    Each rank reads its byte range and parses it numbered from the lower ranks'
    line counts; the first failing rank's error is everyone's (agree_on_error).
    """
    try:
        with CsvSource(path) as src:
            names, text = src.names, src.text
            blocks = [src.lines(*byte_range(src, r, nranks)) for r in range(nranks)]
    except USER_ERRORS as exc:
        return error_message(exc)
    tables, first = [], 2
    for block in blocks:
        try:
            tables.append(parse_lines(str(path), names, block, first, text=text))
        except USER_ERRORS as exc:
            return error_message(exc)
        first += count_lines(block)
    for t in tables:
        try:
            pick_columns(t, str(path), "time", "event")
        except USER_ERRORS as exc:
            return error_message(exc)
    return {k: np.concatenate([t[k] for t in tables]) for k in names}


def serial_read(path):
    try:
        table = read_csv(path)
        pick_columns(table, str(path), "time", "event")
    except USER_ERRORS as exc:
        return error_message(exc)
    assert isinstance(table, Table)
    return dict(table)


def same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return list(a) == list(b) and all(
        np.array_equal(a[k], b[k], equal_nan=a[k].dtype != object) for k in a)


CELLS = st.sampled_from(["0", "1", "2.5", "1e3", " 7 ", '"4"', "'5'", "nan", "-1", "inf",
                         "", "x", "1_0", "\xe9", "0" * 300 + "1", "3,", "  "])
LINE_ENDS = st.sampled_from(["\n", "\r\n"])


@st.composite
def csv_texts(draw):
    row = st.one_of(st.lists(CELLS, min_size=2, max_size=4).map(",".join),
                    st.sampled_from(["", " ", "\t\r", '"1\n2"']))
    rows = draw(st.lists(st.tuples(row, LINE_ENDS), min_size=0, max_size=12))
    body = "".join(text + end for text, end in rows)
    tail = draw(st.sampled_from(["", "\n", " \n\n", "\r\n \t"]))
    return ("time,event,x\n" + body + tail).encode("utf-8", "surrogateescape")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=csv_texts(), nranks=st.integers(1, 8))
def test_split_read_equals_serial_read(tmp_path, data, nranks):
    path = tmp_path / "f.csv"
    path.write_bytes(data)
    want = serial_read(path)
    got = split_read(path, nranks)
    assert same(got, want), (data, nranks, got, want)
    if isinstance(want, str):
        assert "\n" not in want and str(path) in want


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300), nranks=st.integers(1, 8),
       header=st.sampled_from([b"", b"time,event,x\n"]))
def test_arbitrary_bytes_never_escape_as_other_errors(tmp_path, data, nranks, header):
    path = tmp_path / "f.csv"
    path.write_bytes(header + data)
    want = serial_read(path)  # anything but a user error would propagate and fail here
    assert same(split_read(path, nranks), want)
    if isinstance(want, str):
        assert "\n" not in want


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400), cut=st.integers(0, 2000))
def test_arbitrary_npz_bytes_give_user_errors(tmp_path, data, cut):
    good = npz_bytes(good_columns(5), zipfile.ZIP_DEFLATED if cut % 2 else zipfile.ZIP_STORED)
    for blob in (data, good[:cut] + data, good[:cut] + data + good[cut + len(data):]):
        path = tmp_path / "f.npz"
        path.write_bytes(blob)
        try:
            read_npz(path)
        except USER_ERRORS as exc:
            assert "\n" not in error_message(exc)


def test_npz_member_with_an_empty_name(tmp_path):
    # found by the test above: zipfile's is_dir() raised IndexError on an empty member name
    path = tmp_path / "f.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(zipfile.ZipInfo(""), b"x")
    with pytest.raises(ValueError, match=r"member '' is not a \.npy array"):
        read_npz(path)


def test_decompression_is_streamed_under_the_limit(tmp_path, monkeypatch):
    path = tmp_path / "z.csv.gz"
    path.write_bytes(gzip_bytes(ZEROS_CSV))
    monkeypatch.setenv("GRAPHPAR_MAX_DECOMPRESSED", str(len(ZEROS_CSV)))
    assert read_csv(path)["time"].size == 400_000
    monkeypatch.setenv("GRAPHPAR_MAX_DECOMPRESSED", str(len(ZEROS_CSV) - 1))
    with pytest.raises(LimitError, match=r"z\.csv\.gz: decompresses to more than"):
        read_csv(path)
    path.write_bytes(gzip_bytes(ZEROS_CSV)[:1000])  # truncated stream
    with pytest.raises(ValueError, match=r"z\.csv\.gz: cannot decompress"):
        read_csv(path)
