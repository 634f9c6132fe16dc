"""How the graph reader's messages name the arguments a user would change.

A Python caller of :func:`graphpar.io.read_graph` changes keyword arguments
(``weight='km'``); a user of ``graphpar sssp`` changes flags (``--weight-col
km``). The reader's errors and warnings take every such name from the wording
in effect, :data:`KEYWORDS` unless a caller switched to :data:`FLAGS` with
:func:`flag_wording` for the duration of its read (a context variable, so each
thread and each task keeps its own). A message is worded once, where it is
made, and never rewritten afterwards.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import NamedTuple

__all__ = ["Wording", "KEYWORDS", "FLAGS", "wording", "flag_wording", "set_to"]


class Wording(NamedTuple):
    """The words for each argument of the reader a message may tell the user to change."""

    #: what joins an argument and its value: ``weight='km'``, ``--weight-col 'km'``
    assign: str
    #: the arguments that choose a CSV file's columns
    source: str
    target: str
    weight: str
    #: the three of them together, as a message lists them
    columns: str
    #: what to do when a column was taken as the weights by default and is not numbers
    unweighted: str
    #: the argument that numbers the ids present 0 to k - 1, as given
    relabel: str
    #: how to ask for the file to be read again with it
    read_relabelled: str
    #: where a relabelled graph keeps the ids
    labels_kept: str
    #: what follows "renumber the vertices compactly" in a refusal of too many vertices
    #: of an edge list
    renumber_hint: str


KEYWORDS = Wording(
    assign="=", source="source", target="target", weight="weight",
    columns="source=, target= and weight=",
    unweighted="pass weight=False for unweighted edges, or weight=<column>",
    relabel="relabel=True", read_relabelled="read it with relabel=True",
    labels_kept="g.labels keeps the ids",
    renumber_hint="",
)

FLAGS = Wording(
    assign=" ", source="--source-col", target="--target-col", weight="--weight-col",
    columns="--source-col, --target-col and --weight-col",
    unweighted="pick another with --weight-col NAME",
    relabel="--relabel", read_relabelled="run with --relabel",
    labels_kept="the outputs keep the ids as labels",
    renumber_hint=", as --relabel does for an edge list",
)

_CURRENT: contextvars.ContextVar[Wording] = contextvars.ContextVar("graphpar_io_wording",
                                                                   default=KEYWORDS)


def wording() -> Wording:
    """The wording in effect: :data:`KEYWORDS` unless inside :func:`flag_wording`.

    Examples
    --------
    >>> wording().weight
    'weight'
    """
    return _CURRENT.get()


def set_to(role: str, value: str) -> str:
    """``role`` set to ``value`` (already shown as the message shows it), in the wording
    in effect: ``weight='km'`` as keywords, ``--weight-col 'km'`` as flags.

    Examples
    --------
    >>> set_to("weight", "'km'")
    "weight='km'"
    >>> with flag_wording():
    ...     set_to("weight", "'km'")
    "--weight-col 'km'"
    """
    w = wording()
    return f"{getattr(w, role)}{w.assign}{value}"


@contextlib.contextmanager
def flag_wording() -> Iterator[None]:
    """Within the block, the reader's messages name the command line's flags.

    Examples
    --------
    >>> with flag_wording():
    ...     wording().relabel
    '--relabel'
    >>> wording().relabel
    'relabel=True'
    """
    token = _CURRENT.set(FLAGS)
    try:
        yield
    finally:
        _CURRENT.reset(token)
