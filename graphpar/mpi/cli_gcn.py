"""``mpiexec -n K graphpar gcn ...``: the distributed path of the ``gcn`` subcommand.

:mod:`graphpar.cli.gcn` hands over to :func:`run_distributed` under ``mpiexec``.
Every rank loads the data set (Planetoid graphs are small); the vertices are
partitioned with ``--partition`` (``metis`` by default when ``pymetis`` is
installed, else ``block``); training runs with
:func:`graphpar.mpi.gcn.train_gcn_distributed`. Rank 0 prints the serial
report plus the partition, the halo of one feature column and the bytes sent
per epoch.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

from graphpar.mpi.partitioners import METHODS

__all__ = ["run_distributed", "partition_method"]

ENV_PARTITION = "GRAPHPAR_PARTITION"


def partition_method(args) -> str:
    """The partitioner: ``args.partition``, else ``$GRAPHPAR_PARTITION``, else
    ``metis`` when pymetis is installed, else ``block``.

    Examples
    --------
    >>> import argparse
    >>> partition_method(argparse.Namespace(partition="hypergraph"))
    'hypergraph'
    """
    method = getattr(args, "partition", None) or os.environ.get(ENV_PARTITION, "").strip()
    if not method:
        method = "metis" if importlib.util.find_spec("pymetis") else "block"
    if method not in METHODS:
        raise ValueError(f"--partition must be one of {', '.join(METHODS)}; got {method!r}")
    return method


def run_distributed(args) -> int:
    """Run ``graphpar gcn`` across the ranks of ``COMM_WORLD``; return the exit status.

    Examples
    --------
    >>> run_distributed(args)  # under mpiexec, from graphpar.cli.gcn  # doctest: +SKIP
    0
    """
    from graphpar.cli.gcn import _Progress, load, print_report, report_fields
    from graphpar.mpi.comm import get_comm, run_collectively, setup_threads
    from graphpar.mpi.gcn import train_gcn_distributed

    comm = get_comm()
    rank = comm.Get_rank()
    threads = setup_threads(getattr(args, "threads", None), comm)
    method = run_collectively(lambda: partition_method(args), comm)
    def load_here(first: bool):
        # rank 0 loads first (and downloads when allowed); then the others read its files
        if (rank == 0) != first:
            return None
        return load(args.dataset, args.data_dir, download=first and not args.no_download,
                    seed=args.seed)

    data0 = run_collectively(lambda: load_here(True), comm)
    data1 = run_collectively(lambda: load_here(False), comm)
    data = data0 if rank == 0 else data1
    progress = rank == 0 and not args.json and sys.stdout.isatty()
    bar = _Progress(args.epochs, sys.stdout) if progress else None
    try:
        res = run_collectively(lambda: train_gcn_distributed(
            data, hidden=args.hidden, epochs=args.epochs, lr=args.lr, dropout=args.dropout,
            weight_decay=args.weight_decay, early_stopping=args.early_stopping,
            seed=args.seed, method=method, comm=comm, callback=bar), comm)
    finally:
        if bar is not None:
            bar.close()
    vol = res.halo_volume
    out = report_fields(args, data, res, threads)
    out.update({
        "ranks": comm.Get_size(),
        "partition": method,
        "exchange": res.exchange_mode,
        "halo_rows_total": vol.total_rows,
        "halo_rows_largest": vol.largest_rows,
        "halo_bytes_per_epoch": int(res.halo_bytes_per_epoch),
        "allreduce_bytes_per_epoch": int(res.allreduce_bytes_per_epoch),
    })
    if rank != 0:
        return 0
    if args.json:
        print(json.dumps(out))
        return 0
    print_report(args, out)
    print(f"{comm.Get_size()} ranks, partition {method} ({res.exchange_mode} exchange): halo "
          f"{vol.total_rows} rows in total, at most {vol.largest_rows} per rank; "
          f"{_fmt(res.halo_bytes_per_epoch)} of halo rows (all ranks) and "
          f"{_fmt(res.allreduce_bytes_per_epoch)} of gradients (per rank) per epoch")
    return 0


def _fmt(b: float) -> str:
    for unit, size in (("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:.1f} {unit}"
    return f"{int(b)} B"
