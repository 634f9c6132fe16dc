"""``mpiexec -n K graphpar cox DATA ...``: the distributed path of the ``cox`` subcommand.

:mod:`graphpar.cli.cox` hands over to :func:`run_distributed` under ``mpiexec``.
Each rank reads only its own rows of the table: a CSV file is cut into byte
ranges at line boundaries, an ``.npz`` is read by row range (a compressed
member in a stream), with the serial reader's own code
(:mod:`graphpar._cox_table`), so errors are the serial ones. The rows are then
sorted across the ranks in time order (:func:`graphpar.mpi.cox.distribute_cox`)
and the model is fitted with distributed likelihood evaluations. Rank 0 prints
the serial summary (:func:`graphpar.cli.cox.report`) followed by one line with
the ranks, the time per Newton iteration and the bytes each rank sent.
"""

from __future__ import annotations

import json
import os
import time

import numpy as np

__all__ = ["run_distributed", "read_table_rows"]


def read_table_rows(path: str, comm=None) -> tuple[dict[str, np.ndarray], int]:
    """Read this rank's rows of a CSV or ``.npz`` table. Collective.

    Returns ``(table, global index of the first row)``: a
    :class:`graphpar._cox_table.Table`; the ranks' rows, concatenated in rank
    order, are the whole table. The serial reader's own code reads each
    rank's share (a CSV file's lines whose first byte lies in the rank's byte
    range, numbered from the line counts of the lower ranks; an ``.npz``
    file's row range), so every error is the serial one: the first problem of
    the file, naming the file, the line (or array and index) and the column,
    raised on every rank.

    Examples
    --------
    >>> table, row0 = read_table_rows("patients.csv")  # doctest: +SKIP
    """
    from graphpar._cox_table import CsvSource, byte_range, count_lines, parse_lines, read_npz
    from graphpar.mpi.comm import get_comm, run_collectively

    comm = get_comm(comm)
    path = os.fspath(path)
    rank, nranks = comm.Get_rank(), comm.Get_size()
    if path.lower().endswith(".npz"):
        table = run_collectively(lambda: read_npz(path, rank, nranks), comm)
        return table, table.first_row

    def read_block():
        with CsvSource(path) as src:
            return src.names, src.lines(*byte_range(src, rank, nranks))

    names, block = run_collectively(read_block, comm)
    before = comm.exscan(count_lines(block))
    first_line = 2 + (0 if rank == 0 or before is None else int(before))
    table = run_collectively(lambda: parse_lines(path, names, block, first_line), comm)
    return table, first_line - 2


def run_distributed(args) -> int:
    """Run ``graphpar cox`` across the ranks of ``COMM_WORLD``; return the exit status.

    Examples
    --------
    >>> run_distributed(args)  # under mpiexec, from graphpar.cli.cox  # doctest: +SKIP
    0
    """
    from mpi4py import MPI

    from graphpar.cli.cox import fit_args, report
    from graphpar.mpi.comm import get_comm, run_collectively, setup_threads
    from graphpar.mpi.cox import distribute_cox, fit_distributed

    comm = get_comm()
    threads = setup_threads(getattr(args, "threads", None), comm)
    t0 = time.perf_counter()

    table, row0 = read_table_rows(args.data, comm)
    kw = run_collectively(lambda: fit_args(args, table), comm)
    names = kw.pop("feature_names")
    data = distribute_cox(kw["X"], kw["time"], kw["event"], strata=kw["strata"],
                          weights=kw["weights"], offset=kw["offset"], comm=comm, row0=row0)
    load_s = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    comm.Barrier()
    t1 = time.perf_counter()
    model = run_collectively(lambda: fit_distributed(data, ties=args.ties, penalizer=args.penalizer,
                                                feature_names=names), comm)
    seconds = comm.allreduce(time.perf_counter() - t1, op=MPI.MAX)
    per_eval = float(np.median(model.seconds_per_eval_)) if model.seconds_per_eval_ else 0.0
    sent = comm.allreduce(model.bytes_moved_, op=MPI.MAX)
    if comm.Get_rank() == 0:
        if args.json:
            d = model.summary().to_dict()
            d.update(seconds=seconds, ranks=comm.Get_size(), threads_per_rank=threads,
                     seconds_per_evaluation=per_eval, bytes_sent_per_rank=sent,
                     load_seconds=load_s)
            print(json.dumps(d))
        else:
            report(model, False, seconds)
            print(f"{comm.Get_size()} ranks x {threads} threads; {per_eval * 1e3:.2f} ms per "
                  f"likelihood evaluation (median of {len(model.seconds_per_eval_)}); at most "
                  f"{sent} bytes sent per rank; rows read and sorted in {load_s:.3f} s")
    return 0
