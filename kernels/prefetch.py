"""Software prefetch of an array element for Numba kernels (LLVM's ``llvm.prefetch``).

Graph searches pop vertices in an order no hardware prefetcher can guess, and
each pop waits on several cache misses in a row (the vertex's distance and
row offset, then its edges). Asking for the lines of a vertex a few pops
ahead lets those misses overlap. A prefetch is only a hint: it never faults,
so an index past the end of the array is harmless.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from graphpar.kernels.atomics import elem_ptr

_I32 = ir.IntType(32)


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint that ``arr[idx]`` will be read soon (into all cache levels)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(idx, types.Integer)):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        arrty, idxty = signature.args
        ptr = elem_ptr(context, builder, arrty, args[0], args[1], idxty)
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i8p, _I32, _I32, _I32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        # read (0), high temporal locality (3), data cache (1)
        builder.call(fn, [builder.bitcast(ptr, i8p), _I32(0), _I32(3), _I32(1)])
        return context.get_dummy_value()

    return sig, codegen
