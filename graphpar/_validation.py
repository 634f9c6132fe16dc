"""The boundary checks of graphpar: graphs, sources, delta, limit, weights and Cox arrays.

Every public entry point, serial or MPI, calls these checks on what it was
given (under MPI, each rank on its local data); no module keeps its own copy.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from graphpar._graph import Graph, is_scipy_sparse, lookup_labels, type_name
from graphpar.kernels import csr as _csr

# how to convert the graph objects of other libraries, by top-level package
_CONVERTERS = {
    "networkx": "convert it with graphpar.Graph.from_networkx(G, weight='weight')",
    "pandas": "build the graph from an edge-list DataFrame with "
              "graphpar.Graph.from_pandas(df, source=..., target=..., weight=...)",
    "torch_geometric": "build it with graphpar.Graph.from_edge_index(data.edge_index, "
                       "data.edge_weight, num_nodes=data.num_nodes)",
    "igraph": "convert it with graphpar.Graph.from_edges(*zip(*G.get_edgelist()), "
              "n=G.vcount())",
}


def validate_graph(
    csgraph,
    directed: bool = True,
    *,
    weights: str = "nonnegative",
    name: str = "csgraph",
    return_max_weight: bool = False,
) -> Graph | tuple[Graph, float]:
    """Convert any supported graph input to a :class:`Graph` and check its weights.

    Parameters
    ----------
    csgraph : Graph, scipy sparse matrix or array, or array_like
        The graph. Sparse input: every stored entry is an edge. Dense input:
        0, inf and nan mean "no edge".
    directed : bool, default True
        With ``False`` the returned graph holds every edge both ways.
    weights : {"nonnegative", "finite", "any"}
        What the calling kernel accepts. NaN weights are always rejected;
        ``"nonnegative"`` also rejects negative weights, ``"finite"`` rejects
        negative and infinite ones.
    name : str
        Argument name used in error messages.
    return_max_weight : bool, default False
        Also return the largest finite weight ``>= 0`` (0.0 if none), found in
        the same pass over the weights as the check.

    Returns
    -------
    Graph
        A graph the kernels can use directly. The input is never modified.
    max_weight : float
        Only with ``return_max_weight=True``.

    Raises
    ------
    TypeError
        For an unsupported input type or a non-numeric dtype.
    ValueError
        For a non-square shape, out-of-range indices, or rejected weights,
        naming the first offending edge ``(u, v, w)``.

    Examples
    --------
    >>> import numpy as np
    >>> validate_graph(np.array([[0, 1], [0, 0]])).nnz
    1
    >>> validate_graph(np.array([[0, -1], [0, 0]]))
    Traceback (most recent call last):
    ...
    ValueError: csgraph has a negative edge weight: edge (0, 1, -1.0); this method needs \
weights >= 0
    >>> validate_graph(np.array([[0, 2.5], [0, 0]]), return_max_weight=True)[1]
    2.5
    """
    if isinstance(csgraph, Graph):
        g = csgraph
    elif is_scipy_sparse(csgraph):
        if csgraph.ndim != 2 or csgraph.shape[0] != csgraph.shape[1]:
            raise ValueError(
                f"{name} must be a square (n, n) matrix, got shape {csgraph.shape}"
            )
        if csgraph.dtype.kind == "c":
            raise TypeError(f"{name} weights must be real, got complex dtype {csgraph.dtype}")
        g = Graph.from_scipy(csgraph, directed=True)
    else:
        expected = (f"{name} must be a Graph (graphpar.Graph), a scipy sparse matrix or "
                    f"array, or a dense array, got {type_name(csgraph)}")
        top = type(csgraph).__module__.split(".")[0]
        if top in _CONVERTERS:
            raise TypeError(f"{expected}; {_CONVERTERS[top]}")
        try:
            arr = np.asarray(csgraph)
        except Exception as exc:  # noqa: BLE001 - any conversion failure is a type error here
            raise TypeError(expected) from exc
        if arr.dtype.kind == "c":
            raise TypeError(f"{name} weights must be real, got complex dtype {arr.dtype}")
        if arr.dtype.kind not in "biuf":
            raise TypeError(expected)
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            hint = ""
            if arr.ndim == 2 and arr.shape[0] == 2 and arr.dtype.kind in "iu":
                hint = ("; a (2, E) array of integers is an edge list (PyG's edge_index): "
                        "build the graph with graphpar.Graph.from_edge_index(edge_index)")
            raise ValueError(
                f"{name} must be a square (n, n) matrix, got shape {arr.shape}{hint}")
        g = Graph.from_dense(arr, directed=True)
    if not directed:
        g = g.symmetrized()
    wmax = check_weights(g.indptr, g.indices, g.weights, rule=weights, name=name)
    return (g, wmax) if return_max_weight else g


def check_weights(indptr, indices, weights, *, rule: str = "nonnegative",
                  name: str = "csgraph", row0: int = 0) -> float:
    """Check the weights of CSR rows; return the largest finite weight ``>= 0`` (0.0 if none).

    NaN weights are always refused; ``rule="nonnegative"`` also refuses
    negative ones and ``"finite"`` negative and infinite ones (``"any"``
    refuses NaN only). The message names the first offending edge
    ``(u, v, w)``; ``row0`` is the global id of the first row, so that one
    MPI rank's rows (``indices`` global) are named as in the whole graph.

    Examples
    --------
    >>> check_weights(np.array([0, 1, 2]), np.array([1, 0]), np.array([2.0, np.inf]))
    2.0
    >>> check_weights(np.array([0, 0, 1]), np.array([3]), np.array([-1.0]), row0=10)
    Traceback (most recent call last):
    ...
    ValueError: csgraph has a negative edge weight: edge (11, 3, -1.0); this method needs \
