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

- ``X`` (n, p) float64: covariates (any memory layout; C order is fastest).
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
products over a transposed copy of the chunk, never an ``N x p x p`` array.
Finally, serially and in chunk order, the S1/S2 carries are formed from the
chunks' tails and added through three correction accumulators (the carries
enter the gradient and Hessian linearly and quadratically, so pass 3 need not
know them), and the chunk results are summed. Each group term is scaled by its
own ``1/S0`` so that risk sets far below the stratum's shift cannot underflow
when squared.

Ties: ``BRESLOW`` (0) or ``EFRON`` (1). Efron follows R's survival::coxph: a
tie group with ``m`` events of total weight ``D`` contributes, for
``l = 0..m-1``, ``-(D/m) log(S0 - (l/m) A)`` with ``A`` the events' share of S0.

Outputs: ``out_ll`` (1,), ``out_grad`` (p,) and ``out_hess`` (p, p): the log
partial likelihood of the block (with the shifts cancelled, so the true value),
its gradient and its Hessian (negative semidefinite). ``hess_mode``:
``HESS_NONE`` (0) leaves ``out_hess`` zero, ``HESS_DIAG`` (1) fills only its
diagonal, ``HESS_FULL`` (2) fills it all.
"""

import numpy as np
from numba import njit, prange

FLAG_GROUP = 1
FLAG_STRATUM = 2
BRESLOW = 0
EFRON = 1
HESS_NONE = 0
HESS_DIAG = 1
HESS_FULL = 2


@njit(cache=True)
def chunk_layout(flags, target, stratum0, chunk_start, chunk_stratum):
    """Cut rows into chunks of about ``target`` rows at tie-group starts.

    ``chunk_start`` must have room for ``n // target + 2`` entries and
    ``chunk_stratum`` for ``n // target + 1``; ``stratum0`` is the stratum index
    of row 0. Returns the number of chunks ``nc``: ``chunk_start[:nc + 1]`` and
    ``chunk_stratum[:nc]`` are filled.
    """
    n = flags.size
    nc = 0
    chunk_start[0] = 0
    s = stratum0
    next_cut = target
    for i in range(n):
        if i > 0 and (flags[i] & FLAG_STRATUM) != 0:
            s += 1
        if i == 0:
            chunk_stratum[0] = s
        elif i >= next_cut and (flags[i] & FLAG_GROUP) != 0:
            nc += 1
            chunk_start[nc] = i
            chunk_stratum[nc] = s
            next_cut = i + target
    nc += 1
    chunk_start[nc] = n
    return nc


@njit(parallel=True, cache=True)
def linear_predictor(X, beta, offset, flags, chunk_start, chunk_stratum, eta, smax):
    """Fill ``eta = X @ beta + offset`` (``offset`` may be empty) and ``smax``.

    ``smax`` (nstrata,) receives the largest ``eta`` of each stratum present in
    the block and ``-inf`` for the others.
    """
    nc = chunk_start.size - 1
    p = beta.size
    has_off = offset.size > 0
    first_max = np.full(nc, -np.inf)
    last_max = np.full(nc, -np.inf)
    last_s = np.empty(nc, dtype=np.int64)
    for s in range(smax.size):
        smax[s] = -np.inf
    for c in prange(nc):
        lo = chunk_start[c]
        hi = chunk_start[c + 1]
        s = chunk_stratum[c]
        first = True
        cur = -np.inf
        for i in range(lo, hi):
            if i > lo and (flags[i] & FLAG_STRATUM) != 0:
                if first:
                    first_max[c] = cur
                    first = False
                else:
                    smax[s] = cur  # a stratum wholly inside this chunk
                s += 1
                cur = -np.inf
            v = 0.0
            for j in range(p):
                v += X[i, j] * beta[j]
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
    for c in range(nc):
        s0 = chunk_stratum[c]
        if first_max[c] > smax[s0]:
            smax[s0] = first_max[c]
        if last_max[c] > smax[last_s[c]]:
            smax[last_s[c]] = last_max[c]


@njit(cache=True)
def _rates_chunk(eta, w, event, flags, shift, lo, hi, s, r):
    """Pass 1 on one chunk: r, the S0 tail, whether a stratum starts, event term."""
    has_w = w.size > 0
    tail = 0.0
    had = False
    lle = 0.0
    for i in range(lo, hi):
        if (flags[i] & FLAG_STRATUM) != 0:
            if i > lo:
                s += 1
            tail = 0.0
            had = True
        e = eta[i] - shift[s]
        wi = w[i] if has_w else 1.0
        ri = wi * np.exp(e)
        r[i] = ri
        tail += ri
        if event[i] != 0:
            lle += wi * e
    return tail, had, lle


@njit(cache=True, fastmath=True)
def _wdot(w, x, y, lo, hi):
    """sum(w[k] * x[k] * y[k] for k in [lo, hi)), vectorised (reassociated)."""
    s = 0.0
    for k in range(lo, hi):
        s += w[k] * x[k] * y[k]
    return s


@njit(cache=True, fastmath=True)
def _dot2(x, y, lo, hi):
    s = 0.0
    for k in range(lo, hi):
        s += x[k] * y[k]
    return s


_TILE = 256


@njit(cache=True, error_model="numpy")
def _fused_chunk(X, r, w, event, flags, lo, hi, s0_carry, ties, hmode,
                 l1_out, l2_out, grad_out, info_out, u_out):
    """Pass 3 on one chunk; S1/S2 start from zero (their carries are added later).

    Accumulates into ``grad`` and ``info`` (minus the Hessian, upper triangle)
    and the correction vector ``u``; leaves in ``l1``/``l2`` the S1/S2 tails
    since the chunk's last stratum start. Returns (ll, alpha, beta0).

    The S2-type Hessian terms sum_g c_g S2_g are summed by parts into one weighted
    Gram matrix sum_k r_k W_k x_k x_k^T (W_k: the sum of c_g over the groups whose
    risk set holds row k, within the chunk), and the rank-one terms of all event
    groups are batched; both are then formed as dot products over a transposed
    copy of the chunk, which vectorise, instead of p x p updates per row.
    """
    p = X.shape[1]
    nrow = hi - lo
    need_h = hmode != HESS_NONE
    full = hmode == HESS_FULL
    hcols = nrow if need_h else 0
    XT = np.empty((p, hcols))
    MT = np.empty((p, hcols))
    rw = np.zeros(hcols)
    rl = np.empty(hcols)
    gv = np.zeros(hcols)
    l1 = np.zeros(p)
    grad = np.zeros(p)
    info = np.zeros((p, p))
    u = np.zeros(p)
    has_w = w.size > 0
    efron = ties == EFRON
    a1 = np.zeros(p)
    ls = np.empty(p)
    as_ = np.empty(p)
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
            l1[:] = 0.0
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
                l1[a] += rk * X[k, a]
            if need_h:
                rl[k - lo] = rk
                for a in range(p):
                    XT[a, k - lo] = X[k, a]
            wk = w[k] if has_w else 1.0
            if event[k] != 0 and wk > 0.0:  # a row of zero weight is as if absent
                m += 1
                dw += wk
                for a in range(p):
                    grad[a] += wk * X[k, a]
                if efron:
                    if m == 1:
                        A = rk
                        for a in range(p):
                            a1[a] = rk * X[k, a]
                    else:
                        A += rk
                        for a in range(p):
                            a1[a] += rk * X[k, a]
        if m > 0:
            # Everything is scaled by 1/S0 so that tiny risk-set sums (eta far below
            # the stratum's shift) never square into underflow: ls = S1/S0,
            # as_ = A1/S0, and the Efron weights are sums over d_l / S0 in (1/m, 1].
            inv = 1.0 / S0
            q0 = s0_carry * inv
            for a in range(p):
                ls[a] = l1[a] * inv
            tied = efron and m > 1
            if not tied:
                ab0 = dw
                ae1 = 0.0
                bb0 = dw
                bb1 = 0.0
                bb2 = 0.0
                ll -= dw * np.log(S0)
            else:
                for a in range(p):
                    as_[a] = a1[a] * inv
                wt = dw / m
                fa = A * inv
                ab0 = 0.0
                ae1 = 0.0
                bb0 = 0.0
                bb1 = 0.0
                bb2 = 0.0
                for q in range(m):
                    f = q / m
                    dl = 1.0 - f * fa
                    t1 = wt / dl
                    ab0 += t1
                    ae1 += t1 * f
                    t2 = t1 / dl
                    bb0 += t2
                    bb1 += t2 * f
                    bb2 += t2 * f * f
                    ll -= wt * np.log(S0 - f * A)
            for a in range(p):
                grad[a] -= ls[a] * ab0
            if tied:
                for a in range(p):
                    grad[a] += as_[a] * ae1
            if need_h:
                # S2 term (inv*ab0) S2_g, by parts; Efron's -(inv*ae1) A2_g on event rows
                gv[j - 1 - lo] = inv * ab0
                if tied:
                    c = inv * ae1
                    for k in range(i, j):
                        if event[k] != 0:
                            rw[k - lo] -= c * r[k]
                # rank-one term bb0 * ls ls^T, batched
                sq = np.sqrt(bb0)
                for a in range(p):
                    MT[a, ng] = sq * ls[a]
                ng += 1
                if tied:
                    if full:
                        for a in range(p):
                            la = ls[a]
                            aa = as_[a]
                            for b in range(a, p):
                                info[a, b] += (la * as_[b] + aa * ls[b]) * bb1 - aa * as_[b] * bb2
                    else:
                        for a in range(p):
                            la = ls[a]
                            aa = as_[a]
                            info[a, a] += 2.0 * la * aa * bb1 - aa * aa * bb2
            if first_seg and q0 > 0.0:
                # corrections for the S1/S2 carries, scaled by the S0 carry C0:
                # alpha = C0 sum a0, beta0 = C0^2 sum b0, u = C0 sum (b0 S1 - b1 A1)
                alpha += ab0 * q0
                beta0 += bb0 * q0 * q0
                for a in range(p):
                    u[a] += bb0 * q0 * ls[a]
                if tied:
                    for a in range(p):
                        u[a] -= bb1 * q0 * as_[a]
        i = j
    l2_out[:, :] = 0.0
    if need_h:
        # suffix sums of the group values within each stratum segment of the chunk
        acc = 0.0
        for k in range(nrow - 1, -1, -1):
            acc += gv[k]
            rw[k] += r[lo + k] * acc
            if (flags[lo + k] & FLAG_STRATUM) != 0:
                acc = 0.0
        t0 = last_start - lo
        # tiles of rows keep the p columns of a tile in cache across the p^2 products
        bend = p if full else 1
        for a in range(p):
            xa = XT[a]
            for b in range(a, a + bend if a + bend < p else p):
                xb = XT[b]
                info[a, b] += _wdot(rw, xa, xb, 0, nrow) - _dot2(MT[a], MT[b], 0, ng)
                l2_out[a, b] = _wdot(rl, xa, xb, t0, nrow)
    l1_out[:] = l1
    grad_out[:] = grad
    info_out[:, :] = info
    u_out[:] = u
    return ll, alpha, beta0


@njit(parallel=True, cache=True)
def cox_block(X, eta, w, event, flags, shift, chunk_start, chunk_stratum, ties, hess_mode,
              carry_s0, carry_s1, carry_s2, r, out_ll, out_grad, out_hess, out_seg):
    """Log partial likelihood, gradient and Hessian of one block; see the module docstring.

    ``r`` (n,) is scratch space (left holding ``w exp(eta - shift)``).
    ``carry_*`` hold the carry-in on entry and the carry-out on return.

    ``out_seg`` (p + 2,) receives ``[alpha, beta0, u]``: how the S1/S2 carry-in
    enters the block's results, for a caller that learns it only afterwards
    (a distributed one, whose S1/S2 carries are scanned from the carry-outs).
    Run with the true S0 carry and S1/S2 carries ``C1``, ``C2``, the block's
    gradient and Hessian equal those of a run with zero S1/S2 carries plus
    ``-C1 alpha`` and ``-C2 alpha + beta0 C1 C1^T + C1 u^T + u C1^T``. All
    zero when the block starts a stratum.
    """
    nc = chunk_start.size - 1
    p = X.shape[1]
    tail0 = np.empty(nc)
    had = np.empty(nc, dtype=np.bool_)
    lle = np.empty(nc)
    for c in prange(nc):
        t, h, e = _rates_chunk(eta, w, event, flags, shift, chunk_start[c],
                               chunk_start[c + 1], chunk_stratum[c], r)
        tail0[c] = t
        had[c] = h
        lle[c] = e
    # S0 carries: a segmented exclusive scan over the chunks.
    c0 = np.empty(nc)
    run = carry_s0[0]
    for c in range(nc):
        if (flags[chunk_start[c]] & FLAG_STRATUM) != 0:
            run = 0.0
        c0[c] = run
        run = tail0[c] if had[c] else run + tail0[c]
    carry_s0[0] = run

    l1 = np.zeros((nc, p))
    l2 = np.zeros((nc, p, p))
    g = np.zeros((nc, p))
    info = np.zeros((nc, p, p))
    u = np.zeros((nc, p))
    llc = np.empty(nc)
    alpha = np.empty(nc)
    beta0 = np.empty(nc)
    for c in prange(nc):
        a, b, d = _fused_chunk(X, r, w, event, flags, chunk_start[c], chunk_start[c + 1],
                               c0[c], ties, hess_mode, l1[c], l2[c], g[c], info[c], u[c])
        llc[c] = a
        alpha[c] = b
        beta0[c] = d

    # Serial combine in chunk order: add the S1/S2 carries through the corrections.
    C1 = np.empty(p)
    C2 = np.zeros((p, p))
    for a in range(p):
        C1[a] = carry_s1[a]
        if hess_mode == HESS_FULL:
            for b in range(a, p):
                C2[a, b] = carry_s2[a, b]
        elif hess_mode == HESS_DIAG:
            C2[a, a] = carry_s2[a, a]
    ll = 0.0
    G = np.zeros(p)
    H = np.zeros((p, p))
    # the carry-in's share of the corrections, over the chunks of the first stratum
    # segment: chunk c sees the carry C1_in + P1 (P1: the block's own S1 before c)
    in_first = True
    seg_alpha = 0.0
    seg_beta0 = 0.0
    seg_u = np.zeros(p)
    P1 = np.zeros(p)
    for c in range(nc):
        if (flags[chunk_start[c]] & FLAG_STRATUM) != 0:
            C1[:] = 0.0
            C2[:, :] = 0.0
            in_first = False
        ll += llc[c] + lle[c]
        al = alpha[c]
        be = beta0[c]
        # the corrections were scaled by the chunk's S0 carry; scale the carries back
        sc = 1.0 / c0[c] if c0[c] > 0.0 else 0.0
        if in_first:
            seg_alpha += sc * al
            seg_beta0 += sc * sc * be
            for a in range(p):
                seg_u[a] += sc * u[c, a] + sc * sc * be * P1[a]
            if had[c]:
                in_first = False
            else:
                for a in range(p):
                    P1[a] += l1[c, a]
        for a in range(p):
            G[a] += g[c, a] - C1[a] * sc * al
        if hess_mode == HESS_FULL:
            for a in range(p):
                m1a = C1[a] * sc
                for b in range(a, p):
                    m1b = C1[b] * sc
                    H[a, b] += (info[c, a, b] + C2[a, b] * sc * al - m1a * m1b * be
                                - m1a * u[c, b] - u[c, a] * m1b)
        elif hess_mode == HESS_DIAG:
            for a in range(p):
                m1a = C1[a] * sc
                H[a, a] += (info[c, a, a] + C2[a, a] * sc * al - m1a * m1a * be
                            - 2.0 * m1a * u[c, a])
        if had[c]:
            for a in range(p):
                C1[a] = l1[c, a]
            C2[:, :] = l2[c]
        else:
            for a in range(p):
                C1[a] += l1[c, a]
            C2 += l2[c]
    out_ll[0] = ll
    out_seg[0] = seg_alpha
    out_seg[1] = seg_beta0
    for a in range(p):
        out_seg[2 + a] = seg_u[a]
        out_grad[a] = G[a]
        carry_s1[a] = C1[a]
        for b in range(p):
            out_hess[a, b] = 0.0
    if hess_mode == HESS_FULL:
        for a in range(p):
            for b in range(a, p):
                out_hess[a, b] = -H[a, b]
                out_hess[b, a] = -H[a, b]
                carry_s2[a, b] = C2[a, b]
                carry_s2[b, a] = C2[a, b]
    elif hess_mode == HESS_DIAG:
        for a in range(p):
            out_hess[a, a] = -H[a, a]
            carry_s2[a, a] = C2[a, a]


@njit(parallel=True, cache=True)
def gather_rows(X, order, center, out):
    """``out[i] = X[order[i]] - center`` in parallel (a centred, permuted copy)."""
    n = order.size
    p = X.shape[1]
    for i in prange(n):
        k = order[i]
        for j in range(p):
            out[i, j] = X[k, j] - center[j]


@njit(cache=True)
def tie_flags(time, strata, flags):
    """Fill ``flags`` for rows sorted by stratum then time; ``strata`` may be empty."""
    n = time.size
    has_s = strata.size > 0
    for i in range(n):
        f = 0
        if i == 0:
            f = FLAG_GROUP | FLAG_STRATUM
        elif has_s and strata[i] != strata[i - 1]:
            f = FLAG_GROUP | FLAG_STRATUM
        elif time[i] != time[i - 1]:
            f = FLAG_GROUP
        flags[i] = f


@njit(parallel=True, cache=True)
def first_nonfinite_row(X):
    """Return the first row of ``X`` (n, p) holding a NaN or an infinity, or -1."""
    n = X.shape[0]
    p = X.shape[1]
    nb = 64
    step = (n + nb - 1) // nb
    found = np.full(nb, -1, dtype=np.int64)
    for b in prange(nb):
        lo = b * step
        hi = min(n, lo + step)
        for i in range(lo, hi):
            ok = True
            for j in range(p):
                if not np.isfinite(X[i, j]):
                    ok = False
            if not ok:
                found[b] = i
                break
    for b in range(nb):
        if found[b] >= 0:
            return found[b]
    return -1
