"""``run --record FILE.har``: the suite's own traffic as one HAR 1.2 file, secrets masked.

Every process of the run appends its exchanges to a part file (``conformance.suite.wire.har``): the
engine for preflight, pytest (in this process or in each pytest-xdist worker, ``--record-dir``)
for the checks. At the end the parts are merged, ordered by start time, into the HAR file.

The merge streams: it keeps an index of (start time, part, offset) per entry, not the entries,
and copies each entry's line into the output, so memory stays small whatever the bodies. The
output is written to a temporary file next to the target and renamed into place.

The recorders bound the parts (``har.RecordLimits``), so the HAR file is bounded too; what they
cut is counted here and said in the log's ``comment`` and by ``Merged.describe``.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from conformance.core import jsonsafe
from conformance.core.profile import Profile
from conformance.suite.wire import har
from conformance.suite.wire.har import (
    CREATOR,
    DEFAULT_LIMITS,
    PART_SUFFIX,
    TRUNCATED,
    PartRecorder,
    RecordLimits,
    counts_path,
    signature_verdict,
)
from conformance.suite.wire.transport import describe_size

# Each part line starts with '{"startedDateTime": "' and a timestamp of fixed length.
_KEY_PREFIX = b'{"startedDateTime": "'
_KEY_LENGTH = len("2026-01-01T00:00:00.000000Z")
# In an entry's line the key only: a quote inside a JSON string is escaped.
_TRUNCATED_KEY = f'"{TRUNCATED}": true'.encode()


class RecordingError(Exception):
    """The HAR file cannot be written: the message says where and why."""


def check_record_path(path: Path) -> None:
    """Raise ``RecordingError`` when ``path`` could not be written; checked before the run."""
    where = f"cannot record the traffic to {path}"
    if path.is_dir():
        raise RecordingError(f"{where}: it is a directory")
    parent = path.absolute().parent
    if not parent.is_dir():
        raise RecordingError(f"{where}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise RecordingError(f"{where}: the directory {parent} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise RecordingError(f"{where}: the file is not writable")


@dataclass(frozen=True)
class Merged:
    path: Path
    entries: int
    dropped: int  # unfinished lines (a process stopped mid-write)
    truncated: int = 0  # entries with a body cut or left out (``_truncated``)
    without_bodies: int = 0  # of them, recorded without bodies: the budget for bodies was spent
    skipped: int = 0  # exchanges not recorded: the file's cap was reached
    size: int = 0  # bytes written
    limits: RecordLimits = DEFAULT_LIMITS

    def cuts(self) -> str:
        """What the limits cut, in words ("" when nothing)."""
        said = []
        cut = self.truncated - self.without_bodies
        if cut:
            said.append(
                f"{cut:,} entr{'y' if cut == 1 else 'ies'} with a body cut "
                f"(at {describe_size(self.limits.body_bytes)}, or by the client's cap)"
            )
        if self.without_bodies:
            said.append(
                f"{self.without_bodies:,} recorded without bodies (the "
                f"{describe_size(self.limits.bodies_bytes)} for bodies was spent)"
            )
        if self.skipped:
            said.append(
                f"{self.skipped:,} exchange{'' if self.skipped == 1 else 's'} not recorded "
                f"(the file reached its cap of {describe_size(self.limits.file_bytes)})"
            )
        return "; ".join(said)

    def describe(self) -> str:
        """The console's line: where the recording went, its size and what was cut."""
        cuts = self.cuts()
        return (
            f"recording: {self.path} ({self.entries:,} entr{'y' if self.entries == 1 else 'ies'}, "
            f"{self.size / 1e6:.1f} MB)" + (f"; cut: {cuts}" if cuts else "")
        )


