"""``graphpar sssp``: shortest paths from one source, several, or every vertex of a graph.

Prints the vertices reached, the largest finite distance, the time and the
MTEPS, where the edges counted are the stored (directed) edges leaving the
reached vertices, each counted once per source, over the time of the
searches alone (reading the graph and compiling are excluded).

Sources: ``--source 0,5,9``, ``--sources FILE`` (one per line) or
``--all-pairs``; for a labelled graph (a CSV edge list with string ids) the
sources are given by label, ``--source`` read as one CSV row (a label with a
comma in double quotes: ``--source '"Rome, IT",Paris'``). One source runs parallel delta-stepping
(:func:`graphpar.sssp`, on one thread for a graph of fewer than 2**17
edges, where a second one saves nothing); several run as :func:`graphpar.csgraph.dijkstra`
does (one serial search per thread, or delta-stepping per source when there
are fewer sources than threads), or with ``--delta`` delta-stepping per
source. ``--output FILE.npz`` writes ``distances``, ``predecessors`` and
``sources`` (vertex numbers), and ``labels`` (every vertex's label) when the
graph has labels; ``--output FILE.csv`` writes one row ``source,target,
distance,predecessor`` per vertex reached from each source, by label when the
graph has labels (else by vertex number; the predecessor is empty for the
source itself); ``--output FILE.npy`` the distances alone (shape ``(n,)``
for one source, ``(k, n)`` for several). ``--plot FILE.png`` draws the
distribution of the distances as a PNG
(:func:`graphpar.plot.distance_histogram`). An ``--output`` not named for one
of those three formats (:data:`OUTPUT_SUFFIXES`), or a ``--plot`` not named
``.png``, is refused before any work
(:func:`graphpar.cli._driver.check_output_paths`).

Under ``mpiexec`` the same command runs distributed: every rank reads its share
of the graph (:func:`graphpar.mpi.read_graph`) or generates it in parallel
(:mod:`graphpar.mpi.generate`), the search is :func:`graphpar.mpi.sssp`,
and rank 0 prints the same report with four more entries: ``ranks``,
``rounds`` (bulk-synchronous exchanges), ``buckets`` and ``bytes_exchanged``
(request bytes sent between ranks, all ranks together). Several sources run
one after another, each a distributed search. ``--output``, ``--plot`` and
``--verify`` gather the distances (and, for ``--verify``, the graph as read)
on rank 0. A labelled graph (CSV/TSV string ids, ``--relabel``) works the same
way: rank 0 holds the labels, looks ``--source``/``--sources`` up and writes
the outputs by label, the same files as serially.
"""

from __future__ import annotations

import argparse
import re
import time

import numpy as np

from graphpar.cli import nonnegative, positive_finite

EXAMPLES = """examples:
  graphpar sssp rome99.gr --source 0 --verify
  graphpar sssp road.gr.gz --source 12 --undirected --threads 2 --output dist.npy
  graphpar sssp rome99.gr --source 0,5,9 --output paths.npz --plot hist.png
  graphpar sssp rome99.gr --sources ids.txt --json
  graphpar sssp roads.csv --source Rome --output from_rome.csv
  graphpar sssp roads.csv --source '"Rome, IT",Paris' --output paths.csv
  graphpar sssp --generate grid:30 --all-pairs --output all.npz
  graphpar sssp --generate kron:20 --source 1 --json
  graphpar sssp --generate grid:1000 --delta 256
  mpiexec -n 2 graphpar sssp --generate kron:20 --threads 1

--generate takes kron:SCALE[:EDGEFACTOR], uniform:N[:M], grid:ROWS[:COLS] (alias road).
SCALE is 1 to 40; a graph that would need more memory than GRAPHPAR_MAX_MEMORY
(default 80% of RAM) is refused before anything is allocated.
--verify checks the distances against the graph as given (both ways with
--undirected), built independently of the one searched."""

_GEN = re.compile(r"^(kron|kronecker|uniform|grid|road):(\d+)(?::(\d+))?$")


