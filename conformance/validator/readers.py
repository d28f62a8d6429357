"""Read recordings as a stream of :class:`Exchange`: HAR 1.2 files and JSON Lines.

Both readers hold one entry (or line) at a time plus a read buffer, so memory stays flat
whatever the file size; an entry larger than :data:`MAX_ENTRY_BYTES`, nested deeper than
:data:`MAX_DEPTH` or holding more than :data:`MAX_ENTRY_VALUES` JSON values is refused before
it is parsed, and a message with more than :data:`MAX_HEADERS` headers once it is. Anything
that cannot be read raises :class:`RecordingError` naming the file and the entry or line
(docs/validate.md). A gzip file (``traffic.har.gz``, or any file starting with gzip's magic
number) is decompressed as it is read, under the same limits, and refused when it grows like a
decompression bomb.

The HAR reader is a small windowed parser rather than a streaming JSON library: ``ijson`` (the
obvious choice) builds a path prefix per nesting level, so 20,000 nested ``[`` in one entry took
1 GB, and it gives no hook to cap one entry's size. Here each entry's extent is found first by a
linear bracket scan (which also measures its depth), then the entry alone is decoded by
``json``'s C decoder, which is also about twice as fast as ``ijson.items``.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import gzip
import io
import json
import re
import stat
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, cast
from urllib.parse import urlencode

from conformance.core import jsonsafe, untrusted_files
from conformance.core.untrusted import mask_url_passwords
from conformance.validator.exchange import Exchange, RecordingError, url_parts

MAX_ENTRY_BYTES = 64 * 1024 * 1024
MAX_DEPTH = jsonsafe.MAX_DEPTH
# Bytes alone do not bound what an entry costs once decoded: 63 MB of "{}," became 1.5 GB of
# Python objects, and 2 million headers 780 MB. A real entry is some 50 values plus 3 a header;
# 100,000 values decode to at most some 25 MB, and leave room for 30,000 headers.
MAX_ENTRY_VALUES = 100_000
# Node.js's default cap on a message's header count, the highest of the common servers (Apache
# takes 100); the checks look headers up one by one, so their count bounds the time they take.
MAX_HEADERS = 2_000
_CAP_TEXT = "64 MiB"
_CHUNK = 1024 * 1024
MAX_GZIP_RATIO = 500
"""Decompressed bytes per compressed byte above which a gzip recording is refused (past the
first MiB). Deflate tops out near 1,000; real recordings stay far below (docs/validate.md)."""
_GZIP_RATIO_FROM = 1024 * 1024
# Not later: the JSON Lines reader takes a line per call, and 64 MiB of blank lines took minutes.
_GZIP_MAGIC = b"\x1f\x8b"

FORMATS = {".har": "har", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_BOM = "\ufeff"
NOT_CAPTURED = "the recording holds no response body (HAR response.content.text absent)"


def iter_exchanges(path: Path, *, format: str | None = None) -> Iterator[Exchange]:
    """Stream exchanges from a HAR (.har) or JSON Lines (.jsonl/.ndjson) file; format by
    suffix unless given ("har" | "jsonl"). Memory flat whatever the file size. Raises
    RecordingError (clear message) for unreadable/partial/invalid input.

    The file and the format are checked at once; reading errors come while iterating, after
    the exchanges read before the fault."""
    path = Path(path)
    if format is None:
        suffix = path.suffix.lower()
        if suffix == ".gz":  # traffic.har.gz: the format is the suffix before
            suffix = Path(path.stem).suffix.lower()
        format = FORMATS.get(suffix)
        if format is None:
            raise RecordingError(
                f"{path}: cannot tell the format from the suffix {path.suffix!r}: "
                "name it .har, .jsonl or .ndjson (.gz when compressed), or give the format "
                "(har or jsonl)"
            )
    elif format not in ("har", "jsonl"):
        raise RecordingError(f"{path}: unknown recording format {format!r} (har or jsonl)")
    if path.is_dir():
        raise RecordingError(f"{path} is a directory, not a recording")
    raw, pipe = _open(path)
    return _read_har(raw, path, pipe) if format == "har" else _read_jsonl(raw, path)


def _open(path: Path) -> tuple[IO[bytes], bool]:
    """The file opened, and whether it is a pipe (``validate <(zcat traffic.har.gz)``): a
    regular file or a pipe, never a device; a named pipe with no writer reads as empty. Its
    bytes are decompressed when it is gzip (by its magic number, whatever its suffix)."""
    try:
        raw, status = untrusted_files.open_file(path, pipes=True)
    except untrusted_files.UntrustedFileError as exc:
        raise RecordingError(str(exc)) from None
    pipe = stat.S_ISFIFO(status.st_mode)
    buffered = (
        raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(cast(io.RawIOBase, raw))
    )
    try:
        magic = buffered.peek(2)[:2]  # peek, not seek: a pipe cannot go back
    except OSError as exc:
        buffered.close()
        raise RecordingError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if magic == _GZIP_MAGIC:
        return cast(IO[bytes], _Gunzip(buffered, path)), pipe  # read as a file of bytes
    return buffered, pipe


class _Counted:
    """A file's read counting the bytes it gave: a pipe has no ``tell``."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.count = 0
        self.mode = "rb"

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.count += len(data)
        return data

    def close(self) -> None:
        self.raw.close()


