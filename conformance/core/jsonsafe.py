"""Parse JSON that came from a server under test: bounded nesting depth and size.

``json.loads`` recurses once per nesting level. A body of 70,000 ``[`` makes it recurse 70,000
times, and once eth-account has been imported (py_ecc raises the recursion limit to 100,000)
that overflows the C stack and kills the process. :func:`loads` measures the depth first, with
one linear pass that skips strings and their escapes, and refuses a document deeper than
``max_depth`` or larger than ``max_bytes`` with :class:`JsonTooComplex`, a ``ValueError``
(``json.JSONDecodeError``, so callers that treat "not JSON" already handle it).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 256
MAX_BYTES = 16 * 1024 * 1024

# A string (to its closing quote, or to the end of the text when unterminated: the optional
# closing quote means a match never fails once started, so the scan stays linear however many
# escaped quotes an unterminated string holds), or one bracket. The two alternatives of the
# string body start with different characters, so nothing backtracks.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
_OPENERS = frozenset("[{")
# A string (as in _TOKEN, so the scan stays linear), a comma, or a bracket opening a container
# that is not empty.
_VALUE_MARK = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?|,|[\[{](?![ \t\n\r]*[\]}])', re.DOTALL)


class JsonTooComplex(json.JSONDecodeError):
    """A JSON text refused before parsing: nested too deep or too large."""

    def __str__(self) -> str:
        return self.msg


def _text(data: str | bytes | bytearray) -> str:
    if isinstance(data, str):
        return data
    # What json.loads does with bytes: detect UTF-8/16/32 from the first bytes.
    return bytes(data).decode(json.detect_encoding(data), "surrogatepass")


def _size(data: str | bytes | bytearray) -> int:
    if not isinstance(data, str):
        return len(data)
    return len(data.encode("utf-8", "surrogatepass"))


def nesting_depth_exceeds(text: str, max_depth: int) -> int | None:
    """The offset where ``text`` opens its ``max_depth + 1``-th nested array or object, or None
    when it never nests that deep. Brackets inside strings do not count."""
    if text.count("[") + text.count("{") <= max_depth:
        return None  # cannot nest deeper than it has openers
    depth = 0
    for match in _TOKEN.finditer(text):
        char = text[match.start()]  # not match.group(): a long string token would be copied
        if char in _OPENERS:
            depth += 1
            if depth > max_depth:
                return match.start()
        elif char != '"' and depth > 0:
            depth -= 1
    return None


def values_exceed(text: str, max_values: int, start: int = 0, end: int | None = None) -> bool:
    """Whether the JSON text ``text[start:end]`` holds more than ``max_values`` values (objects,
    arrays, strings, numbers, literals). Every value but the root and the first of a container
    follows a comma, so the root, the commas and the non-empty containers outside strings bound
    the count (exactly, in valid JSON). Linear; a loop in Python only for a text with that many
    commas and brackets, strings included, and it stops at the bound."""
    end = len(text) if end is None else end
    marks = text.count(",", start, end) + text.count("[", start, end)
    if marks + text.count("{", start, end) < max_values:
        return False  # too few commas and brackets, even counting those inside strings
    count = 1
    for match in _VALUE_MARK.finditer(text, start, end):
        if text[match.start()] != '"':
            count += 1
            if count > max_values:
                return True
    return False


def check(
    data: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH, max_bytes: int = MAX_BYTES
) -> str:
    """``data`` as text, after checking it is within the limits (:class:`JsonTooComplex` if
    not). Whether it is JSON at all is left to the parser."""
    size = _size(data) if len(data) > max_bytes // 4 else len(data)
    if size > max_bytes:
        raise JsonTooComplex(f"JSON text larger than {max_bytes} bytes ({size} bytes)", "", 0)
    text = _text(data)
    at = nesting_depth_exceeds(text, max_depth)
    if at is not None:
        raise JsonTooComplex(f"JSON text nests deeper than {max_depth} levels", text, at)
    return text


def loads(
    data: str | bytes | bytearray,
    *,
    max_depth: int = MAX_DEPTH,
    max_bytes: int = MAX_BYTES,
    **kwargs: Any,
) -> Any:
    """``json.loads(data, **kwargs)`` for untrusted data: :class:`JsonTooComplex` (a
    ``ValueError``) for a text nested deeper than ``max_depth`` or larger than ``max_bytes``,
    ``json.JSONDecodeError`` (also a ``ValueError``) for one that is not JSON."""
    return json.loads(check(data, max_depth=max_depth, max_bytes=max_bytes), **kwargs)
