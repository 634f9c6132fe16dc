"""graphpar.kernels.handoff: helper threads handed work through a doorbell.

The pool's calls must give the serial result whoever runs them: helpers awake or asleep,
several callers at once (all but one run alone), a helper that raises (the caller gets
the exception, no hang), a caller that raises (the helpers are freed for the next call).
"""

import threading
import time

import numpy as np
import pytest
from numba import njit

from graphpar.kernels.atomics import fetch_add
from graphpar.kernels.handoff import HandoffPool


@njit(nogil=True, cache=True)
def _cumulate(x, out, counter):
    """Item i: out[i] = sum(x[: i + 1]) (slow enough to share); counter[0] next item,
    counter[1] finished items."""
    i = fetch_add(counter, 0, 1)
    while i < x.size:
        s = 0.0
        for j in range(i + 1):
            s += x[j]
        out[i] = s
        fetch_add(counter, 1, 1)
        i = fetch_add(counter, 0, 1)


def _call(pool, x):
    out = np.full(x.size, np.nan)
    counter = np.zeros(8, dtype=np.int64)
    args = (x, out, counter)
    started = pool.try_start(_cumulate, args, 1)
    try:
        _cumulate(*args)
    finally:
        pool.finish(counter, 1, x.size, started)
    return out, started


def _assert_the_helpers_serve(pool, x):
    """A call through ``pool`` gets its helpers and the serial result."""
    out, started = _call(pool, x)
    assert started
    np.testing.assert_allclose(out, np.cumsum(x), rtol=1e-12)


def test_calls_equal_the_serial_result_with_helpers_awake_and_asleep():
    pool = HandoffPool("test-handoff")
    x = np.random.default_rng(0).random(3000)
    for pause in (0.0, 0.0, 0.3, 0.0, 0.3):  # 0.3 s: the helper has blocked on its condition
        time.sleep(pause)
        _assert_the_helpers_serve(pool, x)
    assert pool.helpers == 1


def test_concurrent_callers_each_get_their_result():
    pool = HandoffPool("test-handoff-concurrent")
    rng = np.random.default_rng(1)
    inputs = [rng.random(int(rng.integers(500, 2500))) for _ in range(24)]
    results = [None] * len(inputs)
    starts = []

    def work(i):
        out, started = _call(pool, inputs[i])
        results[i] = out
        starts.append(started)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads)
    for x, out in zip(inputs, results, strict=True):
        np.testing.assert_allclose(out, np.cumsum(x), rtol=1e-12)
    assert any(starts) and pool.helpers == 1


def test_a_helpers_exception_reaches_the_caller_and_the_pool_stays_usable():
    pool = HandoffPool("test-handoff-error")
    x = np.random.default_rng(2).random(3000)
    caller = threading.get_ident()

    def fails_on_helpers(x, out, counter):
        if threading.get_ident() != caller:
            raise RuntimeError("helper failed")
        # the caller leaves items for the helper, so that its failure is waited on
        out[:] = 0.0

    counter = np.zeros(8, dtype=np.int64)
    started = pool.try_start(fails_on_helpers, (x, np.empty(x.size), counter), 1)
    assert started
    with pytest.raises(RuntimeError, match="helper failed"):
        pool.finish(counter, 1, x.size, started)
    _assert_the_helpers_serve(pool, x)


def _hold(pool, x):
    """Ring the helpers for a call whose caller has not run yet: ``(counter, started)``."""
    counter = np.zeros(8, dtype=np.int64)
    return counter, pool.try_start(_cumulate, (x, np.empty(x.size), counter), 1)


def test_a_callers_exception_frees_the_helpers():
    pool = HandoffPool("test-handoff-caller-error")
    x = np.random.default_rng(3).random(2000)
    counter, started = _hold(pool, x)
    pool.finish(counter, 1, x.size, started, wait=False)  # as after the caller's own error
    _assert_the_helpers_serve(pool, x)


def test_a_call_while_the_helpers_are_held_runs_alone():
    pool = HandoffPool("test-handoff-held")
    x = np.random.default_rng(4).random(1000)
    counter, held = _hold(pool, x)
    try:
        out, started = _call(pool, x)
        assert not started
        np.testing.assert_allclose(out, np.cumsum(x), rtol=1e-12)
    finally:
        _cumulate(x, np.empty(x.size), counter)
        pool.finish(counter, 1, x.size, held)


def test_a_late_failure_of_an_earlier_call_is_not_raised_by_the_next():
    pool = HandoffPool("test-handoff-late-error")
    caller = threading.get_ident()
    entered = threading.Event()

    def first(counter):  # the helper fails after its caller has given up on the call
        if threading.get_ident() != caller:
            entered.set()
            time.sleep(0.2)
            raise RuntimeError("first call's helper failed")

    def second(counter):  # done by its caller alone, while the first call's helper fails
        if threading.get_ident() == caller:
            time.sleep(0.5)
            counter[1] = 1

    counter = np.zeros(8, dtype=np.int64)
    started = pool.try_start(first, (counter,), 1)
    assert entered.wait(timeout=600)
    pool.finish(counter, 1, 1, started, wait=False)  # as after the caller's own error
    counter = np.zeros(8, dtype=np.int64)
    started = pool.try_start(second, (counter,), 1)
    second(counter)
    pool.finish(counter, 1, 1, started)  # must not raise the first call's error
    _assert_the_helpers_serve(pool, np.random.default_rng(5).random(500))
