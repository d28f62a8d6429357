"""What the suite's webhook receiver kept and dropped in a run, for the reports.

The receiver (``suite.webhooks.receiver``) keeps the requests it gets within bounds; what is over
them is dropped and counted per path (a body over the per-body cap is refused with 413 unread,
and counted too). These counts travel from the test to the run's ``RunResult`` as plain JSON
(``as_dict`` / ``from_dict``) and are shown by ``describe``.
"""

from __future__ import annotations

from dataclasses import dataclass

# Paths listed by ``describe`` (the rest are summed in its "and N more paths").
DESCRIBED_PATHS = 5
# Paths read back by ``from_dict``: a results.json is untrusted input.
READ_PATHS = 1000


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    if size >= 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size} bytes"


@dataclass(frozen=True)
class PathDrops:
    """Requests to one receiver path that were not kept."""

    path: str
    deliveries: int = 0  # requests dropped, refused ones included
    bytes: int = 0  # their bodies and headers (a refused body: its Content-Length)
    refused: int = 0  # of them, bodies over the per-body cap, answered 413 unread

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "deliveries": self.deliveries,
            "bytes": self.bytes,
            "refused": self.refused,
        }


@dataclass(frozen=True)
class ReceiverCounts:
    """What the webhook receiver kept (the checks judge these) and dropped, per path."""

    kept: int = 0
    kept_bytes: int = 0
    drops: tuple[PathDrops, ...] = ()

    @property
    def dropped(self) -> int:
        return sum(d.deliveries for d in self.drops)

    @property
    def dropped_bytes(self) -> int:
        return sum(d.bytes for d in self.drops)

    @property
    def refused(self) -> int:
        return sum(d.refused for d in self.drops)

    def as_dict(self) -> dict[str, object]:
        return {
            "kept": self.kept,
            "kept_bytes": self.kept_bytes,
            "dropped": self.dropped,
            "dropped_bytes": self.dropped_bytes,
            "refused": self.refused,
            "drops": [d.as_dict() for d in self.drops],
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ReceiverCounts:
        """The counts of ``as_dict``; a wrongly typed entry counts as zero."""
        drops = data.get("drops")
        paths = drops[:READ_PATHS] if isinstance(drops, list) else []
        return cls(
            _count(data.get("kept")),
            _count(data.get("kept_bytes")),
            tuple(
                PathDrops(
                    str(d.get("path", "")),
                    _count(d.get("deliveries")),
                    _count(d.get("bytes")),
                    _count(d.get("refused")),
                )
                for d in paths
                if isinstance(d, dict)
            ),
        )

    def describe(self) -> str:
        """One line for the console and the reports."""
        text = f"webhook receiver: kept {self.kept:,} requests ({_size(self.kept_bytes)})"
        if not self.drops:
            return text
        listed = sorted(self.drops, key=lambda d: (-d.deliveries, d.path))
        shown = [
            f"{d.path} {d.deliveries:,} ({_size(d.bytes)}"
            + (f", {d.refused:,} refused with 413" if d.refused else "")
            + ")"
            for d in listed[:DESCRIBED_PATHS]
        ]
        if len(listed) > DESCRIBED_PATHS:
            shown.append(f"and {len(listed) - DESCRIBED_PATHS:,} more paths")
        return (
            f"{text}; dropped {self.dropped:,} over its bounds ({_size(self.dropped_bytes)}; "
            f"the checks judge what was kept): {', '.join(shown)}"
        )
