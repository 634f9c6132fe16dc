"""Cox partial likelihood kernels: risk-set sums as parallel prefix scans.

Data layout (the caller sorts once and keeps the permutation)
-------------------------------------------------------------
Rows are ordered by stratum, then by time **descending**. The risk set of a
tie group (the rows of one stratum sharing one time) is then every row of the
stratum up to and including the end of that group, so the risk-set sums

    S0 = sum w exp(eta - shift),  S1 = sum w exp(eta - shift) x,
    S2 = sum w exp(eta - shift) x x^T

are running (prefix) sums, restarted at each stratum start. A suffix sum is
never formed as a total minus a prefix. The order of the rows inside a tie
group does not matter: a tie group is always processed whole.

Per-row inputs, all of length ``n`` (rows of the block):

- ``XT`` (p, n) float64: the covariates transposed, one row per covariate, so
  that each chunk's column sums and Gram products read contiguous rows
  (C-contiguous is fastest; :func:`gather_rows` writes it from ``X``).
- ``eta`` (n,) float64: linear predictor ``X @ beta + offset``.
- ``w`` (n,) float64 case weights, or an empty array for unit weights.
- ``event`` (n,) uint8: 1 for an event, 0 for a censored row.
- ``flags`` (n,) uint8: ``FLAG_GROUP`` (1) on the first row of every tie
  group, plus ``FLAG_STRATUM`` (2) on the first row of every stratum (such a
  row carries both bits, value 3).

Blocks, chunks and strata
-------------------------
A *block* is the contiguous row range a kernel call sees (in a distributed run,
one rank's rows); it must start and end at tie-group boundaries. The block is
cut into *chunks* by ``chunk_start`` (int64, length ``nchunks + 1``, first 0,
last ``n``, every entry a tie-group start) and ``chunk_stratum`` (int64,
length ``nchunks``: the stratum index of each chunk's first row, an index into
``shift``). Chunks may span strata. :func:`chunk_layout` builds both from
``flags``. The chunking fixes the order of floating-point sums, so results do
not depend on the number of threads.

``shift`` (nstrata,) float64 holds the value subtracted from ``eta`` before
``exp`` in each stratum, normally the stratum's largest ``eta``
(:func:`linear_predictor` returns the block's per-stratum maxima; a distributed
caller reduces them with ``MPI.MAX`` and passes the global maxima in). Every
block of one stratum must use the same shift.

Carry-in / carry-out
--------------------
``carry_s0`` (1,), ``carry_s1`` (p,) and ``carry_s2`` (p, p) hold, on entry,
the risk-set sums S0, S1, S2 (computed with the same shifts) of all rows
*before* the block in the block's first stratum: zeros for the first block,
and ignored when the block's first row starts a stratum. On return they hold
the carry-out: the sums of the block's last stratum up to the block's end
(including the carry-in when that stratum began before the block). Calling
:func:`cox_block` on rows ``[0, m)`` and then on ``[m, n)`` with the first
call's carry-out gives the log-likelihood, gradient and Hessian of ``[0, n)``
as the sums of the two calls' outputs.

For a distributed caller (one block per rank, ranks in row order), sums of
tails combine with an exclusive scan whose operator is the *segmented* sum
``a (+) b = b if b's block contains a stratum start else a + b`` (a row with
``FLAG_STRATUM``). S0 enters non-linearly, so its carry is scanned first
(from each block's S0 tail); one call with that S0 carry and zero S1/S2
carries then returns the block's S1/S2 tails as carry-out, and ``out_seg``
says how the S1/S2 carries, scanned from those tails, change the block's
gradient and Hessian, so no second call is needed. With
``hess_mode = HESS_DIAG`` only the diagonal of ``carry_s2`` is used and filled.

Within one process, :func:`cox_block` runs three passes: (1) in parallel over
chunks, ``r = w exp(eta - shift)``, each chunk's S0 tail and the events'
``w (eta - shift)`` terms; (2) serially, the S0 carry across chunks (a
segmented exclusive scan); (3) in parallel over chunks, the fused scan that
runs S0 (with its carry) and S1 (from zero) over the chunk and accumulates the
log-likelihood, gradient and Hessian terms of each tie group. In pass 3 the
S2-type Hessian terms ``sum_g c_g S2_g`` are summed by parts into one weighted
Gram matrix ``sum_k r_k W_k x_k x_k^T`` (``W_k``: the sum of ``c_g`` over the
groups of the chunk whose risk set holds row ``k``) and the rank-one terms
``S1 S1^T / S0^2`` of all event groups are batched; both become vectorised dot
products over the rows of ``XT``, never an ``N x p x p`` array.
Finally, serially and in chunk order, the S1/S2 carries are formed from the
chunks' tails and added through three correction accumulators (the carries
enter the gradient and Hessian linearly and quadratically, so pass 3 need not
know them), and the chunk results are summed. Each group term is scaled by its
own ``1/S0`` so that risk sets far below the stratum's shift cannot underflow
when squared.

Compile time (a cold cache compiles everything a call reaches): the parallel
passes are serial ``nogil`` Numba functions over a range of chunks, run on
``numba.get_num_threads()`` Python threads by :func:`run_chunks` (a ``prange``
loop costs about a second and a half more to compile per function), the setup
steps that are single vectorised passes are NumPy, no slice of an array is
assigned in compiled code (``a[i:j] = b`` compiles Numba's shape-mismatch error
message, seconds), pass 3 allocates nothing (its work arrays come from
:func:`run_chunks`' ``scratch``) and exists once per tie method, Hessian mode
and S2-tail choice, each compiled on its first use only. An Efron fit without
tied events runs the Breslow variant (the same operations there). Hot loops index slices from 0
(``x = XT[a, lo:hi]; x[k]``): an index that may be negative costs a wraparound
check per access, which halves the speed of the Gram and matrix-vector loops.

Ties: ``BRESLOW`` (0) or ``EFRON`` (1). Efron follows R's survival::coxph: a
tie group with ``m`` events of total weight ``D`` contributes, for
``l = 0..m-1``, ``-(D/m) log(S0 - (l/m) A)`` with ``A`` the events' share of S0.

Outputs: ``out_ll`` (1,), ``out_grad`` (p,) and ``out_hess`` (p, p): the log
partial likelihood of the block (with the shifts cancelled, so the true value),
its gradient and its Hessian (negative semidefinite). ``hess_mode``:
``HESS_NONE`` (0) leaves ``out_hess`` zero, ``HESS_DIAG`` (1) fills only its
diagonal, ``HESS_FULL`` (2) fills it all.
"""