class _Gunzip(gzip.GzipFile):
    """A gzip file read as the plain file it holds. The readers' limits apply to the
    decompressed text (an entry of at most 64 MiB, 256 levels); on top of that a stream that
    grows more than :data:`MAX_GZIP_RATIO` times its compressed size past the first MiB is
    refused as a decompression bomb, and corrupt or cut gzip data is a ``RecordingError``."""

    def __init__(self, raw: IO[bytes], path: Path) -> None:
        self._raw = _Counted(raw)
        super().__init__(fileobj=cast(IO[bytes], self._raw), mode="rb")
        self._path = path
        self._out = 0

    def read(self, size: int | None = -1) -> bytes:
        return self._counted(lambda: super(_Gunzip, self).read(size))

    def readline(self, size: int | None = -1) -> bytes:
        return self._counted(lambda: super(_Gunzip, self).readline(size))

    def close(self) -> None:
        super().close()
        self._raw.close()

    def _counted(self, read: Callable[[], bytes]) -> bytes:
        try:
            data = read()
        except (OSError, EOFError, zlib.error) as exc:
            cut = isinstance(exc, EOFError)
            raise RecordingError(
                f"{self._path}: "
                + ("the gzip data ends early: the file is cut short" if cut else "")
                + ("" if cut else f"not valid gzip data ({exc})")
            ) from None
        self._out += len(data)
        if self._out > _GZIP_RATIO_FROM and self._out > MAX_GZIP_RATIO * self._raw.count:
            raise RecordingError(
                f"{self._path}: decompresses to more than {MAX_GZIP_RATIO:,} times its "
                "compressed size: refused as a decompression bomb"
            )
        return data


def _too_many_values(text: str, start: int = 0, end: int | None = None) -> bool:
    return jsonsafe.values_exceed(text, MAX_ENTRY_VALUES, start, end)


_METHOD = re.compile(r'"method"[ \t\n\r]*:[ \t\n\r]*"([A-Za-z]{1,20})"')
_URL = re.compile(r'"url"[ \t\n\r]*:[ \t\n\r]*"((?:[^"\\]|\\.){1,200})')


def _named(where: str, text: str, start: int = 0, end: int | None = None) -> str:
    """``where`` with the method and URL of the entry's text, as far as a search finds them
    without parsing it (a refused entry is never parsed): "entry 3 (POST http://h/v1)"."""
    end = len(text) if end is None else end
    method, url = _METHOD.search(text, start, end), _URL.search(text, start, end)
    if method is None or url is None:
        return where
    return _labelled(where, method.group(1), url.group(1))


