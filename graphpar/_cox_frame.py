"""DataFrames, categorical covariates and formulas for :class:`graphpar.CoxPH`.

``CoxPH().fit(df, duration_col=..., event_col=...)`` takes a pandas DataFrame
with lifelines' keyword names; this module turns it into the arrays of the
array fit and remembers how (a :class:`Design`), so that the ``predict_*``
methods encode new rows the same way. pandas is never imported here: a
DataFrame is recognised by its attributes (:func:`graphpar._validation.is_frame`,
re-exported here, the one test of the Cox code), so pandas stays an optional extra.

Encoding, as R's ``model.matrix`` and patsy do it:

- a numeric or boolean column is one covariate (booleans as 0/1);
- a string (object) column, a pandas ``Categorical``, a column named in
  ``categorical=[...]`` or written ``C(x)`` in a formula is a factor: one 0/1
  column per level other than the reference level, named ``x[T.level]``.
  The levels are the distinct values present, sorted (by code point for text,
  as patsy sorts them; R's ``factor()`` uses the locale's collation, so its
  first level can differ; a ``Categorical`` keeps its category order); the
  reference is the first;
- a formula (``"age + C(race) + age:sex"``) picks the terms: ``+`` between
  terms, ``:`` for an interaction (the product of its factors' columns),
  ``a*b`` for ``a + b + a:b``. Terms are ordered by degree, as R orders them.
  As in R, a factor in an interaction is coded against its reference level
  when the interaction without it is also a term (so ``age:C(race)`` next to
  ``age``), and with one column per level (``race[black]``) otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from graphpar._validation import is_frame, missing_mask

__all__ = ["Design", "is_frame", "parse_formula", "frame_fit_arguments", "merge_levels",
           "strata_labels", "check_unique_columns"]

_NAME = r"[A-Za-z_.][A-Za-z0-9_.]*"
_FACTOR = re.compile(rf"^(?:C\(\s*({_NAME})\s*\)|({_NAME})|`([^`]+)`)$")


def parse_formula(formula: str) -> list[tuple[tuple[str, bool], ...]]:
    """Split a formula into terms: each a tuple of ``(column, marked categorical)`` factors.

    Supports ``+`` between terms, ``:`` (interaction), ``*`` (``a*b`` is
    ``a + b + a:b``), ``C(x)`` (treat ``x`` as categorical) and backquoted
    column names; a left-hand side (``~``) is refused. Duplicate terms are
    dropped; terms keep their order within a degree, lower degrees first.

    Examples
    --------
    >>> parse_formula("age + C(race) + age:sex")
    [(('age', False),), (('race', True),), (('age', False), ('sex', False))]
    >>> parse_formula("a*b")
    [(('a', False),), (('b', False),), (('a', False), ('b', False))]
    >>> parse_formula("age + log(x)")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: formula 'age + log(x)': cannot read 'log(x)'; write column names, ...
    """
    if not isinstance(formula, str):
        raise TypeError(f"formula must be a string like 'age + C(race)', got {formula!r}")
    if "~" in formula:
        raise ValueError(f"formula {formula!r}: give the right-hand side only (no '~'); the "
                         "duration and event are duration_col= and event_col=")
    terms: list[tuple[tuple[str, bool], ...]] = []
    for chunk in formula.split("+"):
        chunk = chunk.strip()
        if not chunk:
            raise ValueError(f"formula {formula!r}: an empty term (a '+' with nothing beside it)")
        stars = [s.strip() for s in chunk.split("*")]
        groups = [[_factor(f, formula) for f in s.split(":")] for s in stars]
        if len(groups) == 1:
            expanded = [tuple(groups[0])]
        else:  # a*b*c: every nonempty subset of the starred parts, as R expands it
            expanded = []
            for mask in range(1, 1 << len(groups)):
                expanded.append(tuple(f for k, g in enumerate(groups) if mask >> k & 1
                                      for f in g))
        terms.extend(expanded)
    out: list[tuple[tuple[str, bool], ...]] = []
    seen: set[frozenset[str]] = set()
    for term in terms:
        key = frozenset(name for name, _ in term)
        if len(key) != len(term):
            raise ValueError(f"formula {formula!r}: a column appears twice in one interaction")
        if key not in seen:
            seen.add(key)
            out.append(term)
    return sorted(out, key=len)


def _factor(text: str, formula: str) -> tuple[str, bool]:
    m = _FACTOR.match(text.strip())
    if m is None:
        raise ValueError(
            f"formula {formula!r}: cannot read {text.strip()!r}; write column names, C(name) "
            "for a categorical column, a:b for an interaction and + between terms")
    if m.group(1):
        return m.group(1), True
    return (m.group(2) or m.group(3)), False


def _is_categorical_dtype(dtype) -> bool:
    return str(dtype) == "category"


def _is_text_dtype(dtype) -> bool:
    return getattr(dtype, "kind", "") in "OSU" or str(dtype).startswith("string")


# what a row of each named column must hold, for the message about a missing value
_NEEDS = {"duration_col": "a follow-up time", "event_col": "an event (True/1 or False/0)",
          "entry_col": "an entry time", "weights_col": "a weight",
          "cluster_col": "a cluster id", "offset": "an offset", "strata": "a stratum label"}


def _repeated_names(df) -> dict[str, list[int]]:
    """The column names (as text) that several columns of ``df`` share, with their positions."""
    where: dict[str, list[int]] = {}
    for j, c in enumerate(df.columns):
        where.setdefault(str(c), []).append(j)
    return {name: at for name, at in where.items() if len(at) > 1}


def _refuse_repeated(repeated: dict[str, list[int]], name: str) -> None:
    """Refuse to read column ``name`` when several columns have that name."""
    at = repeated.get(name)
    if at:
        raise ValueError(f"the DataFrame has {len(at)} columns named {name!r} (positions "
                         f"{', '.join(map(str, at[:-1]))} and {at[-1]}): columns are found by "
                         "name, so give each its own name (df.columns = [...]) or drop the "
                         "repeats")


def check_unique_columns(df, names: Sequence[str]) -> None:
    """Refuse a DataFrame in which several columns have one of ``names`` (as text).

    Examples
    --------
    >>> import pandas as pd
    >>> check_unique_columns(pd.DataFrame([[1, 2]], columns=["a", "a"]), ["b"])
    >>> check_unique_columns(pd.DataFrame([[1, 2]], columns=["a", "a"]), ["a"])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the DataFrame has 2 columns named 'a' (positions 0 and 1): columns are ...
    """
    repeated = _repeated_names(df)
    for name in names:
        _refuse_repeated(repeated, str(name))


def _frame_row(df, i: int) -> str:
    """Where row ``i`` (a position) of ``df`` is: its index label too, when that is not ``i``."""
    label = df.index[i]
    if isinstance(label, np.generic):
        label = label.item()
    if isinstance(label, int) and not isinstance(label, bool) and label == i:
        return f"at row {i}"
    return f"at index {_shown(label)} (row {i})"


def _refuse_missing(df, col, name: str, role: str) -> None:
    """Refuse a missing value in the column ``name`` (a Series of ``df``) read as ``role``."""
    miss = np.asarray(col.isna(), dtype=bool)
    if miss.any():
        i = int(np.argmax(miss))
        raise ValueError(f"column {name!r} ({role}) has a missing value ({col.iloc[i]}) "
                         f"{_frame_row(df, i)}: every row needs {_NEEDS[role]}; drop or fill "
                         f"such rows first, e.g. df.dropna(subset=[{name!r}])")


class FrameColumns:
    """A pandas DataFrame's columns as :class:`Design` reads them; errors name the row.

    :class:`graphpar._cox_reader.TableColumns` is the same interface over the
    CLI's tables, whose errors name the file, line and column instead.
    """

    def __init__(self, df) -> None:
        self.df = df
        self._repeated = _repeated_names(df)

    def _series(self, name: str):
        """The column ``name``; a name that several columns share is an error."""
        _refuse_repeated(self._repeated, name)
        return self.df[name]

    def __len__(self) -> int:
        return len(self.df)

    @property
    def names(self) -> list[str]:
        return [str(c) for c in self.df.columns]

    def where(self, name: str, row: int) -> str:
        return f"column {name!r}, row {row}"

    def categories(self, name: str) -> list | None:
        """A pandas ``Categorical``'s declared categories, else None."""
        col = self._series(name)
        return col.cat.categories.tolist() if _is_categorical_dtype(col.dtype) else None

    def is_text(self, name: str) -> bool:
        dtype = self._series(name).dtype
        if _is_categorical_dtype(dtype) or _is_text_dtype(dtype):
            return True
        if dtype.kind not in "biuf":
            raise TypeError(f"column {name!r} has dtype {dtype}: covariates must be numbers, "
                            "booleans, strings or categories")
        return False

    def labels(self, name: str) -> np.ndarray:
        """The column as an object array of labels; a missing one is an error."""
        values = np.asarray(self._series(name).astype(object).to_numpy(), dtype=object)
        miss = missing_mask(values)
        if miss.any():
            i = int(np.argmax(miss))
            raise ValueError(f"column {name!r} has a missing value {_frame_row(self.df, i)}: "
                             "categorical covariates must have a label in every row (drop or "
                             "fill the row)")
        return values

    def numbers(self, name: str) -> np.ndarray:
        """The column as float64, for a covariate the fit saw as numeric."""
        col = self._series(name)
        if _is_categorical_dtype(col.dtype) or _is_text_dtype(col.dtype):
            raise TypeError(f"column {name!r} was numeric in the fit but has dtype "
                            f"{col.dtype} here")
        return np.asarray(col.to_numpy(dtype=np.float64, na_value=np.nan)
                          if hasattr(col, "to_numpy") else col, dtype=np.float64)


