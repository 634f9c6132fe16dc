"""``graphpar generate {kron,uniform,grid,delaunay,sbm} ... -o FILE``: make a graph, write it.

Serial only: under ``mpiexec`` with more than one rank it refuses (every rank
would write the same file); ``graphpar sssp --generate`` generates in parallel.
"""

from __future__ import annotations

import time

EXAMPLES = """examples:
  graphpar generate kron --scale 20 -o kron20.npz
  graphpar generate kron --scale 16 --edgefactor 8 --weights real --seed 3 -o k16.mtx
  graphpar generate uniform --n 100000 --m 1000000 -o u.gr.gz
  graphpar generate grid --rows 1000 -o road.gr
  graphpar generate delaunay --points 400000 -o tri.gr
  graphpar generate sbm --blocks 500,500,500 --p-in 0.02 --p-out 0.001 -o s.npz --labels y.npy

The output format follows the suffix: .gr, .mtx, .el/.txt, .wel or .npz, optionally
followed by .gz, .bz2 or .xz (or give --format).

Sizes are checked before anything is allocated: a graph that would need more
memory than GRAPHPAR_MAX_MEMORY (default 80% of RAM) is refused; set it to raise
the limit. Runs serially only, not under mpiexec."""

NOT_UNDER_MPI = (
    "graphpar generate does not run under mpiexec (every rank would write the same file); "
    "run it without mpiexec, or use 'graphpar sssp --generate' for distributed generation"
)


def _weights(text: str):
    import argparse

    key = text.lower()
    if key not in ("int", "real", "none"):
        raise argparse.ArgumentTypeError(f"expected int, real or none, got {text!r}")
    return None if key == "none" else key


def _blocks(text: str) -> list[int]:
    import argparse

    try:
        sizes = [int(x) for x in text.split(",")]  # an empty item is an error, not skipped
    except ValueError:
        sizes = None
    if not sizes or min(sizes) < 0:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers >= 0 like 100,100, got {text!r}"
        )
    return sizes


def _positive(text: str) -> float:
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0.0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return value


