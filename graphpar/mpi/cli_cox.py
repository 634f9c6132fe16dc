"""``mpiexec -n K graphpar cox DATA ...``: the distributed path of the ``cox`` subcommand.

:mod:`graphpar.cli.cox` hands over to :func:`run_distributed` under ``mpiexec``.
Each rank reads only its own rows of the table: a CSV file is cut into byte
ranges at line boundaries, an uncompressed ``.npz`` is memory-mapped and
sliced (a compressed one is decompressed and sliced). The rows are then
sorted across the ranks in time order (:func:`graphpar.mpi.cox.distribute_cox`)
and the model is fitted with distributed likelihood evaluations. Rank 0 prints
the serial summary (:func:`graphpar.cli.cox.report`) followed by one line with
the ranks, the time per Newton iteration and the bytes each rank sent.
"""

from __future__ import annotations

import io
import json
import os
import time
import zipfile

import numpy as np

__all__ = ["run_distributed", "read_table_rows"]


def _byte_range(size: int, start0: int, rank: int, nranks: int) -> tuple[int, int]:
    body = size - start0
    return start0 + body * rank // nranks, start0 + body * (rank + 1) // nranks


def _read_csv_rows(path: str, comm) -> tuple[dict[str, np.ndarray], int]:
    """This rank's lines of a CSV file: those whose first byte lies in its byte range."""
    from graphpar._cox_table import _cells

    with open(path, "rb") as f:
        header = f.readline()
        if not header.strip():
            raise ValueError(f"{path}, line 1: empty file (expected a header of column names)")
        names = _cells(header.decode("utf-8"))
        for j, nm in enumerate(names):
            if nm == "":
                raise ValueError(f"{path}, line 1, column {j + 1}: empty column name")
        if len(set(names)) != len(names):
            dup = next(nm for j, nm in enumerate(names) if nm in names[:j])
            raise ValueError(f"{path}, line 1, column {names.index(dup, names.index(dup) + 1) + 1}"
                             f": duplicate column name {dup!r}")
        size = os.fstat(f.fileno()).st_size
        lo, hi = _byte_range(size, len(header), comm.Get_rank(), comm.Get_size())
        if lo > len(header):
            f.seek(lo - 1)
            if f.read(1) != b"\n":
                f.readline()  # the line that started before lo belongs to the previous rank
        start = f.tell()
        text = f.read(max(hi - start, 0)) if start < hi else b""
        if text and not text.endswith(b"\n"):
            text += f.readline()  # finish the last line that starts in the range
    nlines = text.count(b"\n") + (1 if text and not text.endswith(b"\n") else 0)
    first = comm.exscan(nlines)
    first_line = 2 + (0 if comm.Get_rank() == 0 or first is None else int(first))
    ncol = len(names)
    try:
        data = np.loadtxt(io.BytesIO(text), delimiter=",", ndmin=2, dtype=np.float64,
                          encoding="utf-8", quotechar='"') if text.strip() else np.empty((0, ncol))
        if data.size == 0:
            data = np.empty((0, ncol))
        bad = data.shape[1] != ncol
    except ValueError:
        bad = True
    if bad:
        _locate_error(path, names, text, first_line)
        raise ValueError(f"{path}: rows have a different number of fields than the header")
    return {nm: np.ascontiguousarray(data[:, j]) for j, nm in enumerate(names)}, first_line - 2


def _locate_error(path, names, text: bytes, first_line: int) -> None:
    """Raise a ValueError naming the file, line and column of the first bad cell."""
    from graphpar._cox_table import raise_first_bad_line

    lines = text.decode("utf-8").splitlines()
    raise_first_bad_line(path, names, enumerate(lines, start=first_line))


def _npy_header(m):
    fmt = np.lib.format
    version = fmt.read_magic(m)
    if version == (1, 0):
        return fmt.read_array_header_1_0(m)
    return fmt.read_array_header_2_0(m)


def _npz_member(zf: zipfile.ZipFile, path: str, name: str, lo: int, hi: int):
    """Rows ``lo:hi`` of one 1-D array of an ``.npz``, memory-mapped when it is stored."""
    info = zf.getinfo(name)
    with zf.open(info) as m:
        shape, _, dtype = _npy_header(m)
        header_len = m.tell()
    key = name[:-4] if name.endswith(".npy") else name
    if len(shape) != 1:
        raise ValueError(f"{path}: array {key!r} must be 1-D (one column), got shape {shape}")
    if not (np.issubdtype(dtype, np.number) or dtype.kind == "b") or dtype.hasobject:
        raise ValueError(f"{path}: array {key!r} is not numeric (dtype {dtype})")
    if info.compress_type == zipfile.ZIP_STORED:
        with open(path, "rb") as raw:
            raw.seek(info.header_offset)
            local = raw.read(30)
            name_len = int.from_bytes(local[26:28], "little")
            extra_len = int.from_bytes(local[28:30], "little")
        offset = info.header_offset + 30 + name_len + extra_len + header_len
        n = shape[0]
        hi = min(hi, n)
        lo = min(lo, hi)
        mm = np.memmap(path, dtype=dtype, mode="r", offset=offset + lo * dtype.itemsize,
                       shape=(hi - lo,)) if hi > lo else np.zeros(0, dtype)
        return key, shape[0], np.asarray(mm, dtype=np.float64)
    with zf.open(info) as m:
        arr = np.lib.format.read_array(m, allow_pickle=False)
    return key, shape[0], np.asarray(arr[lo:hi], dtype=np.float64)


def _read_npz_rows(path: str, comm) -> tuple[dict[str, np.ndarray], int]:
    with zipfile.ZipFile(path) as zf:
        names = [nm for nm in zf.namelist() if nm.endswith(".npy")]
        if not names:
            raise ValueError(f"{path}: no arrays in the file")
        with zf.open(names[0]) as m:
            shape, _, _ = _npy_header(m)
        n = shape[0] if shape else 0
        lo = n * comm.Get_rank() // comm.Get_size()
        hi = n * (comm.Get_rank() + 1) // comm.Get_size()
        out = {}
        for nm in names:
            key, rows, col = _npz_member(zf, path, nm, lo, hi)
            if rows != n:
                raise ValueError(f"{path}: array {key!r} has {rows} rows, the others {n}")
            out[key] = col
    return out, lo


def read_table_rows(path: str, comm=None) -> tuple[dict[str, np.ndarray], int]:
    """Read this rank's rows of a CSV or ``.npz`` table. Collective.

    Returns ``({column: float64 rows}, global index of the first row)``; the
    ranks' rows, concatenated in rank order, are the whole table. Errors name
    the file, and for CSV the line and column, as the serial reader does.

    Examples
    --------
    >>> table, row0 = read_table_rows("patients.csv")  # doctest: +SKIP
    """
    from graphpar.mpi.halo import _comm

    comm = _comm(comm)
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise OSError(f"{path}: no such file")
    if path.endswith(".npz"):
        return _read_npz_rows(path, comm)
    return _read_csv_rows(path, comm)


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

    def load():
        table, row0 = read_table_rows(args.data, comm)
        return fit_args(args, table), row0

    kw, row0 = run_collectively(load, comm)
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
