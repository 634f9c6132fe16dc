"""Atomic output files: write beside the target, then rename over it.

An error, Ctrl-C or a kill part-way through never leaves a half-written file under the
target's name: readers see the old file or the whole new one. Every file graphpar writes
goes through :func:`atomic_write`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile


@contextlib.contextmanager
def atomic_write(path, mode: str = "wb", **open_kwargs):
    """Open a temporary file beside ``path``; on success rename it to ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file to create or replace.
    mode : {"wb", "w"}
        Binary or text.
    **open_kwargs
        Passed to :func:`open` for text mode (``encoding``, ``newline``).

    Yields
    ------
    file
        The open temporary file; its ``name`` is the temporary file's path (for writers
        that need a path, such as a memory map). If the ``with`` block raises, it is
        deleted and ``path`` is left as it was.

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_write(f, "w") as out:
    ...     _ = out.write("done\\n")
    >>> open(f).read()
    'done\\n'
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                                   dir=folder)
    except OSError as exc:  # name the file asked for, not the temporary one
        raise type(exc)(exc.errno, exc.strerror, path) from None
    try:
        with open(tmp, mode, opener=lambda *_: fd, **open_kwargs) as f:  # f.name is tmp
            yield f
            f.flush()
            os.fsync(f.fileno())
        _keep_permissions(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _keep_permissions(path: str, tmp: str) -> None:
    """Give the new file the old file's mode, or the umask's default for a new file."""
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)
