"""The parallel reader gives what the serial one gives, file by file; run under mpiexec.

``python reader_agree.py DIR [RULE]``: for every file in DIR (sorted), rank 0
reads it with :func:`graphpar.read_graph` and every rank with
:func:`graphpar.mpi.io.read_graph` (``weights=RULE``, default
``nonnegative``). A valid file must give the same graph byte for byte
(gathered on rank 0); a bad one the same one-line message on every rank.
Rank 0 prints ``SAME <file>`` or ``DIFF <file>: <why>`` per file, then
``DONE <count>``; the exit status is 1 when any file differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from graphpar import read_graph
from graphpar.errors import error_message, is_user_error
from graphpar.mpi.comm import get_comm
from graphpar.mpi.io import read_graph as pread


def outcome(fn):
    try:
        return "graph", fn()
    except Exception as exc:  # noqa: BLE001 - a non-user error is reported as a difference
        kind = "error" if is_user_error(exc) else f"BUG {type(exc).__name__}"
        return kind, error_message(exc)


def same_graph(a, b) -> str | None:
    for name in ("n", "directed"):
        if getattr(a, name) != getattr(b, name):
            return f"{name}: serial {getattr(a, name)}, parallel {getattr(b, name)}"
    for name in ("indptr", "indices", "weights"):
        x, y = getattr(a, name), getattr(b, name)
        if x.shape != y.shape or not np.array_equal(x, y, equal_nan=True):
            return f"{name} differ"
    if (a.labels is None) != (b.labels is None):
        return f"labels: serial {a.labels}, parallel {b.labels}"
    if a.labels is not None and (a.labels.dtype != b.labels.dtype
                                 or not np.array_equal(a.labels, b.labels)):
        return f"labels: serial {a.labels[:5]} {a.labels.dtype}, parallel {b.labels[:5]} " \
               f"{b.labels.dtype}"
    return None


def verdict(serial, kind, value, messages) -> str | None:
    """Why rank 0's parallel outcome ``(kind, value)`` differs from the serial ``serial``
    (``(kind, value, ...)``), given every rank's ``messages``; None when it does not."""
    if any(k != kind or v != (value if kind != "graph" else None) for k, v in messages):
        return f"ranks disagree: {messages}"
    if kind != serial[0]:
        return f"serial {serial[:2]}, parallel {kind} {value}"
    if kind == "graph":
        return same_graph(serial[1], value)
    if value != serial[1]:
        return f"serial message {serial[1]!r}, parallel {value!r}"
    return None


def main(folder: str, rule: str = "nonnegative") -> int:
    comm = get_comm()
    rank = comm.Get_rank()
    bad = 0
    files = sorted(p for p in Path(folder).iterdir() if p.is_file())
    for path in files:
        serial = outcome(lambda p=path: read_graph(p, weights=rule)) if rank == 0 else None
        kind, value = outcome(lambda p=path: pread(p, weights=rule, comm=comm))
        if kind == "graph":
            value = value.gather(root=0)
        messages = comm.gather((kind, value if kind != "graph" else None), root=0)
        if rank != 0:
            continue
        why = verdict(serial, kind, value, messages)
        if why is None:
            print(f"SAME {path.name}", flush=True)
        else:
            bad += 1
            print(f"DIFF {path.name}: {why}", flush=True)
    if rank == 0:
        print(f"DONE {len(files)}", flush=True)
    return 1 if comm.bcast(bad, root=0) else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
