"""Which steps of a call sequence a failure shows, within a bounded message.

A failure of a call sequence carries its numbered steps (``stateful.Transcript``). A long one
is cut in the middle, never at its end: the first steps are kept, then the step that failed and
the steps that created what it uses (the first steps to mention a resource id its lines name,
and theirs in turn), whole; the steps left out are counted where they stood
("... 12 steps cut ..."). ``cut_middle`` bounds any text with a step list the same way, by lines,
when the whole message is still too long.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

STEPS_CHAR_LIMIT = 3_000  # of a rendered step list; a message holds it with room to spare
STEP_LIMIT = 40  # steps shown at most

# A resource id or a generated order number: letters, "_" or "-", then a run holding a digit
# ("pay_3fa9c0...", "sub_...", "pay-1c9e..."); words such as "expires_in_secs" hold no digit.
_RESOURCE_ID = re.compile(r"\b[A-Za-z]{2,}[_-][A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*")
_MIN_ID_LENGTH = 10


def resource_ids(text: str) -> set[str]:
    """The resource ids and order numbers ``text`` names."""
    return {m for m in _RESOURCE_ID.findall(text) if len(m) >= _MIN_ID_LENGTH}


def causes(steps: Sequence[Sequence[str]]) -> set[int]:
    """Positions of the last step (the failing one) and of the steps that created what it uses:
    for each resource id it names, the first step naming it, and so on for theirs."""
    if not steps:
        return set()
    first: dict[str, int] = {}
    named: list[set[str]] = []
    for index, lines in enumerate(steps):
        ids = resource_ids("\n".join(lines))
        named.append(ids)
        for ident in ids:
            first.setdefault(ident, index)
    kept = {len(steps) - 1}
    todo = [len(steps) - 1]
    while todo:
        for ident in named[todo.pop()]:
            index = first[ident]
            if index not in kept:
                kept.add(index)
                todo.append(index)
    return kept


def _size(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _cut_line(count: int) -> str:
    return f"  ... {count} step{'' if count == 1 else 's'} cut ..."


def select(
    steps: Sequence[Sequence[str]], limit: int = STEPS_CHAR_LIMIT, max_steps: int = STEP_LIMIT
) -> list[str]:
    """The lines of ``steps`` (each a list of lines) a failure shows: all of them when they fit
    in ``limit`` characters and ``max_steps`` steps; else the failing step and its causes whole,
    as many first steps as fit, and a line counting each run of steps left out."""
    if _size([line for lines in steps for line in lines]) <= limit and len(steps) <= max_steps:
        return [line for lines in steps for line in lines]
    kept = causes(steps)
    # a run of cut steps before each kept one, at most
    cuts = (len(kept) + 1) * (len(_cut_line(len(steps))) + 1)
    room = limit - _size([line for i in kept for line in steps[i]]) - cuts
    for index, lines in enumerate(steps):
        if index in kept:
            continue
        if len(kept) >= max_steps or _size(lines) > room:
            break
        kept.add(index)
        room -= _size(lines)
    shown: list[str] = []
    gap = 0
    for index, lines in enumerate(steps):
        if index not in kept:
            gap += 1
            continue
        if gap:
            shown.append(_cut_line(gap))
            gap = 0
        shown += lines
    return shown


def cut_middle(text: str, limit: int, heading: str) -> str:
    """``text`` within about ``limit`` characters, its step list (after the line ``heading``)
    cut by whole lines in the middle: its first lines and its last ones (the failure) kept."""
    head, found, steps = text.partition("\n" + heading)
    if not found or len(head) > limit // 2:
        return text[:limit] + f" [... {len(text) - limit} more characters]"
    lines = steps.split("\n")
    room = limit - len(head) - len(found) - 40
    tail: list[str] = []
    for line in reversed(lines):
        if _size(tail) + len(line) + 1 > room * 2 // 3:
            break
        tail.insert(0, line)
    start: list[str] = []
    for line in lines[: len(lines) - len(tail)]:
        if _size(start) + _size(tail) + len(line) + 1 > room:
            break
        start.append(line)
    cut = len(lines) - len(start) - len(tail)
    return "\n".join([head + found + "\n".join(start), f"  [... {cut} lines cut ...]", *tail])