def _columns_of(data):
    """``data`` as :class:`Design` reads it: a DataFrame wrapped, a column source as is."""
    return FrameColumns(data) if is_frame(data) else data


class _Factor:
    """One column of the data: numeric (``levels is None``) or categorical (its levels)."""

    def __init__(self, name: str, levels: list | None, categories: list | None = None) -> None:
        self.name = name
        self.levels = levels
        self.categories = categories  # a pandas Categorical's declared order, else None

    @classmethod
    def learn(cls, cols, name: str, categorical: bool) -> _Factor:
        categories = cols.categories(name)
        if categories is not None:
            present = set(cols.labels(name).tolist())
            return cls(name, [lv for lv in categories if lv in present], categories)
        if categorical or cols.is_text(name):
            values = cols.labels(name)
            try:
                levels = sorted(set(values.tolist()))
            except TypeError:
                kinds = sorted({type(v).__name__ for v in values.tolist()})
                raise TypeError(f"column {name!r} mixes values of types {', '.join(kinds)}: a "
                                "categorical column needs one kind of label") from None
            return cls(name, levels)
        return cls(name, None)

    def values(self, cols) -> np.ndarray:
        """The column's values in ``cols``: float64 for a numeric factor, labels otherwise."""
        if self.name not in cols.names:
            raise ValueError(f"X has no column {self.name!r} (a covariate of the fit); its "
                             "columns are " + ", ".join(repr(c) for c in cols.names))
        if self.levels is None:
            return cols.numbers(self.name)
        return cols.labels(self.name)


