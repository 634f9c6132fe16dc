"""``graphpar sssp``: delta-stepping shortest paths from one source of a graph file.

Prints the vertices reached, the largest finite distance, the time and the
MTEPS, where the edges counted are the stored (directed) edges leaving the
reached vertices, each counted once, over the time of the search alone
(reading the graph and compiling are excluded).
Under ``mpiexec`` the distributed implementation takes over
(:mod:`graphpar.mpi.cli_sssp`).
"""

from __future__ import annotations

import json
import math
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


def _generate(spec: str, seed: int):
    from graphpar import generate
    from graphpar.limits import check_memory

    kind, a, b, n, m, directed = generate_size(spec)
    # the search needs a few more vertex-sized arrays than the generator
    check_memory(generate.generation_bytes(n, m, directed) + 32 * n,
                 what=f"--generate {spec} ({n} vertices, {m} edges)")
    if kind == "kron":
        return generate.kronecker(a, b, seed=seed)
    if kind == "uniform":
        return generate.uniform(a, b, seed=seed)
    return generate.grid_road(a, b, seed=seed)


def register(sub) -> None:
    """Add the ``sssp`` subcommand to ``sub``."""
    import argparse

    from graphpar.cli import int_in

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
    p.add_argument("--seed", type=int_in(0, 2**64 - 1), default=0,
                   help="seed for --generate (default 0)")
    p.add_argument("--format", default=None, help="file format when the suffix does not say")
    p.add_argument("--source", type=int, default=0, help="source vertex, 0-based (default 0)")
    p.add_argument("--delta", type=float, default=None,
                   help="bucket width (default: 2 * max weight / mean degree)")
    p.add_argument("--limit", type=float, default=None,
                   help="treat vertices farther than this as unreachable")
    p.add_argument("--undirected", action="store_true", help="use every edge both ways")
    p.add_argument("--threads", type=int_in(1), default=None,
                   help="Numba threads (default: all)")
    p.add_argument("--output", metavar="DIST.npy", help="save the distances (float64 .npy)")
    p.add_argument("--verify", action="store_true",
                   help="check against the serial Dijkstra; exit status 1 if they differ")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _plain(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def print_report(stats: dict, as_json: bool) -> None:
    """Print every entry of ``stats``: one JSON object, or one ``key: value`` line each.

    Examples
    --------
    >>> print_report({"reached": 3, "time_s": 0.0012345}, as_json=False)
    reached: 3
    time_s:  0.0012345
    >>> print_report({"reached": 3, "max_distance": np.float64(7.0)}, as_json=True)
    {"reached": 3, "max_distance": 7.0}
    """
    if as_json:
        print(json.dumps({k: _plain(v) for k, v in stats.items()}))
        return
    width = max((len(k) for k in stats), default=0) + 1
    for key, value in stats.items():
        value = _plain(value)
        text = f"{value:.6g}" if isinstance(value, float) else str(value)
        print(f"{key + ':':<{width}} {text}")


def _load(args):
    """Read or generate the graph and check it.

    Returns ``(graph, searched, name, seconds, max weight)``: the graph as read
    or generated, the checked graph the search runs on (symmetrised with
    ``--undirected``), its name, the time taken and its largest finite weight.
    """
    from graphpar._validation import _validate_with_max_weight

    t0 = time.perf_counter()
    if args.generate:
        if args.graph_file:
            raise ValueError("give either GRAPH_FILE or --generate, not both")
        g = _generate(args.generate, args.seed)
        name = args.generate
    elif args.graph_file:
        from graphpar.io import read_graph

        # the search needs weights >= 0: refuse others naming the file and line
        g = read_graph(args.graph_file, format=args.format, weights="nonnegative")
        name = str(args.graph_file)
    else:
        raise ValueError("give a GRAPH_FILE or --generate SPEC")
    searched, wmax = _validate_with_max_weight(g, not args.undirected, "nonnegative",
                                               "csgraph")
    return g, searched, name, time.perf_counter() - t0, wmax


def _warm_up() -> None:
    """Load the compiled kernels on a tiny graph so that the timed search excludes it."""
    from graphpar.graph import Graph
    from graphpar.shortest_paths import sssp

    sssp(Graph.from_edges([0, 1], [1, 2], [1.0, 2.0]), 0)


def run(args) -> int:
    """Run ``graphpar sssp``; return the exit status."""
    from graphpar.mpi import launched_under_mpi

    if launched_under_mpi():
        from graphpar.mpi.cli_sssp import run_distributed

        return run_distributed(args)

    from graphpar._validation import check_sources
    from graphpar.shortest_paths import _solve, verify_sssp
    from graphpar.threads import set_threads

    threads = set_threads(args.threads)
    graph, g, name, load_time, wmax = _load(args)
    sources, _ = check_sources(args.source, g.n, name="--source")
    from graphpar.shortest_paths import _check_delta, _check_limit

    delta = _check_delta(args.delta)
    limit = _check_limit(np.inf if args.limit is None else args.limit)
    _warm_up()
    info: dict = {}
    t0 = time.perf_counter()
    dist, _ = _solve(g, sources, "delta-stepping", delta, limit, threads, False, info, wmax)
    elapsed = time.perf_counter() - t0
    dist = dist[0]
    finite = np.isfinite(dist)
    traversed = int(np.diff(g.indptr)[finite].sum())
    stats = {
        "graph": name,
        "vertices": g.n,
        "edges": g.nnz,
        "directed": not args.undirected,
        "source": int(sources[0]),
        "delta": info["delta"],
        "threads": threads,
        "reached": int(finite.sum()),
        "max_distance": float(dist[finite].max()),
        "time_s": elapsed,
        "load_time_s": load_time,
        "mteps": traversed / elapsed / 1e6 if elapsed > 0 else float("inf"),
    }
    if args.output:
        np.save(args.output, dist)
    status = 0
    if args.verify:
        # the graph the user asked for, checked on its own, not the one searched
        ok = verify_sssp(graph, int(sources[0]), dist, directed=not args.undirected,
                         limit=limit, against_dijkstra=True)
        stats["verified"] = ok
        status = 0 if ok else 1
    print_report(stats, args.json)
    return status


def demo(args) -> bool:
    """The SSSP part of ``graphpar demo``: Kronecker graph, 4 sources, each verified.

    Uses ``args.scale`` and ``args.seed`` (the demo's options, checked
    there); returns True when every search matched the serial Dijkstra.
    """
    from graphpar import generate
    from graphpar.shortest_paths import _solve, verify_sssp
    from graphpar.threads import get_threads

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
    _warm_up()
    all_ok = True
    for s in sources:
        info: dict = {}
        t0 = time.perf_counter()
        dist, _ = _solve(g, np.array([s]), "delta-stepping", None, np.inf, get_threads(),
                         False, info)
        elapsed = time.perf_counter() - t0
        dist = dist[0]
        finite = np.isfinite(dist)
        traversed = int(deg[finite].sum())
        ok = verify_sssp(g, int(s), dist, against_dijkstra=True)
        all_ok &= ok
        print(f"  source {int(s):>8}: reached {int(finite.sum())}, max distance "
              f"{float(dist[finite].max()):g}, {elapsed * 1e3:.1f} ms, "
              f"{traversed / elapsed / 1e6:.0f} MTEPS, "
              f"{'verified against Dijkstra' if ok else 'MISMATCH with Dijkstra'}")
    return bool(all_ok)
