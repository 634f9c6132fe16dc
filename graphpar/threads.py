"""Numba thread control shared by the library, the CLI and the distributed layer.

The one place that decides how many Numba threads a process uses
(:func:`decide_threads`). The first of these that is set wins:

1. the ``threads`` argument (the CLI's ``--threads``);
2. ``GRAPHPAR_NUM_THREADS``;
3. ``SLURM_CPUS_PER_TASK`` (Slurm sets it in a job or step submitted with
   ``--cpus-per-task``);
4. inside a PBS job (``PBS_JOBID`` set): ``OMP_NUM_THREADS`` (PBS Pro sets it
   from the chunk's ``ompthreads``), else ``NCPUS`` (the chunk's ``ncpus``)
   divided by the ranks on the node;
5. under MPI, (cores available on the node) // (ranks on the node); in a serial
   process, Numba's own setting (every core the process may run on).

An explicit count (1, 2) that exceeds :func:`max_threads` is an error. A
scheduler's count (3, 4) is an allocation, not a request: it is lowered to
this rank's share of the cores it can see, and under PBS to ``NCPUS`` divided
by the ranks on the node, so that ranks times threads never exceeds the cores.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping

import numba

__all__ = ["ENV_THREADS", "max_threads", "decide_threads", "set_threads", "get_threads"]

ENV_THREADS = "GRAPHPAR_NUM_THREADS"
SLURM_THREADS = "SLURM_CPUS_PER_TASK"
PBS_JOB = "PBS_JOBID"
PBS_THREADS = "OMP_NUM_THREADS"
PBS_CPUS = "NCPUS"


def max_threads() -> int:
    """Return the most threads Numba can use in this process (``NUMBA_NUM_THREADS``).

    Examples
    --------
    >>> max_threads() >= 1
    True
    """
    return int(numba.config.NUMBA_NUM_THREADS)


def _env_int(environ: Mapping[str, str], name: str) -> int | None:
    """The positive integer in ``environ[name]``; None when unset or blank."""
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    text = raw.strip()
    if name == PBS_THREADS:  # OpenMP allows a list, one count per nesting level
        text = text.split(",")[0].strip()
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return value


def _integer(value, source: str) -> int:
    """``value`` as an int: an integer, or a float with an integral value; else TypeError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or int(value) != value:
        raise TypeError(f"{source} must be an integer, got {value!r}")
    return int(value)


def _positive(value, source: str) -> int:
    """``value`` as an int >= 1: TypeError as :func:`_integer`, ValueError below 1."""
    n = _integer(value, source)
    if n < 1:
        raise ValueError(f"{source} must be a positive integer, got {n}")
    return n


def _checked(threads, source: str, limit: int) -> int:
    threads = _integer(threads, source)
    if not 1 <= threads <= limit:
        raise ValueError(
            f"{source} must be between 1 and {limit} (NUMBA_NUM_THREADS), got {threads}"
        )
    return threads