class Design:
    """How a DataFrame becomes the covariate matrix: factors, terms and column names.

    Built once at the fit by :meth:`learn`; :meth:`matrix` encodes any frame
    with the fit's levels (a label the fit did not see is an error naming the
    column, the label and the row).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [50, 60, 70], "race": ["white", "black", "asian"]})
    >>> d = Design.learn(df, ["age", "race"])
    >>> d.names
    ['age', 'race[T.black]', 'race[T.white]']
    >>> d.matrix(df[1:]).tolist()
    [[60.0, 1.0, 0.0], [70.0, 0.0, 0.0]]
    """

    def __init__(self, factors: dict[str, _Factor],
                 terms: list[tuple[tuple[str, bool], ...]], coding: list[tuple[bool, ...]],
                 names: list[str]) -> None:
        self.factors = factors
        self.terms = terms
        self.coding = coding  # per term and factor: True = against the reference level
        self.names = names

    @classmethod
    def learn(cls, data, columns: Sequence[str] | None = None, *, formula: str | None = None,
              categorical: Sequence[str] = ()) -> Design:
        """The design of ``data``: every column in ``columns``, or the terms of ``formula``.

        ``data`` is a DataFrame or a column source such as
        :class:`graphpar._cox_reader.TableColumns` (the CLI's tables).
        """
        cols = _columns_of(data)
        if formula is not None:
            terms = parse_formula(formula)
        else:
            terms = [((str(c), False),) for c in (columns or [])]
            listed = [term[0][0] for term in terms]
            for k, name in enumerate(listed):
                if name in listed[:k]:
                    raise ValueError(f"covariate column {name!r} is listed twice: list each "
                                     "column once")
        if not terms:
            raise ValueError("no covariate columns left to fit")
        cats = {str(c) for c in categorical}
        known = set(cols.names)
        factors: dict[str, _Factor] = {}
        marked = {name for term in terms for name, mark in term if mark}
        for term in terms:
            for name, _ in term:
                if name not in known:
                    raise ValueError(f"no column {name!r} in the DataFrame"
                                     + (f" (formula {formula!r})" if formula else "")
                                     + "; its columns are "
                                     + ", ".join(repr(c) for c in cols.names))
                if name not in factors:
                    factors[name] = _Factor.learn(cols, name, name in cats or name in marked)
        keys = {frozenset(n for n, _ in t) for t in terms}
        coding = []
        names: list[str] = []
        for term in terms:
            flags = tuple(len(term) == 1 or frozenset(n for n, _ in term if n != name) in keys
                          for name, _ in term)
            coding.append(flags)
            names.extend(cls._term_names(factors, term, flags))
        if len(set(names)) < len(names):
            twice = next(nm for k, nm in enumerate(names) if nm in names[:k])
            raise ValueError(f"two covariates are named {twice!r} (a column has the name of a "
                             "categorical column's level): rename the column")
        for name in cats - set(factors):
            if name not in known:
                raise ValueError(f"categorical names {name!r}, which is not a column")
        return cls(factors, terms, coding, names)

    def levels(self) -> dict:
        """``{column: None (numeric) or (levels, categories or None)}`` of every factor."""
        return {name: None if f.levels is None else (list(f.levels), f.categories)
                for name, f in self.factors.items()}

    def with_levels(self, levels: dict) -> Design:
        """This design with the factors' levels replaced (from :func:`merge_levels`)."""
        factors = {name: _Factor(name, None if levels[name] is None else levels[name][0],
                                 None if levels[name] is None else levels[name][1])
                   for name in self.factors}
        names: list[str] = []
        for term, flags in zip(self.terms, self.coding, strict=True):
            names.extend(self._term_names(factors, term, flags))
        return Design(factors, self.terms, self.coding, names)

    def check_estimable(self, source: str = "",
                        remedy: str = "drop the column or fit rows with at least two of its "
                                      "levels") -> None:
        """Refuse a categorical column coded against its reference level with one level only.

        Such a column encodes to no column at all, so its covariate would vanish
        from the fit without a word; R's ``coxph`` refuses it too ("contrasts can
        be applied only to factors with 2 or more levels"). Call it once the
        levels are final (under MPI, after :func:`merge_levels`). The message
        starts with ``source`` (the CLI's file) and ends with ``remedy``.
        """
        for term, flags in zip(self.terms, self.coding, strict=True):
            for (name, _), contrast in zip(term, flags, strict=True):
                f = self.factors[name]
                if contrast and f.levels is not None and len(f.levels) < 2:
                    seen = f"only the level {_shown(f.levels[0])}" if f.levels else "no level"
                    raise ValueError(
                        f"{source}categorical column {name!r} has {seen} in the data: coded "
                        "against its reference level it gives no covariate, so it cannot be "
                        f"estimated (R's coxph refuses it too); {remedy}")

    @staticmethod
    def _columns(f: _Factor, contrast: bool) -> list[tuple[str, object]]:
        if f.levels is None:
            return [(f.name, None)]
        levels = f.levels[1:] if contrast else f.levels
        tag = "T." if contrast else ""
        return [(f"{f.name}[{tag}{lv}]", lv) for lv in levels]

    @classmethod
    def _term_names(cls, factors, term, flags) -> list[str]:
        parts = [cls._columns(factors[n], c) for (n, _), c in zip(term, flags, strict=True)]
        names = [""]
        for cols in parts:  # the first factor varies fastest, as in R's model.matrix
            names = [(f"{prev}:{nm}" if prev else nm) for nm, _ in cols for prev in names]
        return names

    def matrix(self, data) -> np.ndarray:
        """Encode the rows of ``data`` (as in :meth:`learn`) as the fit's float64 covariates."""
        source = _columns_of(data)
        n = len(source)
        cache: dict[str, np.ndarray] = {}
        blocks = []
        for term, flags in zip(self.terms, self.coding, strict=True):
            cols = [np.ones(n)]
            for (name, _), contrast in zip(term, flags, strict=True):
                f = self.factors[name]
                if name not in cache:
                    cache[name] = f.values(source)
                v = cache[name]
                if f.levels is None:
                    parts = [v]
                else:
                    self._check_levels(f, v, source)
                    parts = [(v == lv).astype(np.float64)
                             for _, lv in self._columns(f, contrast)]
                cols = [a * b for b in parts for a in cols]
            blocks.extend(cols)
        return np.column_stack(blocks) if blocks else np.empty((n, 0))

    @staticmethod
    def _check_levels(f: _Factor, values: np.ndarray, cols) -> None:
        known = set(f.levels)
        for i, v in enumerate(values.tolist()):
            if v not in known:
                raise ValueError(f"{cols.where(f.name, i)}: label {_shown(v)} is not one of "
                                 "the fit's levels " + ", ".join(_shown(x) for x in f.levels))


