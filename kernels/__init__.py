"""Numba kernels of graphpar, installed as ``graphpar.kernels``.

Plain arrays in, preallocated arrays out: no validation, no MPI, no Python
objects. The public API in :mod:`graphpar` canonicalises dtypes before calling
in, so each kernel is compiled for a small, fixed set of signatures
(``int64`` offsets, ``int32``/``int64`` indices, ``float64`` weights, and
``float32``/``float64`` features).
"""

from graphpar.kernels.numba_cache import install as _install_keyed_cache

_install_keyed_cache()  # before any kernel module defines its cached functions
