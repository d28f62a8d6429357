"""Write files into a directory someone else may have prepared, never through a link in it.

A report directory can be shared (a CI workspace, an artifact downloaded and reused): a symbolic
link planted there as ``summary.md -> ../victim.txt`` made a run overwrite the link's target.
:func:`write_replacing` writes a new file beside the name and renames it over the name, which
replaces a link instead of following it; :func:`symbolic_links` finds the names that are links,
for callers that refuse such a directory before they write anything.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable
from pathlib import Path


def symbolic_links(directory: Path, names: Iterable[str]) -> list[Path]:
    """The paths ``directory / name`` of ``names`` that are symbolic links (dangling or not)."""
    return [directory / name for name in names if (directory / name).is_symlink()]


def links_refused(links: list[Path]) -> str:
    """The refusal of a directory holding the report-file ``links``, naming them."""
    shown = ", ".join(str(link) for link in links)
    return (
        f"{shown}: a symbolic link where a report file goes; remove it or choose another "
        "directory (reports are never written through a link)"
    )


def write_replacing(path: Path, data: bytes) -> None:
    """Write ``data`` as the file ``path``: a new file in its directory, renamed over ``path``.

    A symbolic link at ``path`` is replaced, its target left alone; the new file gets the mode
    a plain create gives (0666 less the umask). ``OSError`` when it cannot be done, and no
    temporary file is left behind.
    """
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