def _shown(label, limit: int = 40) -> str:
    """A label for a message: its repr, cut short when long."""
    text = repr(label)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def merge_levels(every: list[dict]) -> dict:
    """The levels of the designs of several parts of one frame (MPI ranks): their union.

    Each item is a :meth:`Design.levels`. A categorical column gets the
    union of the levels present anywhere, in its categories' order when
    every part declares the same categories, else sorted (as one design of
    the whole frame would). A column numeric in one part and categorical in
    another is an error naming it.

    Examples
    --------
    >>> merge_levels([{"age": None, "race": (["black"], None)},
    ...               {"age": None, "race": (["asian", "white"], None)}])
    {'age': None, 'race': (['asian', 'black', 'white'], None)}
    """
    out: dict = {}
    for name in every[0]:
        parts = [e.get(name, "absent") for e in every]
        if any(p == "absent" for p in parts):
            raise ValueError(f"column {name!r} is a covariate on some ranks but not on others")
        kinds = {p is None for p in parts}
        if len(kinds) > 1:
            raise TypeError(f"column {name!r} is numeric on some ranks and categorical on "
                            "others: give it one dtype on every rank (or name it in "
                            "categorical=)")
        if parts[0] is None:
            out[name] = None
            continue
        present = set()
        for levels, _ in parts:
            present.update(levels)
        cats = [c for _, c in parts]
        if cats[0] is not None and all(c == cats[0] for c in cats):
            out[name] = ([lv for lv in cats[0] if lv in present], cats[0])
            continue
        try:
            out[name] = (sorted(present), None)
        except TypeError:
            kinds_seen = sorted({type(v).__name__ for v in present})
            raise TypeError(f"column {name!r} mixes values of types {', '.join(kinds_seen)} "
                            "across the ranks: a categorical column needs one kind of "
                            "label") from None
    return out


