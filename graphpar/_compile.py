"""Compiling the Numba kernels ahead of time, and saying so when a run has to compile them.

graphpar's kernels (:mod:`graphpar.kernels`) are compiled by Numba on their first call and
cached on disk (``cache=True``), so only the first run of a fresh install pays for it. Two
tools here make that visible and avoidable:

- :func:`compile_notice`: while it is active, the first kernel compilation prints one line
  (``graphpar: compiling kernels (first run only; ...)``). It listens to Numba's
  ``numba:compile`` event, which fires only for a real compilation: a kernel loaded from
  the cache says nothing.
- :func:`compile_kernels`: call every public workload on tiny inputs, with each dtype
  variant the public API can hand a kernel, so that the cache covers the real calls
  (``graphpar compile``).

Where the cache lives (Numba's rules, first that applies): ``$NUMBA_CACHE_DIR`` when set;
else ``__pycache__`` beside the kernels when that directory is writable; else a user-wide
directory, ``$XDG_CACHE_HOME/numba`` (default ``~/.cache/numba``), so a read-only install
still caches. :func:`kernel_cache_dir` names the directory in force.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

__all__ = ["CompileSummary", "compile_kernels", "compile_notice", "kernel_cache_dir",
           "kernel_dispatchers", "WARM_UPS", "tiny_graph", "wide_indices", "cox_data",
           "cox_kernels_on_tiny_data", "large_input_paths", "SIZE_BOUNDS"]

NOTICE = "graphpar: compiling kernels (first run only; later runs use the cache in {dir})"


def _is_graphpar_kernel(dispatcher) -> bool:
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module.startswith("graphpar.")


def kernel_dispatchers() -> list:
    """Every Numba dispatcher (compiled function) of :mod:`graphpar.kernels`.

    Examples
    --------
    >>> len(kernel_dispatchers()) > 10
    True
    """
    from numba.core.registry import CPUDispatcher

    import graphpar.kernels as pkg

    found = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and _is_graphpar_kernel(value):
                found[id(value)] = value
    return list(found.values())


def kernel_cache_dir() -> str:
    """The directory Numba caches graphpar's kernels in, as its rules decide for this process.

    Examples
    --------
    >>> import os
    >>> os.path.isabs(kernel_cache_dir())
    True
    """
    from graphpar.kernels import csr

    cache = getattr(csr._first_bad_index, "_cache", None)
    path = getattr(cache, "cache_path", None)
    if path is None:  # pragma: no cover - every graphpar kernel has cache=True
        return os.path.join(os.path.dirname(csr.__file__), "__pycache__")
    return os.path.abspath(path)


def _listener(announce: bool, stream):
    """A ``numba:compile`` listener: counts graphpar's compilations, announces the first."""
    from numba.core import event

    class CompileListener(event.Listener):
        count = 0

        def on_start(self, ev) -> None:
            dispatcher = ev.data.get("dispatcher")
            if not _is_graphpar_kernel(dispatcher):
                return
            if self.count == 0 and announce:
                path = getattr(getattr(dispatcher, "_cache", None), "cache_path", None)
                out = sys.stderr if stream is None else stream
                print(NOTICE.format(dir=path or kernel_cache_dir()), file=out, flush=True)
            self.count += 1

        def on_end(self, ev) -> None:
            pass

    return CompileListener()


@contextlib.contextmanager
def compile_notice(enabled: bool = True, *, stream=None):
    """While active, print one line on the first compilation of a graphpar kernel.

    Nothing is printed when every kernel the block calls comes from the cache.

    Parameters
    ----------
    enabled : bool
        ``False`` counts compilations without printing.
    stream : file, optional
        Where the line goes; default ``sys.stderr``.

    Yields
    ------
    listener
        Its ``count`` is the number of kernel compilations so far.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with compile_notice(stream=out) as seen:
    ...     pass
    >>> seen.count, out.getvalue()
    (0, '')
    """
    from numba.core import event

    listener = _listener(enabled, stream)
    event.register("numba:compile", listener)
    try:
        yield listener
    finally:
        event.unregister("numba:compile", listener)


# ---------------------------------------------------------------- warming the cache
def wide_indices(graph):
    """The same graph with int64 indices, as graphs beyond 2**31 vertices hold them.

    Such a graph cannot be tiny, but its kernels can be compiled on a tiny one.

    Examples
    --------
    >>> wide_indices(tiny_graph()).indices.dtype
    dtype('int64')
    """
    from graphpar import Graph

    wide = Graph.__new__(Graph)
    for name in Graph.__slots__:
        if name != "_packed":  # a search cache, built from the arrays it was given
            setattr(wide, name, getattr(graph, name))
    wide.indices = graph.indices.astype(np.int64)
    return wide


