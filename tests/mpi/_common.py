"""Helpers shared by the scripts of this folder, which the tests run under mpiexec.

:func:`run` is the one way a script reports a failure and ends the job;
:func:`close` and :func:`check_predecessors` are checks against references
(the latter also used in-process by tests/test_dist_local.py).
"""

from __future__ import annotations

import sys
import traceback


def run(main, *args) -> None:
    """Run ``main(comm, *args)``; on any exception print it with the rank and abort every rank.

    ``main`` returns its number of checks (or None); rank 0 then prints
    ``ALL OK: <total> checks on <size> ranks``.
    """
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    try:
        checks = main(comm, *args)
    except BaseException:  # noqa: BLE001 - any failure must end the whole job
        print(f"rank {comm.Get_rank()} FAILED:\n{traceback.format_exc()}", file=sys.stderr,
              flush=True)
        comm.Abort(1)
        return
    total = comm.allreduce(checks or 0)
    if comm.Get_rank() == 0:
        print(f"ALL OK: {total} checks on {comm.Get_size()} ranks", flush=True)


def close(got, ref, rel: float, what: str) -> None:
    """Assert max |got - ref| <= rel * max(|ref|, tiny), naming the check."""
    import numpy as np

    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        raise AssertionError(f"{what}: shape {got.shape} != {ref.shape}")
    if ref.size == 0:
        return
    scale = max(float(np.abs(ref).max()), 1e-300)
    err = float(np.abs(got - ref).max()) / scale
    if not err <= rel:
        raise AssertionError(f"{what}: relative error {err:.3g} > {rel:g}")


def check_predecessors(A, directed: bool, source: int, dist, pred) -> None:
    """Assert that ``pred`` is a shortest-path tree for ``dist`` on the scipy matrix ``A``.

    A slow, obvious reference (no graphpar code involved). Every reached vertex
    other than the source has a predecessor ``p`` with an edge ``(p, v)`` whose
    weight ``w`` gives ``dist[p] + w == dist[v]``; the source and the unreached
    vertices have ``-9999``; following predecessors from any vertex reaches the
    source.
    """
    import numpy as np

    A = A.tocsr()
    n = A.shape[0]
    best = {}
    coo = A.tocoo()
    for u, v, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist(), strict=True):
        pairs = [(u, v)] if directed else [(u, v), (v, u)]
        for a, b in pairs:
            best[(a, b)] = min(best.get((a, b), np.inf), w)
    for v in range(n):
        p = int(pred[v])
        if v == source or not np.isfinite(dist[v]):
            assert p == -9999, (v, p)
            continue
        assert (p, v) in best, f"pred[{v}] = {p} but there is no edge ({p}, {v})"
        assert dist[p] + best[(p, v)] == dist[v], (p, v, dist[p], best[(p, v)], dist[v])
        seen = 0
        x = v
        while x != source:
            x = int(pred[x])
            seen += 1
            assert seen <= n, f"predecessors from {v} form a cycle"


def expect_error(comm, fn, *needles):
    """``fn()`` must raise the same ValueError/TypeError on every rank, containing needles."""
    try:
        fn()
    except (ValueError, TypeError) as exc:
        msg = str(exc)
    else:
        raise AssertionError(f"no error; expected {needles}")
    for needle in needles:
        assert needle in msg, (needle, msg)
    assert comm.allgather(msg) == [msg] * comm.Get_size(), msg
    return 1