def _index(parts: Iterable[Path]) -> tuple[list[tuple[bytes, int, int, int]], int, int]:
    """(start time, part number, offset, length) of every whole entry, how many lines were
    left unfinished and how many entries say they were cut."""
    index: list[tuple[bytes, int, int, int]] = []
    dropped = truncated = 0
    for number, part in enumerate(parts):
        offset = 0
        with part.open("rb") as lines:
            for line in lines:
                whole = line.endswith(b"\n") and line.startswith(_KEY_PREFIX)
                if whole:
                    key = line[len(_KEY_PREFIX) : len(_KEY_PREFIX) + _KEY_LENGTH]
                    index.append((key, number, offset, len(line)))
                    truncated += _TRUNCATED_KEY in line
                else:
                    dropped += 1
                offset += len(line)
    index.sort()
    return index, dropped, truncated


def _counts(parts: Iterable[Path]) -> tuple[int, int]:
    """The recorders' counts of entries without bodies and exchanges not recorded."""
    without_bodies = skipped = 0
    for part in parts:
        try:
            counts = jsonsafe.loads(counts_path(part).read_bytes()[:1024])
        except (OSError, ValueError):
            continue  # none written: nothing was cut, or the process was killed
        if isinstance(counts, dict):
            found = [counts.get("without_bodies"), counts.get("skipped")]
            numbers = [n if isinstance(n, int) and n >= 0 else 0 for n in found]
            without_bodies += numbers[0]
            skipped += numbers[1]
    return without_bodies, skipped


def merge_parts(directory: Path, target: Path, limits: RecordLimits | None = None) -> Merged:
    """Merge the part files of ``directory`` into the HAR file ``target`` (replaced whole);
    ``limits``: those the parts were recorded under (default: ``har.DEFAULT_LIMITS``)."""
    limits = limits or har.DEFAULT_LIMITS
    parts = sorted(directory.glob(f"*{PART_SUFFIX}"))
    index, dropped, truncated = _index(parts)
    without_bodies, skipped = _counts(parts)
    merged = Merged(
        target.absolute(), len(index), dropped, truncated, without_bodies, skipped, 0, limits
    )
    log: dict[str, object] = {"version": "1.2", "creator": CREATOR, "pages": []}
    if merged.cuts():
        log["comment"] = f"recorded by run --record, bounded: {merged.cuts()}"
    head = json.dumps(log)
    target = target.absolute()
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with contextlib.ExitStack() as stack:
            out = stack.enter_context(os.fdopen(handle, "wb"))
            sources = [stack.enter_context(part.open("rb")) for part in parts]
            out.write(b'{"log": ' + head[:-1].encode() + b', "entries": [')
            for position, (_, number, offset, length) in enumerate(index):
                source = sources[number]
                source.seek(offset)
                out.write(b"\n" if position == 0 else b",\n")
                out.write(source.read(length).rstrip(b"\n"))
            out.write(b"\n]}}\n")
            size = out.tell()
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(temporary)
        raise RecordingError(f"cannot write the recording {target}: {exc}") from None
    return replace(merged, path=target, size=size)


@dataclass
class Recording:
    """The part files of one run (``directory``; ``None``: not recording) and, once merged,
    the HAR file written or why it could not be."""

    directory: Path | None
    merged: Merged | None = None
    error: str | None = None

    @contextlib.contextmanager
    def here(self, name: str, secrets: Iterable[str], profile: Profile) -> Iterator[None]:
        """Record this process's exchanges while the block runs (preflight)."""
        if self.directory is None:
            yield
            return
        known = tuple(secrets)
        verdict = signature_verdict(lambda: profile)
        recorder = PartRecorder(self.directory, name, lambda: known, signatures=verdict).start()
        try:
            yield
        finally:
            recorder.stop()


@contextlib.contextmanager
def recording(target: Path | None) -> Iterator[Recording]:
    """The run's recording into ``target`` (``None``: none); on the way out, however the run
    ends, its parts are merged into ``target`` (a failure to: in ``Recording.error``)."""
    if target is None:
        yield Recording(None)
        return
    with tempfile.TemporaryDirectory(prefix="payment-conformance-record-") as scratch:
        run = Recording(Path(scratch))
        try:
            yield run
        finally:
            try:
                run.merged = merge_parts(Path(scratch), target)
            except RecordingError as exc:
                run.error = str(exc)
