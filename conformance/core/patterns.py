"""Regular expressions with the semantics of the contract (ECMA-262, as JSON Schema uses).

Python's ``$`` also matches before a trailing newline, so ``"60\\n"`` would satisfy
``^[0-9]+$``, and Python's ``\\d`` matches non-ASCII digits; ECMA's do neither. Patterns are
translated (``$`` outside a class becomes ``\\Z``, ``\\d``/``\\w`` become ASCII classes) and
compiled once. The reference server validates with these and the suite derives its boundary cases
with them, so both read a pattern the same way.
"""

from __future__ import annotations

import re
from functools import lru_cache


def _translate(pattern: str) -> str:
    """An ECMA-262 pattern as a Python pattern with the same meaning on the cases we send.

    JSON Schema patterns are ECMA-262: ``\\d`` is ASCII only and ``$`` (without the m flag) is
    the end of the input, where Python's ``$`` also matches before a trailing newline.
    """
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            if escaped == "d":
                out.append("0-9" if in_class else "[0-9]")
            elif escaped == "D" and not in_class:
                out.append("[^0-9]")
            elif escaped == "w":
                out.append("A-Za-z0-9_" if in_class else "[A-Za-z0-9_]")
            elif escaped == "W" and not in_class:
                out.append("[^A-Za-z0-9_]")
            else:
                out.append(char + escaped)
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            if pattern.startswith("[]", i) or pattern.startswith("[^]", i):
                out.append(pattern[i : i + (2 if pattern[i + 1] == "]" else 3)])
                i += 2 if pattern[i + 1] == "]" else 3
                continue
        elif char == "$":
            out.append(r"\Z")
            i += 1
            continue
        out.append(char)
        i += 1
    return "".join(out)


@lru_cache(maxsize=512)
def ecma_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(_translate(pattern), re.ASCII)


def ecma_search(pattern: str, text: str) -> bool:
    """JSON Schema ``pattern``: a match anywhere in ``text``, anchors with their ECMA meaning."""
    return ecma_regex(pattern).search(text) is not None
