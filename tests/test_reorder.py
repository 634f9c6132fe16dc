"""graphpar.reorder: orderings against scipy and by definition, results in the caller's order."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

import graphpar as gp
from graphpar import aggregate, gcn_normalize, reorder
from graphpar._gcn import GCNOperator


def graph(rng, n, m):
    rows = rng.integers(0, n, m)
    cols = rng.integers(0, n, m)
    return sp.coo_array((rng.uniform(0.5, 2.0, m), (rows, cols)), shape=(n, n))


def bandwidth(A):
    coo = sp.coo_array(A)
    return int(np.abs(coo.row - coo.col).max())


@pytest.mark.parametrize("method", ["rcm", "degree"])
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_results_in_callers_order(method, dtype, rtol):
    rng = np.random.default_rng([3, len(method)])
    n = 500
    op = gcn_normalize(graph(rng, n, 4000), dtype=dtype)  # directed: op.T differs from op
    rop = reorder(op, method=method)
    assert isinstance(rop, gp.ReorderedOperator) and isinstance(rop.op, GCNOperator)
    assert rop.shape == op.shape and rop.dtype == op.dtype
    np.testing.assert_array_equal(np.sort(rop.perm), np.arange(n))
    np.testing.assert_array_equal(rop.inverse[rop.perm], np.arange(n))
    # the renumbered operator is op[perm][:, perm], value for value
    np.testing.assert_array_equal(rop.op.toarray(), op.toarray()[np.ix_(rop.perm, rop.perm)])
    for width in (1, 16, 64):
        H = rng.standard_normal((n, width)).astype(dtype)
        for transpose in (False, True):
            M = (op.T if transpose else op).astype(np.float64)
            ref = M @ H.astype(np.float64)
            absref = abs(M) @ np.abs(H.astype(np.float64))
            got = aggregate(rop, H, transpose=transpose)
            assert got.dtype == dtype and got.shape == (n, width)
            assert np.all(np.abs(got - ref) <= rtol * absref + 1e-300)
            # exactly the kernel on the renumbered problem, rows put back
            inner = aggregate(rop.op, H[rop.perm], transpose=transpose)
            np.testing.assert_array_equal(got, inner[rop.inverse])
            out = np.empty_like(got)
            assert aggregate(rop, H, transpose=transpose, out=out) is out
            np.testing.assert_array_equal(out, got)
    h = rng.standard_normal(n).astype(dtype)
    np.testing.assert_allclose(aggregate(rop, h), op @ h, rtol=rtol * 10, atol=rtol)


def test_rcm_is_scipys_and_narrows_the_band():
    rng = np.random.default_rng(1)
    n = 400
    # a shuffled path plus a few chords: RCM recovers a narrow band
    order = rng.permutation(n)
    rows = np.r_[order[:-1], order[1:]]
    cols = np.r_[order[1:], order[:-1]]
    A = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
    op = gcn_normalize(A, dtype=np.float64)
    rop = reorder(op)
    assert rop.method == "rcm"
    pattern = sp.csr_matrix((np.ones(op.nnz), op.indices, op.indptr), shape=op.shape)
    np.testing.assert_array_equal(rop.perm, reverse_cuthill_mckee(pattern, symmetric_mode=False))
    assert bandwidth(op) > 100 and bandwidth(rop.op) == 1


def test_degree_order_by_definition():
    rng = np.random.default_rng(2)
    op = gcn_normalize(graph(rng, 300, 2000))
    rop = reorder(op, method="degree")
    deg = np.diff(op.indptr)
    d = deg[rop.perm]
    assert np.all(np.diff(d) <= 0)  # decreasing stored entries per row
    for value in np.unique(d):  # ties keep the old order (a stable sort)
        same = rop.perm[d == value]
        assert np.all(np.diff(same) > 0)


def test_plain_sparse_and_dense_inputs():
    rng = np.random.default_rng(4)
    A = graph(rng, 60, 300)
    H = rng.standard_normal((60, 5))
    for src in (A, sp.csr_matrix(A), A.toarray()):
        rop = reorder(src, method="degree")
        np.testing.assert_allclose(aggregate(rop, H), sp.csr_array(A) @ H, rtol=1e-12, atol=1e-13)


def test_permute_unpermute_round_trip():
    rop = reorder(gcn_normalize(graph(np.random.default_rng(5), 40, 120)))
    X = np.arange(80.0).reshape(40, 2)
    np.testing.assert_array_equal(rop.permute(X), X[rop.perm])
    np.testing.assert_array_equal(rop.unpermute(rop.permute(X)), X)
    assert "ReorderedOperator 40x40" in repr(rop)
    # new arrays on a cache line, for 1-D and 2-D features; the input is untouched
    F = np.arange(40 * 16, dtype=np.float32).reshape(40, 16)[::-1]  # not contiguous
    P = rop.permute(F)
    assert P.ctypes.data % 64 == 0 and P.flags.c_contiguous and P.dtype == np.float32
    np.testing.assert_array_equal(P, F[rop.perm])
    assert not np.shares_memory(P, F)
    v = np.arange(40.0)
    np.testing.assert_array_equal(rop.permute(v), v[rop.perm])
    np.testing.assert_array_equal(rop.unpermute(v), v[rop.inverse])
    for bad in (np.ones((41, 2)), np.ones((39, 2)), np.float64(1.0)):
        with pytest.raises(ValueError, match=r"H must have 40 rows \(one per vertex\)"):
            rop.permute(bad)
    with pytest.raises(ValueError, match=r"Y must have 40 rows .*\(41, 2\)"):
        rop.unpermute(np.ones((41, 2)))


def test_bad_input():
    op = gcn_normalize(graph(np.random.default_rng(6), 10, 30))
    with pytest.raises(ValueError, match="method must be 'rcm' or 'degree', got 'amd'"):
        reorder(op, method="amd")
    with pytest.raises(ValueError, match=r"square.*\(3, 4\)"):
        reorder(sp.csr_array(np.ones((3, 4))))
    with pytest.raises(TypeError, match="already a ReorderedOperator"):
        reorder(reorder(op))
    with pytest.raises(TypeError, match="A must be"):
        reorder("graph")
    rop = reorder(op)
    with pytest.raises(ValueError, match=r"shape mismatch: op has shape \(10, 10\).*\(9, 2\)"):
        aggregate(rop, np.ones((9, 2), dtype=np.float32))
    with pytest.raises(TypeError, match="H must have dtype"):
        aggregate(rop, np.ones((10, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="out must have shape"):
        aggregate(rop, np.ones((10, 2), dtype=np.float32), out=np.empty((10, 3), np.float32))
    H = np.ones((10, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="out must not overlap H"):
        aggregate(rop, H, out=H)