def tiny_graph():
    """A 6-vertex directed graph with one isolated vertex, for warm-ups.

    Examples
    --------
    >>> tiny_graph().n
    6
    """
    from graphpar import Graph

    return Graph.from_edges([0, 1, 2, 0, 3], [1, 2, 3, 3, 4], [1.0, 2.0, 1.0, 5.0, 3.0], n=6)


def _warm_graphs() -> None:
    from graphpar import Graph, generate, validate_graph

    generate.kronecker(4, 2, seed=1)
    generate.kronecker(4, 2, seed=1, weights="real", directed=True)
    generate.uniform(8, 20, seed=1, weights=None)
    generate.grid_road(3, 4)
    generate.sbm([4, 4], 0.5, 0.1)
    generate.edge_range("kronecker", 0, 8, scale=3)
    g = tiny_graph()
    g.symmetrized()
    Graph.from_edges([0, 1], [1, 0], [1.0, 1.0], directed=False)
    validate_graph(g.to_scipy(), weights="nonnegative")


def _warm_io() -> None:
    import tempfile

    from graphpar.io import read_graph, write_graph

    g = tiny_graph()
    real = type(g)(g.indptr, g.indices, g.weights + 0.25)
    ones = type(g)(g.indptr, g.indices)
    with tempfile.TemporaryDirectory(prefix="graphpar-compile-") as tmp:
        for fmt in ("gr", "mtx", "el", "wel", "npz"):
            for k, graph in enumerate((g, real, ones, g.symmetrized())):
                path = os.path.join(tmp, f"g{k}.{fmt}")
                write_graph(graph, path)
                for rule in ("any", "nonnegative", "finite"):
                    read_graph(path, weights=rule)
        path = os.path.join(tmp, "u.npz")
        write_graph(g.symmetrized(), path)
        read_graph(path, directed=None)
    # how the split text readers (graphs and Cox tables) find line starts in large files
    from graphpar.io._lines import line_range

    line_range(b"1 2\n3 4\n", 2, 6)


def _warm_sssp() -> None:
    from graphpar import default_delta, sssp, verify_sssp

    for g in (tiny_graph(), wide_indices(tiny_graph())):
        for method in ("delta-stepping", "dijkstra"):
            sssp(g, 0, method=method)
            sssp(g, [0, 1], method=method, return_predecessors=True, limit=3.0,
                 return_stats=True)
        sssp(g, 0, directed=False, threads=1)
        dist = sssp(g, 0)
        verify_sssp(g, 0, dist)
        verify_sssp(g, 0, dist, against_dijkstra=True)
        default_delta(g)
    sssp(tiny_graph().to_scipy(), 0)
    _warm_csgraph()


def _warm_csgraph() -> None:
    """The drop-in's searches: per source (serial and threaded) and multi-source."""
    from graphpar import csgraph
    from graphpar.kernels import sssp_many as _many

    A = tiny_graph().to_scipy()
    for want_pred in (False, True):
        csgraph.dijkstra(A, indices=[0, 1], return_predecessors=want_pred)
        csgraph.dijkstra(A, indices=[0, 1], return_predecessors=want_pred, min_only=True)
    # The threaded per-source search runs only on large work: compile it directly, with
    # the argument types graphpar.csgraph passes.
    n = A.shape[0]
    indptr = A.indptr.astype(np.int64)
    for idx in (A.indices.astype(np.int32), A.indices.astype(np.int64)):
        dist = np.full((2, n), np.inf)
        pred = np.full((2, n), -9999, dtype=np.int32)
        src, data = np.array([0, 1]), A.data.astype(np.float64)
        _many.many(indptr, idx, data, src, np.inf, dist, pred, True, np.zeros(8, np.int64))


