"""Whether a directory can take files: tried for real, then undone.

``os.access`` answers from permission bits, and is wrong where the file system decides (``/proc``,
a read-only mount, root on a file system that refuses it). ``probe_directory`` creates the
directory (and its missing parents), a file in it, and removes all it created.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def _missing(directory: Path) -> list[Path]:
    """``directory`` and its ancestors that do not exist, outermost first."""
    missing = []
    for path in (directory, *directory.parents):
        if path.exists() or path.is_symlink():
            break
        missing.append(path)
    return missing[::-1]


def probe_directory(directory: Path) -> None:
    """Create ``directory`` and a file in it, then remove what was created.

    Raises ``OSError`` (its ``filename`` names the path that failed) when either cannot be
    done; nothing that did not exist before is left behind either way.
    """
    directory = directory.absolute()
    created: list[Path] = []
    try:
        for path in _missing(directory):
            try:
                path.mkdir()
            except FileExistsError:  # made by someone else meanwhile: theirs, not ours
                continue
            created.append(path)
        descriptor, name = tempfile.mkstemp(prefix=".write-check-", dir=directory)
        os.close(descriptor)
        os.unlink(name)
    finally:
        for path in reversed(created):
            # not empty any more: something else writes there now, leave it
            with contextlib.suppress(OSError):
                path.rmdir()