def _labelled(where: str, method: str, url: str) -> str:
    shown = url if len(url) <= 120 else url[:120] + "..."
    return f"{where} ({method.upper()} {mask_url_passwords(shown)})"


def _too_many_values_error(where: str) -> RecordingError:
    return RecordingError(
        f"{where} holds more than {MAX_ENTRY_VALUES:,} JSON values "
        "(objects, arrays, strings, numbers)"
    )


# --- JSON Lines -----------------------------------------------------------------------------


def _read_jsonl(raw: IO[bytes], path: Path) -> Iterator[Exchange]:
    with raw:
        number = 0
        located, named = f"{path}: line ", f"{path.name} line "
        while True:
            try:
                line = raw.readline(MAX_ENTRY_BYTES + 1)
            except OSError as exc:
                raise RecordingError(f"{path}: cannot read: {exc.strerror or exc}") from None
            if not line:
                return
            number += 1
            where = f"{located}{number}"
            if len(line) > MAX_ENTRY_BYTES and not line.endswith(b"\n"):
                raise RecordingError(f"{where} is larger than {_CAP_TEXT}")
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise RecordingError(
                    f"{where} is not UTF-8 text (invalid byte at column {exc.start + 1}): "
                    "not a JSON Lines recording"
                ) from None
            if number == 1:
                text = text.removeprefix(_BOM)
            if not text.strip():
                continue  # blank lines are allowed (a trailing one is common)
            yield _parse_line(text, f"{named}{number}", where, last=not line.endswith(b"\n"))


def parse_jsonl_line(line: str | bytes, source: str) -> Exchange:
    """One JSON Lines record (docs/validate.md) as an :class:`Exchange` whose ``source`` is
    ``source`` (e.g. "shard-3.jsonl line 12"); RecordingError naming ``source`` if invalid.
    For readers of partitioned files (dask.bag and the like) that split lines themselves."""
    if isinstance(line, bytes):
        if len(line) > MAX_ENTRY_BYTES:
            raise RecordingError(f"{source} is larger than {_CAP_TEXT}")
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordingError(
                f"{source} is not UTF-8 text (invalid byte at column {exc.start + 1})"
            ) from None
    return _parse_line(line, source, source, last=False)


def _parse_line(text: str, source: str, where: str, *, last: bool) -> Exchange:
    try:
        jsonsafe.check(text, max_bytes=MAX_ENTRY_BYTES + 1)
        if _too_many_values(text):
            raise _too_many_values_error(_named(where, text))
        record = json.loads(text)
    except jsonsafe.JsonTooComplex as exc:
        detail = (
            f"nests deeper than {MAX_DEPTH} levels"
            if "deeper" in exc.msg
            else f"is larger than {_CAP_TEXT}"
        )
        raise RecordingError(f"{where} {detail}") from None
    except json.JSONDecodeError as exc:
        if last and _cut_short(exc, text.rstrip()):
            file, _, number = where.rpartition(": line ")
            raise RecordingError(f"{file}: the file ends in the middle of line {number}") from None
        raise RecordingError(f"{where} is not valid JSON: {exc.msg} (column {exc.colno})") from None
    return _jsonl_exchange(record, source, where)


def _cut_short(exc: json.JSONDecodeError, text: str) -> bool:
    """Whether a decoding error looks like a text cut short rather than a malformed one."""
    # A cut literal or escape ("tru", "\u00") is reported a few characters before the end.
    return exc.msg.startswith("Unterminated string") or exc.pos >= len(text) - 12