def _warm_gcn() -> None:
    import scipy.sparse as sp

    from graphpar import GCN, aggregate, gcn_normalize, train_gcn

    g = tiny_graph()
    rng = np.random.default_rng(0)
    labels = np.array([0, 1, 0, 1, 0, 1])
    mask = np.array([True, True, True, False, False, False])
    # disjoint masks: the trainer warns about overlapping ones
    val = np.array([False, False, False, True, True, False])
    test = np.array([False, False, False, False, False, True])
    for index in (np.int32, np.int64):
        csr = g.to_scipy().tocsr()
        A = sp.csr_array((csr.data, csr.indices.astype(index), csr.indptr.astype(index)),
                         shape=csr.shape)
        for dtype in (np.float32, np.float64):
            op = gcn_normalize(A, dtype=dtype)
            for width in (None, 3):
                shape = (6,) if width is None else (6, width)
                H = rng.random(shape).astype(dtype)
                aggregate(op, H)
                aggregate(op, H, transpose=True)
                aggregate(A.astype(dtype), H)
    for dtype in (np.float32, np.float64):
        X = rng.random((6, 4))
        for features in (X, sp.csr_array(X)):
            res = train_gcn(g, features, labels, mask, val, test, hidden=4, epochs=2,
                            dtype=dtype, early_stopping=1)
        model = getattr(res, "model", None)
        if isinstance(model, GCN):
            model.predict(g, X.astype(dtype))


def cox_data():
    """Tiny survival data with tied times and two strata: ``(X, time, event, strata)``.

    Examples
    --------
    >>> cox_data()[0].shape
    (40, 2)
    """
    rng = np.random.default_rng(0)
    n = 40
    X = rng.normal(size=(n, 2))
    time_ = np.round(rng.exponential(size=n), 1) + 0.1  # rounded: tied times
    event = rng.random(n) < 0.7
    strata = np.arange(n) % 2
    return X, time_, event, strata


@contextlib.contextmanager
def _attributes_set(settings):
    """Set each ``(module, name, value)`` of ``settings`` while active; restore them after."""
    saved = [(module, name, getattr(module, name)) for module, name, _ in settings]
    for module, name, value in settings:
        setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


#: Size bounds below which a call takes a path that compiles less (checks in NumPy, one
#: thread, serial steps), as ``(module, attribute)``. Warm-up inputs are tiny, below all
#: of them: :func:`compile_kernels` runs each warm-up again with them at 0
#: (:func:`large_input_paths`), so that large inputs find their kernels in the cache too.
#: Only bounds read by Python code belong here: a global read inside a compiled function
#: is frozen into it when it compiles, so a 0 set here would be cached with the kernel
#: (``kernels.dist_sssp.PAR_MIN`` is such a constant; the serial and parallel passes it
#: chooses between are both compiled into the kernel that reads it).
SIZE_BOUNDS = (
    ("graphpar.kernels.csr", "NUMPY_CHECK_BELOW"),
    ("graphpar._csgraph", "PARALLEL_EDGES"),
    ("graphpar._csgraph", "SERIAL_WORK"),
    ("graphpar._gcn", "SERIAL_WORK"),
    ("graphpar._gcn_layers", "SERIAL_WORK"),
)


@contextlib.contextmanager
def large_input_paths():
    """While active, tiny inputs take the paths of large ones: every bound of
    :data:`SIZE_BOUNDS` is 0 (process-wide, so only for :func:`compile_kernels`).

    Examples
    --------
    >>> from graphpar import _csgraph
    >>> with large_input_paths():
    ...     _csgraph.PARALLEL_EDGES
    0
    >>> _csgraph.PARALLEL_EDGES > 0
    True
    """
    with _attributes_set([(importlib.import_module(module), name, 0)
                          for module, name in SIZE_BOUNDS]):
        yield


@contextlib.contextmanager
def cox_kernels_on_tiny_data(mpi: bool = False):
    """While active, Cox fits of a few rows run the compiled kernels in several chunks.

    Fits below ``graphpar._cox_problem.NUMPY_ROWS_BELOW`` rows evaluate in NumPy,
    blocks below ``graphpar.kernels.cox.NUMPY_LP_BELOW`` rows form their linear
    predictor in NumPy, fewer than ``graphpar.kernels.cox_sort.NUMPY_SORT_BELOW``
    rows sort in NumPy, and one chunk needs no pass 2, so a warm-up on tiny data
    would compile nothing that large fits run. This sets the three bounds to 0 and
    the chunks to 8 rows (process-wide, so only for :func:`compile_kernels`) and
    restores them; with ``mpi``, the chunk size of the distributed fit too (which
    imports mpi4py).

    Examples
    --------
    >>> from graphpar import _cox_problem
    >>> with cox_kernels_on_tiny_data():
    ...     _cox_problem.NUMPY_ROWS_BELOW
    0
    """
    from graphpar import _cox_problem
    from graphpar.kernels import cox, cox_sort

    settings = [(_cox_problem, "NUMPY_ROWS_BELOW", 0), (cox, "NUMPY_LP_BELOW", 0),
                (cox_sort, "NUMPY_SORT_BELOW", 0), (_cox_problem, "CHUNK_ROWS", 8)]
    if mpi:
        from graphpar.mpi import _cox as mpi_cox

        settings.append((mpi_cox, "CHUNK_ROWS", 8))
    with _attributes_set(settings):
        yield