import threading

import numba
import numpy as np
from numba import njit

from graphpar.kernels.fastexp import exp_shifted
from graphpar.kernels.pools import PersistentPool

FLAG_GROUP = 1
FLAG_STRATUM = 2
BRESLOW = 0
EFRON = 1
HESS_NONE = 0
HESS_DIAG = 1
HESS_FULL = 2

_POOL = PersistentPool("graphpar-cox")
_warm = set()  # (function, argument types) already run once: compiled or loaded
_warm_lock = threading.Lock()


def _arg_kind(a):
    """What selects a compiled signature: an array's dtype, rank and contiguity, else the type."""
    if isinstance(a, np.ndarray):
        return a.dtype, a.ndim, a.flags.c_contiguous, a.flags.f_contiguous
    return type(a)


def run_chunks(fn, nchunks, *args, scratch=None):
    """Call ``fn(lo, hi, *args)`` on contiguous ranges ``[lo, hi)`` covering ``range(nchunks)``.

    One range per Numba thread (``numba.get_num_threads()``, which
    :func:`graphpar.threads.set_threads` sets), run on a pool of Python threads;
    ``fn`` must be a ``nogil`` Numba function (or Python whose work releases the
    GIL, as NumPy's copies do) whose ranges write disjoint output. The calling
    thread runs the first range. The first call of a Numba function for a
    signature runs that range before starting the others, so that a cold cache
    compiles (or loads) ``fn`` once, not once per thread at the same time.

    ``scratch(lo, hi)``, if given, returns a tuple of work arrays for one range,
    passed after ``args``: allocated here by NumPy, so that ``fn`` compiles no
    allocation of its own.
    """
    nt = max(1, min(numba.get_num_threads(), nchunks))
    kernel = fn
    if scratch is not None:

        def fn(lo, hi, *a):
            kernel(lo, hi, *a, *scratch(lo, hi))

    if nt == 1:
        fn(0, nchunks, *args)
        return
    pool = _POOL.get(nt - 1)
    cuts = [(nchunks * t) // nt for t in range(nt + 1)]
    key = (kernel, tuple(map(_arg_kind, args)))
    warm = key in _warm or not hasattr(kernel, "py_func")
    if not warm:
        fn(cuts[0], cuts[1], *args)
        with _warm_lock:
            _warm.add(key)
    futures = [pool.submit(fn, cuts[t], cuts[t + 1], *args) for t in range(1, nt)]
    try:
        if warm:
            fn(cuts[0], cuts[1], *args)
    finally:
        for f in futures:
            f.result()


def chunk_layout(flags, target, stratum0, chunk_start, chunk_stratum):
    """Cut rows into chunks of about ``target`` rows at tie-group starts.

    ``chunk_start`` must have room for ``n // target + 2`` entries and
    ``chunk_stratum`` for ``n // target + 1``; ``stratum0`` is the stratum index
    of row 0. Returns the number of chunks ``nc``: ``chunk_start[:nc + 1]`` and
    ``chunk_stratum[:nc]`` are filled. A chunk ends at the first tie-group start
    at least ``target`` rows after its own start.
    """
    n = flags.size
    cuts = [0]
    nxt = max(target, 1)
    while nxt < n:
        # the first tie-group start at or after nxt, searched in growing windows (an
        # index of every group start would be as long as the rows when times are distinct)
        cut = -1
        lo, width = nxt, 256
        while lo < n:
            window = flags[lo:lo + width] & FLAG_GROUP
            k = int(window.argmax())
            if window[k]:
                cut = lo + k
                break
            lo += width
            width *= 2
        if cut < 0:
            break
        cuts.append(cut)
        nxt = cut + target
    nc = len(cuts)
    chunk_start[:nc] = cuts
    chunk_start[nc] = n
    later_strata = np.flatnonzero(flags[1:] & FLAG_STRATUM) + 1
    chunk_stratum[:nc] = stratum0 + np.searchsorted(later_strata, chunk_start[:nc], "right")
    return nc


@njit(cache=True, nogil=True)
def _lp_chunks(c_lo, c_hi, XT, beta, offset, flags, chunk_start, chunk_stratum, eta, smax,
               first_max, last_max, last_s):
    """``eta`` on chunks ``[c_lo, c_hi)``; maxima of each chunk's first and last strata.

    The maxima of strata wholly inside one chunk go straight into ``smax``. Columns
    of zero coefficient are not read (at ``beta = 0``, ``X`` is not read at all).
    """
    p = beta.size
    has_off = offset.size > 0
    for c in range(c_lo, c_hi):
        lo = chunk_start[c]
        hi = chunk_start[c + 1]
        ec = eta[lo:hi]  # loops from 0 over slices: no negative-index checks
        m = hi - lo
        for i in range(m):
            ec[i] = 0.0
        for j in range(p):
            b = beta[j]
            if b != 0.0:
                xj = XT[j, lo:hi]
                for i in range(m):
                    ec[i] += xj[i] * b
        s = chunk_stratum[c]
        first = True
        cur = -np.inf
        for i in range(lo, hi):
            if i > lo and (flags[i] & FLAG_STRATUM) != 0:
                if first:
                    first_max[c] = cur
                    first = False
                else:
                    smax[s] = cur
                s += 1
                cur = -np.inf
            v = eta[i]
            if has_off:
                v += offset[i]
                eta[i] = v
            if v > cur:
                cur = v
        if first:
            first_max[c] = cur
        else:
            last_max[c] = cur
        last_s[c] = s


#: Below this many rows :func:`linear_predictor` runs in NumPy: a first small fit then
#: does not compile ``_lp_chunks`` (more than half a second).
NUMPY_LP_BELOW = 1 << 16


def linear_predictor(XT, beta, offset, flags, chunk_start, chunk_stratum, eta, smax):
    """Fill ``eta = XT.T @ beta + offset`` (``offset`` may be empty) and ``smax``.

    ``XT`` (p, n) is the block's covariates transposed (see :func:`cox_block`).

    ``smax`` (nstrata,) receives the largest ``eta`` of each stratum present in
    the block and ``-inf`` for the others.
    """
    nc = chunk_start.size - 1
    smax[:] = -np.inf
    n = eta.size
    if n < NUMPY_LP_BELOW:
        # the same sums in the same order as the kernel (bit-identical), without its compile
        eta[:] = 0.0
        for j in np.flatnonzero(beta):
            eta += XT[j] * beta[j]
        if offset.size:
            eta += offset
        if n:
            sid = np.cumsum((flags & FLAG_STRATUM) != 0)
            sid += chunk_stratum[0] - sid[0]
            np.maximum.at(smax, sid, eta)
        return
    first_max = np.full(nc, -np.inf)
    last_max = np.full(nc, -np.inf)
    last_s = np.zeros(nc, dtype=np.int64)
    run_chunks(_lp_chunks, nc, XT, beta, offset, flags, chunk_start, chunk_stratum, eta, smax,
               first_max, last_max, last_s)
    np.maximum.at(smax, chunk_stratum[:nc], first_max)
    np.maximum.at(smax, last_s, last_max)


@njit(cache=True, nogil=True)
def _rates_chunks(c_lo, c_hi, eta, w, event, flags, shift, chunk_start, chunk_stratum, r,
                  tail0, had, lle):
    """Pass 1 on chunks ``[c_lo, c_hi)``: r, the S0 tail, whether a stratum starts, event term.

    ``exp(eta - shift)`` is taken over each stratum segment of a chunk by a
    vectorised loop (:func:`graphpar.kernels.fastexp.exp_shifted`, within one ulp
    of libm's ``exp`` and four times as fast here), then the sums in row order.
    """
    has_w = w.size > 0
    for c in range(c_lo, c_hi):
        lo = chunk_start[c]
        hi = chunk_start[c + 1]
        s = chunk_stratum[c]
        a = lo
        while a < hi:
            b = a + 1
            while b < hi and (flags[b] & FLAG_STRATUM) == 0:
                b += 1
            if a > lo:
                s += 1
            exp_shifted(eta, shift[s], r, a, b)
            a = b
        s = chunk_stratum[c]
        tail = 0.0
        hd = False
        ev = 0.0
        for i in range(lo, hi):
            if (flags[i] & FLAG_STRATUM) != 0:
                if i > lo:
                    s += 1
                tail = 0.0
                hd = True
            e = eta[i] - shift[s]
            wi = w[i] if has_w else 1.0
            ri = wi * r[i]
            r[i] = ri
            tail += ri
            # without a branch (the same sum: an event flag is 0 or 1), since whether a
            # row is an event cannot be predicted: the branch cost a third of this pass
            ev += wi * e * event[i]
        tail0[c] = tail
        had[c] = hd
        lle[c] = ev


@njit(cache=True, fastmath=True, nogil=True)
def _gram(Z, Y, lo, hi, yoff, out, full):
    """``out[a, b] += sum(Z[a, k] * Y[b, k + yoff] for k in [lo, hi))`` for ``b >= a``.

    Only ``b == a`` unless ``full``. Blocks of 2 x 2 pairs share their loads, and
    the sums vectorise (reassociated). Entries below the diagonal are left alone.
    The loops index slices from 0, so that no index needs a negative-index check
    (which halves the speed of this loop).
    """
    p = Z.shape[0]
    m = hi - lo
    if not full:
        for a in range(p):
            za = Z[a, lo:hi]
            ya = Y[a, lo + yoff:hi + yoff]
            s = 0.0
            for k in range(m):
                s += za[k] * ya[k]
            out[a, a] += s
        return
    for a in range(0, p, 2):
        a2 = a + 1 if a + 1 < p else p - 1  # (no min(): one overload fewer to compile)
        z0 = Z[a, lo:hi]
        z1 = Z[a2, lo:hi]
        for b in range(a, p, 2):
            b2 = b + 1 if b + 1 < p else p - 1
            y0 = Y[b, lo + yoff:hi + yoff]
            y1 = Y[b2, lo + yoff:hi + yoff]
            s00 = 0.0
            s01 = 0.0
            s10 = 0.0
            s11 = 0.0
            for k in range(m):
                u = z0[k]
                v = z1[k]
                x = y0[k]
                y = y1[k]
                s00 += u * x
                s01 += u * y
                s10 += v * x
                s11 += v * y
            out[a, b] += s00
            if b2 > b:
                out[a, b2] += s01
            if a2 > a:
                if b > a:
                    out[a2, b] += s10
                if b2 > b:
                    out[a2, b2] += s11


@njit(cache=True, nogil=True, error_model="numpy")
def _first_weights(c_lo, c_hi, r, w, event, flags, chunk_start, c0, efron, al):
    """Pass 2 on chunks ``[c_lo, c_hi)``: ``al[c]``, the sum of the S2 coefficients
    ``a0_g / S0_g`` over the event groups of the chunk's first stratum segment
    (zero when the chunk's first row starts a stratum).

    A scalar pass over ``r`` (no ``X``): with it, pass 3 folds the S2 carries into
    its weighted Gram matrix and needs no S2 tails.
    """
    has_w = w.size > 0
    for c in range(c_lo, c_hi):
        lo = chunk_start[c]
        hi = chunk_start[c + 1]
        tot = 0.0
        if (flags[lo] & FLAG_STRATUM) != 0:
            al[c] = 0.0
            continue
        S0 = c0[c]
        i = lo
        while i < hi and (i == lo or (flags[i] & FLAG_STRATUM) == 0):
            j = i + 1
            while j < hi and (flags[j] & FLAG_GROUP) == 0:
                j += 1
            if j == i + 1:
                # a one-row group (every row, when times are distinct): its coefficient
                # is w / S0 for an event and 0 otherwise, chosen by a select rather than
                # a branch on the event, which cannot be predicted (S0 may be 0 where
                # the rows so far have no weight: 0 / 0 must add nothing)
                S0 += r[i]
                d = (w[i] if has_w else 1.0) * event[i]
                inv = 1.0 / S0
                tot += inv * d if d != 0.0 else 0.0
                i = j
                continue
            m = 0
            dw = 0.0
            A = 0.0
            for k in range(i, j):
                S0 += r[k]
                wk = w[k] if has_w else 1.0
                if event[k] != 0 and wk > 0.0:
                    m += 1
                    dw += wk
                    A += r[k]
            if m > 0:
                inv = 1.0 / S0
                if efron and m > 1:
                    wt = dw / m
                    fa = A * inv
                    ab0 = 0.0
                    for q in range(m):
                        ab0 += wt / (1.0 - (q / m) * fa)
                else:
                    ab0 = dw
                tot += inv * ab0
            i = j
        al[c] = tot


def _make_fused_chunks(efron, hess_mode, tail2):
    """Pass 3 for one tie method, Hessian mode and S2 tail choice.

    ``efron``, ``hess_mode`` and ``tail2`` are compile-time constants of the
    returned function (Numba freezes closure variables and prunes the branches
    they decide), so each variant compiles only its own code, and only when
    first called (:func:`_fused`).
    """
    need_h = hess_mode != HESS_NONE
    full = hess_mode == HESS_FULL

    @njit(cache=True, nogil=True, error_model="numpy")
    def fused_chunks(c_lo, c_hi, XT, r, w, event, flags, chunk_start, c0, after2, l1s, l2s,
                     grads, infos, us, res, vec, mat, col):
        """Pass 3 on chunks ``[c_lo, c_hi)``; S1 starts from zero in each chunk.

        Per chunk ``c``, accumulates into ``grads[c]`` and ``infos[c]`` (minus the
        Hessian, upper triangle) and the correction vector ``us[c]`` (all zero on
        entry); leaves in ``l1s[c]`` (and, with ``tail2``, ``l2s[c]``) the S1 (S2)
        tails since the chunk's last stratum start, and in ``res[c]`` (ll, alpha,
        beta0). ``vec`` (3, p), ``mat`` (2, p, width) and ``col`` (2, width) are
        work arrays (width: the range's widest chunk; 0 without the Hessian).

        The S2-type Hessian terms sum_g c_g S2_g are summed by parts into one
        weighted Gram matrix sum_k r_k W_k x_k x_k^T (W_k: the sum of c_g over the
        groups whose risk set holds row k: those of the chunk, plus ``after2[c]``
        for the rows of its last stratum segment, the coefficients of the later
        chunks' groups, which is how the S2 carries enter), and the rank-one terms
        of all event groups are gathered as the columns of a second matrix of
        weight -1; both Gram matrices are formed from the transposed rows ``XT``
        by blocked dot products, which vectorise, instead of p x p updates per row.
        """
        p = XT.shape[0]
        has_w = w.size > 0
        a1 = vec[0]
        ls = vec[1]
        as_ = vec[2]
        M = mat[0]  # the rank-one columns (at most one per row: two for a tied group)
        Z = mat[1]
        wt = col[0]
        gv = col[1]
        for c in range(c_lo, c_hi):
            lo = chunk_start[c]
            hi = chunk_start[c + 1]
            nrow = hi - lo
            l1 = l1s[c]
            grad = grads[c]
            info = infos[c]
            u = us[c]
            s0_carry = c0[c]
            if need_h:
                for k in range(nrow):
                    wt[k] = 0.0
                    gv[k] = 0.0
            S0 = s0_carry
            ll = 0.0
            alpha = 0.0
            beta0 = 0.0
            first_seg = True
            last_start = lo
            ng = 0
            i = lo
            while i < hi:
                if i > lo and (flags[i] & FLAG_STRATUM) != 0:
                    S0 = 0.0
                    for a in range(p):
                        l1[a] = 0.0
                    first_seg = False
                    last_start = i
                j = i + 1
                while j < hi and (flags[j] & FLAG_GROUP) == 0:
                    j += 1
                m = 0
                dw = 0.0
                A = 0.0
                for k in range(i, j):
                    rk = r[k]
                    S0 += rk
                    for a in range(p):
                        l1[a] += rk * XT[a, k]
                    wk = w[k] if has_w else 1.0
                    if event[k] != 0 and wk > 0.0:  # a row of zero weight is as if absent
                        m += 1
                        dw += wk
                        for a in range(p):
                            grad[a] += wk * XT[a, k]
                        if efron and j > i + 1:  # (one row cannot hold tied events)
                            if m == 1:
                                A = 0.0
                                for a in range(p):
                                    a1[a] = 0.0
                            A += rk
                            for a in range(p):
                                a1[a] += rk * XT[a, k]
                if m > 0:
                    # Everything is scaled by 1/S0 so that tiny risk-set sums (eta far
                    # below the stratum's shift) never square into underflow: ls = S1/S0,
                    # as_ = A1/S0, and the Efron weights are sums over d_l / S0 in (1/m, 1].
                    inv = 1.0 / S0
                    q0 = s0_carry * inv
                    for a in range(p):
                        ls[a] = l1[a] * inv
                    ab0 = dw
                    ae1 = 0.0
                    bb0 = dw
                    bb1 = 0.0
                    bb2 = 0.0
                    tied = False
                    if efron:
                        tied = m > 1
                    if not tied:
                        ll -= dw * np.log(S0)
                    else:
                        for a in range(p):
                            as_[a] = a1[a] * inv
                        wq = dw / m
                        fa = A * inv
                        ab0 = 0.0
                        bb0 = 0.0
                        for q in range(m):
                            f = q / m
                            dl = 1.0 - f * fa
                            t1 = wq / dl
                            ab0 += t1
                            ae1 += t1 * f
                            t2 = t1 / dl
                            bb0 += t2
                            bb1 += t2 * f
                            bb2 += t2 * f * f
                            ll -= wq * np.log(S0 - f * A)
                    for a in range(p):
                        grad[a] -= ls[a] * ab0
                    if efron and tied:
                        for a in range(p):
                            grad[a] += as_[a] * ae1
                    if need_h:
                        # S2 term (inv*ab0) S2_g, by parts; Efron's -(inv*ae1) A2_g on
                        # event rows
                        gv[j - 1 - lo] = inv * ab0
                        # rank-one term bb0 * ls ls^T: a column of weight -1
                        sq = np.sqrt(bb0)
                        if efron and tied:
                            cc = inv * ae1
                            for k in range(i, j):
                                if event[k] != 0:
                                    wt[k - lo] -= cc * r[k]
                            # with Efron's rank-two term bb1 (ls as^T + as ls^T) - bb2 as as^T:
                            # -(bb0 - bb1^2/bb2) ls ls^T - bb2 v v^T, v = as - (bb1/bb2) ls,
                            # two columns of weight -1 (bb1^2 <= bb0 bb2 by Cauchy-Schwarz)
                            # instead of a p x p update per tied group
                            ratio = bb1 / bb2
                            sq = np.sqrt(max(bb0 - bb1 * ratio, 0.0))
                            sv = np.sqrt(bb2)
                            for a in range(p):
                                M[a, ng] = sv * (as_[a] - ratio * ls[a])
                            ng += 1
                        for a in range(p):
                            M[a, ng] = sq * ls[a]
                        ng += 1
                    if first_seg and q0 > 0.0:
                        # corrections for the S1 carries, scaled by the S0 carry C0:
                        # alpha = C0 sum a0, beta0 = C0^2 sum b0, u = C0 sum (b0 S1 - b1 A1)
                        alpha += ab0 * q0
                        beta0 += bb0 * q0 * q0
                        for a in range(p):
                            u[a] += bb0 * q0 * ls[a]
                        if efron and tied:
                            for a in range(p):
                                u[a] -= bb1 * q0 * as_[a]
                i = j
            if need_h:
                # suffix sums of the group values within each stratum segment of the
                # chunk; the last segment's rows also belong to the later chunks' risk sets
                acc = after2[c]
                for k in range(nrow - 1, -1, -1):
                    acc += gv[k]
                    wt[k] += r[lo + k] * acc
                    if (flags[lo + k] & FLAG_STRATUM) != 0:
                        acc = 0.0
                # both Gram products are summed negated (the weighted rows negated, the
                # rank-one columns as they are, with no negated copy), then the sum is
                # negated back: the same bits as the sums of the two terms
                for a in range(p):
                    xa = XT[a, lo:hi]
                    za = Z[a]
                    for k in range(nrow):
                        za[k] = -wt[k] * xa[k]
                zero = np.int64(0)  # not the literal 0: one compiled _gram serves every call
                _gram(Z, XT, zero, np.int64(nrow), np.int64(lo), info, full)
                _gram(M, M, zero, np.int64(ng), zero, info, full)
                for a in range(p):
                    for b in range(a, p if full else a + 1):
                        info[a, b] = -info[a, b]
                if tail2:
                    t0 = last_start - lo
                    rt = r[last_start:hi]
                    for a in range(p):
                        xa = XT[a, last_start:hi]
                        za = Z[a, t0:nrow]
                        for k in range(nrow - t0):
                            za[k] = rt[k] * xa[k]
                    _gram(Z, XT, np.int64(t0), np.int64(nrow), np.int64(lo), l2s[c], full)
            res[c, 0] = ll
            res[c, 1] = alpha
            res[c, 2] = beta0

    return fused_chunks


_FUSED = {}  # (ties, hess_mode, tail2) -> pass 3 for them


def _fused(ties, hess_mode, tail2):
    """Pass 3's variant for ``(ties, hess_mode, tail2)``, made on first use."""
    key = (int(ties), int(hess_mode), bool(tail2))
    fn = _FUSED.get(key)
    if fn is None:
        fn = _FUSED.setdefault(key, _make_fused_chunks(key[0] == EFRON, key[1], key[2]))
    return fn


def cox_block(XT, eta, w, event, flags, shift, chunk_start, chunk_stratum, ties, hess_mode,
              carry_s0, carry_s1, carry_s2, r, out_ll, out_grad, out_hess, out_seg,
              s2_tail=True):
    """Log partial likelihood, gradient and Hessian of one block; see the module docstring.

    ``XT`` (p, n) holds the block's covariates transposed, one row per covariate
    (C-contiguous: :func:`gather_rows` writes it; ``X.T`` of a Fortran-ordered ``X``).

    ``r`` (n,) is scratch space (left holding ``w exp(eta - shift)``).
    ``carry_*`` hold the carry-in on entry and the carry-out on return.

    ``out_seg`` (p + 2,) receives ``[alpha, beta0, u]``: how the S1/S2 carry-in
    enters the block's results, for a caller that learns it only afterwards
    (a distributed one, whose S1/S2 carries are scanned from the carry-outs).
    Run with the true S0 carry and S1/S2 carries ``C1``, ``C2``, the block's
    gradient and Hessian equal those of a run with zero S1/S2 carries plus
    ``-C1 alpha`` and ``-C2 alpha + beta0 C1 C1^T + C1 u^T + u C1^T``. All
    zero when the block starts a stratum.

    With ``s2_tail=False`` the S2 carry-out is not formed (``carry_s2`` keeps
    its carry-in): a caller with one block needs none, and forming it costs a
    second weighted Gram matrix over the block's last stratum.
    """
    nc = chunk_start.size - 1
    p = XT.shape[0]
    tail0 = np.empty(nc)
    had = np.empty(nc, dtype=np.bool_)
    lle = np.empty(nc)
    run_chunks(_rates_chunks, nc, eta, w, event, flags, shift, chunk_start, chunk_stratum, r,
               tail0, had, lle)
    # S0 carries: a segmented exclusive scan over the chunks (nc is small)
    c0 = np.empty(nc)
    run = float(carry_s0[0])
    starts = (flags[chunk_start[:nc]] & FLAG_STRATUM).tolist()
    for c, (st, t, h) in enumerate(zip(starts, tail0.tolist(), had.tolist(), strict=True)):
        if st:
            run = 0.0
        c0[c] = run
        run = t if h else run + t
    carry_s0[0] = run
    need_h = hess_mode != HESS_NONE
    starts = flags[chunk_start[:nc]] & FLAG_STRATUM != 0
    after2 = np.zeros(nc)
    if need_h:
        # the S2 carries fold into pass 3's Gram matrix: a row of a chunk's last stratum
        # segment is also in the risk sets of the later chunks' first segments, whose
        # S2 coefficients sum to after2[c]
        al = np.zeros(nc)
        if nc > 1:  # al[0] reaches no after2: one chunk needs no pass 2 (nor its compilation)
            run_chunks(_first_weights, nc, r, w, event, flags, chunk_start, c0,
                       int(ties) == EFRON, al)
        acc = 0.0
        for c, (st, h, a) in enumerate(zip(starts[::-1].tolist(), had[::-1].tolist(),
                                           al[::-1].tolist(), strict=True)):
            after2[nc - 1 - c] = acc
            acc = 0.0 if st else (a if h else acc + a)
    tail2 = bool(s2_tail) and need_h
    l1 = np.zeros((nc, p))
    l2 = np.zeros((nc, p, p) if tail2 else (0, p, p))
    g = np.zeros((nc, p))
    info = np.zeros((nc, p, p))
    u = np.zeros((nc, p))
    res = np.empty((nc, 3))

    def scratch(lo, hi):
        width = int(np.diff(chunk_start[lo:hi + 1]).max()) if need_h else 0
        return np.empty((3, p)), np.empty((2, p, width)), np.empty((2, width))

    run_chunks(_fused(ties, hess_mode, tail2), nc, XT, r, w, event, flags, chunk_start, c0,
               after2, l1, l2, g, info, u, res, scratch=scratch)
    _combine(starts, hess_mode, tail2, carry_s1, carry_s2, c0, had, lle, res, l1, l2, g, info,
             u, out_ll, out_grad, out_hess, out_seg)


def _segmented_carries(starts, had, carry_in, tails):
    """The carries each chunk sees: S1 (or S2) of the rows before it in its stratum.

    ``tails[c]`` is chunk ``c``'s sum since its last stratum start (the whole chunk
    when ``had[c]`` is False); ``starts[c]``: the chunk's first row starts a
    stratum. Running sums per run of chunks, never a total minus a prefix.
    """
    nc = tails.shape[0]
    after = np.empty_like(tails)
    heads = np.flatnonzero(had).tolist()
    bounds = [0] + [h for h in heads if h > 0] + [nc]
    for k in range(len(bounds) - 1):
        lo, hi = bounds[k], bounds[k + 1]
        np.cumsum(tails[lo:hi], axis=0, out=after[lo:hi])
        if lo == 0 and not had[0] and not starts[0]:
            after[lo:hi] += carry_in
    before = np.empty_like(tails)
    before[0] = 0.0 if starts[0] else carry_in
    before[1:] = after[:-1]
    before[starts] = 0.0
    return before, after[-1]


def _combine(starts, hess_mode, tail2, carry_s1, carry_s2, c0, had, lle, res, l1, l2, g,
             info, u, out_ll, out_grad, out_hess, out_seg):
    """Add the S1 carries (and the S2 carry-in) to the chunks' results; sum them."""
    nc, p = l1.shape
    C1, carry_s1[:] = _segmented_carries(starts, had, carry_s1, l1)
    with np.errstate(divide="ignore"):
        sc = np.where(c0 > 0.0, 1.0 / c0, 0.0)  # the corrections were scaled by the S0 carry
    al = res[:, 1] * sc
    with np.errstate(over="ignore", invalid="ignore"):
        be = res[:, 2] * sc * sc
    out_ll[0] = res[:, 0].sum() + lle.sum()
    out_grad[:] = g.sum(axis=0) - al @ C1
    # the carry-in's share: chunks of the first stratum segment, each of which sees the
    # carry C1_in + P1 (P1: the block's own S1 before it)
    first = np.flatnonzero(starts[1:] | had[:-1])
    nfirst = 0 if starts[0] else (int(first[0]) + 1 if first.size else nc)
    P1 = np.zeros((nfirst, p))
    if nfirst > 1:
        np.cumsum(l1[:nfirst - 1], axis=0, out=P1[1:])
    out_seg[0] = al[:nfirst].sum()
    out_seg[1] = be[:nfirst].sum()
    out_seg[2:] = sc[:nfirst] @ u[:nfirst] + be[:nfirst] @ P1
    out_hess[:, :] = 0.0
    if hess_mode == HESS_NONE:
        return
    c2_in = np.triu(carry_s2 if hess_mode == HESS_FULL else np.diag(np.diag(carry_s2)))
    m1 = C1 * sc[:, None]  # scaled first: C1 is of the order of the S0 carry
    su = m1.T @ u
    # the block's own S2 carries are folded into info; only the carry-in is added here
    H = np.triu(info.sum(axis=0) + out_seg[0] * c2_in
                - (m1 * res[:, 2:3]).T @ m1 - su - su.T)
    if tail2:
        c2_out = _segmented_carries(starts, had, c2_in, l2)[1]
    if hess_mode == HESS_DIAG:
        np.fill_diagonal(out_hess, -np.diag(H))
        if tail2:
            np.fill_diagonal(carry_s2, np.diag(c2_out))
        return
    out_hess[:, :] = -(H + np.triu(H, 1).T)
    if tail2:
        carry_s2[:, :] = c2_out + np.triu(c2_out, 1).T


_ROW_BLOCK = 4096  # rows per block of the gather: its buffer (p x 4096) stays in L2


def _gather_blocks(b_lo, b_hi, X, order, center, out):
    """Blocks ``[b_lo, b_hi)`` of :func:`gather_rows`: NumPy, which releases the GIL.

    One buffer per call (not one per block: a fresh allocation of that size is
    fresh pages, whose first touch costs as much as the copy).
    """
    buf = np.empty((_ROW_BLOCK, X.shape[1]))
    for b in range(b_lo, b_hi):
        lo = b * _ROW_BLOCK
        hi = min(order.size, lo + _ROW_BLOCK)
        rows = buf[:hi - lo]
        np.take(X, order[lo:hi], axis=0, mode="clip", out=rows)  # "raise" would buffer a copy
        rows -= center
        out[:, lo:hi] = rows.T


def gather_rows(X, order, center, out):
    """``out[:, i] = X[order[i]] - center``: a centred, permuted and transposed copy.

    ``out`` is (p, n) C-contiguous, the layout :func:`cox_block` reads. Blocks of
    rows are gathered and transposed through a small buffer, on the Numba thread
    count (:func:`run_chunks`). NumPy, not a kernel: the first write to the fresh
    pages of ``out`` costs as much as the copy itself, so a compiled gather
    (tried: with software prefetch) gains nothing at 1e7 rows and costs 0.3 s of
    compilation in a fresh environment.
    """
    nb = (order.size + _ROW_BLOCK - 1) // _ROW_BLOCK
    run_chunks(_gather_blocks, nb, X, order, center, out)


_SOURCE_BLOCK = 1 << 16  # rows per block of removal_sources: its temporaries stay in cache


def _source_blocks(b_lo, b_hi, order, rows, n, event, weights, src, event_out, w_out):
    """Blocks ``[b_lo, b_hi)`` of :func:`removal_sources`: NumPy, which releases the GIL."""
    for b in range(b_lo, b_hi):
        lo = b * _SOURCE_BLOCK
        hi = min(order.size, lo + _SOURCE_BLOCK)
        o = order[lo:hi]
        s = src[lo:hi]
        e = event_out[lo:hi]
        w = w_out[lo:hi]
        removal = o >= n
        np.copyto(s, o)
        s[removal] = rows[o[removal] - n]
        np.take(event, s, out=e)
        e[removal] = 0
        if weights is None:
            w.fill(1.0)
            w[removal] = -1.0
        else:
            np.take(weights, s, out=w)
            np.negative(w, out=w, where=removal)


def removal_sources(order, rows, n, event, weights, src, event_out, w_out):
    """The source row, event and weight of every sorted row of ``(entry, time]`` data.

    ``order`` indexes the ``n`` rows and, from ``n`` on, the removal rows:
    removal row ``n + k`` is row ``rows[k]`` again at its entry time. Fills
    ``src[i]`` (the row ``order[i]`` stands for), ``event_out[i]`` (its event,
    0 on a removal row) and ``w_out[i]`` (its weight, or 1 when ``weights`` is
    None, negated on a removal row). One pass in blocks on the Numba thread
    count (:func:`run_chunks`), whose temporaries stay in cache: the same
    arithmetic as NumPy over whole arrays, which took twice as long at 1.5e7
    rows (see docs/performance.md).

    Examples
    --------
    >>> order = np.array([2, 0, 3, 1])  # rows 0..2, then removal row 3: row 1 at its entry
    >>> src, ev, w = np.empty(4, np.int64), np.empty(4, np.uint8), np.empty(4)
    >>> removal_sources(order, np.array([1]), 3, np.array([1, 1, 0], np.uint8), None,
    ...                 src, ev, w)
    >>> src.tolist(), ev.tolist(), w.tolist()
    ([2, 0, 1, 1], [0, 1, 0, 1], [1.0, 1.0, -1.0, 1.0])
    """
    nb = (order.size + _SOURCE_BLOCK - 1) // _SOURCE_BLOCK
    run_chunks(_source_blocks, nb, order, rows, n, event, weights, src, event_out, w_out)


def column_means(X, column_sums=None):
    """The column means of ``X`` (n, p) in one pass: ``einsum`` (at 1e7 x 10, 0.11 s
    against 0.25 s for NumPy's ``mean(axis=0)`` and 0.22 s for a BLAS ``ones @ X``).

    ``column_sums``: those sums, already computed by the same ``einsum`` (by
    :func:`first_nonfinite_row`, when the arguments were checked), so no pass is made
    and the means are the same to the bit."""
    n, p = X.shape
    if n == 0:
        return np.zeros(p)
    if column_sums is None:
        column_sums = np.einsum("ij->j", X)
    return column_sums / n


def group_layout(flags, target):
    """Chunks of about ``target`` rows for :func:`group_sums`, cut at tie-group starts.

    Returns ``(chunk_start, first_group, ngroups)``: ``chunk_start`` (nc + 1)
    as :func:`chunk_layout` cuts it, ``first_group[c]`` the index of the tie
    group starting chunk ``c`` (the groups before it), and the number of groups.

    Examples
    --------
    >>> flags = np.array([3, 0, 1, 1, 0, 0, 1], dtype=np.uint8)  # groups at 0, 2, 3 and 6
    >>> chunk_start, first_group, ng = group_layout(flags, 3)
    >>> chunk_start.tolist(), first_group.tolist(), ng
    ([0, 3, 6, 7], [0, 2, 3], 4)
    """
    n = flags.size
    if n == 0:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), 0
    cs = np.empty(n // target + 2, dtype=np.int64)
    cst = np.empty(n // target + 2, dtype=np.int64)
    nc = chunk_layout(flags, target, 0, cs, cst)
    chunk_start = cs[:nc + 1].copy()
    counts = np.add.reduceat(flags & FLAG_GROUP, chunk_start[:-1], dtype=np.int64)
    first_group = np.zeros(nc, dtype=np.int64)
    np.cumsum(counts[:-1], out=first_group[1:])
    return chunk_start, first_group, int(counts.sum())


@njit(cache=True, nogil=True)
def group_sums(c_lo, c_hi, chunk_start, first_group, flags, time, codes, event, w, r,
               stratum, gtime, sums, deaths, keep):
    """Chunks ``[c_lo, c_hi)`` of rows sorted by (stratum, time descending), reduced to one
    entry per tie group (``FLAG_GROUP`` in ``flags`` starts one).

    Chunks as :func:`group_layout` gives them; run on threads by
    :func:`run_chunks` (each chunk writes its own groups). ``codes`` (int64
    stratum codes) and ``w`` (case weights) may be empty; ``r`` holds the rows'
    ``w exp(eta - shift)``. Fills per group its stratum code and time,
    ``sums[:, g]`` = (``risk``: the sum of ``r``; ``events``: the weight of its
    events of positive weight; ``event_risk``: their ``r``; ``present``: its
    rows of positive weight), ``deaths`` (the number of those events) and
    ``keep`` (some row's weight is nonzero). The outputs must be zero on entry.
    """
    has_c = codes.size > 0
    has_w = w.size > 0
    for c in range(c_lo, c_hi):
        g = first_group[c] - 1
        for i in range(chunk_start[c], chunk_start[c + 1]):
            if flags[i] & FLAG_GROUP:
                g += 1
                gtime[g] = time[i]
                if has_c:
                    stratum[g] = codes[i]
            wi = w[i] if has_w else 1.0
            sums[0, g] += r[i]
            if wi != 0.0:
                keep[g] = True
            if wi > 0.0:
                sums[3, g] += 1.0
                if event[i] != 0:
                    sums[1, g] += wi
                    deaths[g] += 1
                    sums[2, g] += r[i]


def tie_flags(time, strata, flags):
    """Fill ``flags`` for rows sorted by stratum then time; ``strata`` may be empty."""
    n = time.size
    if n == 0:
        return
    flags[0] = FLAG_GROUP | FLAG_STRATUM
    np.multiply(time[1:] != time[:-1], FLAG_GROUP, out=flags[1:], casting="unsafe")
    if strata.size > 0:
        new = strata[1:] != strata[:-1]
        flags[1:][new] = FLAG_GROUP | FLAG_STRATUM


def first_nonfinite_row(X, column_sums=None):
    """Return the first row of ``X`` (n, p) float64 holding a NaN or an infinity, or -1.

    The column sums come first (one pass, ``einsum``; at 1e7 x 10 a third of the
    time of the row sums): all finite, no entry can be NaN or infinite. Otherwise
    one matrix-vector product finds the candidates (a NaN or an infinity makes
    its row's sum non-finite; finite rows whose sum overflows are checked again).
    ``column_sums`` (float64, p): filled with those sums (when ``X`` has entries),
    so that a caller needing them, as :func:`column_means` does, saves that pass.
    """
    n, p = X.shape
    if n == 0 or p == 0:
        return -1
    sums = np.einsum("ij->j", X, out=column_sums)
    if np.isfinite(sums).all():
        return -1
    cand = np.flatnonzero(~np.isfinite(X @ np.ones(p)))
    if cand.size:
        bad = cand[~np.isfinite(X[cand]).all(axis=1)]
        if bad.size:
            return int(bad[0])
    return -1
