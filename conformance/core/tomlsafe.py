"""Parse TOML someone else wrote (a profile, a waivers file): bounded nesting, bounded keys.

``tomllib`` recurses once per nested array or inline table: ``x = [[[...`` 200,000 deep was a
``RecursionError`` traceback, and once eth-account has been imported (py_ecc raises the
recursion limit to 100,000) such recursion can overflow the C stack and kill the process, as
``jsonsafe`` explains for JSON. A dotted key of 100,000 parts (``a.a.a...``) costs it memory
quadratic in the parts: the process was killed for want of memory. :func:`loads` measures both
first, with one linear pass that skips strings and comments, and refuses a text past either
bound with :class:`TomlTooComplex` before ``tomllib`` sees it.
"""

from __future__ import annotations

import re
import string
import tomllib
from typing import Any

# A profile nests 7 levels deep, and none of its keys has more than 3 parts.
MAX_DEPTH = 32
MAX_KEY_PARTS = 32

# One token: a string (multi-line first; each runs to its end or to the end of the text, so a
# match never fails once started and the scan stays linear), a comment, a run of bare-key
# characters, a run of blanks, or any one other character.
_TOKEN = re.compile(
    r'"""(?:[^"\\]|\\[\s\S]|"(?!""))*+(?:"""|\Z)'
    r"|'''(?:[^']|'(?!''))*+(?:'''|\Z)"
    r'|"(?:[^"\\\n]|\\.)*+"?'
    r"|'[^'\n]*+'?"
    r"|#[^\n]*+"
    r"|[A-Za-z0-9_-]++"
    r"|[ \t]++"
    r"|[\s\S]"
)
_OPENERS = frozenset("[{")
_CLOSERS = frozenset("]}")
# What a dotted key is made of besides its dots: key parts and the blanks around the dots.
_KEY_PART_STARTS = frozenset(f"\"' \t_-{string.ascii_letters}{string.digits}")


class TomlTooComplex(ValueError):
    """A TOML text refused before parsing: nested too deep, or a key of too many parts."""


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def check(text: str, max_depth: int = MAX_DEPTH, max_key_parts: int = MAX_KEY_PARTS) -> None:
    """Raise :class:`TomlTooComplex` when ``text`` nests arrays and inline tables deeper than
    ``max_depth`` or has a dotted key of more than ``max_key_parts`` parts. Brackets and dots
    inside strings and comments do not count; a float (``1.5``) counts as a key of two parts."""
    if text.count("[") + text.count("{") <= max_depth and text.count(".") < max_key_parts:
        return  # too few brackets and dots to exceed either bound
    depth = dots = 0
    for match in _TOKEN.finditer(text):
        char = text[match.start()]  # not match.group(): a long string token would be copied
        if char == ".":
            dots += 1
            if dots >= max_key_parts:
                raise TomlTooComplex(
                    f"line {_line(text, match.start())}: a dotted key of more than "
                    f"{max_key_parts} parts"
                )
            continue
        if char not in _KEY_PART_STARTS:
            dots = 0
        if char in _OPENERS:
            depth += 1
            if depth > max_depth:
                raise TomlTooComplex(
                    f"line {_line(text, match.start())}: arrays or inline tables nested deeper "
                    f"than {max_depth} levels"
                )
        elif char in _CLOSERS and depth > 0:
            depth -= 1


def loads(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)`` after :func:`check`: ``TomlTooComplex`` or
    ``tomllib.TOMLDecodeError``, both ``ValueError``."""
    check(text)
    return tomllib.loads(text)