def parse_generate(spec: str) -> tuple[str, int, int | None]:
    """Parse a ``--generate`` spec into ``(kind, a, b)``.

    Examples
    --------
    >>> parse_generate("kron:20")
    ('kron', 20, None)
    >>> parse_generate("road:300:200")
    ('grid', 300, 200)
    """
    m = _GEN.match(str(spec).strip().lower())
    if m is None:
        raise ValueError(
            "--generate must be kron:SCALE[:EDGEFACTOR], uniform:N[:M] or "
            f"grid:ROWS[:COLS] (alias road), got {spec!r}"
        )
    kind = {"kronecker": "kron", "road": "grid"}.get(m.group(1), m.group(1))
    return kind, int(m.group(2)), None if m.group(3) is None else int(m.group(3))


def parse_source_list(text: str, graph=None) -> list[int]:
    """Parse ``--source``: a vertex or comma-separated vertices, by number or by label.

    The text is read as one CSV row: a label with a comma (or a double quote)
    is given in double quotes, a double quote in it doubled, as in a CSV file.
    With a labelled ``graph`` (:attr:`graphpar.Graph.labels`) every item is
    looked up as a label (:meth:`graphpar.Graph.index_of`); otherwise it must
    be an integer. A bad item raises ``ValueError`` naming it (``KeyError``
    for an unknown label, whose "did you mean" says how to type the label).

    Examples
    --------
    >>> parse_source_list("0,5, 9")
    [0, 5, 9]
    >>> from graphpar import Graph
    >>> parse_source_list('"Rome, IT",Paris', Graph.from_edges([0], [1],
    ...                                                        labels=["Rome, IT", "Paris"]))
    [0, 1]
    """
    parts = _source_items(text)
    if graph is not None and getattr(graph, "labels", None) is not None:
        from graphpar._validation import check_sources, vertices_from_text
        from graphpar.errors import error_message

        try:
            return check_sources(vertices_from_text(parts, graph), graph,
                                 name="--source")[0].tolist()
        except KeyError as exc:
            raise KeyError(_typed_suggestion(error_message(exc))) from None
    for p in parts:
        if not _is_int(p):
            where = "" if p == str(text).strip() else f" in {text!r}"
            raise ValueError(f"argument --source: expected a vertex number or comma-separated "
                             f"numbers, got {p!r}{where}")
    return [int(p) for p in parts]


def _source_items(text: str) -> list[str]:
    """The items of ``--source``, read as one CSV row by the CSV graph reader's rules
    (double quotes keep a label's commas and spaces)."""
    from graphpar.io._csv import split_row

    try:
        return split_row(str(text)) or [""]
    except ValueError as exc:
        raise ValueError(f"argument --source: {exc}; a label with a comma or spaces around it "
                         "goes in double quotes, e.g. '\"Rome, IT\",Paris'") from None


def _typed_suggestion(message: str) -> str:
    """Add to a "did you mean 'label'?" how to type that label with ``--source``.

    A label that a comma would split, or that the shell would, is shown as typed:
    ``did you mean 'Rome, IT'? (type it as --source '"Rome, IT"')``.
    """
    import ast
    import shlex

    m = re.search(r"; did you mean ('.*'|\".*\")\?$", message)
    if m is None:
        return message
    label = ast.literal_eval(m.group(1))
    plain = label == label.strip() and not any(c in label for c in ',"\r\n')
    typed = shlex.quote(label if plain else '"' + label.replace('"', '""') + '"')
    return message if typed == label else f"{message} (type it as --source {typed})"


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def read_source_file(path, graph=None) -> list[int]:
    """Read ``--sources FILE``: one source per line (blank lines and ``#`` comments skipped).

    A label in double quotes is taken verbatim (spaces around it, ``#``; a
    quote inside written twice), as in the CSV graph files.

    Without ``graph`` every line must be an integer. With ``graph`` (a
    :class:`graphpar.Graph`, or the number of vertices) the sources are
    checked against it as ``--source`` is
    (:func:`graphpar._validation.vertices_from_text`,
    :func:`graphpar._validation.check_sources`): labels for a labelled graph,
    vertex numbers in range otherwise. A bad line raises ``ValueError`` (or
    ``KeyError`` for an unknown label) naming the file and the line.

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "ids.txt")
    >>> _ = open(f, "w").write("# sources\\n3\\n\\n 8\\n")
    >>> read_source_file(f)
    [3, 8]
    >>> from graphpar import Graph
    >>> _ = open(f, "w").write("Pisa\\nRome  # the capital\\n")
    >>> read_source_file(f, Graph.from_edges([0], [1], labels=["Rome", "Pisa"]))
    [1, 0]
    """
    from graphpar._validation import check_sources, vertices_from_text

    lines, texts = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            quoted = re.match(r'\s*"((?:[^"]|"")*)"\s*(?:#.*)?$', line.rstrip("\r\n"))
            if quoted is not None:  # a label kept verbatim: spaces, '#', commas
                lines.append(lineno)
                texts.append(quoted.group(1).replace('""', '"'))
                continue
            text = line.split("#", 1)[0].strip()
            if text:
                lines.append(lineno)
                texts.append(text)
    if not texts:
        raise ValueError(f"{path}: no sources in the file")
    if graph is None:
        for lineno, text in zip(lines, texts, strict=True):
            if not _is_int(text):
                raise ValueError(f"{path}, line {lineno}: a source must be one integer "
                                 f"per line, got {text[:40]!r}")
        return [int(t) for t in texts]

    def convert(items, name="--sources"):
        values = vertices_from_text(items, graph, name=name)
        return check_sources(np.array(values), graph, name="--sources")[0]

    try:
        return convert(texts).tolist()
    except (ValueError, KeyError, TypeError):
        pass
    from graphpar.errors import error_message

    # the first bad line, named by its line and its position among the sources
    for i, (lineno, text) in enumerate(zip(lines, texts, strict=True)):
        try:
            convert([text], name=f"--sources[{i}]")
        except (ValueError, KeyError, TypeError) as exc:
            message = error_message(exc).replace("--sources[0]", f"--sources[{i}]", 1)
            raise type(exc)(f"{path}, line {lineno}: {message}") from None
    raise AssertionError("every line passed alone but not together")  # not reached


