"""gcn_normalize and aggregate against the dense textbook formula and scipy."""

from __future__ import annotations

import naive_gcn
import numpy as np
import pytest
import scipy.sparse as sp

from graphpar import Graph, aggregate, gcn_normalize
from graphpar._gcn import GCNOperator, as_operator
from graphpar.kernels import aggregate as K


def random_entries(rng, n, m, *, loops=True, dups=True):
    rows = rng.integers(0, n, m)
    cols = rng.integers(0, n, m)
    if not loops:
        keep = rows != cols
        rows, cols = rows[keep], cols[keep]
    if dups and rows.size > 2:
        rows = np.concatenate([rows, rows[:3]])
        cols = np.concatenate([cols, cols[:3]])
    vals = rng.uniform(0.1, 2.0, rows.size)
    return rows, cols, vals


def close(out, ref, absref, rtol):
    """Error bounded by rtol times the sum of |terms| (a true relative bound for sums)."""
    assert out.shape == ref.shape
    assert np.all(np.abs(out.astype(np.float64) - ref) <= rtol * absref + 1e-300)


# ------------------------------------------------------------------ gcn_normalize
@pytest.mark.parametrize("norm", ["sym", "row", None])
@pytest.mark.parametrize("self_loops", [True, False])
@pytest.mark.parametrize("directed", [True, False])
def test_normalize_matches_formula(norm, self_loops, directed):
    rng = np.random.default_rng([self_loops, directed, str(norm).encode()[0]])
    n = 30
    rows, cols, vals = random_entries(rng, n - 4, 60)  # the last 4 vertices are isolated
    if not directed:
        rows, cols, vals = np.r_[rows, cols], np.r_[cols, rows], np.r_[vals, vals]
    A = sp.coo_array((vals, (rows, cols)), shape=(n, n))
    M = naive_gcn.dense_from_entries(n, rows, cols, vals)
    assert (M.sum(axis=1) == 0).any()  # isolated vertices present
    op = gcn_normalize(A, self_loops=self_loops, norm=norm, dtype=np.float64)
    ref = naive_gcn.normalize(M, self_loops=self_loops, norm=norm)
    assert isinstance(op, sp.csr_array) and isinstance(op, GCNOperator)
    assert op.dtype == np.float64 and op.has_sorted_indices
    assert op.indices.dtype == np.int32 and op.indptr.dtype == np.int32  # small: int32
    np.testing.assert_allclose(op.toarray(), ref, rtol=1e-13, atol=0)
    assert np.isfinite(op.data).all()
    if norm == "sym" and not directed:
        np.testing.assert_allclose(op.toarray(), op.toarray().T, rtol=1e-14)


def test_normalize_duplicates_summed_and_input_untouched():
    rows = np.array([0, 0, 1, 2, 2])
    cols = np.array([1, 1, 2, 0, 0])
    vals = np.array([1.0, 2.0, 0.5, 4.0, 1.0])
    coo = sp.coo_array((vals, (rows, cols)), shape=(3, 3))
    csr = sp.csr_array((vals.copy(), cols.copy(), np.array([0, 2, 3, 5])), shape=(3, 3))
    before = (csr.data.copy(), csr.indices.copy(), csr.indptr.copy())
    ref = naive_gcn.normalize(naive_gcn.dense_from_entries(3, rows, cols, vals))
    for A in (coo, csr, sp.csr_matrix(csr)):
        np.testing.assert_allclose(gcn_normalize(A, dtype=np.float64).toarray(), ref, rtol=1e-14)
    for got, want in zip((csr.data, csr.indices, csr.indptr), before, strict=True):
        np.testing.assert_array_equal(got, want)
    assert csr.nnz == 5  # still holds its duplicates


def test_normalize_graph_and_dense_inputs():
    M = np.array([[0, 2.0, 0], [0, 0, 3.0], [1.0, 0, 0]])
    ref = naive_gcn.normalize(M)
    g = Graph.from_dense(M)
    np.testing.assert_allclose(gcn_normalize(g, dtype=np.float64).toarray(), ref, rtol=1e-14)
    np.testing.assert_allclose(gcn_normalize(M, dtype=np.float64).toarray(), ref, rtol=1e-14)
    op32 = gcn_normalize(M)
    assert op32.dtype == np.float32
    np.testing.assert_allclose(op32.toarray(), ref, rtol=1e-6)


