"""Software prefetch of an array element for Numba kernels (LLVM's ``llvm.prefetch``).

Graph searches pop vertices in an order no hardware prefetcher can guess, and
each pop waits on several cache misses in a row (the vertex's distance and
row offset, then its edges); aggregation gathers rows of a feature matrix in
the order of a sparse matrix's column indices. Asking for those lines a few
steps ahead lets the misses overlap. A prefetch is only a hint: it never
faults, so an index past the end of the array is harmless. Both intrinsics
emit ``prefetcht0`` on x86-64.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from graphpar.kernels.atomics import elem_ptr

_I32 = ir.IntType(32)


def _emit_prefetch(builder, ptr) -> None:
    i8p = ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [i8p, _I32, _I32, _I32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
    # read (0), high temporal locality (3), data cache (1)
    builder.call(fn, [builder.bitcast(ptr, i8p), _I32(0), _I32(3), _I32(1)])


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint that ``arr[idx]`` will be read soon (into all cache levels)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(idx, types.Integer)):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        arrty, idxty = signature.args
        _emit_prefetch(builder, elem_ptr(context, builder, arrty, args[0], args[1], idxty))
        return context.get_dummy_value()

    return sig, codegen


# Lines prefetch_row covers from a row's first element (plus the line of its last).
ROW_LINES = 4


def _emit_row_prefetches(context, builder, arrty, arr, row, rowty, start, startty, n, nty):
    """The prefetches of :func:`prefetch_row` for ``arr[row, start:start + n]``."""
    ary = context.make_array(arrty)(context, builder, arr)
    intp = context.get_value_type(types.intp)
    r = context.cast(builder, row, rowty, types.intp)
    col = context.cast(builder, start, startty, types.intp)
    count = builder.sub(context.cast(builder, n, nty, types.intp), ir.Constant(intp, 1))
    first = cgutils.get_item_pointer(context, builder, arrty, ary, [r, col], wraparound=False)
    i8p = ir.IntType(8).as_pointer()
    p0 = builder.bitcast(first, i8p)
    # The clamps compare byte offsets from the first element, which fold to constants
    # when n is one (a kernel's tile width): then no select is left.
    if arrty.layout == "C":
        stride = ir.Constant(intp, context.get_abi_sizeof(context.get_data_type(arrty.dtype)))
    else:
        stride = cgutils.unpack_tuple(builder, ary.strides, 2)[1]
    last = builder.mul(count, stride)
    pe = builder.gep(p0, [last])
    for i in range(ROW_LINES):
        if i == 0:
            p = p0
        else:
            before = builder.icmp_signed("<", ir.Constant(intp, 64 * i), last)
            p = builder.gep(p0, [builder.select(before, ir.Constant(intp, 64 * i), last)])
        _emit_prefetch(builder, p)
    _emit_prefetch(builder, pe)


@intrinsic
def prefetch_row(typingctx, arr, row, n):
    """Hint that ``arr[row, :n]`` of a 2-D array (rows contiguous) will be read soon.

    Prefetches the lines at 0, 64, 128 and 192 bytes past ``arr[row, 0]`` that lie
    before ``arr[row, n - 1]``, and the line of ``arr[row, n - 1]``: every line of
    a row of up to ``ROW_LINES`` lines' worth of elements, one line more than that
    count when the row starts part-way into a line. Straight-line code (no loop
    for the compiler to unroll).
    """
    if not (
        isinstance(arr, types.Array) and arr.ndim == 2
        and isinstance(row, types.Integer) and isinstance(n, types.Integer)
    ):
        return None
    sig = types.void(arr, row, n)

    def codegen(context, builder, signature, args):
        arrty, rowty, nty = signature.args
        zero = context.get_constant(types.intp, 0)
        _emit_row_prefetches(context, builder, arrty, args[0], args[1], rowty,
                             zero, types.intp, args[2], nty)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def prefetch_part(typingctx, arr, row, start, n):
    """Hint that ``arr[row, start:start + n]`` will be read soon: :func:`prefetch_row`
    from column ``start`` (``n >= 1``)."""
    if not (
        isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(row, types.Integer)
        and isinstance(start, types.Integer) and isinstance(n, types.Integer)
    ):
        return None
    sig = types.void(arr, row, start, n)

    def codegen(context, builder, signature, args):
        arrty, rowty, startty, nty = signature.args
        _emit_row_prefetches(context, builder, arrty, args[0], args[1], rowty,
                             args[2], startty, args[3], nty)
        return context.get_dummy_value()

    return sig, codegen