def decide_threads(
    threads: int | None = None, *, cores: int | None = None, ranks_on_node: int = 1,
    environ: Mapping[str, str] | None = None,
) -> tuple[int | None, str]:
    """Decide this process's Numba threads, and say what decided them.

    Pure: reads ``environ`` and sets nothing (:func:`set_threads` applies it).

    Parameters
    ----------
    threads : int, optional
        An explicit count (the CLI's ``--threads``), from 1 to :func:`max_threads`.
    cores : int, optional
        Cores available on this node (under MPI: the union of the CPU affinity
        sets of its ranks, :func:`graphpar.mpi.comm.node_info`), an integer
        >= 1 (a float only with an integral value, such as ``4.0``). None in a
        serial process. Checked even when ``threads`` or a variable decides.
    ranks_on_node : int
        Processes of this job on this node (1 in a serial process), an integer
        >= 1, checked as ``cores`` is.
    environ : mapping, optional
        The environment to read (default ``os.environ``).

    Returns
    -------
    threads : int or None
        The count; None when nothing set one and ``cores`` is None (keep
        Numba's setting).
    source : str
        What decided it: ``"threads"``, ``"GRAPHPAR_NUM_THREADS"``,
        ``"SLURM_CPUS_PER_TASK"``, ``"OMP_NUM_THREADS"`` or ``"NCPUS"`` (PBS),
        ``"cores/ranks"`` or ``"numba"``.

    Raises
    ------
    TypeError
        ``threads`` or ``cores`` that is not an integer (a bool, a string, a
        float with a fractional part, ``nan`` or ``inf``), naming the argument
        and its value.
    ValueError
        ``threads`` or ``cores`` below 1, a variable that is not a positive
        integer, or an explicit count above :func:`max_threads`, naming the
        argument or the variable and its value.

    Examples
    --------
    >>> decide_threads(environ={"SLURM_CPUS_PER_TASK": "1"})
    (1, 'SLURM_CPUS_PER_TASK')
    >>> decide_threads(1, environ={"GRAPHPAR_NUM_THREADS": "2"})
    (1, 'threads')
    >>> decide_threads(environ={}, cores=8, ranks_on_node=8)
    (1, 'cores/ranks')
    """
    env = os.environ if environ is None else environ
    cores = None if cores is None else _positive(cores, "cores")
    ranks = _positive(ranks_on_node, "ranks_on_node")
    limit = max_threads()
    if threads is not None:
        return _checked(threads, "threads", limit), "threads"
    explicit = _env_int(env, ENV_THREADS)
    if explicit is not None:
        return _checked(explicit, ENV_THREADS, limit), ENV_THREADS
    # a scheduler's figure: at most this rank's share of the cores it can see
    share = min(limit, max(1, cores // ranks)) if cores is not None else limit
    slurm = _env_int(env, SLURM_THREADS)
    if slurm is not None:
        return min(slurm, share), SLURM_THREADS
    if env.get(PBS_JOB, "").strip():
        ncpus = _env_int(env, PBS_CPUS)
        if ncpus is not None:
            share = min(share, max(1, ncpus // ranks))
        omp = _env_int(env, PBS_THREADS)
        if omp is not None:
            return min(omp, share), PBS_THREADS
        if ncpus is not None:
            return share, PBS_CPUS
    if cores is not None:
        return share, "cores/ranks"
    return None, "numba"


def set_threads(threads: int | None = None, *, cores: int | None = None,
                ranks_on_node: int = 1) -> int:
    """Set the number of Numba threads and return it.

    Parameters
    ----------
    threads : int, optional
        Threads to use, from 1 to :func:`max_threads`. ``None`` takes the
        first of ``GRAPHPAR_NUM_THREADS``, ``SLURM_CPUS_PER_TASK`` and the PBS
        variables that is set (see :func:`decide_threads`), and otherwise
        leaves Numba's setting alone (or, given ``cores``, uses
        ``cores // ranks_on_node``).
    cores : int, optional
        Cores on this node (under MPI), an integer >= 1; ``None`` (the default)
        in a serial process.
    ranks_on_node : int, optional
        The job's processes on this node (under MPI).

    Returns
    -------
    int
        The number of threads now in force.

    Raises
    ------
    TypeError, ValueError
        As :func:`decide_threads`: ``threads`` or ``cores`` that is not a
        positive integer (TypeError when it is not an integer at all, ValueError
        when it is below 1), naming the argument and its value; an explicit count
        above :func:`max_threads`; a malformed variable. Nothing is set then.

    Examples
    --------
    >>> set_threads(1)
    1
    >>> set_threads(cores=0)
    Traceback (most recent call last):
    ...
    ValueError: cores must be a positive integer, got 0
    """
    n, _ = decide_threads(threads, cores=cores, ranks_on_node=ranks_on_node)
    if n is None:
        return get_threads()
    numba.set_num_threads(n)
    return n


def get_threads() -> int:
    """Return the number of Numba threads in force.

    Examples
    --------
    >>> get_threads() >= 1
    True
    """
    return int(numba.get_num_threads())