def strata_labels(df, columns: list[str]) -> np.ndarray:
    """One stratum label per row: the column's values, or ``"a=1, b=x"`` for several columns.

    Examples
    --------
    >>> import pandas as pd
    >>> strata_labels(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), ["a", "b"]).tolist()
    ['a=1, b=x', 'a=2, b=y']

    A missing label (NaN, None, ``pd.NA``) is refused, naming the column and
    the row's index label, rather than made a stratum of its own.
    """
    repeated = _repeated_names(df)
    for c in columns:
        if c not in df.columns:
            raise ValueError(f"strata names {c!r}, which is not a column; the columns are "
                             + ", ".join(repr(str(x)) for x in df.columns))
        _refuse_repeated(repeated, c)
        _refuse_missing(df, df[c], c, "strata")
    if len(columns) == 1:
        col = df[columns[0]]
        if _is_categorical_dtype(col.dtype):
            col = col.astype(object)
        return np.asarray(col.to_numpy())
    parts = [np.asarray(df[c].astype(object).to_numpy()) for c in columns]
    return np.array([", ".join(f"{c}={v}" for c, v in zip(columns, row, strict=True))
                     for row in zip(*parts, strict=True)], dtype=object)


def _strata_columns(strata, df) -> list[str] | None:
    """The strata argument as column names, or None when it is an array of labels."""
    if strata is None:
        return None
    if isinstance(strata, str):
        return [strata]
    if isinstance(strata, (list, tuple)) and strata and all(isinstance(s, str) for s in strata):
        known = {str(c) for c in df.columns}
        if len(strata) != len(df) or all(s in known for s in strata):
            return list(strata)
    return None


