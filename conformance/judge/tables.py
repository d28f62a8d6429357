"""Bounded memory for the rules that compare an exchange with earlier ones: an LRU table and
the digests kept in it instead of the values (docs/validate.md, "Memory")."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

TABLE_LIMIT = 100_000
"""Entries each table keeps (least recently used forgotten first)."""

K = TypeVar("K")
V = TypeVar("V")


class BoundedTable(Generic[K, V]):
    """A mapping that keeps its ``limit`` most recently used entries."""

    def __init__(self, limit: int = TABLE_LIMIT) -> None:
        self.limit = limit
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self.limit:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


def digest(*parts: bytes | str) -> bytes:
    """An 8-byte digest of ``parts`` (kept in the tables instead of the values): Python's hash
    of the tuple, SipHash under a key drawn at random for each process (unless PYTHONHASHSEED
    fixes it), so a recording cannot be written to make two values collide; by chance two of a
    table's 100,000 entries collide about once in a billion full tables.
    Five times as fast as blake2b, on the hot path."""
    return hash(parts).to_bytes(8, "little", signed=True)


STAMP_RESOLUTION_S = 0.001
"""The resolution of recorded start times (HAR's ``startedDateTime`` has milliseconds)."""


@dataclass(frozen=True, slots=True)
class When:
    """When an exchange happened: its start and end (Unix seconds, None when the recording does
    not say) and its position in the recording."""

    start: float | None
    end: float | None
    position: int

    def after(self, earlier: When) -> bool:
        """Whether this exchange started after ``earlier`` ended: only then did the server
        answer ``earlier`` first. Exchanges that overlap in time have no order; without end
        times the recording's order is taken. Start times are recorded to the millisecond
        (HAR), so an overlap shorter than ``STAMP_RESOLUTION_S`` is the rounding's, not the
        traffic's: a sequential client's requests are not made concurrent by it."""
        if earlier.end is not None and self.start is not None:
            if earlier.position < self.position:
                return earlier.end <= self.start + STAMP_RESOLUTION_S
            return earlier.end <= self.start
        return earlier.position < self.position