def generate_size(spec: str) -> tuple[str, int, int, int, int, bool]:
    """Parse and range-check a ``--generate`` spec, allocating nothing.

    Returns ``(kind, a, b, n, m, directed)``: the generator's two numbers
    with their defaults filled in (Kronecker edge factor 16, uniform ``8 N``
    edges, a square grid) and the graph's vertices and generated edges.
    A number out of range raises ``ValueError`` naming the spec.

    Examples
    --------
    >>> generate_size("kron:10")
    ('kron', 10, 16, 1024, 16384, False)
    >>> generate_size("grid:0")
    Traceback (most recent call last):
    ...
    ValueError: --generate grid:0: ROWS must be >= 1, got 0
    """
    from graphpar.limits import MAX_SCALE

    kind, a, b = parse_generate(spec)

    def at_least(what, value, lo):
        if value < lo:
            raise ValueError(f"--generate {spec}: {what} must be >= {lo}, got {value}")

    if kind == "kron":
        if not 1 <= a <= MAX_SCALE:
            raise ValueError(
                f"--generate {spec}: SCALE must be in [1, {MAX_SCALE}], got {a}"
            )
        b = 16 if b is None else b
        return kind, a, b, 1 << a, b << a, False
    if kind == "uniform":
        at_least("N", a, 1)
        b = 8 * a if b is None else b
        return kind, a, b, a, b, True
    at_least("ROWS", a, 1)
    b = a if b is None else b
    at_least("COLS", b, 1)
    return kind, a, b, a * b, a * (b - 1) + (a - 1) * b, False


def _generate(spec: str, seed: int, ctx):
    """The graph of a ``--generate`` spec: whole, or under MPI this rank's share."""
    kind, a, b, n, m, directed = generate_size(spec)
    what = f"--generate {spec}"
    if ctx.mpi:
        from graphpar.mpi import generate as gen

        gen.check_rank_memory(n, m, directed, what, ctx.comm)
        where = {"comm": ctx.comm}
    else:
        from graphpar import generate as gen
        from graphpar.limits import check_memory

        # the search needs a few more vertex-sized arrays than the generator
        check_memory(gen.generation_bytes(n, m, directed) + 32 * n,
                     what=f"{what} ({n} vertices, {m} edges)")
        where = {}
    make = {"kron": gen.kronecker, "uniform": gen.uniform, "grid": gen.grid_road}[kind]
    return make(a, b, seed=seed, progress=ctx.shows_progress, **where)