weights >= 0
    """
    if rule not in ("nonnegative", "finite", "any"):
        raise ValueError(f"weights rule must be 'nonnegative', 'finite' or 'any', got {rule!r}")
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if weights.size == 0:
        return 0.0
    chunks = 64 if weights.size >= 1 << 20 else 1
    k, code, wmax = _csr.first_bad_weight(
        weights, rule in ("nonnegative", "finite"), rule == "finite", chunks
    )
    if k < 0:
        return float(wmax)
    u = int(row0) + int(np.searchsorted(indptr, k, side="right") - 1)
    edge = f"edge ({u}, {int(indices[k])}, {float(weights[k])})"
    if code == 1:
        raise ValueError(f"{name} has a NaN edge weight: {edge}")
    if code == 2:
        raise ValueError(
            f"{name} has a negative edge weight: {edge}; this method needs weights >= 0"
        )
    raise ValueError(f"{name} has an infinite edge weight: {edge}")


def check_delta(delta, name: str = "delta") -> float | None:
    """Return a bucket width as a float: a positive finite real number, or None (the default).

    Examples
    --------
    >>> check_delta(np.int64(4))
    4.0
    >>> check_delta(0.0)
    Traceback (most recent call last):
    ...
    ValueError: delta must be a positive finite number, got 0.0
    """
    if delta is None:
        return None
    if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, numbers.Real):
        raise TypeError(f"{name} must be a positive number or None, got {delta!r}")
    delta = float(delta)
    if not (delta > 0 and math.isfinite(delta)):
        raise ValueError(f"{name} must be a positive finite number, got {delta!r}")
    return delta


def check_limit(limit, name: str = "limit") -> float:
    """Return a search limit as a float: a real number ``>= 0`` (``inf`` allowed, NaN not).

    Examples
    --------
    >>> check_limit(np.inf)
    inf
    >>> check_limit(-1)
    Traceback (most recent call last):
    ...
    ValueError: limit must be >= 0, got -1.0
    """
    if type(limit) is not float:  # a float (inf, the default) needs no ABC check
        if isinstance(limit, (bool, np.bool_)) or not isinstance(limit, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {limit!r}")
        limit = float(limit)
    if math.isnan(limit) or limit < 0:
        raise ValueError(f"{name} must be >= 0, got {limit!r}")
    return limit


def check_sources(source, n: int | Graph, name: str = "source") -> tuple[np.ndarray, bool]:
    """Validate source vertices against ``n``, or against a graph and its labels.

    Every value is checked in its own type before any conversion, so that no
    value can wrap into range (``np.uint64(2**64 - 1)`` is not ``-1``).
    Integers only: bools, floats and other types are refused, as are values
    outside ``[-n, n)``; negative values count from the end.

    Given a :class:`Graph` with labels instead of ``n``, the sources are
    labels (one, or a 1-D array of them), looked up with
    :meth:`Graph.index_of`: a label the graph does not have raises
    ``KeyError``, a label of another kind (an integer for a graph labelled by
    strings) ``TypeError``. The one place where every API that takes a vertex
    accepts a label.

    Returns
    -------
    sources : ndarray of int64, shape (k,)
    scalar : bool
        True when ``source`` was a single integer (results then drop the
        leading axis, as scipy's ``indices=int`` does).

    Examples
    --------
    >>> check_sources(3, 5)
    (array([3]), True)
    >>> check_sources([1, 7], 5)
    Traceback (most recent call last):
    ...
    ValueError: source[1] = 7 is out of range for a graph with 5 vertices
    >>> check_sources(np.array([2**64 - 1], dtype=np.uint64), 5)
    Traceback (most recent call last):
    ...
    ValueError: source[0] = 18446744073709551615 is out of range for a graph with 5 vertices
    >>> g = Graph.from_edges([0], [1], labels=["Rome", "Pisa"])
    >>> check_sources("Pisa", g), check_sources(["Pisa", "Rome"], g)
    ((array([1]), True), (array([1, 0]), False))
    """
    if isinstance(n, Graph):
        graph, n = n, n.n
        if graph.labels is not None:
            idx = lookup_labels(graph, source, name)
            if isinstance(idx, int):
                return np.array([idx], dtype=np.int64), True
            if idx.ndim != 1:
                raise TypeError(f"{name} must be one label or a 1-D array of labels, got shape "
                                f"{idx.shape}")
            return idx, False
    if type(source) is int and -n <= source < n:  # the common case, without the ABC checks
        return np.array([source % n], dtype=np.int64), True
    if isinstance(source, (str, bytes)):
        raise TypeError(
            f"{name} = {source!r} is a label, but this graph has no labels (its vertices are "
            f"the numbers 0 to {n - 1}); labelled graphs come from read_graph of a CSV file, "
            "Graph.from_networkx, Graph.from_pandas or Graph(..., labels=...)"
        )
    if isinstance(source, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer or a 1-D array of integers, got {source!r}")
    if isinstance(source, numbers.Integral):
        s = int(source)
        if not -n <= s < n or n == 0:
            raise ValueError(f"{name} = {s} is out of range for a graph with {n} vertices")
        return np.array([s % n], dtype=np.int64), True
    arr = np.asarray(source)
    if arr.dtype == object and arr.ndim == 1:
        # Python ints too large for any integer dtype: check them as Python ints
        for i, x in enumerate(arr):
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
                raise TypeError(
                    f"{name} must be an integer or a 1-D array of integers, got "
                    f"{name}[{i}] = {x!r}"
                )
            if not -n <= int(x) < n:
                raise ValueError(
                    f"{name}[{i}] = {int(x)} is out of range for a graph with {n} vertices"
                )
        arr = np.array([int(x) for x in arr], dtype=np.int64)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        example = f": {name}[0] = {arr.flat[0].item()!r}" if arr.ndim == 1 and arr.size else ""
        raise TypeError(
            f"{name} must be an integer or a 1-D array of integers, got "
            f"{type(source).__name__} with shape {arr.shape} and dtype {arr.dtype}{example}"
        )
    # compare in the array's own dtype: an unsigned value is never below -n
    out = arr >= n
    if arr.dtype.kind == "i":
        out |= arr < -n
    bad = np.flatnonzero(out)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{name}[{i}] = {int(arr[i])} is out of range for a graph with {n} vertices"
        )
    return arr.astype(np.int64) % max(n, 1), False


def vertices_from_text(text, graph, name: str = "--source"):
    """Turn vertices given as text (a command line, a file of sources) into API values.

    For a graph labelled by strings the text is the label; for a graph with
    numeric labels, or none (then the text is a vertex number), it is parsed
    as a number, refusing what is not one. The result goes to
    :func:`check_sources` (with the graph), which looks labels up. ``text``
    is one string or a list of strings; ``graph`` anything with ``labels``
    (a :class:`Graph`) or without (a distributed graph: vertex numbers).

    Examples
    --------
    >>> vertices_from_text("Rome", Graph.from_edges([0], [1], labels=["Rome", "Pisa"]))
    'Rome'
    >>> vertices_from_text(["3", "-1"], Graph.from_edges([0], [4]))
    [3, -1]
    >>> vertices_from_text("Rome", Graph.from_edges([0], [4]))
    Traceback (most recent call last):
    ...
    ValueError: --source must be a vertex number (the graph has no labels), got 'Rome'
    """
    labels = getattr(graph, "labels", None)
    many = not isinstance(text, str)
    texts = [str(t) for t in (text if many else [text])]
    if labels is not None and labels.dtype.kind in "UO":
        out = texts  # as the caller split them: a quoted label keeps its spaces
    else:
        out = []
        parse = float if labels is not None and labels.dtype.kind == "f" else int
        for t in (t.strip() for t in texts):
            try:
                out.append(parse(t))
            except ValueError:
                what = ("the graph has no labels" if labels is None
                        else "the graph's labels are numbers")
                raise ValueError(f"{name} must be a vertex number ({what}), got {t!r}") from None
    return out if many else out[0]


# --------------------------------------------------------------------------- Cox arrays
# The checks of CoxPH.fit's arrays, used serially (graphpar._cox), on each rank's rows
# under MPI (graphpar.mpi._cox, with ``row0`` so that messages name global rows) and by
# the table reader (graphpar._cox_reader, through first_invalid).


def first_invalid(values: np.ndarray, *, nonnegative: bool = False,
                  binary: bool = False) -> tuple[int, str] | None:
    """The first bad entry of a 1-D float array and what is wrong with it, or None.

    Finite values are required; ``nonnegative`` also refuses negative ones and
    ``binary`` anything but 0 and 1. The text completes a sentence that starts
    with the argument's name (``"contains nan"``, ``"must be nonnegative, got
    -3.0"``), so the array checks below and the table reader
    (:func:`graphpar._cox_reader.pick_columns`) word their errors alike.

    Examples
    --------
    >>> first_invalid(np.array([1.0, 3.0]), binary=True)
    (1, 'must be 0/1 or boolean, got 3.0')
    >>> first_invalid(np.array([1.0, 2.0])) is None
    True
    """
    if binary:
        bad = (values != 0) & (values != 1)
        if bad.any():
            i = int(np.argmax(bad))
            return i, f"must be 0/1 or boolean, got {values[i]}"
        return None
    finite = np.isfinite(values)
    if not finite.all():
        i = int(np.argmin(finite))
        return i, f"contains {values[i]}"
    if nonnegative:
        neg = values < 0
        if neg.any():
            i = int(np.argmax(neg))
            return i, f"must be nonnegative, got {values[i]}"
    return None


def _cox_at(i: int, row0: int, j: int | None = None, names=None) -> str:
    loc = f"at row {i + row0}"
    if j is None:
        return loc
    return f"{loc}, column {repr(names[j]) if names is not None else j}"


def _cox_length_error(name: str, got: int, n: int, ref: str | None) -> ValueError:
    if ref is None:
        return ValueError(f"{name} has length {got} but X has {n} rows")
    return ValueError(f"{name} has length {got} but {ref} has length {n}")


def missing_mask(values: np.ndarray) -> np.ndarray:
    """True where a 1-D array holds a missing value: NaN, None, ``pd.NA`` or ``pd.NaT``.

    pandas is not imported: its missing values are recognised by type name.

    Examples
    --------
    >>> missing_mask(np.array(["a", None, float("nan")], dtype=object)).tolist()
    [False, True, True]
    """
    if values.dtype.kind in "fc":
        return np.isnan(values)
    if values.dtype == object:
        return np.array([v is None or (isinstance(v, float) and v != v) or
                         type(v).__name__ in ("NAType", "NaTType") for v in values], dtype=bool)
    return np.zeros(values.shape, dtype=bool)


def _cox_numeric(arr: np.ndarray, name: str) -> np.ndarray:
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}") from None
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
    return arr


# What the Cox code reads of a DataFrame: ``columns`` (the names), ``to_numpy``
# (the values, check_cox_matrix), ``iloc`` (the fitted columns picked by name,
# in any order: _cox_baseline's predictions) and, through ``df[name]``, each
# column's dtype, isna, iloc and astype (_cox_frame's encoding: a text or
# categorical column becomes 0/1 columns); ``dtypes`` stands for that last
# part, a table whose columns carry dtypes. A pandas DataFrame has them all; a
# polars DataFrame has no ``iloc`` (nor pandas' Series), a structured array no
# ``columns``.
_FRAME_ATTRIBUTES = ("columns", "to_numpy", "dtypes", "iloc")


def is_frame(obj) -> bool:
    """True for a pandas DataFrame (or anything with its interface), without importing pandas.

    The one test of "is this a DataFrame" of the Cox code: a frame's columns
    are read by name, anything else as an array (by position). An object
    that has ``columns`` but not the rest (a polars DataFrame, say) is not a
    frame; :func:`refuse_frame_lookalike` refuses it.

    Examples
    --------
    >>> is_frame([[1.0]]), is_frame(np.zeros((2, 2)))
    (False, False)
    """
    return all(hasattr(obj, a) for a in _FRAME_ATTRIBUTES)


def refuse_frame_lookalike(obj, name: str = "X") -> None:
    """Refuse a table that is not a pandas DataFrame: ``obj`` with named columns but not a frame.

    Such an object (a ``columns`` attribute without the rest of
    :func:`is_frame`'s interface, or a numpy structured array) cannot be
    read by column name, and reading it by position could mix its columns
    up, so every Cox entry point refuses it with this one message. A frame
    and anything without named columns pass.

    Examples
    --------
    >>> refuse_frame_lookalike(np.zeros((2, 2)))
    >>> refuse_frame_lookalike(np.zeros(2, dtype=[("age", float)]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: X is a numpy structured array (fields 'age'), not a pandas DataFrame: ...
    """
    if is_frame(obj):
        return
    if isinstance(obj, np.ndarray) and obj.dtype.names is not None:
        fields = ", ".join(repr(f) for f in obj.dtype.names)
        what = f"a numpy structured array (fields {fields}), not a pandas DataFrame"
        frame = f"pandas.DataFrame({name})"
        values = f"numpy.lib.recfunctions.structured_to_unstructured({name})"
    elif hasattr(obj, "columns"):
        missing = ", ".join(a for a in _FRAME_ATTRIBUTES if not hasattr(obj, a))
        what = (f"a {type_name(obj)} with columns, but not a pandas DataFrame "
                f"(it has no {missing})")
        frame = f"{name}.to_pandas()" if hasattr(obj, "to_pandas") else f"pandas.DataFrame({name})"
        values = f"np.asarray({name})"
    else:
        return
    raise TypeError(f"{name} is {what}: its columns cannot be read by name; pass a pandas "
                    f"DataFrame ({frame}), or a 2-D array of its values ({values}), whose "
                    "columns are then taken by position")


def check_cox_matrix(X, name: str = "X", feature_names=None, *, row0: int = 0,
                     fitting: bool = False) -> tuple[np.ndarray, list[str] | None]:
    """Return ``X`` as a finite 2-D float64 array (no copy when it is one) and its column names.

    Accepts array_like and pandas DataFrames (:func:`is_frame`: names from
    the columns, without importing pandas; ``feature_names`` overrides them);
    refuses other tables (:func:`refuse_frame_lookalike`). Raises for
    non-numeric data and for NaN or infinity, naming the first offending row
    (plus ``row0``, the global number of the first row when ``X`` is one
    rank's block) and column; for a scipy sparse ``X``, saying to pass
    ``X.toarray()``; and for a 1-D ``X``, suggesting ``X.reshape(-1, 1)`` (one
    covariate) and, unless ``fitting``, ``X.reshape(1, -1)`` (one row).
    ``fitting``: ``X`` is a fit's data, which cannot be one row and whose
    column names must differ (they name the coefficients).

    Examples
    --------
    >>> check_cox_matrix([[1, 2], [3, 4]], feature_names=["a", "b"])[1]
    ['a', 'b']
    >>> check_cox_matrix([[1.0, 2.0], [3.0, np.nan]], row0=10)
    Traceback (most recent call last):
    ...
    ValueError: X contains nan at row 11, column 1
    """
    return _checked_cox_matrix(X, name, feature_names, row0, fitting)[:2]


def _checked_cox_matrix(X, name: str, feature_names, row0: int, fitting: bool,
                        ) -> tuple[np.ndarray, list[str] | None, np.ndarray | None]:
    """:func:`check_cox_matrix`, also returning the column sums its finite check
    computes (float64, p; None when ``X`` is empty), which a fit's centring reuses."""
    from graphpar.kernels.cox import first_nonfinite_row

    if is_scipy_sparse(X):
        raise TypeError(f"{name} is a scipy sparse {type(X).__name__}, and sparse {name} is not "
                        f"supported: pass a dense array, {name}.toarray()")
    names = feature_names
    source = "feature_names repeats"
    refuse_frame_lookalike(X, name)
    if is_frame(X):
        if names is None:
            names = [str(c) for c in X.columns]
            source = f"the column names of {name} repeat"
        X = X.to_numpy()
    arr = _cox_numeric(np.asarray(X), name)
    if arr.ndim != 2:
        raise ValueError(_cox_shape_error(name, arr.shape, fitting))
    arr = np.asarray(arr, dtype=np.float64)
    if names is not None:
        names = [str(v) for v in names]
        if len(names) != arr.shape[1]:
            raise ValueError(
                f"feature_names has {len(names)} names but {name} has {arr.shape[1]} columns"
            )
        if fitting:  # the names of new rows are not kept
            _check_distinct(names, source, name)
    sums = None
    if arr.size:
        sums = np.empty(arr.shape[1])
        bad = int(first_nonfinite_row(arr, sums))
        if bad >= 0:
            j = int(np.flatnonzero(~np.isfinite(arr[bad]))[0])
            raise ValueError(f"{name} contains {arr[bad, j]} {_cox_at(bad, row0, j, names)}")
    return arr, names, sums


def _cox_shape_error(name: str, shape: tuple, fitting: bool) -> str:
    text = (f"{name} must be 2-D, one column per covariate (n_samples, n_features), got "
            f"shape {shape}")
    if len(shape) != 1:
        return text
    text += f": for one covariate pass {name}.reshape(-1, 1)"
    return text if fitting else text + f", for one row {name}.reshape(1, -1)"


def _check_distinct(names: list[str], source: str, name: str) -> None:
    first: dict[str, int] = {}
    for j, v in enumerate(names):
        if v in first:
            raise ValueError(f"{source} {v!r} (columns {first[v]} and {j}): give each column "
                             f"of {name} its own name")
        first[v] = j


def _cox_1d(a, name: str, n: int, ref: str | None) -> np.ndarray:
    if hasattr(a, "to_numpy"):
        a = a.to_numpy()
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise _cox_length_error(name, arr.shape[0], n, ref)
    return arr


def check_cox_vector(a, name: str, n: int, *, nonnegative: bool = False, row0: int = 0,
                     ref: str | None = None) -> np.ndarray:
    """Return ``a`` as a finite 1-D float64 array of length ``n``; errors name the first bad row.

    ``nonnegative`` also refuses negative values; ``row0`` is added to the row
    numbers in messages; ``ref`` names what ``n`` is the length of (default:
    the rows of ``X``).

    Examples
    --------
    >>> check_cox_vector([1, 2], "time", 2)
    array([1., 2.])
    >>> check_cox_vector([1.0, -2.0], "weights", 2, nonnegative=True)
    Traceback (most recent call last):
    ...
    ValueError: weights must be nonnegative, got -2.0 at row 1
    """
    arr = np.asarray(_cox_numeric(_cox_1d(a, name, n, ref), name), dtype=np.float64)
    bad = first_invalid(arr, nonnegative=nonnegative)
    if bad is not None:
        raise ValueError(f"{name} {bad[1]} {_cox_at(bad[0], row0)}")
    return arr


def check_cox_event(event, n: int, *, row0: int = 0, ref: str | None = None,
                    require_events: bool = True) -> np.ndarray:
    """Return events as uint8 0/1; accepts booleans and numbers equal to 0 or 1.

    With ``require_events`` (the default) a column without any event is refused.

    Examples
    --------
    >>> check_cox_event([True, False, True], 3)
    array([1, 0, 1], dtype=uint8)
    >>> check_cox_event([1, 0, 2], 3)
    Traceback (most recent call last):
    ...
    ValueError: event must be 0/1 or boolean, got 2 at row 2
    """
    arr = _cox_1d(event, "event", n, ref)
    if arr.dtype == object:  # e.g. a pandas "boolean" column holding pd.NA
        miss = missing_mask(arr)
        if miss.any():
            i = int(np.argmax(miss))
            raise ValueError(f"event contains {arr[i]} {_cox_at(i, row0)}: each row needs an "
                             "event (1/True or 0/False); drop the row or fill it in")
    if arr.dtype == bool:
        out = (arr.view(np.uint8) != 0).view(np.uint8)  # a stray byte in a bool array is True
    else:
        if not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
            raise TypeError(f"event must be boolean or 0/1, got dtype {arr.dtype}")
        bad = first_invalid(arr, binary=True)
        if bad is not None:
            raise ValueError(f"event {bad[1]} {_cox_at(bad[0], row0)}")
        out = arr.astype(np.uint8)
    if require_events and not out.any():
        raise ValueError("event has no events (every row is censored): nothing to fit")
    return out


def check_cox_strata(strata, n: int, *,
                     row0: int = 0) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """Return ``(labels, codes)``: the sorted distinct stratum labels and each row's index in them.

    Labels may be of any one sortable type (numbers, strings, booleans); a
    missing label (NaN, None, ``pd.NA``) is refused, naming its row, rather
    than made a stratum of its own. ``codes`` is int64 of length ``n``.
    ``(None, None)`` when ``strata`` is None.

    Examples
    --------
    >>> check_cox_strata(["b", "a", "b"], 3)
    (array(['a', 'b'], dtype='<U1'), array([1, 0, 1]))
    >>> check_cox_strata([1.0, np.nan], 2, row0=5)
    Traceback (most recent call last):
    ...
    ValueError: strata contains nan at row 6: each row needs a label; drop the row or give it one
    """
    if strata is None:
        return None, None
    arr = _cox_1d(strata, "strata", n, None)
    # numpy writes a NaN in a list of strings as the text 'nan': look at the values given
    given = (np.fromiter(strata, dtype=object, count=n)
             if arr.dtype.kind in "US" and not isinstance(strata, np.ndarray) else arr)
    miss = missing_mask(given)
    if miss.any():
        i = int(np.argmax(miss))
        raise ValueError(f"strata contains {given[i]} {_cox_at(i, row0)}: each row needs a "
                         "label; drop the row or give it one")
    try:
        labels, codes = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"strata labels must be of one sortable type (numbers or strings), "
                        f"got dtype {arr.dtype}: {exc}") from None
    return labels, codes.astype(np.int64).ravel()


def check_cox_entry(entry, time: np.ndarray, *, row0: int = 0) -> np.ndarray | None:
    """Return the entry (start) times of counting-process rows ``(entry, time]`` as float64.

    ``entry`` must be finite, of ``time``'s length and below ``time`` on every
    row; negative entries are allowed. None when ``entry`` is None.

    Examples
    --------
    >>> check_cox_entry([0, 2.5], np.array([1.0, 4.0]))
    array([0. , 2.5])
    >>> check_cox_entry([0, 4.0], np.array([1.0, 4.0]), row0=7)
    Traceback (most recent call last):
    ...
    ValueError: entry must be less than time, got entry 4.0 and time 4.0 at row 8
    """
    if entry is None:
        return None
    arr = check_cox_vector(entry, "entry", time.shape[0], row0=row0, ref="time")
    bad = ~(arr < time)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"entry must be less than time, got entry {arr[i]} and time "
                         f"{time[i]} {_cox_at(i, row0)}")
    return arr


class CoxArrays:
    """The checked arrays of a Cox fit, as :func:`check_cox_arrays` returns them.

    ``X`` float64 (n, p); ``time`` float64 (n,); ``event`` uint8 0/1 (n,);
    ``strata`` int64 codes (n,) indexing ``strata_labels`` (the sorted
    distinct labels), or both None; ``weights`` and ``offset`` float64 (n,)
    or None; ``feature_names`` p strings; ``column_sums`` float64 (p,), the
    column sums of ``X`` computed by its finite check, or None.
    """

    __slots__ = ("X", "time", "event", "strata", "strata_labels", "weights", "offset",
                 "feature_names", "column_sums")

    def __init__(self, X, time, event, strata, strata_labels, weights, offset,
                 feature_names, column_sums=None) -> None:
        self.X, self.time, self.event = X, time, event
        self.strata, self.strata_labels = strata, strata_labels
        self.weights, self.offset = weights, offset
        self.feature_names = feature_names
        self.column_sums = column_sums


def check_cox_arrays(X, time, event, strata=None, weights=None, offset=None, *,
                     feature_names=None, row0: int = 0, whole: bool = True) -> CoxArrays:
    """Check and convert the arguments of :meth:`graphpar.CoxPH.fit`.

    Parameters
    ----------
    X, time, event, strata, weights, offset, feature_names
        As in :meth:`graphpar.CoxPH.fit`.
    row0 : int, default 0
        Global number of the first row, added to the row numbers in messages
        (under MPI, the rows of the lower ranks).
    whole : bool, default True
        The arrays are the whole data set: it must have rows and events.
        ``False`` for one rank's rows, which may have neither (the MPI layer
        checks the totals).

    Returns
    -------
    CoxArrays
        ``feature_names`` defaults to the DataFrame's columns, else ``x0, x1, ...``.

    Raises
    ------
    ValueError
        NaN or infinity in ``X``, ``time``, ``weights`` or ``offset``, missing
        stratum labels or events, negative times or weights, events other than
        0/1, mismatched lengths, a 1-D ``X``, repeated ``feature_names``, or
        (``whole``) no rows or no events; the message names the argument and
        the first offending row (and column).
    TypeError
        Non-numeric input, a scipy sparse ``X``, or stratum labels that cannot
        be sorted.

    Examples
    --------
    >>> a = check_cox_arrays([[0.5], [1.0]], [3, 1], [1, 0])
    >>> a.X.shape, a.event, a.feature_names
    ((2, 1), array([1, 0], dtype=uint8), ['x0'])
    >>> check_cox_arrays([[0.5], [1.0]], [3, -1], [1, 0], row0=100)
    Traceback (most recent call last):
    ...
    ValueError: time must be nonnegative, got -1.0 at row 101
    """
    X, names, sums = _checked_cox_matrix(X, "X", feature_names, row0, True)
    n, p = X.shape
    if whole and n == 0:
        raise ValueError("X has no rows")
    time = check_cox_vector(time, "time", n, nonnegative=True, row0=row0)
    ev = check_cox_event(event, n, row0=row0, require_events=whole)
    w = None if weights is None else check_cox_vector(weights, "weights", n, nonnegative=True,
                                                      row0=row0)
    off = None if offset is None else check_cox_vector(offset, "offset", n, row0=row0)
    labels, codes = check_cox_strata(strata, n, row0=row0)
    if names is None:
        names = [f"x{j}" for j in range(p)]
    return CoxArrays(X, time, ev, codes, labels, w, off, names, sums)


def check_csr_arrays(indptr, indices, data, shape, name: str) -> None:
    """Full structural and value check of CSR arrays (O(nnz)); raise ValueError naming ``name``.

    Examples
    --------
    >>> import numpy as np
    >>> check_csr_arrays(np.array([0, 1]), np.array([0]), np.array([1.0]), (1, 1), "op")
    >>> check_csr_arrays(np.array([0, 1]), np.array([3]), np.array([1.0]), (1, 1), "op")
    Traceback (most recent call last):
    ...
    ValueError: op has an entry (0, 3) outside its shape (1, 1)
    """
    m, k = shape
    if indptr.shape != (m + 1,) or indptr[0] != 0 or indptr[-1] > min(indices.size, data.size):
        raise ValueError(f"{name} has a malformed indptr for shape {shape}")
    if m and np.any(np.diff(indptr) < 0):
        raise ValueError(f"{name} has a decreasing indptr")
    nnz = int(indptr[-1])
    ind = indices[:nnz]
    if nnz and (ind.min() < 0 or ind.max() >= k):
        j = int(np.flatnonzero((ind < 0) | (ind >= k))[0])
        i = int(np.searchsorted(indptr, j, side="right") - 1)
        raise ValueError(
            f"{name} has an entry ({i}, {int(ind[j])}) outside its shape {shape}"
        )
    bad = ~np.isfinite(data[:nnz])
    if bad.any():
        j = int(np.argmax(bad))
        i = int(np.searchsorted(indptr, j, side="right") - 1)
        raise ValueError(
            f"{name} has a non-finite value {data[j]} at entry ({i}, {int(ind[j])})"
        )


def check_int(name, value, lo, hi=None):
    """Return ``value`` as an int after checking it is an integer in ``[lo, hi]``.

    Examples
    --------
    >>> check_int("scale", 12, 1, 40)
    12
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{name} must be {rng}, got {value}")
    return value