def _warm_cox() -> None:
    from graphpar import CoxPH, concordance_index

    X, t, e, strata = cox_data()
    with warnings.catch_warnings(), cox_kernels_on_tiny_data():
        warnings.simplefilter("ignore")
        for ties in ("efron", "breslow"):
            m = CoxPH(ties=ties).fit(X, t, e)
            m.summary_table()
            m.predict_risk(X)
            CoxPH(ties=ties, penalizer=0.1).fit(X, t, e, strata=strata,
                                                weights=np.full(t.size, 2.0),
                                                offset=np.zeros(t.size))
        # times a rounding apart (0.1 + 0.2 against 0.3): the time fix merges them in a kernel
        CoxPH().fit(X, t * (1.0 + 1e-13 * (np.arange(t.size) % 2)), e)
        concordance_index(t, event=e, risk=m.predict_risk(X))


#: The serial warm-ups of :func:`compile_kernels`: ``(what, function)``.
WARM_UPS = (
    ("graphs and generators", _warm_graphs),
    ("graph files", _warm_io),
    ("shortest paths", _warm_sssp),
    ("GCN", _warm_gcn),
    ("Cox regression", _warm_cox),
)


@dataclass
class CompileSummary:
    """What :func:`compile_kernels` did.

    Attributes
    ----------
    compiled : int
        Compilations now, kernels and the functions they call (0 when the cache
        already held everything).
    kernels : int
        Compiled kernel signatures in the cache afterwards (its ``.nbc`` files).
    seconds : float
        Wall time; ``cpu_seconds`` the process's CPU time.
    cache_dir : str
        Where the kernels are cached (:func:`kernel_cache_dir`).
    steps : list of str
        The workloads run.
    """

    compiled: int
    kernels: int
    seconds: float
    cpu_seconds: float
    cache_dir: str
    steps: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The summary as a JSON-ready dict.

        Examples
        --------
        >>> CompileSummary(0, 5, 1.0, 1.0, "/tmp/c").to_dict()["kernels"]
        5
        """
        return {"kernels": self.kernels, "compiled": self.compiled,
                "seconds": self.seconds, "cpu_seconds": self.cpu_seconds,
                "cache_dir": self.cache_dir, "steps": list(self.steps)}


def compile_kernels(*, extra=(), progress: bool | None = False) -> CompileSummary:
    """Compile (or load from the cache) every kernel a public graphpar call can use.

    Each public workload runs on tiny inputs with every dtype variant the public API
    can pass a kernel (int32 and int64 indices, float32 and float64 features, each
    file format, both Cox tie rules ...), once as they are and once taking the paths
    of large inputs (:func:`large_input_paths`), so that later real calls of any size
    find their kernels in the cache (:func:`kernel_cache_dir`).

    Parameters
    ----------
    extra : sequence of (str, callable)
        More warm-ups to run after :data:`WARM_UPS` (the CLI adds the MPI layer's).
    progress : bool or None
        Report progress per workload (see :func:`graphpar.progress.progress`).

    Returns
    -------
    CompileSummary

    Examples
    --------
    >>> s = compile_kernels()  # doctest: +SKIP
    >>> s.compiled >= 0 and s.kernels > 0  # doctest: +SKIP
    True
    """
    from graphpar.progress import progress as report

    steps = list(WARM_UPS) + list(extra)
    t0, c0 = time.perf_counter(), time.process_time()
    with compile_notice(False) as seen, report(len(steps), "compiling kernels",
                                               unit="workload", enabled=progress) as bar:
        for what, warm in steps:
            bar.set_description(f"compiling kernels: {what}")
            warm()
            with large_input_paths():
                warm()
            bar.update(1)
    cache = kernel_cache_dir()
    cached = sum(1 for name in os.listdir(cache) if name.endswith(".nbc")) \
        if os.path.isdir(cache) else 0
    return CompileSummary(
        compiled=seen.count, kernels=cached, seconds=time.perf_counter() - t0,
        cpu_seconds=time.process_time() - c0, cache_dir=cache,
        steps=[what for what, _ in steps],
    )