def register(sub) -> None:
    """Add the ``sssp`` subcommand to ``sub``."""
    from graphpar.cli._driver import add_shared_options

    p = sub.add_parser(
        "sssp",
        help="shortest paths from one source, several, or all (parallel)",
        description=(
            "Shortest-path distances from one source by parallel delta-stepping (on one\n"
            "thread below 2**17 edges, where a second saves nothing), or from several\n"
            "(--source 0,5,9, --sources FILE, --all-pairs), one search per thread.\n"
            "Prints the vertices reached, the largest finite distance, the search time\n"
            "and MTEPS (stored edges leaving reached vertices / search time, loading and\n"
            "compiling excluded). Weights must be >= 0."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("graph_file", nargs="?", metavar="GRAPH_FILE",
                   help="graph file (.gr, .mtx, .el/.txt, .wel, .npz, .csv, .tsv; optionally "
                        ".gz/.bz2/.xz)")
    p.add_argument("--generate", metavar="SPEC",
                   help="generate the graph instead: kron:SCALE, uniform:N[:M], grid:ROWS[:COLS]")
    p.add_argument("--format", default=None, help="file format when the suffix does not say")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--source", default=None, metavar="S[,S...]",
                       help="source vertex, or comma-separated vertices: 0-based numbers "
                            "(a negative one counts from the end, as in scipy: -1 is the last "
                            "vertex; write --source=-1,5), or labels for a graph with labels "
                            "(a CSV file with string ids), read as a CSV row: a label with a "
                            "comma or spaces around it goes in double quotes (see the "
                            "examples); default vertex 0")
    which.add_argument("--sources", metavar="FILE",
                       help="file of source vertices, one per line: a 0-based number, or a "
                            "label for a graph with labels (in double quotes to keep spaces "
                            "around it or a #)")
    which.add_argument("--all-pairs", action="store_true",
                       help="every vertex is a source (n x n distances)")
    p.add_argument("--delta", type=positive_finite, default=None,
                   help="bucket width (default: graphpar.default_delta, the weights' "
                        "quantile at 2 / rms degree, which a search on several threads "
                        "doubles, up to 8 times, while its steps are too small to share; "
                        "a width given here is kept)")
    p.add_argument("--limit", type=nonnegative, default=None,
                   help="treat vertices farther than this as unreachable (a number >= 0)")
    p.add_argument("--undirected", action="store_true", help="use every edge both ways")
    columns = p.add_argument_group("CSV/TSV edge lists")
    columns.add_argument("--source-col", metavar="NAME", default=None,
                         help="column of the edges' sources (default: the first)")
    columns.add_argument("--target-col", metavar="NAME", default=None,
                         help="column of the edges' targets (default: the second)")
    columns.add_argument("--weight-col", metavar="NAME", default=None,
                         help="column of the weights (default: a column named 'weight', else "
                              "the third of three)")
    columns.add_argument("--relabel", action="store_true",
                         help="number sparse integer ids 0..n-1 and keep them as labels "
                              "(CSV/TSV and .el/.wel edge lists)")
    p.add_argument("--verify", action="store_true",
                   help="check against the serial Dijkstra; exit status 1 if they differ")
    add_shared_options(p, seed=True, json=True,
                       plot="the distribution of the distances to FILE.png",
                       output="distances, predecessors and sources (.npz, with the "
                              "vertices' labels when the graph has them), one "
                              "source,target,distance,predecessor row per vertex reached "
                              "(.csv, by label when the graph has labels), or the "
                              "distances alone (float64 .npy; no other name is accepted)",
                       output_metavar="OUT.npz|OUT.csv|DIST.npy")
    p.set_defaults(func=run, output_suffixes=OUTPUT_SUFFIXES)


# What --output holds, so the name it must end in (any case; the driver's
# check_output_paths refuses another before any work, as it does a --plot not named .png).
# _write_output picks the format by the same suffixes.
OUTPUT_SUFFIXES = {
    "output": ((".npz", ".csv", ".npy"),
               "the distances and predecessors are written as an .npz archive or as CSV, "
               "the distances alone as a float64 .npy array"),
}


def _load(args, ctx):
    """Read or generate the graph and prepare the one searched.

    Returns ``(graph, searched, name, seconds)``: the graph as read or
    generated (under MPI, this rank's share), the checked graph the search
    runs on (symmetrised with ``--undirected``), its name and the time taken
    (the slowest rank's).
    """
    def load():
        if args.generate and args.graph_file:
            raise ValueError("give either GRAPH_FILE or --generate, not both")
        if args.generate:
            return _generate(args.generate, args.seed, ctx), args.generate
        if not args.graph_file:
            raise ValueError("give a GRAPH_FILE or --generate SPEC")
        # the reader's messages name the flags (--weight-col), not its keywords (weight=)
        from graphpar.io._wording import flag_wording

        # the search needs weights >= 0: refuse others naming the file and line
        if ctx.mpi:
            from graphpar.mpi import read_graph

            with flag_wording():
                return read_graph(args.graph_file, args.format, weights="nonnegative",
                                  progress=ctx.shows_progress, source=args.source_col,
                                  target=args.target_col, weight=args.weight_col,
                                  relabel=args.relabel, comm=ctx.comm), str(args.graph_file)
        from graphpar.io import read_graph

        with flag_wording():
            return read_graph(args.graph_file, format=args.format, weights="nonnegative",
                              progress=ctx.shows_progress, source=args.source_col,
                              target=args.target_col, weight=args.weight_col,
                              relabel=args.relabel), str(args.graph_file)

    def load_and_prepare():
        graph, name = ctx.collectively(load)
        if ctx.mpi:
            searched = graph if not args.undirected else graph.symmetrized()
            searched.ghosts()  # per-graph preparation (ghost ids, rows by weight)
        else:
            from graphpar import validate_graph

            searched = validate_graph(graph, not args.undirected)
        return graph, searched, name

    (graph, searched, name), seconds = ctx.timed(load_and_prepare)
    return graph, searched, name, seconds


def _warm_up(ctx) -> None:
    """Load the compiled kernels on a tiny graph so that the timed search excludes it."""
    from graphpar import Graph

    tiny = Graph.from_edges([0, 1], [1, 2], [1.0, 2.0])
    if ctx.mpi:
        from graphpar.mpi import distribute_graph, sssp

        sssp(distribute_graph(tiny if ctx.is_root else None, comm=ctx.comm), 0)
    else:
        from graphpar import sssp
        from graphpar.csgraph import dijkstra

        sssp(tiny, 0)
        dijkstra(tiny.to_scipy(), indices=[0, 1])  # the several-sources search


def _search(searched, source, delta, limit: float, ctx, want_pred: bool = False):
    """Run one search (or several, one after another); return this process's
    ``(dist, pred or None, graphpar.SSSPStats)``."""
    if ctx.mpi:
        from graphpar.mpi import sssp
    else:
        from graphpar import sssp
    # searched is already symmetrised with --undirected: searched as it is
    out = sssp(searched, source, delta=delta, limit=limit, return_predecessors=want_pred,
               return_stats=True)
    return (out[0], out[1] if want_pred else None, out[-1])


def _pick_sources(args, graph, n: int, ctx) -> tuple[np.ndarray, bool]:
    """The checked sources (int64) and whether a single ``--source`` was given."""

    if ctx.mpi and graph.labelled:
        # rank 0 holds the labels: it looks the sources up, as serially, and tells the others
        def on_root():
            return _pick(args, _label_view(graph), n) if ctx.is_root else None

        return ctx.comm.bcast(ctx.collectively(on_root), root=0)
    return ctx.collectively(lambda: _pick(args, None if ctx.mpi else graph, n))


def _pick(args, graph, n: int) -> tuple[np.ndarray, bool]:
    """:func:`_pick_sources` on one process; ``graph`` None for vertex numbers alone."""
    from graphpar._validation import check_sources

    if args.all_pairs:
        return np.arange(n, dtype=np.int64), False
    if args.sources:
        labelled = graph is not None and graph.labels is not None
        return np.array(read_source_file(args.sources, graph if labelled else n),
                        dtype=np.int64), False
    ids = [0] if args.source is None else parse_source_list(args.source, graph)
    if len(ids) == 1:
        return check_sources(ids[0], n, name="--source")[0], True
    return check_sources(np.array(ids), n, name="--source")[0], False


def _label_view(dg):
    """On rank 0, a :class:`graphpar.Graph` without edges that carries ``dg``'s labels.

    The serial lookups (:func:`parse_source_list`, :func:`read_source_file`)
    then name labels exactly as serially; its cost is ``8 n`` bytes of row
    offsets beside the labels rank 0 already holds.
    """
    from graphpar import Graph

    return Graph(np.zeros(dg.gn + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                 labels=dg.labels)


def _search_serial(searched, sources, delta, limit: float, ctx, want_pred: bool):
    """Several sources on one process, in chunks that report progress.

    Without ``--delta`` as :func:`graphpar.csgraph.dijkstra` (one serial
    search per thread); with it, delta-stepping per source. Returns
    ``(dist, pred or None, seconds)``.
    """
    from graphpar import sssp
    from graphpar.csgraph import dijkstra

    n, k = searched.n, sources.size
    A = searched.to_scipy()
    step = max(ctx.threads, -(-k // 100))  # about 100 reports, whole rounds of threads
    step = -(-step // ctx.threads) * ctx.threads
    dist = np.empty((k, n))
    pred = np.empty((k, n), dtype=np.int32) if want_pred else None
    t0 = time.perf_counter()
    with ctx.progress(k, "shortest paths", unit="source") as bar:
        for i in range(0, k, step):
            part = sources[i:i + step]
            if delta is None:
                out = dijkstra(A, indices=part, limit=limit, return_predecessors=want_pred)
            else:
                out = sssp(searched, part, delta=delta, limit=limit,
                           return_predecessors=want_pred)
            if want_pred:
                dist[i:i + part.size], pred[i:i + part.size] = out
            else:
                dist[i:i + part.size] = out
            bar.update(part.size)
    return dist, pred, time.perf_counter() - t0


def _search_mpi(searched, sources, delta, limit: float, ctx, want_pred: bool):
    """Several sources under MPI: one distributed search after another, gathered on rank 0.

    Returns ``(dist, pred, stats)``: the gathered arrays (None off rank 0)
    and the report's fields summed over the searches.
    """
    k = sources.size
    dist = np.empty((k, searched.gn)) if ctx.is_root else None
    pred = np.empty((k, searched.gn), dtype=np.int32) if ctx.is_root and want_pred else None
    totals = {"seconds": 0.0, "edges_traversed": 0, "rounds": 0, "buckets": 0,
              "bytes_exchanged": 0}
    st = None
    with ctx.progress(k, "shortest paths", unit="source") as bar:
        for i, s in enumerate(sources):
            d, p, st = _search(searched, int(s), delta, limit, ctx, want_pred)
            d = searched.gather_vertex_values(d, root=0)
            p = searched.gather_vertex_values(p, root=0) if want_pred else None
            if ctx.is_root:
                dist[i] = d
                if want_pred:
                    pred[i] = p
            totals["seconds"] += st.seconds
            totals["edges_traversed"] += st.edges_traversed
            for key in ("rounds", "buckets", "bytes_exchanged"):
                totals[key] += getattr(st.mpi, key)
            bar.update(1)
    totals.update(delta=st.delta, threads=st.threads, vertices=st.vertices, edges=st.edges,
                  ranks=st.mpi.ranks)
    return dist, pred, totals


def _verify(graph, source, dist, directed: bool, limit: float, ctx) -> bool:
    """Check ``dist`` against the serial Dijkstra on the graph as read (on rank 0 under MPI).

    The graph the user asked for, with the user's direction, checked on its
    own: not the (symmetrised) one searched.
    """
    from graphpar import verify_sssp

    def check(g):
        return verify_sssp(g, source, dist, directed=directed, limit=limit,
                           against_dijkstra=True)

    if not ctx.mpi:
        return check(graph)

    def gather_and_check():
        g = graph.gather(root=0)
        return check(g) if ctx.is_root else None

    return bool(ctx.comm.bcast(ctx.collectively(gather_and_check), root=0))


def run(args, ctx) -> int:
    """Run ``graphpar sssp`` in the context ``ctx`` (serial or one MPI rank); return the status.

    Exit status 1 when ``--verify`` finds a wrong distance.
    """
    graph, searched, name, load_time = _load(args, ctx)
    n = searched.gn if ctx.mpi else searched.n
    sources, single = _pick_sources(args, graph, n, ctx)
    labels = graph.labels  # under MPI on rank 0 alone, which writes the outputs
    # from here on vertex numbers (the API would read them as labels)
    if ctx.mpi and graph.labelled:
        graph, searched = graph.without_labels(), searched.without_labels()
    elif not ctx.mpi and labels is not None:
        graph, searched = graph.with_labels(None), searched.with_labels(None)
    limit = np.inf if args.limit is None else args.limit
    want_pred = bool(args.output) and str(args.output).lower().endswith((".npz", ".csv"))
    _warm_up(ctx)
    stats = {"graph": name}
    if single or (sources.size == 1 and not ctx.mpi):
        dist, pred, st = _search(searched, sources if not single else int(sources[0]),
                                 args.delta, limit, ctx, want_pred)
        stats.update(vertices=st.vertices, edges=st.edges, directed=not args.undirected)
        stats.update({"source": int(sources[0])} if single else {"sources": 1})
        if single and labels is not None:
            stats["source_label"] = labels[int(sources[0])].item()
        stats.update(delta=st.delta, threads=st.threads, reached=st.reached,
                     max_distance=st.max_distance, time_s=st.seconds, load_time_s=load_time,
                     mteps=st.mteps)
        if ctx.mpi:
            stats.update(ranks=st.mpi.ranks, rounds=st.mpi.rounds, buckets=st.mpi.buckets,
                         bytes_exchanged=st.mpi.bytes_exchanged)
            dist = searched.gather_vertex_values(dist, root=0)  # None on the other ranks
            if want_pred:
                pred = searched.gather_vertex_values(pred, root=0)
    elif ctx.mpi:
        dist, pred, tot = _search_mpi(searched, sources, args.delta, limit, ctx, want_pred)
        stats.update(vertices=tot["vertices"], edges=tot["edges"],
                     directed=not args.undirected, sources=int(sources.size),
                     delta=tot["delta"], threads=tot["threads"])
        stats.update(_distance_fields(dist, ctx))
        stats.update(time_s=tot["seconds"], load_time_s=load_time,
                     mteps=_mteps(tot["edges_traversed"], tot["seconds"]),
                     ranks=tot["ranks"], rounds=tot["rounds"], buckets=tot["buckets"],
                     bytes_exchanged=tot["bytes_exchanged"])
    else:
        dist, pred, seconds = _search_serial(searched, sources, args.delta, limit, ctx,
                                             want_pred)
        reached = np.isfinite(dist)
        traversed = int(reached.sum(axis=0) @ np.diff(searched.indptr))
        stats.update(vertices=searched.n, edges=searched.nnz, directed=not args.undirected,
                     sources=int(sources.size), delta=args.delta, threads=ctx.threads)
        stats.update(_distance_fields(dist, ctx))
        stats.update(time_s=seconds, load_time_s=load_time, mteps=_mteps(traversed, seconds))
    if args.output:
        _write_output(args.output, dist, pred, sources, single, labels, ctx)
    if args.plot:
        from graphpar.plot import distance_histogram

        ctx.write(lambda: distance_histogram(dist, args.plot))
    status = 0
    if args.verify:
        ok = _verify(graph, int(sources[0]) if single else sources, dist, not args.undirected,
                     limit, ctx)
        stats["verified"] = ok
        status = 0 if ok else 1
    ctx.report(stats)
    return status


def _distance_fields(dist, ctx) -> dict:
    """``reached`` and ``max_distance`` of gathered distances (rank 0; 0 elsewhere)."""
    if not ctx.is_root:
        return {"reached": 0, "max_distance": -np.inf}
    fin = dist[np.isfinite(dist)]
    return {"reached": int(fin.size), "max_distance": float(fin.max()) if fin.size else -np.inf}


def _mteps(edges: int, seconds: float) -> float:
    return edges / seconds / 1e6 if seconds > 0 else float("inf")


def _write_output(path, dist, pred, sources, single: bool, labels, ctx) -> None:
    """Rank 0 writes ``path`` atomically: ``.npz`` with distances, predecessors,
    sources (and labels); ``.csv`` with one row per vertex reached from each source,
    by label when there are ``labels``; ``.npy`` the distances alone (the driver's
    :func:`~graphpar.cli._driver.check_output_paths` refused any other name, by
    :data:`OUTPUT_SUFFIXES`)."""
    suffix = str(path).lower()
    if suffix.endswith(".npz"):
        extra = {} if labels is None else {"labels": _plain_labels(labels)}

        def write(f):
            np.savez(f, distances=dist, predecessors=pred,
                     sources=np.int64(sources[0]) if single else sources, **extra)
    elif suffix.endswith(".csv"):
        ctx.write(lambda f: write_paths_csv(f, dist, pred, sources, labels), path, "w")
        return
    else:
        def write(f):
            np.save(f, dist)
    ctx.write(write, path)


def _plain_labels(labels: np.ndarray) -> np.ndarray:
    """Labels as an array ``np.load`` reads without pickle (unicode for objects)."""
    labels = np.asarray(labels)
    return labels.astype(str) if labels.dtype.kind == "O" else labels


def write_paths_csv(f, dist, pred, sources, labels=None) -> None:
    """Write shortest paths as CSV rows ``source,target,distance,predecessor`` to ``f``.

    One row per vertex reached (finite distance) from each source, in source
    order then vertex order. Vertices are written as their ``labels`` when
    given, else as vertex numbers; the predecessor is empty for the source
    itself (and every predecessor is empty when ``pred`` is None); distances
    are written exactly (Python's shortest round-trip form).

    Parameters
    ----------
    f : text file
        Open for writing; rows end in ``\n``.
    dist, pred : ndarray, shape (n,) or (k, n)
        Distances and predecessors (``pred`` negative for none), or ``pred`` None.
    sources : array_like of int, shape (k,)
        The vertex number of each row of ``dist``.
    labels : ndarray, optional
        ``labels[v]`` names vertex ``v``.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> write_paths_csv(out, np.array([0.0, 1.5, np.inf]), np.array([-9999, 0, -9999]), [0],
    ...                 np.array(["Rome", "Pisa", "Bari"]))
    >>> print(out.getvalue(), end="")
    source,target,distance,predecessor
    Rome,Rome,0.0,
    Rome,Pisa,1.5,Rome
    """
    from graphpar.io._csv import quote_field

    def cell(v) -> str:  # labels quoted as the CSV graph writer quotes them: they read back
        return quote_field(v) if isinstance(v, str) else str(v)

    dist = np.atleast_2d(dist)
    pred = None if pred is None else np.atleast_2d(pred)
    names = None if labels is None else np.asarray(labels).tolist()
    f.write("source,target,distance,predecessor\n")
    for row, s in enumerate(np.asarray(sources).ravel().tolist()):
        reached = np.flatnonzero(np.isfinite(dist[row]))
        targets = reached.tolist()
        d = dist[row, reached].tolist()
        p = [-1] * len(targets) if pred is None else pred[row, reached].tolist()
        if names is not None:
            s = names[s]
            targets = [names[t] for t in targets]
            p = [names[u] if u >= 0 else "" for u in p]
        else:
            p = [u if u >= 0 else "" for u in p]
        f.writelines(",".join(map(cell, r)) + "\n"
                     for r in zip([s] * len(targets), targets, d, p, strict=True))


def demo(args) -> bool:
    """The SSSP part of ``graphpar demo``: Kronecker graph, 4 sources, each verified.

    Uses ``args.scale`` and ``args.seed`` (the demo's options, checked
    there); returns True when every search matched the serial Dijkstra.
    """
    from graphpar import Graph, generate, sssp, verify_sssp

    scale, seed = args.scale, args.seed
    t0 = time.perf_counter()
    g = generate.kronecker(scale, seed=seed)
    gen_time = time.perf_counter() - t0
    print(f"SSSP: Kronecker scale {scale} (seed {seed}): {g.n} vertices, {g.nnz} stored edges, "
          f"generated in {gen_time:.2f} s")
    deg = np.diff(g.indptr)
    candidates = np.flatnonzero(deg > 0)
    rng = np.random.default_rng(seed)
    sources = rng.choice(candidates, size=min(4, candidates.size), replace=False)
    # load the search kernel so that the timed searches exclude it (not _warm_up, which
    # also compiles the several-sources search the demo does not use: seconds when cold)
    sssp(Graph.from_edges([0, 1], [1, 2], [1.0, 2.0]), 0)
    all_ok = True
    for s in sources:
        dist, st = sssp(g, int(s), return_stats=True)
        ok = verify_sssp(g, int(s), dist, against_dijkstra=True)
        all_ok &= ok
        print(f"  source {int(s):>8}: reached {st.reached}, max distance "
              f"{st.max_distance:g}, {st.seconds * 1e3:.1f} ms, {st.mteps:.0f} MTEPS, "
              f"{'verified against Dijkstra' if ok else 'MISMATCH with Dijkstra'}")
    return bool(all_ok)
