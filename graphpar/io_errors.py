"""The exception raised for malformed graph files (defined in :mod:`graphpar.errors`)."""

from __future__ import annotations

from graphpar.errors import GraphFormatError

__all__ = ["GraphFormatError"]