def _column(df, name, role: str, repeated: dict[str, list[int]]) -> np.ndarray:
    """The values of the column ``name`` read as ``role``; a missing value is an error.

    A pandas nullable column (``boolean``, ``Int64``, ``Float64``) without
    missing values comes back as its numpy dtype, as the same numpy column would.
    """
    if not isinstance(name, str):
        raise TypeError(f"{role} must be a column name (a string), got {name!r}")
    if name not in df.columns:
        raise ValueError(f"{role}={name!r} is not a column; the columns are "
                         + ", ".join(repr(str(c)) for c in df.columns))
    _refuse_repeated(repeated, name)
    col = df[name]
    _refuse_missing(df, col, name, role)
    numpy_dtype = getattr(col.dtype, "numpy_dtype", None)  # pandas' nullable dtypes
    if numpy_dtype is not None and np.dtype(numpy_dtype).kind in "biuf":
        return col.to_numpy(dtype=numpy_dtype)
    return col.to_numpy()


def frame_fit_arguments(df, *, duration_col=None, event_col=None, entry_col=None,
                        strata=None, weights_col=None, cluster_col=None, offset=None,
                        formula: str | None = None, categorical: Sequence[str] | None = None,
                        time=None, event=None, weights=None):
    """Turn a DataFrame fit into array arguments: ``(kwargs, design, strata columns)``.

    ``kwargs`` holds ``X``, ``time``, ``event``, ``strata``, ``weights``,
    ``offset``, ``feature_names`` and, when their columns are named,
    ``entry`` and ``cluster``. ``time``/``event``/``weights`` given as arrays
    (the array fit's arguments beside a DataFrame ``X``) are kept; a column
    name passed positionally is refused with the keyword call to write instead.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"week": [5, 3, 9], "arrest": [1, 0, 1], "age": [20, 30, 25]})
    >>> kw, design, _ = frame_fit_arguments(df, duration_col="week", event_col="arrest")
    >>> kw["feature_names"], kw["X"].shape
    (['age'], (3, 1))
    """
    if isinstance(time, str) or isinstance(event, str):
        shown = ", ".join(repr(a) for a in (time, event) if a is not None)
        want = ", ".join(f"{k}={v!r}" for k, v in (("duration_col", time), ("event_col", event))
                         if isinstance(v, str))
        raise TypeError(f"fit(df, {shown}): with a DataFrame name the columns by keyword: "
                        f"fit(df, {want})")
    if isinstance(weights, str):
        raise TypeError(f"fit(df, ..., weights={weights!r}): name a weight column with "
                        f"weights_col={weights!r}")
    if duration_col is None and time is None:
        raise TypeError("fit(df): name the duration and event columns: fit(df, "
                        "duration_col='...', event_col='...'); the columns are "
                        + ", ".join(repr(str(c)) for c in df.columns))
    if duration_col is not None and time is not None:
        raise TypeError("give the follow-up times once: duration_col= (a column) or time= "
                        "(an array), not both")
    if (event_col is None) == (event is None):
        raise TypeError("name the event column once: fit(df, duration_col=..., "
                        "event_col='...')" if event is None else
                        "give the events once: event_col= (a column) or event (an array)")
    if weights_col is not None and weights is not None:
        raise TypeError("give the weights once: weights_col= (a column) or weights= (an array)")
    repeated = _repeated_names(df)
    used: list[str] = []
    out: dict = {}
    for key, name, role in (("time", duration_col, "duration_col"),
                            ("event", event_col, "event_col"),
                            ("entry", entry_col, "entry_col"),
                            ("weights", weights_col, "weights_col"),
                            ("cluster", cluster_col, "cluster_col")):
        if name is not None:
            out[key] = _column(df, name, role, repeated)
            used.append(name)
    if time is not None:
        out["time"] = time
    if event is not None:
        out["event"] = event
    if weights is not None:
        out["weights"] = weights
    out["offset"] = offset
    if isinstance(offset, str):
        out["offset"] = _column(df, offset, "offset", repeated)
        used.append(offset)
    scols = _strata_columns(strata, df)
    if scols is not None:
        out["strata"] = strata_labels(df, scols)
        used.extend(scols)
    else:
        out["strata"] = strata
    if categorical is not None and isinstance(categorical, str):
        categorical = [categorical]
    if formula is not None:
        design = Design.learn(df, formula=formula, categorical=categorical or ())
    else:
        skip = set(used)
        covs = [str(c) for c in df.columns if str(c) not in skip]
        for name in covs:
            _refuse_repeated(repeated, name)
        design = Design.learn(df, covs, categorical=categorical or ())
    out["X"] = design.matrix(df)
    out["feature_names"] = list(design.names)
    return out, design, scols