def _jsonl_exchange(record: Any, source: str, where: str) -> Exchange:
    if not isinstance(record, dict):
        raise RecordingError(f"{where} is not a JSON object")
    request = _object(record, "request", where, required=True)
    assert request is not None
    response = _object(record, "response", where, required=False)
    status: int | None = None
    response_headers: tuple[tuple[str, str], ...] = ()
    response_body = b""
    _check_header_count(request, "request", request, where)
    if response is not None:
        _check_header_count(response, "response", request, where)
        status = _status(response.get("status"), "response.status", where, required=True)
        response_headers = _pairs(response.get("headers"), "response.headers", where)
        response_body = _jsonl_body(response, "response", where)
    request_headers = _pairs(request.get("headers"), "request.headers", where)
    request_body = _jsonl_body(request, "request", where)
    text = request.get("body")
    inexact = None
    if isinstance(text, str) and request.get("body_encoding", "utf-8") in (None, "utf-8"):
        inexact = _inexact_text(text)
    return Exchange(
        method=_method(request.get("method"), "request.method", where),
        url=_url(request.get("url"), "request.url", where),
        request_headers=request_headers,
        request_body=request_body,
        status=status,
        response_headers=response_headers,
        response_body=response_body,
        started_at=_optional_str(record.get("started_at"), "started_at", where),
        source=source,
        duration_ms=_duration(record.get("duration_ms")),
        request_body_inexact=inexact or _length_mismatch(request_headers, request_body),
    )


