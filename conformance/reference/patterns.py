"""Regular expressions with the semantics of the contract (ECMA-262, as JSON Schema uses).

Python's ``$`` also matches before a trailing newline, so ``"60\\n"`` would satisfy
``^[0-9]+$``; ECMA's does not. ``ecma_regex`` rewrites every unescaped ``$`` outside a character
class to ``\\Z`` and compiles with ``re.ASCII`` (``\\d`` and ``\\w`` are ASCII classes in ECMA).
"""

from __future__ import annotations

import re
from functools import lru_cache


def _translate(pattern: str) -> str:
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
        elif char == "$":
            char = r"\Z"
        out.append(char)
        i += 1
    return "".join(out)


@lru_cache(maxsize=512)
def ecma_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(_translate(pattern), re.ASCII)


def ecma_search(pattern: str, text: str) -> bool:
    """JSON Schema ``pattern``: a match anywhere, anchors with ECMA meaning."""
    return ecma_regex(pattern).search(text) is not None
