"""The halo-exchange plan without MPI: against a brute-force count, and simulated exchanges."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_halo import needed_rows

from graphpar.mpi import halo as H


def random_op(n, density, seed):
    rng = np.random.default_rng(seed)
    return sp.csr_array(sp.random_array((n, n), density=density, rng=rng, format="csr",
                                        data_sampler=lambda size: rng.uniform(0.5, 2, size)))


def random_offsets(n, p, rng):
    cuts = np.sort(rng.integers(0, n + 1, p - 1))
    return np.concatenate(([0], cuts, [n])).astype(np.int64)


def simulate_forward(plans, Hglob):
    """Each rank's ext buffer filled the way the exchange fills it, from the senders' side."""
    exts = []
    for plan in plans:
        ext = np.zeros((plan.ext_rows, Hglob.shape[1]))
        s = plan.local_start
        ext[s:s + plan.nloc] = Hglob[plan.lo:plan.hi]
        exts.append(ext)
    for q, plan in enumerate(plans):
        if plan.mode == "allgather":
            for r in range(len(plans)):
                if r != q:
                    exts[r][plan.lo:plan.hi] = Hglob[plan.lo:plan.hi]
            continue
        for k, r in enumerate(plan.send_ranks):
            rows = Hglob[plan.lo + plan.send_idx[plan.send_ptr[k]:plan.send_ptr[k + 1]]]
            dst = plans[r]
            j = int(np.flatnonzero(dst.recv_ranks == q)[0])
            a, b = dst.nloc + dst.recv_ptr[j], dst.nloc + dst.recv_ptr[j + 1]
            exts[r][a:b] = rows
    return exts


@settings(max_examples=80, deadline=None)
@given(n=st.integers(0, 30), p=st.integers(1, 5), density=st.floats(0.0, 0.4),
       seed=st.integers(0, 10_000), mode=st.sampled_from([None, "p2p", "allgather"]))
def test_plan_matches_brute_force(n, p, density, seed, mode):
    rng = np.random.default_rng(seed)
    a = random_op(n, density, seed)
    off = random_offsets(n, p, rng)
    plans = H.plan_from_global(a, off, mode=mode)
    needs = needed_rows(a.toarray(), off)
    for r, plan in enumerate(plans):
        assert plan.rank == r and (plan.lo, plan.hi) == (off[r], off[r + 1])
        want = sorted(set().union(*needs[r].values())) if needs[r] else []
        assert plan.halo.tolist() == want
        assert sorted(plan.recv_ranks.tolist()) == sorted(needs[r])
        for k, q in enumerate(plan.recv_ranks):
            assert set(plan.halo[plan.recv_ptr[k]:plan.recv_ptr[k + 1]].tolist()) == needs[r][q]
        sent = {int(q): set((plan.lo + plan.send_idx[plan.send_ptr[k]:plan.send_ptr[k + 1]])
                            .tolist()) for k, q in enumerate(plan.send_ranks)}
        assert sent == {q: needs[q][r] for q in range(p) if r in needs[q]}
    v = H.volume(plans, width=8, itemsize=4)
    brute_recv = np.array([sum(len(s) for s in needs[r].values()) for r in range(p)])
    brute_send = np.array([sum(len(needs[q].get(r, ())) for q in range(p)) for r in range(p)])
    chosen = plans[0].mode
    assert all(pl.mode == chosen for pl in plans)
    if chosen == "p2p":
        np.testing.assert_array_equal(v.recv_rows, brute_recv)
        np.testing.assert_array_equal(v.send_rows, brute_send)
        assert v.total_rows == brute_recv.sum() == brute_send.sum()
        assert v.largest_rows == max(brute_recv.max(initial=0), brute_send.max(initial=0))
    else:
        np.testing.assert_array_equal(v.recv_rows, n - np.diff(off))
        np.testing.assert_array_equal(v.send_rows, np.diff(off) * (p - 1))
    assert v.total_bytes == v.total_rows * 32 and v.largest_bytes == v.largest_rows * 32
    if mode is None and p > 1 and n > 0:
        assert (chosen == "allgather") == (brute_recv.sum() >= H.ALLGATHER_THRESHOLD * (p - 1) * n)

    # the local product on the renumbered columns equals the global product
    Hglob = rng.standard_normal((n, 3))
    exts = simulate_forward(plans, Hglob)
    for plan, ext in zip(plans, exts, strict=True):
        rows = a[plan.lo:plan.hi]
        local = sp.csr_array((rows.data, plan.ext_columns(rows.indices), rows.indptr),
                             shape=(plan.nloc, plan.ext_rows))
        np.testing.assert_allclose(local @ ext, (a @ Hglob)[plan.lo:plan.hi], atol=1e-12)

    # the reverse plan: partial sums of halo rows, added at their owners, give A.T @ G
    G = rng.standard_normal((n, 2))
    grads = []
    partials = []
    for plan in plans:
        rows = a[plan.lo:plan.hi]
        local = sp.csr_array((rows.data, plan.ext_columns(rows.indices), rows.indptr),
                             shape=(plan.nloc, plan.ext_rows))
        partials.append(local.T @ G[plan.lo:plan.hi])
    for plan in plans:
        if plan.mode == "allgather":
            grads.append(sum(pt[plan.lo:plan.hi] for pt in partials))
            continue
        g = partials[plan.rank][:plan.nloc].copy()
        for k, q in enumerate(plan.send_ranks):
            src = plans[q]
            j = int(np.flatnonzero(src.recv_ranks == plan.rank)[0])
            a0, b0 = src.nloc + src.recv_ptr[j], src.nloc + src.recv_ptr[j + 1]
            g[plan.send_idx[plan.send_ptr[k]:plan.send_ptr[k + 1]]] += partials[q][a0:b0]
        grads.append(g)
    got = np.concatenate(grads) if grads else np.zeros((0, 2))
    np.testing.assert_allclose(got, a.T @ G, atol=1e-12)


def test_dense_halo_switches_to_allgather():
    a = np.ones((12, 12))
    assert H.plan_from_global(a, [0, 4, 8, 12])[0].mode == "allgather"
    assert H.plan_from_global(a, [0, 4, 8, 12], mode="p2p")[0].mode == "p2p"
    tridiag = np.eye(12) + np.eye(12, k=1) + np.eye(12, k=-1)
    plans = H.plan_from_global(tridiag, [0, 4, 8, 12])
    assert plans[0].mode == "p2p"
    assert [p.halo.tolist() for p in plans] == [[4], [3, 8], [7]]
    assert H.volume(plans).summary() == (
        "halo 4 rows (16 B) in total, at most 2 rows (8 B) per rank")


def test_bad_plan_inputs():
    a = np.eye(4)
    with pytest.raises(ValueError, match="offsets end at 3"):
        H.plan_from_global(a, [0, 1, 3])
    with pytest.raises(ValueError, match="offsets must rise from 0"):
        H.plan_from_global(a, [1, 4])
    with pytest.raises(ValueError, match="mode must be one of"):
        H.plan_from_global(a, [0, 4], mode="broadcast")
    plan = H.plan_from_global(np.eye(4, k=1), [0, 2, 4])[0]
    with pytest.raises(ValueError, match="neither local nor in the halo"):
        plan.ext_columns([3])
