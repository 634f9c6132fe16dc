"""Contiguous vertex blocks (:class:`BlockPartition`): which rank owns which vertices; no MPI.

A partition of ``n`` vertices into ``nparts`` parts is given by its offsets:
part ``k`` owns the vertices ``offsets[k] <= v < offsets[k + 1]``. Parts may be
empty (``offsets[k] == offsets[k + 1]``), for example when there are more ranks
than vertices. The same object describes the layout of a distributed graph
(one part per MPI rank) and of any vertex-indexed array spread over ranks.

Instances are pure and immutable. The partitioners that choose *which*
vertices go together (METIS, hypergraph, ...) are in
:mod:`graphpar.mpi.vertex_partitioners`; they renumber the vertices so that
each part is one such block.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BlockPartition"]


def _as_index_array(v) -> np.ndarray:
    arr = np.asarray(v)
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"vertex ids must be integers, got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)


class BlockPartition:
    """A partition of vertices ``0 .. n-1`` into ``nparts`` contiguous blocks.

    Parameters
    ----------
    offsets : array_like of int, shape (nparts + 1,)
        Non-decreasing, ``offsets[0] == 0``; ``offsets[-1]`` is ``n``. Copied
        into a read-only int64 array.

    Attributes
    ----------
    offsets : ndarray of int64, shape (nparts + 1,)
        Read-only block boundaries.
    nparts : int
        Number of parts.
    n : int
        Number of vertices.

    Notes
    -----
    Instances are immutable and hashable; two partitions are equal when their
    offsets are equal. Build them with :meth:`block` (equal vertex counts) or
    :meth:`edge_balanced` (equal numbers of out-edges, from a CSR ``indptr``).

    Examples
    --------
    >>> p = BlockPartition.block(10, 3)
    >>> p.offsets.tolist()
    [0, 4, 7, 10]
    >>> p.owner([0, 4, 9]).tolist()
    [0, 1, 2]
    >>> p.range(1), p.size(1)
    ((4, 7), 3)
    """

    __slots__ = ("_offsets",)

    def __init__(self, offsets):
        off = _as_index_array(offsets)
        if off.ndim != 1 or off.size < 2:
            raise ValueError(
                f"offsets must be a 1-D array of length nparts + 1 >= 2, got shape {off.shape}"
            )
        if off[0] != 0:
            raise ValueError(f"offsets[0] must be 0, got {int(off[0])}")
        steps = np.diff(off)
        if steps.size and steps.min() < 0:
            k = int(np.argmax(steps < 0))
            raise ValueError(
                f"offsets must be non-decreasing, but offsets[{k}]={int(off[k])} > "
                f"offsets[{k + 1}]={int(off[k + 1])}"
            )
        off = off.copy()
        off.setflags(write=False)
        object.__setattr__(self, "_offsets", off)

    def __setattr__(self, name, value):
        raise AttributeError("BlockPartition is immutable")

    # ------------------------------------------------------------ constructors
    @classmethod
    def block(cls, n: int, nparts: int) -> BlockPartition:
        """Split ``n`` vertices into ``nparts`` blocks whose sizes differ by at most one.

        The first ``n % nparts`` blocks get one vertex more.

        Examples
        --------
        >>> BlockPartition.block(2, 4).offsets.tolist()
        [0, 1, 2, 2, 2]
        """
        n, nparts = _check_n_nparts(n, nparts)
        base, extra = divmod(n, nparts)
        sizes = np.full(nparts, base, dtype=np.int64)
        sizes[:extra] += 1
        off = np.zeros(nparts + 1, dtype=np.int64)
        np.cumsum(sizes, out=off[1:])
        return cls(off)

    @classmethod
    def edge_balanced(cls, indptr, nparts: int, vertex_cost: float = 1.0) -> BlockPartition:
        """Split the rows of a CSR graph so each block holds about the same work.

        The work of vertex ``v`` is ``deg(v) + vertex_cost`` where ``deg(v) =
        indptr[v+1] - indptr[v]``; block ``k`` ends at the vertex boundary where
        the running work is nearest to ``(k + 1) / nparts`` of the total. With
        ``vertex_cost=0`` only edges count (blocks may then be very uneven in
        vertices); the default ``1`` also spreads isolated vertices.

        Parameters
        ----------
        indptr : array_like of int, shape (n + 1,)
            CSR row offsets (non-decreasing, ``indptr[0] == 0``).
        nparts : int
            Number of blocks, >= 1.
        vertex_cost : float, default 1.0
            Work per vertex, in units of one edge; >= 0.

        Examples
        --------
        >>> import numpy as np
        >>> indptr = np.array([0, 6, 7, 8, 9, 10, 11, 12])   # vertex 0 has 6 edges
        >>> BlockPartition.edge_balanced(indptr, 2).offsets.tolist()
        [0, 2, 7]
        """
        ip = _as_index_array(indptr)
        if ip.ndim != 1 or ip.size < 1:
            raise ValueError(f"indptr must be a 1-D array of length n + 1, got shape {ip.shape}")
        if ip[0] != 0 or (ip.size > 1 and np.diff(ip).min() < 0):
            raise ValueError("indptr must start at 0 and be non-decreasing")
        n = ip.size - 1
        _, nparts = _check_n_nparts(n, nparts)
        vertex_cost = float(vertex_cost)
        if not vertex_cost >= 0 or not np.isfinite(vertex_cost):
            raise ValueError(f"vertex_cost must be a finite number >= 0, got {vertex_cost}")
        # cum[v] = work of vertices 0..v-1
        cum = ip.astype(np.float64) + vertex_cost * np.arange(n + 1, dtype=np.float64)
        total = cum[-1]
        off = np.empty(nparts + 1, dtype=np.int64)
        off[0] = 0
        off[-1] = n
        if nparts > 1:
            targets = total * np.arange(1, nparts, dtype=np.float64) / nparts
            # the boundary whose running work is nearest to each target
            hi = np.minimum(np.searchsorted(cum, targets, side="left"), n)
            lo = np.maximum(hi - 1, 0)
            off[1:-1] = np.where(targets - cum[lo] <= cum[hi] - targets, lo, hi)
        np.maximum.accumulate(off, out=off)
        np.minimum(off, n, out=off)
        return cls(off)

    # ------------------------------------------------------------ queries
    @property
    def offsets(self) -> np.ndarray:
        return self._offsets

    @property
    def nparts(self) -> int:
        return int(self._offsets.size - 1)

    @property
    def n(self) -> int:
        return int(self._offsets[-1])

    def _check_part(self, part: int) -> int:
        if isinstance(part, bool) or int(part) != part:
            raise TypeError(f"part must be an integer, got {part!r}")
        part = int(part)
        if not 0 <= part < self.nparts:
            raise ValueError(f"part = {part} is out of range for {self.nparts} parts")
        return part

    def range(self, part: int) -> tuple[int, int]:
        """Return ``(start, stop)``: part ``part`` owns vertices ``start <= v < stop``.

        Examples
        --------
        >>> BlockPartition([0, 2, 5]).range(1)
        (2, 5)
        """
        part = self._check_part(part)
        return int(self._offsets[part]), int(self._offsets[part + 1])

    def size(self, part: int) -> int:
        """Return the number of vertices part ``part`` owns.

        Examples
        --------
        >>> BlockPartition([0, 2, 5]).size(0)
        2
        """
        a, b = self.range(part)
        return b - a

    def sizes(self) -> np.ndarray:
        """Return the number of vertices of every part (int64, shape ``(nparts,)``).

        Examples
        --------
        >>> BlockPartition([0, 2, 2, 5]).sizes().tolist()
        [2, 0, 3]
        """
        return np.diff(self._offsets)

    def owner(self, v):
        """Return the part that owns each vertex of ``v`` (vectorised).

        Parameters
        ----------
        v : int or array_like of int
            Vertex ids in ``[0, n)``.

        Returns
        -------
        int or ndarray of int64
            An int for a scalar ``v``, else an array of ``v``'s shape. Empty
            parts never own a vertex.

        Examples
        --------
        >>> p = BlockPartition([0, 2, 2, 5])
        >>> p.owner(2), p.owner([0, 1, 4]).tolist()
        (2, [0, 0, 2])
        """
        arr = _as_index_array(v)
        if arr.size:
            lo, hi = int(arr.min()), int(arr.max())
            if lo < 0 or hi >= self.n:
                bad = lo if lo < 0 else hi
                raise ValueError(f"vertex {bad} is out of range for a partition of {self.n}")
        out = np.searchsorted(self._offsets, arr, side="right") - 1
        if out.ndim == 0:
            return int(out)
        return out.astype(np.int64, copy=False)

    # ------------------------------------------------------------ dunder
    def __eq__(self, other) -> bool:
        if not isinstance(other, BlockPartition):
            return NotImplemented
        return np.array_equal(self._offsets, other._offsets)

    def __hash__(self) -> int:
        return hash(self._offsets.tobytes())

    def __repr__(self) -> str:
        return f"BlockPartition(n={self.n}, nparts={self.nparts}, offsets={self._offsets.tolist()})"

    def __reduce__(self):
        return (BlockPartition, (self._offsets.copy(),))


def _check_n_nparts(n, nparts) -> tuple[int, int]:
    for name, val in (("n", n), ("nparts", nparts)):
        if isinstance(val, bool) or int(val) != val:
            raise TypeError(f"{name} must be an integer, got {val!r}")
    n, nparts = int(n), int(nparts)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if nparts < 1:
        raise ValueError(f"nparts must be >= 1, got {nparts}")
    return n, nparts