def test_normalize_existing_self_loop_gets_one_added():
    M = np.array([[3.0, 1.0], [1.0, 0.0]])
    op = gcn_normalize(M, norm=None, dtype=np.float64)
    np.testing.assert_array_equal(op.toarray(), [[4.0, 1.0], [1.0, 1.0]])


def test_normalize_empty_and_isolated():
    op = gcn_normalize(sp.csr_array((4, 4)), self_loops=False, dtype=np.float64)
    assert op.nnz == 0 and op.shape == (4, 4)
    np.testing.assert_array_equal(aggregate(op, np.ones((4, 2))), np.zeros((4, 2)))
    op = gcn_normalize(sp.csr_array((4, 4)), dtype=np.float64)
    np.testing.assert_array_equal(op.toarray(), np.eye(4))


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        (np.array([[0.0, -1.0], [0.0, 0.0]]), ValueError, "negative"),
        (sp.csr_array(np.array([[0.0, np.nan], [0.0, 0.0]])), ValueError, "NaN"),
        (sp.csr_array(np.array([[0.0, np.inf], [1.0, 0.0]])), ValueError, "infinite"),
        (sp.csr_array(np.ones((2, 3))), ValueError, "square"),
        (object(), TypeError, "csgraph"),
    ],
)
def test_normalize_bad_input(bad, exc, match):
    with pytest.raises(exc, match=match):
        gcn_normalize(bad)


def test_normalize_bad_options():
    with pytest.raises(ValueError, match="norm"):
        gcn_normalize(np.eye(2), norm="col")
    with pytest.raises(TypeError, match="dtype"):
        gcn_normalize(np.eye(2), dtype=np.int32)


# ------------------------------------------------------------------ aggregate
def random_operator(rng, m, k, nnz, dtype):
    rows = rng.integers(0, m, nnz)
    cols = rng.integers(0, k, nnz)
    rows = np.r_[rows, rows[:5], np.arange(min(m, k))]  # duplicates and a diagonal
    cols = np.r_[cols, cols[:5], np.arange(min(m, k))]
    vals = rng.standard_normal(rows.size)
    return sp.csr_array((vals.astype(dtype), (rows, cols)), shape=(m, k))


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-6), (np.float64, 1e-12)])
@pytest.mark.parametrize("width", [1, 3, 16, 64, 100])
@pytest.mark.parametrize("directed", [True, False])
def test_aggregate_matches_scipy(dtype, rtol, width, directed):
    rng = np.random.default_rng(width)
    n = 400
    rows, cols, vals = random_entries(rng, n, 3000)
    # high-degree rows make the chunks uneven
    rows = np.r_[rows, np.zeros(500, int)]
    cols = np.r_[cols, rng.integers(0, n, 500)]
    vals = np.r_[vals, rng.uniform(0.1, 2, 500)]
    if not directed:
        rows, cols, vals = np.r_[rows, cols], np.r_[cols, rows], np.r_[vals, vals]
    op = gcn_normalize(sp.coo_array((vals, (rows, cols)), shape=(n, n)), dtype=dtype)
    H = rng.standard_normal((n, width)).astype(dtype)
    for transpose in (False, True):
        M = op.T if transpose else op
        ref = (M.astype(np.float64) @ H.astype(np.float64))
        absref = abs(M.astype(np.float64)) @ np.abs(H.astype(np.float64))
        got = aggregate(op, H, transpose=transpose)
        assert got.dtype == dtype and got.shape == (n, width)
        close(got, ref, absref, rtol)
        close(got, M @ H, absref, rtol)  # scipy in the same dtype
        plain = aggregate(sp.csr_array(op), H, transpose=transpose)
        np.testing.assert_array_equal(plain, got)


