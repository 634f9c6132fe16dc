"""Waiting inside a Numba kernel for another thread: pause, yield, sleep.

A kernel run on several Python threads (each a ``nogil`` call) waits for the
others by reading a flag with :func:`graphpar.kernels.atomics.atomic_load`
in a loop. :func:`backoff` is what one turn of that loop does, by how long it
has waited so far: a ``pause`` instruction for the first turns (the other
thread is usually microseconds away), then ``sched_yield`` (on a busy machine
the thread it waits for may be the one the OS descheduled, and a yield lets
it run), then short sleeps (so that a thread idle through a long serial
stretch of another thread's work does not hold a core).

The yield and sleep are calls to the C library's ``sched_yield`` and
``usleep`` by name (resolved when the kernel is linked, so cached kernels
stay cacheable); on a system without them (not POSIX) the wait only pauses.
"""

import os
import platform

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

_X86 = platform.machine().lower() in ("x86_64", "amd64", "i686", "i386")
_POSIX = os.name == "posix"
_I32 = ir.IntType(32)

#: Turns of :func:`backoff` that only pause, then that yield; later turns sleep.
PAUSE_TURNS = 2000
YIELD_TURNS = 20000
#: Microseconds of each sleep.
SLEEP_US = 20


@intrinsic
def cpu_relax(typingctx):
    """The CPU's spin-wait hint (``pause`` on x86; nothing elsewhere)."""
    sig = types.void()

    def codegen(context, builder, signature, args):
        if _X86:
            fnty = ir.FunctionType(ir.VoidType(), [])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.sse2.pause")
            builder.call(fn, [])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def yield_cpu(typingctx):
    """``sched_yield()``: let another runnable thread have this core."""
    sig = types.void()

    def codegen(context, builder, signature, args):
        if _POSIX:
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I32, []),
                                                "sched_yield")
            builder.call(fn, [])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def sleep_us(typingctx, us):
    """``usleep(us)``: sleep for at least ``us`` microseconds."""
    if not isinstance(us, types.Integer):
        return None
    sig = types.void(us)

    def codegen(context, builder, signature, args):
        if _POSIX:
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I32, [_I32]),
                                                "usleep")
            builder.call(fn, [context.cast(builder, args[0], signature.args[0], types.uint32)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True)
def backoff(turn):
    """One turn of a wait loop that has already turned ``turn`` times."""
    if turn < PAUSE_TURNS:
        cpu_relax()
    elif turn < YIELD_TURNS:
        yield_cpu()
    else:
        sleep_us(SLEEP_US)
