"""``graphpar sssp``: delta-stepping shortest paths from one source of a graph file.

Prints the vertices reached, the largest finite distance, the time and the
MTEPS, where the edges counted are the stored (directed) edges leaving the
reached vertices, each counted once, over the time of the search alone
(reading the graph and compiling are excluded).

Under ``mpiexec`` the same command runs distributed: every rank reads its share
of the graph (:func:`graphpar.mpi.read_graph`) or generates it in parallel
(:mod:`graphpar.mpi.generate`), the search is :func:`graphpar.mpi.sssp`,
and rank 0 prints the same report with four more entries: ``ranks``,
``rounds`` (bulk-synchronous exchanges), ``buckets`` and ``bytes_exchanged``
(request bytes sent between ranks, all ranks together). ``--output`` and
``--verify`` gather the distances (and, for ``--verify``, the graph as read)
on rank 0.
"""

from __future__ import annotations

import re
import time

import numpy as np

EXAMPLES = """examples:
  graphpar sssp rome99.gr --source 0 --verify
  graphpar sssp road.gr.gz --source 12 --undirected --threads 2 --output dist.npy
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
    from graphpar.generate import MAX_SCALE

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
    return make(a, b, seed=seed, **where)


def register(sub) -> None:
    """Add the ``sssp`` subcommand to ``sub``."""
    import argparse

    from graphpar.cli._driver import add_shared_options

    p = sub.add_parser(
        "sssp",
        help="single-source shortest paths (parallel delta-stepping)",
        description=(
            "Shortest-path distances from one source by parallel delta-stepping.\n"
            "Prints the vertices reached, the largest finite distance, the search time\n"
            "and MTEPS (stored edges leaving reached vertices / search time, loading and\n"
            "compiling excluded). Weights must be >= 0."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("graph_file", nargs="?", metavar="GRAPH_FILE",
                   help="graph file (.gr, .mtx, .el/.txt, .wel, .npz; optionally .gz/.bz2/.xz)")
    p.add_argument("--generate", metavar="SPEC",
                   help="generate the graph instead: kron:SCALE, uniform:N[:M], grid:ROWS[:COLS]")
    p.add_argument("--format", default=None, help="file format when the suffix does not say")
    p.add_argument("--source", type=int, default=0, help="source vertex, 0-based (default 0)")
    p.add_argument("--delta", type=float, default=None,
                   help="bucket width (default: 2 * max weight / mean degree)")
    p.add_argument("--limit", type=float, default=None,
                   help="treat vertices farther than this as unreachable")
    p.add_argument("--undirected", action="store_true", help="use every edge both ways")
    p.add_argument("--verify", action="store_true",
                   help="check against the serial Dijkstra; exit status 1 if they differ")
    add_shared_options(p, seed=True, json=True, output="the distances (float64 .npy)",
                       output_metavar="DIST.npy")
    p.set_defaults(func=run)


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
        # the search needs weights >= 0: refuse others naming the file and line
        if ctx.mpi:
            from graphpar.mpi import read_graph

            return read_graph(args.graph_file, args.format, weights="nonnegative",
                              comm=ctx.comm), str(args.graph_file)
        from graphpar.io import read_graph

        return read_graph(args.graph_file, format=args.format,
                          weights="nonnegative"), str(args.graph_file)

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

        sssp(tiny, 0)


def _search(searched, source: int, delta, limit: float, ctx):
    """Run the search; return this process's distances and the :class:`graphpar.SSSPStats`."""
    if ctx.mpi:
        from graphpar.mpi import sssp
    else:
        from graphpar import sssp
    # searched is already symmetrised with --undirected: searched as it is
    return sssp(searched, source, delta=delta, limit=limit, return_stats=True)


def _verify(graph, source: int, dist, directed: bool, limit: float, ctx) -> bool:
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
    from graphpar._validation import check_sources

    graph, searched, name, load_time = _load(args, ctx)
    n = searched.gn if ctx.mpi else searched.n
    source = ctx.collectively(lambda: int(check_sources(args.source, n, name="--source")[0][0]))
    limit = np.inf if args.limit is None else args.limit
    _warm_up(ctx)
    dist, st = _search(searched, source, args.delta, limit, ctx)
    stats = {
        "graph": name,
        "vertices": st.vertices,
        "edges": st.edges,
        "directed": not args.undirected,
        "source": source,
        "delta": st.delta,
        "threads": st.threads,
        "reached": st.reached,
        "max_distance": st.max_distance,
        "time_s": st.seconds,
        "load_time_s": load_time,
        "mteps": st.mteps,
    }
    if ctx.mpi:
        stats.update(ranks=st.mpi.ranks, rounds=st.mpi.rounds, buckets=st.mpi.buckets,
                     bytes_exchanged=st.mpi.bytes_exchanged)
        dist = searched.gather_vertex_values(dist, root=0)  # None on the other ranks
    if args.output:
        ctx.write(lambda: np.save(args.output, dist))
    status = 0
    if args.verify:
        ok = _verify(graph, source, dist, not args.undirected, limit, ctx)
        stats["verified"] = ok
        status = 0 if ok else 1
    ctx.report(stats)
    return status


def demo(args) -> bool:
    """The SSSP part of ``graphpar demo``: Kronecker graph, 4 sources, each verified.

    Uses ``args.scale`` and ``args.seed`` (the demo's options, checked
    there); returns True when every search matched the serial Dijkstra.
    """
    from graphpar import generate, sssp, verify_sssp
    from graphpar.cli._driver import Context

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
    _warm_up(Context())
    all_ok = True
    for s in sources:
        dist, st = sssp(g, int(s), return_stats=True)
        ok = verify_sssp(g, int(s), dist, against_dijkstra=True)
        all_ok &= ok
        print(f"  source {int(s):>8}: reached {st.reached}, max distance "
              f"{st.max_distance:g}, {st.seconds * 1e3:.1f} ms, {st.mteps:.0f} MTEPS, "
              f"{'verified against Dijkstra' if ok else 'MISMATCH with Dijkstra'}")
    return bool(all_ok)