def _probability(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a probability in [0, 1], got {text!r}")
    return value


def register(sub) -> None:
    """Add the ``generate`` subcommand to ``sub``."""
    from graphpar.cli import int_in
    from graphpar.cli._driver import add_shared_options
    from graphpar.limits import MAX_SCALE

    p = sub.add_parser(
        "generate",
        help="generate a graph (Kronecker, uniform, grid road, Delaunay road, SBM) and write it "
        "to a file",
        description="Generate a graph and write it in the format given by the output suffix. "
        "The same seed gives the same graph for any number of threads.",
        epilog=EXAMPLES,
        formatter_class=_raw(),
    )
    kinds = p.add_subparsers(dest="generator", metavar="GENERATOR", required=True)

    k = kinds.add_parser("kron", help="Graph500 Kronecker graph (undirected by default)",
                         description="Graph500 Kronecker graph: 2**scale vertices, "
                         "edgefactor * 2**scale generated edges, relabelled vertices.")
    k.add_argument("--scale", type=int_in(1, MAX_SCALE), required=True,
                   help=f"log2 of the number of vertices, 1 to {MAX_SCALE}")
    k.add_argument("--edgefactor", type=int_in(0), default=16,
                   help="edges per vertex (default 16)")
    k.add_argument("-a", type=_probability, default=0.57, help="quadrant probability A (0.57)")
    k.add_argument("-b", type=_probability, default=0.19, help="quadrant probability B (0.19)")
    k.add_argument("-c", type=_probability, default=0.19, help="quadrant probability C (0.19)")
    k.add_argument("--directed", action="store_true", help="keep edges one way only")
    _weight_args(k)

    u = kinds.add_parser("uniform", help="uniform random endpoints (directed by default)",
                         description="m edges with independent uniform endpoints in [0, n).")
    u.add_argument("--n", type=int_in(1), required=True, help="number of vertices")
    u.add_argument("--m", type=int_in(0), required=True, help="number of generated edges")
    u.add_argument("--undirected", action="store_true", help="store every edge both ways")
    _weight_args(u)

    g = kinds.add_parser("grid", help="road-like 2-D grid with integer weights (undirected)",
                         description="Undirected rows x cols 4-neighbour grid, integer "
                         "weights uniform on 1..max-weight.")
    g.add_argument("--rows", type=int_in(1), required=True, help="grid rows")
    g.add_argument("--cols", type=int_in(1), default=None,
                   help="grid columns (default: rows)")
    g.add_argument("--max-weight", type=int_in(1, 2**53), default=255,
                   help="largest weight (default 255)")

    d = kinds.add_parser("delaunay", help="road-like planar triangulation, mean degree 3 "
                         "(undirected)",
                         description="Delaunay triangulation of uniform random points in a "
                         "square, kept as its minimum spanning tree plus each other edge with "
                         "probability --extra; weights are edge lengths times U[1, 1.6].")
    d.add_argument("--points", type=int_in(3), required=True, help="number of vertices")
    d.add_argument("--extra", type=_probability, default=0.25,
                   help="probability of keeping an edge outside the tree (default 0.25)")
    d.add_argument("--weights", type=_weights, default="int", metavar="{int,real,none}",
                   help="int: lengths rounded, at least 1 (default); real: lengths; none: all 1")
    d.add_argument("--side", type=_positive, default=1e6,
                   help="side of the square, the scale of the weights (default 1e6)")

    s = kinds.add_parser("sbm", help="stochastic block model with planted labels",
                         description="Undirected, unweighted stochastic block model.")
    s.add_argument("--blocks", type=_blocks, required=True,
                   help="comma-separated block sizes, e.g. 500,500,500")
    s.add_argument("--p-in", type=_probability, required=True,
                   help="edge probability within a block")
    s.add_argument("--p-out", type=_probability, required=True,
                   help="edge probability across blocks")
    s.add_argument("--labels", default=None, help="also save the block labels to this .npy")

    for q in (k, u, g, d, s):
        add_shared_options(q, seed=True, json=True, output="the graph (format by suffix)",
                           output_required=True)
        q.add_argument("--format", default=None,
                       help="output format if not the suffix: gr, mtx, el, wel, npz")
        q.set_defaults(func=run)


def _raw():
    import argparse

    return argparse.RawDescriptionHelpFormatter


def _weight_args(parser) -> None:
    from graphpar.cli import int_in

    parser.add_argument("--weights", type=_weights, default="int", metavar="{int,real,none}",
                        help="int: 1..max-weight (default); real: (0, 1]; none: all 1")
    parser.add_argument("--max-weight", type=int_in(1, 2**53), default=255,
                        help="largest integer weight (default 255)")


def run(args, ctx) -> int:
    """Run ``graphpar generate`` in the context ``ctx``; return the exit status."""
    from graphpar import generate
    from graphpar.io import detect_format, write_graph

    ctx.refuse_mpi(NOT_UNDER_MPI)
    fmt, comp = detect_format(args.output, args.format)  # a bad suffix fails before any work
    if args.generator == "sbm" and args.labels is not None and not args.labels.endswith(".npy"):
        raise ValueError(f"--labels must name a .npy file, got {args.labels!r}")
    _check_size(args)
    progress = ctx.shows_progress
    t0 = time.perf_counter()
    labels = None
    if args.generator == "kron":
        graph = generate.kronecker(
            args.scale, args.edgefactor, seed=args.seed, a=args.a, b=args.b, c=args.c,
            weights=args.weights, max_weight=args.max_weight, directed=args.directed,
            progress=progress,
        )
    elif args.generator == "uniform":
        graph = generate.uniform(
            args.n, args.m, seed=args.seed, weights=args.weights,
            max_weight=args.max_weight, directed=not args.undirected, progress=progress,
        )
    elif args.generator == "grid":
        graph = generate.grid_road(args.rows, args.cols, seed=args.seed,
                                   max_weight=args.max_weight, progress=progress)
    elif args.generator == "delaunay":
        graph = generate.delaunay_road(args.points, seed=args.seed, extra=args.extra,
                                       weights=args.weights, side=args.side,
                                       progress=progress)
    else:
        graph, labels = generate.sbm(args.blocks, args.p_in, args.p_out, seed=args.seed,
                                     progress=progress)
    t1 = time.perf_counter()
    # each file is written beside its name and renamed when complete (atomic)
    write_graph(graph, args.output, fmt)
    if labels is not None and args.labels is not None:
        import numpy as np

        ctx.write(lambda f: np.save(f, labels), args.labels)
    t2 = time.perf_counter()
    fields = {
        "generator": args.generator, "vertices": graph.n, "edges": graph.nnz,
        "directed": graph.directed, "seed": args.seed, "threads": ctx.threads,
        "generate_time_s": t1 - t0, "write_time_s": t2 - t1, "output": args.output,
        "format": fmt + (comp or ""),
    }
    if labels is not None and args.labels is not None:
        fields["labels"] = args.labels

    def text(f):
        kind = "directed" if f["directed"] else "undirected"
        print(f"{f['generator']}: n={f['vertices']} nnz={f['edges']} ({kind}) generated in "
              f"{f['generate_time_s']:.2f} s ({f['threads']} threads), wrote {f['output']} "
              f"({f['format']}) in {f['write_time_s']:.2f} s")

    ctx.report(fields, text)
    return 0


def _check_size(args) -> None:
    """Refuse, before generating, a graph that would not fit the memory budget.

    The message names the options and the value that set the size.
    """
    from graphpar.generate import generation_bytes
    from graphpar.limits import check_memory

    if args.generator == "kron":
        n, m, directed = 1 << args.scale, args.edgefactor << args.scale, args.directed
        what = f"--scale {args.scale} --edgefactor {args.edgefactor}"
    elif args.generator == "uniform":
        n, m, directed = args.n, args.m, not args.undirected
        what = f"--n {args.n} --m {args.m}"
    elif args.generator == "grid":
        cols = args.rows if args.cols is None else args.cols
        n, m, directed = args.rows * cols, args.rows * (cols - 1) + (args.rows - 1) * cols, False
        what = f"--rows {args.rows} --cols {cols}"
    elif args.generator == "delaunay":
        from graphpar.generate import delaunay_bytes

        check_memory(delaunay_bytes(args.points),
                     what=f"--points {args.points} ({args.points} vertices)")
        return
    else:
        from graphpar.generate import sbm_size

        n, m = sbm_size(args.blocks, args.p_in, args.p_out)
        directed = False
        what = f"--blocks with {n} vertices, --p-in {args.p_in} --p-out {args.p_out}"
    check_memory(generation_bytes(n, m, directed), what=f"{what} ({n} vertices, {m} edges)")
