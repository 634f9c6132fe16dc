"""Progress reports for long work: a live bar on a terminal, plain lines in a log.

Every long loop in graphpar (generation, reading, partitioning, multi-source searches, GCN
epochs, Cox iterations, distributed phases) reports through :func:`progress`, so that one
switch governs them all:

- On a terminal the report is a live `tqdm <https://tqdm.github.io>`_ bar on stderr.
- When stderr is redirected (a batch job's log), it is a plain line every few seconds
  (``GRAPHPAR_PROGRESS_INTERVAL``, default 5) with the percent done and the ETA, with no
  carriage returns; work that ends within the first interval writes nothing.
- From Python, progress is off by default. ``progress=True`` turns it on, and so does a
  handler on the ``"graphpar"`` logger at level INFO: the lines then go to that logger.
- The CLI turns it on unless ``--quiet`` is given; under MPI only rank 0 reports.
"""

from __future__ import annotations

import logging
import os
import sys

ENV_INTERVAL = "GRAPHPAR_PROGRESS_INTERVAL"
LOGGER = logging.getLogger("graphpar")
#: Columns a log line keeps beyond its description: the percentage, a short bar, the
#: counts, the times and the rate (``": 100%|###| 1.23M/1.23M [01:02<00:00, 19.8kB/s]"``).
LINE_STATS = 70


def report_interval() -> float:
    """Seconds between two plain progress lines (``GRAPHPAR_PROGRESS_INTERVAL``, default 5).

    Examples
    --------
    >>> report_interval() > 0
    True
    """
    raw = os.environ.get(ENV_INTERVAL, "").strip()
    if not raw:
        return 5.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{ENV_INTERVAL} must be a number of seconds, got {raw!r}") from None
    if not value >= 0:
        raise ValueError(f"{ENV_INTERVAL} must be at least 0 seconds, got {raw!r}")
    return value


def wants_progress(progress: bool | None) -> bool:
    """Decide whether to report: ``True``/``False`` as given, ``None`` follows logging.

    Examples
    --------
    >>> wants_progress(False)
    False
    >>> wants_progress(True)
    True
    """
    if progress is None:
        return LOGGER.isEnabledFor(logging.INFO) and LOGGER.hasHandlers()
    return bool(progress)


class _LineWriter:
    """A file for tqdm that turns its carriage-return redraws into whole lines."""

    def __init__(self, emit):
        self._emit = emit

    def write(self, text: str) -> None:
        for piece in text.replace("\n", "\r").split("\r"):
            piece = piece.strip()
            if piece:
                self._emit(piece)

    def flush(self) -> None:
        pass


class Progress:
    """A progress report; use :func:`progress` to make one.

    ``update(n)`` advances it, ``set_description(text)`` renames it, ``close()`` (or leaving
    the ``with`` block) ends it. A disabled report accepts the same calls and does nothing.
    """

    def __init__(self, bar, plain: bool = False):
        self._bar = bar
        self._plain = plain  # whole lines into a log, not a live bar

    @property
    def enabled(self) -> bool:
        """Whether this report writes anything."""
        return self._bar is not None

    def update(self, n: float = 1) -> None:
        """Advance by ``n`` units."""
        if self._bar is not None:
            self._bar.update(n)

    def set_description(self, text: str) -> None:
        """Replace the text shown before the bar."""
        if self._bar is not None:
            self._bar.set_description_str(text, refresh=False)

    def set_postfix(self, text: str) -> None:
        """Replace the text shown after the bar (for example the current loss)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        """End the report (prints the final state)."""
        if self._bar is not None:
            if self._plain and self._bar.last_print_n == self._bar.n:
                self._bar.leave = False  # its final state is already a line of the log
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress(total: float | None = None, desc: str = "", *, unit: str = "it",
             enabled: bool | None = False, stream=None) -> Progress:
    """Start a progress report of ``total`` units (``None`` when the total is unknown).

    Parameters
    ----------
    total : float, optional
        Units of work in all; ``None`` shows a count and a rate without percent or ETA.
    desc : str
        What is being done, shown before the bar (``"reading roads.gr"``).
    unit : str
        Name of one unit (``"epoch"``, ``"B"``; bytes are scaled to kB, MB, ...).
    enabled : bool or None
        ``True`` reports, ``False`` does nothing, ``None`` reports when the ``"graphpar"``
        logger has a handler at level INFO (see :func:`wants_progress`).
    stream : file, optional
        Where to write; default ``sys.stderr``. A stream that is not a terminal gets plain
        lines every :func:`report_interval` seconds.

    Returns
    -------
    Progress

    Examples
    --------
    >>> import io, os
    >>> os.environ["GRAPHPAR_PROGRESS_INTERVAL"] = "0"  # a line at once, not after 5 s
    >>> out = io.StringIO()
    >>> with progress(3, "demo", enabled=True, stream=out) as bar:
    ...     for _ in range(3):
    ...         bar.update()
    >>> "demo: 100%" in out.getvalue() and "\\r" not in out.getvalue()
    True
    >>> del os.environ["GRAPHPAR_PROGRESS_INTERVAL"]
    """
    if not wants_progress(enabled):
        return Progress(None)
    from tqdm.auto import tqdm

    via_logging = enabled is None
    stream = sys.stderr if stream is None else stream
    live = not via_logging and _is_terminal(stream)
    options = {"total": total, "desc": desc, "unit": unit, "leave": True,
               "unit_scale": unit == "B", "dynamic_ncols": live}
    if live:
        columns, lines = _terminal_size(stream)
        # a fresh pseudo-terminal (a container, `script`, some CI runners) reports 0 x 0,
        # and tqdm then draws nothing at all: assume 80 x 24 instead
        if not columns:
            options.update(ncols=80, dynamic_ncols=False)
        if not lines:
            options.update(nrows=24)
        return Progress(tqdm(file=stream, mininterval=0.2, **options))
    emit = LOGGER.info if via_logging else (lambda line: _write_line(stream, line))
    interval = report_interval()
    # delay: work shorter than one interval writes no line at all (no 0% / 100% noise).
    # A line is 80 columns, wider for a long description: tqdm cuts a line at its width,
    # and a long file name in ``desc`` lost the percentage and the counts
    bar = tqdm(file=_LineWriter(emit), mininterval=interval, maxinterval=max(interval, 1.0),
               miniters=1, ncols=max(80, len(desc or "") + LINE_STATS), delay=interval,
               **options)
    return Progress(bar, plain=True)


def _write_line(stream, line: str) -> None:
    stream.write(line + "\n")
    stream.flush()


def _terminal_size(stream) -> tuple[int, int]:
    """``(columns, lines)`` of the terminal behind ``stream``, 0 for what it does not report."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return 0, 0
    return size.columns, size.lines


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
