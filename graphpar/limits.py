"""Limits on what an input may make graphpar allocate, and the variables that raise them.

Nothing is allocated in proportion to a number that a file, a header or a
command line declares unless the input can back it or the number is under one
of these limits. Each check raises :class:`graphpar.errors.LimitError` naming
the input, the declared number, the limit and the variable that raises it.

=================================  ==========================================  ==========
variable                           what it bounds                              default
=================================  ==========================================  ==========
``GRAPHPAR_MAX_VERTICES``          vertices beyond twice the edges present     2**24
``GRAPHPAR_MAX_DECOMPRESSED``      bytes a compressed file may expand to       max(256 MiB,
                                                                               100 x file)
``GRAPHPAR_MAX_MEMORY``            bytes one request (a generated graph, a     80% of RAM
                                   declared array) may need                    (or RLIMIT_AS)
=================================  ==========================================  ==========

Sizes accept a plain byte count or a suffix: ``GRAPHPAR_MAX_MEMORY=64G``.

Examples
--------
>>> from graphpar.limits import check_vertex_count
>>> check_vertex_count(10, edges=5, source="g.gr")
>>> check_vertex_count(10**9, edges=2, source="g.gr")
Traceback (most recent call last):
...
graphpar.errors.LimitError: g.gr: declares 1000000000 vertices but holds only 2 edges; ...
"""

from __future__ import annotations

import os

from graphpar.errors import LimitError

__all__ = [
    "ENV_MAX_VERTICES", "ENV_MAX_DECOMPRESSED", "ENV_MAX_MEMORY", "check_environment",
    "vertex_limit", "decompression_limit", "memory_budget",
    "check_vertex_count", "check_memory", "parse_size", "MAX_SCALE",
]

ENV_MAX_VERTICES = "GRAPHPAR_MAX_VERTICES"
ENV_MAX_DECOMPRESSED = "GRAPHPAR_MAX_DECOMPRESSED"
ENV_MAX_MEMORY = "GRAPHPAR_MAX_MEMORY"

DEFAULT_MAX_VERTICES = 1 << 24
#: The largest Kronecker scale the generators accept (2**40 vertices). Kept here, not in
#: :mod:`graphpar.generate`, so that the CLI's parsers read it without importing Numba.
MAX_SCALE = 40
_MIN_DECOMPRESSED = 256 << 20
_DECOMPRESSION_RATIO = 100
_SUFFIXES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str, *, name: str = "size",
               kind: str = "a byte count such as 4096, 512M or 8G") -> int:
    """Parse ``"1234"``, ``"64K"``, ``"8M"``, ``"2G"`` or ``"1T"`` (binary units) to bytes.

    Examples
    --------
    >>> parse_size("2G")
    2147483648
    """
    s = str(text).strip().upper().removesuffix("B").removesuffix("I")
    unit = s[-1:] if s[-1:] in _SUFFIXES and s[-1:] else ""
    digits = s[: len(s) - len(unit)]
    try:
        value = float(digits)
    except ValueError:
        raise ValueError(
            f"{name} must be {kind}, got {text!r}"
        ) from None
    if not value > 0 or value != value:
        raise ValueError(f"{name} must be positive, got {text!r}")
    return int(value * _SUFFIXES[unit])


def _env_int(var: str) -> int | None:
    raw = os.environ.get(var, "").strip()
    kind = ("a vertex count such as 100000000 or 100M" if var == ENV_MAX_VERTICES
            else "a byte count such as 4096, 512M or 8G")
    return parse_size(raw, name=var, kind=kind) if raw else None


def check_environment() -> None:
    """Refuse a malformed ``GRAPHPAR_MAX_*`` variable now, whatever the run goes on to need.

    Each is otherwise read only when a check needs it, so a bad value could go
    unnoticed on a run that never asks.

    Examples
    --------
    >>> check_environment()
    """
    for var in (ENV_MAX_VERTICES, ENV_MAX_DECOMPRESSED, ENV_MAX_MEMORY):
        _env_int(var)


def vertex_limit() -> int:
    """Vertices an input may declare beyond twice its edges (``GRAPHPAR_MAX_VERTICES``).

    Examples
    --------
    >>> vertex_limit() >= 1
    True
    """
    value = _env_int(ENV_MAX_VERTICES)
    return DEFAULT_MAX_VERTICES if value is None else value


def check_vertex_count(n: int, *, edges: int, source: str, what: str = "declares",
                       renumber_hint: str = "") -> None:
    """Refuse ``n`` vertices that ``edges`` edges cannot reach, above :func:`vertex_limit`.

    Every vertex a graph's edges touch is backed by the file (at most two per
    edge); vertices beyond those cost 8 bytes each in the CSR row offsets and
    more in every result, so only :func:`vertex_limit` of them are accepted.
    ``renumber_hint`` follows the message's advice to renumber the vertices (how).

    Examples
    --------
    >>> check_vertex_count(3, edges=1, source="x.el")
    """
    n = int(n)
    limit = vertex_limit()
    if n <= limit or n <= 2 * int(edges) + 1:
        return
    raise LimitError(
        f"{source}: {what} {n} vertices but holds only {edges} edges; graphpar refuses more "
        f"than {limit} vertices that the edges do not reach (set {ENV_MAX_VERTICES} to raise "
        f"the limit, or renumber the vertices compactly{renumber_hint})"
    )


def decompression_limit(compressed_bytes: int) -> int:
    """Bytes a compressed input of ``compressed_bytes`` may expand to.

    ``GRAPHPAR_MAX_DECOMPRESSED`` when set, else 100 times the compressed size
    but at least 256 MiB: real graph and table files compress 3 to 10 times,
    while a few megabytes of zeros can expand to gigabytes.

    Examples
    --------
    >>> decompression_limit(1) == 256 << 20
    True
    """
    value = _env_int(ENV_MAX_DECOMPRESSED)
    if value is not None:
        return value
    return max(_MIN_DECOMPRESSED, _DECOMPRESSION_RATIO * int(compressed_bytes))


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def memory_budget() -> int:
    """Bytes one request may need: ``GRAPHPAR_MAX_MEMORY``, else 80% of RAM (and of RLIMIT_AS).

    Examples
    --------
    >>> memory_budget() > 0
    True
    """
    value = _env_int(ENV_MAX_MEMORY)
    if value is not None:
        return value
    budget = _physical_memory() or (1 << 34)
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY and soft > 0:
            budget = min(budget, soft)
    except (ImportError, ValueError, OSError):
        pass
    return int(budget * 0.8)


def check_memory(nbytes: int, *, what: str, source: str | None = None) -> None:
    """Refuse a request of ``nbytes`` above :func:`memory_budget`, saying what asked for it.

    Examples
    --------
    >>> check_memory(1024, what="a tiny graph")
    >>> check_memory(1 << 62, what="kron:40")
    Traceback (most recent call last):
    ...
    graphpar.errors.LimitError: kron:40 needs about 4.0 EiB, ...
    """
    budget = memory_budget()
    if int(nbytes) <= budget:
        return
    where = f"{source}: " if source else ""
    raise LimitError(
        f"{where}{what} needs about {_human(nbytes)}, more than the {_human(budget)} graphpar "
        f"allows one request (set {ENV_MAX_MEMORY}, e.g. {ENV_MAX_MEMORY}=64G, to raise it)"
    )


def _human(nbytes: int) -> str:
    value = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024:
            return f"{value:.1f} {unit}" if unit != "bytes" else f"{int(value)} bytes"
        value /= 1024
    return f"{value:.1f} EiB"
