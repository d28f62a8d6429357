"""Read files someone else may have prepared: report directories, results.json, recordings.

``verify``, ``report`` and ``validate`` read evidence handed over by others. Such a file can be a
symbolic link to ``/dev/zero`` (``verify`` once read 1.8 GB of it in 6 s), a named pipe (opening
one blocks until someone writes to it: ``verify`` hung), or JSON nested 100,000 levels deep
(a ``RecursionError`` traceback). :func:`open_file` opens only what its caller accepts, without
blocking; :func:`read_bytes` and :func:`read_json` read a regular file bounded in size, the
latter through ``jsonsafe`` (bounded nesting); :func:`sha256` hashes one in chunks. Every
refusal is an :class:`UntrustedFileError` whose message names the file and says what it is.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import IO, Any

from conformance.core import jsonsafe

_CHUNK = 1024 * 1024


class UntrustedFileError(Exception):
    """The file is refused or cannot be read; the message names it and says why."""


_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
}


def kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words ("a named pipe", "a regular file")."""
    return _KINDS.get(stat.S_IFMT(mode), "a regular file")


def _open_error(path: Path, exc: OSError, *, follow_symlinks: bool) -> UntrustedFileError:
    code = exc.errno
    if code == errno.ELOOP:
        if not follow_symlinks:
            return UntrustedFileError(f"{path} is a symbolic link")
        return UntrustedFileError(f"{path}: a symbolic link loop (or a chain of over 40 links)")
    if code == errno.ENOENT:
        if path.is_symlink():
            return UntrustedFileError(f"{path}: a symbolic link to a missing file")
        return UntrustedFileError(f"{path}: no such file")
    if code in (errno.EACCES, errno.EPERM):
        return UntrustedFileError(f"{path}: permission denied")
    if code == errno.ENOTDIR:
        return UntrustedFileError(f"{path}: a part of the path is not a directory")
    if code == errno.ENXIO:  # a socket, or a device without its driver
        return UntrustedFileError(f"{path} is a socket or a device, not a file")
    return UntrustedFileError(f"{path}: cannot read: {exc.strerror or exc}")


def open_file(
    path: Path, *, follow_symlinks: bool = True, pipes: bool = False
) -> tuple[IO[bytes], os.stat_result]:
    """``path`` opened for reading, with its status: a regular file, or with ``pipes`` a pipe.

    Never blocks: a named pipe is opened non-blocking (no wait for a writer); with ``pipes``
    its reads then block as usual, and one with no writer reads as empty. The type is checked
    before opening, so a device is never opened, and again on the open file, so a file swapped
    in between is refused too. Without ``follow_symlinks`` a symbolic link is refused.
    """
    try:
        before = os.stat(path, follow_symlinks=follow_symlinks)
    except OSError as exc:
        raise _open_error(path, exc, follow_symlinks=follow_symlinks) from None
    _check_kind(path, before.st_mode, pipes=pipes)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _open_error(path, exc, follow_symlinks=follow_symlinks) from None
    try:
        status = os.fstat(fd)
        _check_kind(path, status.st_mode, pipes=pipes)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), status
    except BaseException:
        os.close(fd)
        raise


def _check_kind(path: Path, mode: int, *, pipes: bool) -> None:
    if stat.S_ISREG(mode) or (pipes and stat.S_ISFIFO(mode)):
        return
    what = "a file" if pipes else "a regular file"
    raise UntrustedFileError(f"{path} is {kind(mode)}, not {what}")


def read_bytes(path: Path, *, max_bytes: int, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file ``path``, refused unread when larger than ``max_bytes``."""
    handle, status = open_file(path, follow_symlinks=follow_symlinks)
    with handle:
        if status.st_size > max_bytes:
            raise UntrustedFileError(_too_large(path, status.st_size, max_bytes))
        data = _read(handle, path, max_bytes + 1)
    if len(data) > max_bytes:  # it grew after the check
        raise UntrustedFileError(_too_large(path, len(data), max_bytes))
    return data


def _too_large(path: Path, size: int, max_bytes: int) -> str:
    return f"{path}: {size:,} bytes is larger than the {max_bytes:,} this file can be"


def read_json(
    path: Path,
    *,
    max_bytes: int,
    max_depth: int = jsonsafe.MAX_DEPTH,
    max_values: int | None = None,
    follow_symlinks: bool = True,
) -> Any:
    """The JSON document in the regular file ``path``: bounded in size and nesting depth, and
    with ``max_values`` in how many values it holds (what it costs once decoded).

    Refusals (not a regular file, too large, too deep) raise :class:`UntrustedFileError`; a
    file that is not UTF-8 JSON raises ``ValueError`` (``UnicodeDecodeError`` or
    ``json.JSONDecodeError``), which callers may treat as "not the document expected".
    """
    data = read_bytes(path, max_bytes=max_bytes, follow_symlinks=follow_symlinks)
    try:
        text = jsonsafe.check(data.decode("utf-8"), max_depth=max_depth, max_bytes=max_bytes)
    except jsonsafe.JsonTooComplex as exc:
        raise UntrustedFileError(f"{path}: {exc}") from None
    if max_values is not None and jsonsafe.values_exceed(text, max_values):
        raise UntrustedFileError(f"{path}: JSON text holds more than {max_values:,} values")
    return json.loads(text)


def sha256(path: Path, *, max_bytes: int, follow_symlinks: bool = True) -> str:
    """The SHA-256 of the regular file ``path``, read in chunks (memory flat), refused unread
    when larger than ``max_bytes``."""
    handle, status = open_file(path, follow_symlinks=follow_symlinks)
    digest = hashlib.sha256()
    size = 0
    with handle:
        if status.st_size > max_bytes:
            raise UntrustedFileError(_too_large(path, status.st_size, max_bytes))
        while chunk := _read(handle, path, _CHUNK):
            size += len(chunk)
            if size > max_bytes:  # it grew after the check
                raise UntrustedFileError(_too_large(path, size, max_bytes))
            digest.update(chunk)
    return digest.hexdigest()


def _read(handle: IO[bytes], path: Path, size: int) -> bytes:
    try:
        return handle.read(size)
    except OSError as exc:
        raise UntrustedFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
