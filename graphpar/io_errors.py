"""The exception raised for malformed graph files (re-exported by :mod:`graphpar.io`)."""

from __future__ import annotations


class GraphFormatError(ValueError):
    """A graph file that does not follow its format.

    The message names the file, the line number and what was expected, e.g.
    ``g.gr: line 12: expected an integer vertex id (the head v of 'a u v w'), got 'x7'``.

    Examples
    --------
    >>> issubclass(GraphFormatError, ValueError)
    True
    """
