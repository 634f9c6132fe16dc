"""Distributed aggregation (forward and transpose) against the serial kernel, under mpiexec.

Graphs of several sizes (some with fewer vertices than ranks, so ranks own no
rows), every partitioner, both exchange modes, float32 and float64, widths
below and above the kernel's register block.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import scipy.sparse as sp
from _common import close, run

from graphpar.kernels.aggregate import spmm
from graphpar.mpi import distribute_operator
from graphpar.mpi.halo import gather_volume, plan_from_global
from graphpar.threads import set_threads

METHODS = ["block", "edge", "random"]
if importlib.util.find_spec("pymetis"):
    METHODS.append("metis")
if importlib.util.find_spec("mtkahypar"):
    METHODS.append("hypergraph")


def graph(n, density, seed, directed):
    rng = np.random.default_rng(seed)
    a = sp.random_array((n, n), density=density, rng=rng, format="csr",
                        data_sampler=lambda size: rng.uniform(0.1, 1.0, size))
    if not directed:
        a = a + a.T
    return sp.csr_array(a + sp.eye_array(n))


def serial(op, H, dtype, transpose):
    m = sp.csr_array(op.T) if transpose else op
    out = np.empty((m.shape[0], H.shape[1]), dtype=dtype)
    spmm(m.indptr.astype(np.int64), m.indices.astype(np.int32), m.data.astype(dtype),
         np.ascontiguousarray(H, dtype=dtype), out)
    return out


def main(comm):
    set_threads(None)
    checks = 0
    cases = [(2, 0.5, True), (7, 0.3, False), (60, 0.08, True), (200, 0.02, False)]
    for ci, (n, density, directed) in enumerate(cases):
        op = graph(n, density, ci, directed)
        for method in METHODS:
            variants = [(None, None), ("p2p", None), ("allgather", None)]
            if not directed:  # the reverse plan on a symmetric operator too
                variants += [("p2p", False), ("allgather", False)]
            for mode, symmetric in variants:
                dtype = np.float32 if (checks % 2 == 0) else np.float64
                dop = distribute_operator(op, method=method, seed=1, comm=comm, dtype=dtype,
                                          mode=mode, symmetric=symmetric)
                assert dop.symmetric == (not directed and symmetric is None)
                # the collective plan equals the one computed from the global operator
                ref_plan = plan_from_global(dop.relabelling.permute_operator(op),
                                            dop.relabelling.offsets, mode=mode)[comm.Get_rank()]
                assert np.array_equal(ref_plan.halo, dop.plan.halo)
                assert np.array_equal(ref_plan.send_idx, dop.plan.send_idx)
                assert ref_plan.mode == dop.plan.mode
                vol = gather_volume(dop.plan, comm, width=4)
                assert vol.total_rows == sum(p.recv_rows for p in plan_from_global(
                    dop.relabelling.permute_operator(op), dop.relabelling.offsets, mode=mode))
                for width in (1, 5, 40):
                    rng = np.random.default_rng(100 + width)
                    H = rng.standard_normal((n, width)).astype(dtype)
                    rel = 1e-6 if dtype == np.float32 else 1e-12
                    for transpose in (False, True):
                        for _ in range(2):  # reuse of the cached buffers
                            y = dop.aggregate(dop.scatter_rows(H), transpose=transpose)
                            got = dop.gather_rows(y)
                            close(got, serial(op, H, dtype, transpose), rel,
                                  f"n={n} {method} {mode} {dtype.__name__} w={width} "
                                  f"T={transpose}")
                            checks += 1
    # bad input is refused with a clear error
    dop = distribute_operator(graph(10, 0.2, 9, True), comm=comm)
    bad = [(np.zeros((dop.nloc + 1, 2), dtype=np.float32), ValueError, "must have shape"),
           (np.zeros((dop.nloc, 2), dtype=np.float64), TypeError, "dtype")]
    for H, kind, msg in bad:
        try:
            dop.aggregate(H)
        except kind as exc:
            assert msg in str(exc), exc
            checks += 1
        else:
            raise AssertionError(f"no {kind.__name__} for {H.dtype} {H.shape}")
    return checks


if __name__ == "__main__":
    run(main)
