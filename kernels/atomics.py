"""CPU atomics on array elements for Numba kernels, built on LLVM's atomic instructions.

Numba has no public CPU atomics, so these are ``@intrinsic`` functions that
emit ``cmpxchg``, ``atomicrmw`` and atomic ``load``/``store`` (all sequentially
consistent) on the address of ``arr[i]``. They work on 1-D C-contiguous or
strided arrays of ``int32``, ``int64`` and ``float64`` (the CAS and loads on
floats compare and move the raw 64-bit pattern). The index is not bounds
checked and must be non-negative.

Functions
---------
cas(arr, i, expected, desired) -> old
    Compare-and-swap: store ``desired`` into ``arr[i]`` if it holds
    ``expected``; always return the value found there. The swap happened
    exactly when the returned value equals ``expected`` (bitwise).
fetch_add(arr, i, value) -> old
    Atomic integer add; returns the value before the add.
atomic_load(arr, i) -> value
    A load that the compiler cannot hoist out of a spin loop.
atomic_store(arr, i, value)
    An atomic store.
atomic_min_f64(arr, i, value) -> bool
    Lower ``arr[i]`` to ``value`` if it is smaller; True when it did.
"""

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

_OK = (types.int32, types.int64, types.float64)


def elem_ptr(context, builder, arrty, arr, idx, idxty):
    """LLVM pointer to ``arr[idx]`` inside an intrinsic (shared by the atomics and prefetch)."""
    ary = context.make_array(arrty)(context, builder, arr)
    idx = context.cast(builder, idx, idxty, types.intp)
    ptr = cgutils.get_item_pointer(context, builder, arrty, ary, [idx], wraparound=False)
    return ptr


def _int_view(context, builder, dtype, ptr):
    """Pointer and integer type to use for atomics on elements of ``dtype``."""
    width = 64 if dtype.bitwidth == 64 else 32
    ity = ir.IntType(width)
    return builder.bitcast(ptr, ity.as_pointer()), ity


def _check(arr):
    return isinstance(arr, types.Array) and arr.ndim == 1 and arr.dtype in _OK


@intrinsic
def cas(typingctx, arr, idx, expected, desired):
    if not (_check(arr) and isinstance(idx, types.Integer)):
        return None
    dt = arr.dtype
    sig = dt(arr, idx, dt, dt)

    def codegen(context, builder, signature, args):
        arrty, idxty, expty, desty = signature.args
        a, i, e, d = args
        ptr = elem_ptr(context, builder, arrty, a, i, idxty)
        iptr, ity = _int_view(context, builder, dt, ptr)
        e = context.cast(builder, e, expty, dt)
        d = context.cast(builder, d, desty, dt)
        if isinstance(dt, types.Float):
            e = builder.bitcast(e, ity)
            d = builder.bitcast(d, ity)
        res = builder.cmpxchg(iptr, e, d, "seq_cst", "seq_cst")
        old = builder.extract_value(res, 0)
        if isinstance(dt, types.Float):
            old = builder.bitcast(old, context.get_value_type(dt))
        return old

    return sig, codegen


@intrinsic
def fetch_add(typingctx, arr, idx, value):
    if not (_check(arr) and isinstance(arr.dtype, types.Integer)):
        return None
    if not isinstance(idx, types.Integer):
        return None
    dt = arr.dtype
    sig = dt(arr, idx, dt)

    def codegen(context, builder, signature, args):
        arrty, idxty, valty = signature.args
        a, i, v = args
        ptr = elem_ptr(context, builder, arrty, a, i, idxty)
        v = context.cast(builder, v, valty, dt)
        return builder.atomic_rmw("add", ptr, v, "seq_cst")

    return sig, codegen


@intrinsic
def atomic_load(typingctx, arr, idx):
    if not (_check(arr) and isinstance(idx, types.Integer)):
        return None
    dt = arr.dtype
    sig = dt(arr, idx)

    def codegen(context, builder, signature, args):
        arrty, idxty = signature.args
        a, i = args
        ptr = elem_ptr(context, builder, arrty, a, i, idxty)
        iptr, ity = _int_view(context, builder, dt, ptr)
        val = builder.load_atomic(iptr, "seq_cst", dt.bitwidth // 8)
        if isinstance(dt, types.Float):
            val = builder.bitcast(val, context.get_value_type(dt))
        return val

    return sig, codegen


@intrinsic
def atomic_store(typingctx, arr, idx, value):
    if not (_check(arr) and isinstance(idx, types.Integer)):
        return None
    dt = arr.dtype
    sig = types.void(arr, idx, dt)

    def codegen(context, builder, signature, args):
        arrty, idxty, valty = signature.args
        a, i, v = args
        ptr = elem_ptr(context, builder, arrty, a, i, idxty)
        iptr, ity = _int_view(context, builder, dt, ptr)
        v = context.cast(builder, v, valty, dt)
        if isinstance(dt, types.Float):
            v = builder.bitcast(v, ity)
        builder.store_atomic(v, iptr, "seq_cst", dt.bitwidth // 8)
        return context.get_dummy_value()

    return sig, codegen


@njit(inline="always")
def atomic_min_f64(arr, i, value):
    """Lower ``arr[i]`` to ``value`` when smaller; return True if this call lowered it."""
    old = arr[i]
    while value < old:
        seen = cas(arr, i, old, value)
        if seen == old:
            return True
        old = seen
    return False