def _pairs(value: Any, field: str, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RecordingError(f"{where}: {field} must be a list of [name, value] pairs")
    pairs = []
    for index, pair in enumerate(value):
        if not (
            isinstance(pair, list)
            and len(pair) == 2
            and isinstance(pair[0], str)
            and isinstance(pair[1], str)
        ):
            raise RecordingError(
                f"{where}: {field}[{index}] must be a [name, value] pair of strings"
            )
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def _jsonl_body(message: dict[str, Any], side: str, where: str) -> bytes:
    body = message.get("body")
    if body is None:
        return b""
    if not isinstance(body, str):
        raise RecordingError(f"{where}: {side}.body must be a string")
    encoding = message.get("body_encoding", "utf-8")
    if encoding in (None, "utf-8"):
        return body.encode("utf-8", "surrogatepass")
    if encoding == "base64":
        return _base64(body, f"{side}.body", where)
    raise RecordingError(
        f"{where}: {side}.body_encoding must be 'utf-8' or 'base64', not {encoding!r}"
    )


# --- HAR ------------------------------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
# A complete string. Possessive quantifiers: a string cut by the end of the buffer fails after
# one linear pass, with no backtracking.
_STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
# Everything up to the next bracket outside a string: runs of other characters and complete
# strings. What follows the match is a bracket, a '"' opening a string the buffer cuts, or the
# end of the buffer. One match per bracket keeps the Python loop short (strings are most tokens).
_TO_BRACKET = re.compile(rf'(?:[^"\[\]{{}}]++|{_STRING})*+', re.DOTALL)
_WHOLE_STRING = re.compile(_STRING, re.DOTALL)
_SCALAR = re.compile(r"[^ \t\n\r,\]}]*")


class _Incomplete(Exception):
    pass


class _TooLarge(Exception):
    pass


class _TooDeep(Exception):
    pass


class _TooManyValues(Exception):
    def __init__(self, text: str, start: int, end: int) -> None:
        super().__init__()
        self.text, self.start, self.end = text, start, end  # where to look for a name


class _Text:
    """A window on the file's text: read in chunks, consumed value by value."""

    def __init__(self, raw: IO[bytes], path: Path, pipe: bool = False) -> None:
        self.raw = raw
        self.path = path
        self.pipe = pipe
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.bytes_read = 0
        self.started = False  # some text decoded (a byte order mark is dropped from it)
        self.json = json.JSONDecoder()

    def more(self, size: int = 0) -> bool:
        """Append ``size`` more bytes (a chunk by default); False at the end of the file."""
        if self.eof:
            return False
        try:
            data = self.raw.read(size or _CHUNK)
        except OSError as exc:
            raise RecordingError(f"{self.path}: cannot read: {exc.strerror or exc}") from None
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            offset = self.bytes_read + exc.start - len(self.decoder.getstate()[0])
            raise RecordingError(
                f"{self.path} is not UTF-8 text (invalid byte at offset {max(offset, 0)}): "
                "not a HAR recording"
            ) from None
        self.bytes_read += len(data)
        if text and not self.started:
            text = text.removeprefix(_BOM)
            self.started = True
        if not data:
            self.eof = True
        self.buf += text
        return bool(data) or bool(text)

    def compact(self) -> None:
        if self.pos > _CHUNK:
            self.buf = self.buf[self.pos :]
            self.pos = 0

    def peek(self) -> str | None:
        """The next character that is not whitespace (not consumed), None at the end."""
        while True:
            match = _WS.match(self.buf, self.pos)
            assert match is not None
            self.pos = match.end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return None

    def value(self) -> Any:
        """Decode the JSON value at the current position (after :meth:`peek`)."""
        self.compact()
        start = self.pos
        end = self._extent(start)
        if end - start > MAX_ENTRY_BYTES:
            raise _TooLarge
        if _too_many_values(self.buf, start, end):
            raise _TooManyValues(self.buf, start, end)
        value, self.pos = self.json.raw_decode(self.buf, start)
        if self.pos != end:  # the brackets balance but the text between is not JSON
            self.json.raw_decode(self.buf[start:end])
        return value

    def _extent(self, start: int) -> int:
        """Where the value at ``start`` ends; reads more of the file as needed."""
        first = self.buf[start]
        if first not in '[{"':
            while True:
                match = _SCALAR.match(self.buf, start)
                assert match is not None
                if match.end() < len(self.buf) or not self.more():
                    return max(match.end(), start + 1)
        depth = opened = 0
        resume = start
        while True:
            if first == '"':
                string = _WHOLE_STRING.match(self.buf, start)
                if string is not None:
                    return string.end()
            else:
                buf = self.buf
                end = len(buf)
                while True:
                    run = _TO_BRACKET.match(buf, resume)
                    assert run is not None
                    at = run.end()
                    if at == end or buf[at] == '"':  # needs more of the file
                        resume = at
                        break
                    resume = at + 1
                    if buf[at] in "[{":
                        depth += 1
                        opened += 1
                        if depth > MAX_DEPTH:
                            raise _TooDeep
                        if opened > MAX_ENTRY_VALUES:  # stop scanning: it is refused anyway
                            raise _TooManyValues(buf, start, at)
                    else:
                        depth -= 1
                        if depth == 0:
                            return resume
            held = len(self.buf) - start
            if held > MAX_ENTRY_BYTES:
                raise _TooLarge
            # Read as much again as is held (a large entry is rescanned O(log n) times, not
            # O(n)), but not much beyond the cap.
            if not self.more(max(_CHUNK, min(held, MAX_ENTRY_BYTES + 1 - held))):
                raise _Incomplete


def _read_har(raw: IO[bytes], path: Path, pipe: bool) -> Iterator[Exchange]:
    with raw:
        yield from _HarReader(_Text(raw, path, pipe), path).read()


class _HarReader:
    def __init__(self, text: _Text, path: Path) -> None:
        self.text = text
        self.path = path
        self.entries_seen = False

    def fail(self, message: str) -> RecordingError:
        return RecordingError(f"{self.path}: {message}")

    def value(self, what: str) -> Any:
        try:
            return self.text.value()
        except _Incomplete:
            raise self.fail(f"the file ends in the middle of {what}") from None
        except _TooLarge:
            raise self.fail(f"{what} is larger than {_CAP_TEXT}") from None
        except _TooDeep:
            raise self.fail(f"{what} nests deeper than {MAX_DEPTH} levels") from None
        except _TooManyValues as exc:
            named = _named(what, exc.text, exc.start, exc.end) if what.startswith("entry") else what
            raise _too_many_values_error(f"{self.path}: {named}") from None
        except json.JSONDecodeError as exc:
            raise self.fail(f"{what} is not valid JSON: {exc.msg}") from None

    def expect(self, char: str, where: str) -> None:
        found = self.text.peek()
        if found is None:
            raise self.fail(f"the file ends {where}")
        if found != char:
            raise self.fail(f"expected {char!r} {where}, found {found!r}")
        self.text.pos += 1

    def members(self, what: str) -> Iterator[str]:
        """The keys of the object at the current position, positioned on each value in turn
        (the caller consumes it before asking for the next key)."""
        self.expect("{", f"at the start of {what}")
        if self.text.peek() == "}":
            self.text.pos += 1
            return
        while True:
            if self.text.peek() != '"':
                self.expect('"', f"in {what} (a member name)")
            key = self.value(f"a member name in {what}")
            self.expect(":", f"after {key!r} in {what}")
            if self.text.peek() is None:
                raise self.fail(f"the file ends in the middle of {what}")
            yield key
            found = self.text.peek()
            if found == "}":
                self.text.pos += 1
                return
            self.expect(",", f"between the members of {what}")

    def read(self) -> Iterator[Exchange]:
        first = self.text.peek()
        if first is None:
            if self.text.pipe:
                raise self.fail("the file is empty (a named pipe nothing was written to)")
            raise self.fail("the file is empty: not a HAR recording")
        if first != "{":
            raise self.fail(f"not a HAR recording: it starts with {first!r}, not a JSON object")
        for key in self.members("the HAR document"):
            if key == "log":
                if self.text.peek() != "{":
                    raise self.fail("log is not a JSON object: not a HAR recording")
                for log_key in self.members("log"):
                    if log_key == "entries" and not self.entries_seen:
                        yield from self.entries()
                    else:
                        self.value(f"log.{log_key}")
            else:
                self.value(key)
        if self.text.peek() is not None:
            raise self.fail("unexpected data after the end of the HAR document")
        if not self.entries_seen:
            raise self.fail("no log.entries: not a HAR recording")

    def entries(self) -> Iterator[Exchange]:
        self.entries_seen = True
        if self.text.peek() != "[":
            raise self.fail("log.entries is not a list")
        self.text.pos += 1
        if self.text.peek() == "]":
            self.text.pos += 1
            return
        number = 0
        while True:
            number += 1
            what = f"entry {number}"
            found = self.text.peek()
            if found is None:
                raise self.fail(f"the file ends before {what} ({number - 1} entries read)")
            if found != "{":
                raise self.fail(f"{what} is not a JSON object")
            try:
                entry = self.value(what)
            except RecordingError as exc:
                if "the file ends" in str(exc):
                    raise self.fail(
                        f"the file ends in the middle of {what} ({number - 1} entries read)"
                    ) from None
                raise
            yield _har_exchange(entry, f"{self.path.name} {what}", f"{self.path}: {what}")
            found = self.text.peek()
            if found == "]":
                self.text.pos += 1
                return
            if found is None:
                raise self.fail(f"the file ends after {what}, before the end of log.entries")
            if found != ",":
                raise self.fail(f"expected ',' or ']' after {what}, found {found!r}")
            self.text.pos += 1


def _har_exchange(entry: dict[str, Any], source: str, where: str) -> Exchange:
    request = _object(entry, "request", where, required=True)
    assert request is not None
    response = _object(entry, "response", where, required=False)
    status: int | None = None
    response_headers: tuple[tuple[str, str], ...] = ()
    response_body = b""
    missing: str | None = None
    _check_header_count(request, "request", request, where)
    if response is not None:
        _check_header_count(response, "response", request, where)
        status = _status(response.get("status"), "response.status", where, required=False)
        if status is not None:
            response_headers = _har_headers(response.get("headers"), "response.headers", where)
            content = _object(response, "content", where, required=False, parent="response")
            if content is not None:
                response_body = _har_text(content, "response.content", where)
            if not _har_body_captured(content, status, response_headers):
                missing = NOT_CAPTURED
    request_headers = _har_headers(request.get("headers"), "request.headers", where)
    request_body = _har_post_data(request, where)
    return Exchange(
        method=_method(request.get("method"), "request.method", where),
        url=_url(request.get("url"), "request.url", where),
        request_headers=request_headers,
        request_body=request_body,
        status=status,
        response_headers=response_headers,
        response_body=response_body,
        started_at=_optional_str(entry.get("startedDateTime"), "startedDateTime", where),
        source=source,
        truncated=entry.get("_truncated") is True,
        duration_ms=_duration(entry.get("time")),
        response_body_missing=missing,
        request_body_inexact=_har_request_inexact(entry, request_headers, request_body),
    )


def _har_request_inexact(
    entry: dict[str, Any], headers: tuple[tuple[str, str], ...], body: bytes
) -> str | None:
    """Why the entry's request body may not be the bytes sent; None when it is (as far as the
    entry tells)."""
    request = entry["request"]
    post = request.get("postData")
    post = post if isinstance(post, dict) else {}
    response = entry.get("response")
    content = response.get("content") if isinstance(response, dict) else None
    body_marked = post.get("_truncated") is True
    any_body_marked = body_marked or (isinstance(content, dict) and "_truncated" in content)
    if body_marked or (entry.get("_truncated") is True and not any_body_marked):
        return BODY_CUT  # the entry is cut and does not say which body: take it as this one
    if post.get("text") is None and isinstance(post.get("params"), list):
        return "the recording holds the request's form fields (postData.params), not its bytes"
    text = post.get("text")
    if isinstance(text, str) and post.get("encoding") in (None, ""):
        return _inexact_text(text) or _length_mismatch(headers, body)
    return _length_mismatch(headers, body)


def _har_body_captured(
    content: dict[str, Any] | None, status: int, headers: tuple[tuple[str, str], ...]
) -> bool:
    """Whether the entry holds the response body: its text, or a body known to be empty
    (``content.size`` 0, ``Content-Length: 0``, a 204 or 304). Browsers often export responses
    without ``content.text``; an empty body read in its place would break the body checks."""
    if content is not None and content.get("text") is not None:
        return True
    if status in (204, 304) or (content is not None and content.get("size") == 0):
        return True
    return any(name.lower() == "content-length" and value.strip() == "0" for name, value in headers)


def _duration(value: Any) -> float | None:
    """An entry's ``time`` in milliseconds; None when absent or not a number (HAR writes -1
    for a time it does not know)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def _har_headers(value: Any, field: str, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RecordingError(f"{where}: {field} must be a list of {{name, value}} objects")
    headers = []
    for index, header in enumerate(value):
        if not (
            isinstance(header, dict)
            and isinstance(header.get("name"), str)
            and isinstance(header.get("value"), str)
        ):
            raise RecordingError(
                f"{where}: {field}[{index}] must be an object with string name and value"
            )
        headers.append((header["name"], header["value"]))
    return tuple(headers)


def _har_post_data(request: dict[str, Any], where: str) -> bytes:
    post = _object(request, "postData", where, required=False, parent="request")
    if post is None:
        return b""
    if post.get("text") is None and isinstance(post.get("params"), list):
        # Form posts may be exported as params only; rebuild the urlencoded body.
        params = _har_headers(post["params"], "request.postData.params", where)
        return urlencode(params).encode("ascii")
    return _har_text(post, "request.postData", where)


def _har_text(content: dict[str, Any], field: str, where: str) -> bytes:
    text = content.get("text")
    if text is None:
        return b""  # not captured
    if not isinstance(text, str):
        raise RecordingError(f"{where}: {field}.text must be a string")
    encoding = content.get("encoding")
    if encoding is None or encoding == "":
        return text.encode("utf-8", "surrogatepass")
    if encoding == "base64":
        return _base64(text, f"{field}.text", where)
    raise RecordingError(f"{where}: {field}.encoding {encoding!r} is not supported (base64)")


# --- fields common to both formats ------------------------------------------------------------

BODY_CUT = "the recording cut or left out the request body (_truncated): the bytes sent are lost"
# What no text body sent as UTF-8 holds: control characters but tab, newline and return (binary
# data read as text) and lone surrogates (bytes that were not UTF-8).
_BINARY_AS_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")


def _inexact_text(text: str) -> str | None:
    """Why a body recorded as ``text`` may not be the bytes sent; None when it may be."""
    if "\ufffd" in text:
        return (
            "the recording holds the request body as text with replacement characters "
            "(U+FFFD): the bytes sent are lost"
        )
    if _BINARY_AS_TEXT.search(text):
        return (
            "the recording holds binary data of the request body as text, not base64: "
            "the bytes sent are lost"
        )
    return None


def _length_mismatch(headers: tuple[tuple[str, str], ...], body: bytes) -> str | None:
    """The reason when the request's Content-Length is not the length of the recorded body (a
    body without Content-Encoding: a decoded one has another length)."""
    folded = {name.lower(): value.strip() for name, value in reversed(headers)}
    declared = folded.get("content-length", "")
    if "content-encoding" in folded or not declared.isdigit() or int(declared) == len(body):
        return None
    return (
        f"the request body recorded is {len(body):,} bytes, its Content-Length {int(declared):,}: "
        "the recording cut or changed it"
    )


def _object(
    container: dict[str, Any], key: str, where: str, *, required: bool, parent: str = ""
) -> dict[str, Any] | None:
    """``container[key]`` when it is an object; None when absent or null and not required."""
    value = container.get(key)
    field = f"{parent}.{key}" if parent else key
    if value is None and not required:
        return None
    if not isinstance(value, dict):
        raise RecordingError(f"{where}: {field} {_missing_or_not(value, 'a JSON object')}")
    return value


def _check_header_count(
    message: dict[str, Any], side: str, request: dict[str, Any], where: str
) -> None:
    """Refuse a message with more than :data:`MAX_HEADERS` headers, naming its request."""
    headers = message.get("headers")
    if not isinstance(headers, list) or len(headers) <= MAX_HEADERS:
        return
    method, url = request.get("method"), request.get("url")
    if isinstance(method, str) and isinstance(url, str):
        where = _labelled(where, method, url)
    raise RecordingError(
        f"{where}: {side}.headers holds {len(headers):,} headers, more than {MAX_HEADERS:,}"
    )


def _method(value: Any, field: str, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise RecordingError(f"{where}: {field} {_missing_or_not(value, 'a non-empty string')}")
    return value.upper()


def _url(value: Any, field: str, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise RecordingError(f"{where}: {field} {_missing_or_not(value, 'a non-empty string')}")
    try:
        url_parts(value)  # a password masked as user:[redacted]@ is no reason to refuse it
    except ValueError as exc:
        raise RecordingError(f"{where}: {field} is not a valid URL ({exc})") from None
    return value


def _status(value: Any, field: str, where: str, *, required: bool) -> int | None:
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordingError(f"{where}: {field} {_missing_or_not(value, 'an integer')}")
    if value == 0:
        return None  # HAR: no response (aborted, blocked, or not captured)
    if not 100 <= value <= 999:
        raise RecordingError(f"{where}: {field} {value} is not an HTTP status code")
    return value


def _optional_str(value: Any, field: str, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise RecordingError(f"{where}: {field} must be a string")


def _base64(text: str, field: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise RecordingError(f"{where}: {field} is not valid base64") from None


def _missing_or_not(value: Any, expected: str) -> str:
    return "is missing" if value is None else f"must be {expected}, not {type(value).__name__}"