def test_aggregate_against_naive_loops():
    rng = np.random.default_rng(5)
    A = random_operator(rng, 20, 20, 60, np.float64)
    H = rng.standard_normal((20, 7))
    ref = naive_gcn.aggregate(A.toarray(), H)
    np.testing.assert_allclose(aggregate(A, H), ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(aggregate(A, H, transpose=True),
                               naive_gcn.aggregate(A.toarray().T, H), rtol=1e-12, atol=1e-14)


def test_aggregate_rectangular_and_out():
    rng = np.random.default_rng(3)
    A = random_operator(rng, 50, 130, 400, np.float64)
    H = rng.standard_normal((130, 9))
    out = np.full((50, 9), np.nan)
    r = aggregate(A, H, out=out)
    assert r is out
    np.testing.assert_allclose(out, A @ H, rtol=1e-12, atol=1e-14)
    G = rng.standard_normal((50, 9))
    np.testing.assert_allclose(aggregate(as_operator(A), G, transpose=True), A.T @ G,
                               rtol=1e-12, atol=1e-14)
    # kernel directly, int64 indices and read-only inputs
    ip, ix, d = A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data.copy()
    for a in (ip, ix, d, H):
        a.flags.writeable = False
    out2 = np.empty((50, 9))
    K.spmm(ip, ix, d, H, out2)
    np.testing.assert_allclose(out2, A @ H, rtol=1e-12, atol=1e-14)


def test_aggregate_vector_and_mixed_dtypes():
    rng = np.random.default_rng(4)
    A = random_operator(rng, 30, 30, 100, np.float32)
    h = rng.standard_normal(30)
    got = aggregate(A, h)  # float32 operator, float64 H: float64 as in scipy
    assert got.shape == (30,) and got.dtype == np.float64
    np.testing.assert_allclose(got, A @ h, rtol=1e-12)
    H = rng.standard_normal((30, 4))[:, ::2]  # not contiguous: copied
    np.testing.assert_allclose(aggregate(A, H), A @ H, rtol=1e-12)
    Acoo = sp.coo_matrix(A)
    np.testing.assert_allclose(aggregate(Acoo, H.astype(np.float32)), A @ H.astype(np.float32),
                               rtol=1e-6)


def test_aggregate_empty_shapes():
    A = sp.csr_array((0, 5))
    assert aggregate(A, np.ones((5, 3))).shape == (0, 3)
    B = random_operator(np.random.default_rng(0), 5, 5, 5, np.float64)
    assert aggregate(B, np.ones((5, 0))).shape == (5, 0)


def test_transpose_cached_once():
    rng = np.random.default_rng(6)
    rows, cols, vals = random_entries(rng, 50, 200)
    op_dir = gcn_normalize(sp.coo_array((vals, (rows, cols)), shape=(50, 50)))
    op_sym = gcn_normalize(sp.coo_array((np.r_[vals, vals], (np.r_[rows, cols],
                                                             np.r_[cols, rows])), shape=(50, 50)))
    H = rng.standard_normal((50, 4)).astype(np.float32)
    for op in (op_dir, op_sym):
        aggregate(op, H, transpose=True)
        cache = op._gp_cache()
        first = cache[(np.dtype(np.float32).str, True)]
        aggregate(op, H, transpose=True)
        assert cache[(np.dtype(np.float32).str, True)] is first
    fwd = op_sym._gp_cache()[(np.dtype(np.float32).str, False)]
    assert op_sym._gp_cache()[(np.dtype(np.float32).str, True)] is fwd  # symmetric: reused
    tdir = op_dir._gp_cache()[(np.dtype(np.float32).str, True)]
    assert tdir is not op_dir._gp_cache()[(np.dtype(np.float32).str, False)]


# ------------------------------------------------------------------ the cache cannot go stale
def both_directions_match_scipy(op, H, rtol=1e-12):
    """aggregate(op, H) and with transpose=True against scipy's own op @ H and op.T @ H."""
    for transpose in (False, True):
        M = sp.csr_array(op.T if transpose else op).astype(np.float64)
        ref = M @ H.astype(np.float64)
        absref = abs(M) @ np.abs(H.astype(np.float64))
        close(aggregate(op, H, transpose=transpose), ref, absref, rtol)


def directed_op(seed=8, n=40, dtype=np.float64):
    rng = np.random.default_rng(seed)
    rows, cols, vals = random_entries(rng, n, 150)
    return gcn_normalize(sp.coo_array((vals, (rows, cols)), shape=(n, n)), dtype=dtype), rng


@pytest.mark.parametrize("h_dtype", [np.float64, np.float32])
def test_in_place_change_refused_and_cache_not_stale(h_dtype):
    op, rng = directed_op()
    H = rng.standard_normal((40, 3)).astype(h_dtype)
    before_fwd = aggregate(op, H)
    before_t = aggregate(op, H, transpose=True)  # the transpose is now cached
    data0 = op.toarray()
    for name in ("data", "indices", "indptr"):
        assert not getattr(op, name).flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        op.data *= 2
    with pytest.raises(ValueError, match="read-only"):
        op.indices[0] = 0
    np.testing.assert_array_equal(op.toarray(), data0)  # nothing changed
    np.testing.assert_array_equal(aggregate(op, H), before_fwd)
    np.testing.assert_array_equal(aggregate(op, H, transpose=True), before_t)
    both_directions_match_scipy(op, H, rtol=1e-6)


@pytest.mark.parametrize("h_dtype", [np.float64, np.float32])
def test_assigned_arrays_rebuild_the_cache(h_dtype):
    op, rng = directed_op()
    H = rng.standard_normal((40, 3)).astype(h_dtype)
    rtol = 1e-6 if h_dtype == np.float32 else 1e-12
    t1 = aggregate(op, H, transpose=True)
    new = op.data * 2
    op.data = new  # the scipy way to change values of a read-only operator
    both_directions_match_scipy(op, H, rtol)
    assert not op.data.flags.writeable and new.flags.writeable  # op took a read-only copy
    new[:] = 0  # so the caller's array is no longer op's
    both_directions_match_scipy(op, H, rtol)
    np.testing.assert_allclose(aggregate(op, H, transpose=True), 2 * t1, rtol=rtol)
    # a new structure (same shape): column j -> (j + 1) % n, the transpose rebuilt
    op.indices = (op.indices + 1) % 40
    both_directions_match_scipy(op, H, rtol)
    bad = op.indices.copy()
    bad[3] = 40
    op.indices = bad
    with pytest.raises(ValueError, match=r"outside its shape \(40, 40\)"):
        aggregate(op, H, transpose=True)
    with pytest.raises(ValueError, match=r"outside its shape \(40, 40\)"):
        aggregate(op, H)


def test_operator_never_shares_writeable_arrays():
    rng = np.random.default_rng(9)
    A = random_operator(rng, 30, 30, 90, np.float64)
    H = rng.standard_normal((30, 2))
    op = as_operator(A)
    ref = A.toarray()
    A.data *= 2  # the caller's matrix stays writeable and changing it leaves op alone
    assert A.data.flags.writeable
    np.testing.assert_array_equal(op.toarray(), ref)
    both_directions_match_scipy(op, H)
    # built directly over the caller's arrays: copied on first use
    d, i, p = A.data.copy(), A.indices.copy(), A.indptr.copy()
    own = GCNOperator((d, i, p), shape=A.shape)
    both_directions_match_scipy(own, H)
    d *= -1
    assert d.flags.writeable and not own.data.flags.writeable
    both_directions_match_scipy(own, H)
    np.testing.assert_array_equal(own.toarray(), A.toarray())
    # scipy arithmetic on an operator gives a new one, with its own cache
    tripled = op * 3
    both_directions_match_scipy(tripled, H)
    np.testing.assert_allclose(aggregate(tripled, H, transpose=True),
                               3 * aggregate(op, H, transpose=True), rtol=1e-12)


def test_copies_and_pickles_rebuild_their_cache():
    import copy
    import pickle

    op, rng = directed_op(seed=10)
    H = rng.standard_normal((40, 4))
    aggregate(op, H, transpose=True)
    for other in (pickle.loads(pickle.dumps(op)), copy.deepcopy(op), copy.copy(op)):
        both_directions_match_scipy(other, H)
        assert not other.data.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            other.data *= 2
        other.data = other.data * 5
        both_directions_match_scipy(other, H)
    both_directions_match_scipy(op, H)  # the original is untouched by its copies


def test_aggregate_bad_input():
    op = gcn_normalize(np.array([[0, 1.0], [1.0, 0]]))
    H = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"shape mismatch.*\(2, 2\).*\(3, 3\)"):
        aggregate(op, np.ones((3, 3), np.float32))
    with pytest.raises(TypeError, match="H must have dtype.*int64"):
        aggregate(op, np.ones((2, 3), np.int64))
    with pytest.raises(TypeError, match="H must be a numpy array"):
        aggregate(op, [[1.0]])
    with pytest.raises(TypeError, match="op must be a scipy sparse"):
        aggregate(np.eye(2), H)
    with pytest.raises(TypeError, match="out must have dtype float32"):
        aggregate(op, H, out=np.empty((2, 3)))
    with pytest.raises(ValueError, match="out must have shape"):
        aggregate(op, H, out=np.empty((3, 2), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        aggregate(op, H, out=np.empty((3, 2), np.float32).T)
    with pytest.raises(ValueError, match="overlap"):
        aggregate(op, H, out=H)
    ro = np.empty((2, 3), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        aggregate(op, H, out=ro)
    nan_op = sp.csr_array((np.array([1.0, np.nan]), np.array([0, 1]), np.array([0, 1, 2])),
                          shape=(2, 2))
    with pytest.raises(ValueError, match=r"non-finite value nan at entry \(1, 1\)"):
        aggregate(nan_op, H)
    with pytest.raises(ValueError, match=r"non-finite"):
        aggregate(as_operator(nan_op), H, transpose=True)
    bad_idx = sp.csr_array((np.array([1.0]), np.array([5]), np.array([0, 1, 1])), shape=(2, 2))
    with pytest.raises(ValueError, match=r"entry \(0, 5\) outside"):
        aggregate(bad_idx, H)


@pytest.mark.parametrize("dtype, width", [(np.float32, 85), (np.float64, 43), (np.float32, 7)])
def test_kernel_tiles_and_chunks(dtype, width):
    """Whole 256-byte tiles, 64-byte tiles and the last columns (85 = 64 + 16 + 5 float32,
    43 = 32 + 8 + 3 float64): the parallel kernel (chunks taken in any order by any
    thread) gives the serial kernel's bits, and scipy's products within rounding."""
    rng = np.random.default_rng(width)
    n, nnz = 3000, 60000
    A = random_operator(rng, n, n, nnz, dtype)
    A.sum_duplicates()
    H = rng.standard_normal((n, width)).astype(dtype)
    par = np.full((n, width), np.nan, dtype=dtype)
    ser = np.full((n, width), np.nan, dtype=dtype)
    K.spmm(A.indptr, A.indices, A.data, H, par)
    K.spmm_rows(A.indptr, A.indices, A.data, H, ser, 0, n)
    np.testing.assert_array_equal(par, ser)
    ref = A.astype(np.float64) @ H.astype(np.float64)
    absref = abs(A.astype(np.float64)) @ np.abs(H.astype(np.float64))
    close(par, ref, absref, 1e-5 if dtype == np.float32 else 1e-12)
    # rows lo..hi only: the others untouched
    part = np.full((n, width), np.nan, dtype=dtype)
    K.spmm_rows(A.indptr, A.indices, A.data, H, part, 100, 2000)
    np.testing.assert_array_equal(part[100:2000], ser[100:2000])
    assert np.isnan(part[:100]).all() and np.isnan(part[2000:]).all()


def test_kernel_chunks_cover_rows():
    rng = np.random.default_rng(7)
    deg = rng.zipf(1.5, 1000).clip(0, 5000)
    indptr = np.r_[0, np.cumsum(deg)].astype(np.int64)
    for nch in (1, 3, 256, 1000):
        b = K.chunk_bounds(indptr, nch)
        assert b[0] == 0 and b[-1] == 1000 and np.all(np.diff(b) >= 0)


# ------------------------------------------------------------------ line alignment
def misaligned(H):
    """A copy of ``H`` whose first byte is 16 bytes past a cache line (numpy's default)."""
    buf = np.empty(H.nbytes + 128, dtype=np.uint8)
    start = (-buf.ctypes.data) % 64 + 16
    A = buf[start:start + H.nbytes].view(H.dtype).reshape(H.shape)
    A[...] = H
    return A


@pytest.mark.parametrize("dtype, width", [(np.float32, 64), (np.float64, 16), (np.float32, 40)])
def test_parallel_path_alignment_does_not_change_results(dtype, width):
    """Parallel path on a misaligned H and its line-aligned copy: the same bits either way."""
    from graphpar._gcn import SERIAL_WORK, line_aligned

    rng = np.random.default_rng(width)
    n, nnz = 3000, 60000  # 20 gathers per row of H: the copy is made when rows are lines
    op = as_operator(random_operator(rng, n, n, nnz, dtype))
    assert (op.nnz + n) * width >= SERIAL_WORK
    H = rng.standard_normal((n, width)).astype(dtype)
    Hm = misaligned(H)
    assert Hm.ctypes.data % 64 == 16
    copied = line_aligned(Hm)
    if width * np.dtype(dtype).itemsize % 64 == 0:
        assert copied is not Hm and copied.ctypes.data % 64 == 0
    else:
        assert copied is Hm  # rows are not whole lines: alignment cannot help
    np.testing.assert_array_equal(copied, H)
    before = Hm.copy()
    got = aggregate(op, Hm)
    np.testing.assert_array_equal(Hm, before)  # the caller's H is untouched
    ref = np.empty((n, width), dtype=dtype)
    K.spmm(op.indptr, op.indices, op.data, H, ref)  # the kernel on numpy's own H
    np.testing.assert_array_equal(got, ref)
    absref = abs(op.astype(np.float64)) @ np.abs(H.astype(np.float64))
    close(got, op.astype(np.float64) @ H.astype(np.float64), absref,
          1e-5 if dtype == np.float32 else 1e-12)
    out = np.empty_like(got)
    assert aggregate(op, Hm, out=out, transpose=True) is out
    close(out, op.T.astype(np.float64) @ H.astype(np.float64),
          abs(op.T.astype(np.float64)) @ np.abs(H.astype(np.float64)),
          1e-5 if dtype == np.float32 else 1e-12)


def test_empty_lines_starts_on_a_line_and_aggregate_allocates_there():
    from graphpar._gcn import empty_lines

    for shape, dtype in [((1000, 16), np.float32), ((513, 7), np.float64), ((4097,), np.int32)]:
        A = empty_lines(shape, dtype)
        assert A.shape == shape and A.dtype == dtype and A.flags.c_contiguous
        assert A.flags.writeable and A.ctypes.data % 64 == 0
        A[...] = 1  # the whole array is usable
        assert A.sum() == np.prod(shape)
    rng = np.random.default_rng(11)
    op = as_operator(random_operator(rng, 2000, 2000, 40000, np.float32))
    H = misaligned(rng.standard_normal((2000, 64)).astype(np.float32))
    got = aggregate(op, H)
    assert got.ctypes.data % 64 == 0 and got.flags.c_contiguous and got.flags.writeable
    ref = np.empty_like(got)
    K.spmm(op.indptr, op.indices, op.data, np.ascontiguousarray(H), ref)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_prefetches_are_only_hints_and_emit_prefetch(dtype):
    import platform

    from numba import njit

    from graphpar.kernels.prefetch import prefetch_row

    @njit
    def run(a, rows, n):
        s = 0.0
        for r in rows:
            prefetch_row(a, r, n)  # rows far past the end: never faults, never writes
            s += a[r % a.shape[0], 0]
        return s

    @njit
    def one_row(a, r, n):
        prefetch_row(a, r, n)

    a = np.arange(4 * 80, dtype=dtype).reshape(4, 80)
    a.flags.writeable = False
    rows = np.array([0, 3, 4, 1 << 40], dtype=np.int64)
    for n in (0, 1, 16, 64, 80):
        assert run(a, rows, n) == a[0, 0] + a[3, 0] + a[0, 0] + a[(1 << 40) % 4, 0]
    np.testing.assert_array_equal(a, np.arange(4 * 80, dtype=dtype).reshape(4, 80))
    one_row(a, 1, 64)
    if platform.machine() in ("x86_64", "AMD64"):
        assert "prefetcht0" in next(iter(run.inspect_asm().values()))
        # straight-line: the 4 lines from the row's start (clamped) and the last element's
        assert next(iter(one_row.inspect_asm().values())).count("prefetcht0") == 5
