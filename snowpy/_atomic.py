"""Files replaced whole or not at all: written beside their target, then renamed.

A reader sees the old file or the new one, never a part; a writer interrupted
at any moment leaves the old one and no stray temporary.
(:mod:`snowpy.model_file` writes model files its own way: it also reads them back.)
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["mode_for", "replacing", "write_bytes"]


@contextlib.contextmanager
def replacing(path: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """A temporary path beside ``path`` to write; on leaving without error it replaces
    ``path`` (a ``suffix`` for writers that insist on one, ``.npz``)."""
    target = Path(path)
    try:
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                             suffix=suffix)
    except OSError as exc:  # (a folder that takes no file: say the target's path)
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None
    os.close(handle)
    try:
        yield Path(temporary)
        os.chmod(temporary, mode_for(target))
        os.replace(temporary, target)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename == temporary:
            raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None
        raise


def mode_for(target: Path) -> int:
    """The permissions a file written here gets: those of the file it replaces, else what
    the user's umask gives a new file (a temporary file is created private)."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Replace ``path`` with ``data``, flushed to disk first."""
    with replacing(path) as temporary, open(temporary, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
