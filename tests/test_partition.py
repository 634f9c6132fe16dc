"""Property tests of graphpar.mpi.blocks.BlockPartition (no MPI involved)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphpar.mpi.blocks import BlockPartition


def naive_owner(offsets, v):
    for k in range(len(offsets) - 1):
        if offsets[k] <= v < offsets[k + 1]:
            return k
    raise AssertionError("no owner")


def check_partition(p: BlockPartition, n: int, nparts: int):
    off = p.offsets
    assert off.dtype == np.int64 and off.shape == (nparts + 1,)
    assert p.n == n and p.nparts == nparts
    assert off[0] == 0 and off[-1] == n and np.all(np.diff(off) >= 0)
    assert sum(p.size(k) for k in range(nparts)) == n
    assert p.sizes().tolist() == [p.size(k) for k in range(nparts)]
    if n:
        owners = p.owner(np.arange(n))
        assert owners.tolist() == [naive_owner(off, v) for v in range(n)]
        for k in range(nparts):
            a, b = p.range(k)
            assert np.all(owners[a:b] == k)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 300), nparts=st.integers(1, 40))
def test_block_sizes_differ_by_at_most_one(n, nparts):
    p = BlockPartition.block(n, nparts)
    check_partition(p, n, nparts)
    sizes = p.sizes()
    assert sizes.max() - sizes.min() <= 1
    # larger blocks first
    assert np.all(np.diff(sizes) <= 0)


@settings(max_examples=200, deadline=None)
@given(
    degrees=st.lists(st.integers(0, 50), min_size=0, max_size=120),
    nparts=st.integers(1, 12),
    vertex_cost=st.sampled_from([0.0, 1.0, 2.5]),
)
def test_edge_balanced_is_a_partition_and_balanced(degrees, nparts, vertex_cost):
    deg = np.array(degrees, dtype=np.int64)
    indptr = np.zeros(deg.size + 1, dtype=np.int64)
    np.cumsum(deg, out=indptr[1:])
    p = BlockPartition.edge_balanced(indptr, nparts, vertex_cost=vertex_cost)
    check_partition(p, deg.size, nparts)
    work = deg + vertex_cost
    total = work.sum()
    # every cut is within one vertex's work of its ideal position
    cum = np.concatenate([[0.0], np.cumsum(work)])
    heaviest = work.max(initial=0.0)
    for k in range(1, nparts):
        target = total * k / nparts
        assert abs(cum[p.offsets[k]] - target) <= heaviest + 1e-9
    # so no block holds more than its share plus two vertices' work
    for k in range(nparts):
        a, b = p.range(k)
        assert work[a:b].sum() <= total / nparts + 2 * heaviest + 1e-9


def test_edge_balanced_moves_cut_past_a_hub():
    # vertex 0 holds most edges: with two parts it gets a block almost to itself
    indptr = np.array([0, 100, 101, 102, 103, 104])
    p = BlockPartition.edge_balanced(indptr, 2, vertex_cost=0)
    assert p.offsets.tolist() == [0, 1, 5]
    assert BlockPartition.block(5, 2).offsets.tolist() == [0, 3, 5]


@settings(max_examples=100, deadline=None)
@given(sizes=st.lists(st.integers(0, 5), min_size=1, max_size=10))
def test_explicit_offsets_with_empty_parts(sizes):
    off = np.concatenate([[0], np.cumsum(sizes)])
    p = BlockPartition(off)
    check_partition(p, int(off[-1]), len(sizes))


def test_more_parts_than_vertices():
    p = BlockPartition.block(2, 5)
    assert p.sizes().tolist() == [1, 1, 0, 0, 0]
    assert p.owner(1) == 1
    assert p.range(4) == (2, 2)


def test_immutable_hashable_picklable():
    p = BlockPartition.block(10, 3)
    with pytest.raises(AttributeError):
        p.foo = 1
    with pytest.raises(ValueError):
        p.offsets[0] = 5
    q = pickle.loads(pickle.dumps(p))
    assert q == p and hash(q) == hash(p)
    assert p != BlockPartition.block(10, 2)
    src = np.array([0, 3, 10])
    r = BlockPartition(src)
    src[1] = 7
    assert r.offsets.tolist() == [0, 3, 10]


def test_owner_returns_int_for_scalar_and_keeps_shape():
    p = BlockPartition.block(10, 3)
    assert isinstance(p.owner(np.int32(5)), int)
    assert p.owner(np.array([[0, 9], [4, 7]])).tolist() == [[0, 2], [1, 2]]
    assert p.owner(np.array([], dtype=np.int64)).shape == (0,)


@pytest.mark.parametrize(
    ("offsets", "match"),
    [
        ([1, 3], "offsets\\[0\\] must be 0"),
        ([0, 3, 2], "offsets\\[1\\]=3 > offsets\\[2\\]=2"),
        ([0], "length nparts \\+ 1"),
    ],
)
def test_bad_offsets(offsets, match):
    with pytest.raises(ValueError, match=match):
        BlockPartition(offsets)


def test_bad_arguments():
    p = BlockPartition.block(10, 3)
    with pytest.raises(ValueError, match="vertex 10 is out of range"):
        p.owner([0, 10])
    with pytest.raises(ValueError, match="vertex -1"):
        p.owner(-1)
    with pytest.raises(ValueError, match="part = 3 is out of range for 3 parts"):
        p.range(3)
    with pytest.raises(TypeError, match="vertex ids must be integers"):
        p.owner(1.5)
    with pytest.raises(ValueError, match="nparts must be >= 1"):
        BlockPartition.block(5, 0)
    with pytest.raises(ValueError, match="n must be >= 0"):
        BlockPartition.block(-1, 2)
    with pytest.raises(ValueError, match="vertex_cost"):
        BlockPartition.edge_balanced(np.array([0, 1]), 2, vertex_cost=-1)
    with pytest.raises(ValueError, match="non-decreasing"):
        BlockPartition.edge_balanced(np.array([0, 2, 1]), 2)
