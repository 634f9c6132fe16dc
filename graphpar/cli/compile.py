"""``graphpar compile``: compile every kernel ahead of time into Numba's on-disk cache.

Runs every public workload on tiny inputs with each dtype variant
(:func:`graphpar._compile.compile_kernels`), and the MPI layer's distributed
kernels on a one-rank communicator when mpi4py is installed, so that the first
real run of a node or a cluster image loads its kernels instead of compiling
them. Serial only: under ``mpiexec`` with more than one rank it refuses.
"""

from __future__ import annotations

EXAMPLES = """examples:
  graphpar compile
  NUMBA_CACHE_DIR=/shared/graphpar-cache graphpar compile --json

Where the cache goes (Numba's rules, the first that applies): $NUMBA_CACHE_DIR;
else __pycache__ beside graphpar's kernels when it is writable; else the user's
cache, $XDG_CACHE_HOME/numba (default ~/.cache/numba). Later runs with the same
NUMBA_CACHE_DIR, Python, Numba and CPU load the kernels from there."""

NOT_UNDER_MPI = (
    "graphpar compile does not run under mpiexec (every rank would compile the same "
    "kernels); run it once without mpiexec on each node or image, with the same "
    "NUMBA_CACHE_DIR as the job"
)


def register(sub) -> None:
    """Add the ``compile`` subcommand to ``sub``."""
    import argparse

    from graphpar.cli._driver import add_shared_options

    p = sub.add_parser(
        "compile",
        help="compile every kernel ahead of time (warm the cache of a node or image)",
        description="Compile every Numba kernel graphpar uses into Numba's on-disk cache, "
        "so that later runs start at once, on small and large inputs alike: every workload "
        "runs on tiny data twice, the second time taking the paths of large inputs "
        "(compiled input checks, parallel steps, the Cox kernels' passes). A second run "
        "finds everything cached and compiles nothing.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_shared_options(p, json=True)
    p.add_argument("--no-mpi", action="store_true",
                   help="skip the MPI layer's kernels (default: compile them when mpi4py "
                   "is installed)")
    p.set_defaults(func=run)


def _mpi_warm_ups():
    """The distributed workloads on ``MPI.COMM_SELF``; empty without mpi4py."""
    try:
        from mpi4py import MPI
    except ImportError:
        return ()
    comm = MPI.COMM_SELF

    def warm_mpi() -> None:
        import warnings

        import numpy as np

        from graphpar import mpi
        from graphpar._compile import cox_data, cox_kernels_on_tiny_data, tiny_graph, wide_indices
        from graphpar.kernels import dist_sssp
        from graphpar.mpi import generate as mpi_generate
        from graphpar.threads import get_threads, set_threads

        g = tiny_graph()
        threads = get_threads()
        try:
            # one thread too: ranks sharing a node's cores run one each, and then the
            # distributed search takes its serial relaxations
            for n in sorted({threads, 1}):
                set_threads(n)
                for graph in (g, wide_indices(g)):
                    dg = mpi.distribute_graph(graph, comm=comm)
                    mpi.sssp(dg, 0)
                    dist = mpi.sssp(dg, [0, 1], directed=False, limit=3.0)
                    dg.gather_vertex_values(dist, root=0)
        finally:
            set_threads(threads)
        # requests from other ranks: none on COMM_SELF, so the kernel that applies them is
        # compiled here, with the argument types the distributed search passes
        ids, flags = np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int32)
        dist_sssp.apply_requests(np.zeros(0, dtype=np.int64), 0, False, 0, np.zeros(2), ids,
                                 1.0, 0, True, ids, 0, flags, ids, 0, flags)
        mpi_generate.kronecker(3, 2, seed=1, comm=comm)
        labels = np.array([0, 1, 0, 1, 0, 1])
        mask = np.array([True, True, True, False, False, False])
        # disjoint masks: the trainer warns about overlapping ones
        val = np.array([False, False, False, True, True, False])
        test = np.array([False, False, False, False, False, True])
        X = np.random.default_rng(0).random((6, 4))
        for dtype in (np.float32, np.float64):
            mpi.train_gcn(g, X, labels, mask, val, test, hidden=4, epochs=2, dtype=dtype,
                          comm=comm)
        Xc, t, e, strata = cox_data()
        with warnings.catch_warnings(), cox_kernels_on_tiny_data(mpi=True):
            warnings.simplefilter("ignore")
            for ties in ("efron", "breslow"):
                mpi.CoxPH(ties=ties, comm=comm).fit(Xc, t, e)
                mpi.CoxPH(ties=ties, comm=comm).fit(Xc, t, e, strata=strata,
                                                    weights=np.full(t.size, 2.0))

    return (("MPI layer", warm_mpi),)


def run(args, ctx) -> int:
    """Run ``graphpar compile`` in the context ``ctx``; return the exit status."""
    from graphpar._compile import compile_kernels

    ctx.refuse_mpi(NOT_UNDER_MPI)
    extra = () if args.no_mpi else _mpi_warm_ups()
    summary = compile_kernels(extra=extra, progress=ctx.shows_progress)
    fields = summary.to_dict()
    fields["threads"] = ctx.threads

    def text(f):
        done = ("compiled " + str(f["compiled"]) if f["compiled"]
                else "all were cached, compiled none")
        print(f"{f['kernels']} kernel signatures cached ({done}) in {f['seconds']:.1f} s "
              f"({f['cpu_seconds']:.1f} s CPU)")
        print(f"cache: {f['cache_dir']}")

    ctx.report(fields, text)
    return 0
