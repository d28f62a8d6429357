"""The configuration of one reference server instance."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from conformance.core.profile import Profile
from conformance.reference.faults import fault_names

MAX_LATENCY_MS = 10_000


@dataclass(frozen=True)
class ServerConfig:
    """``faults`` holds catalogue names; ``public_url`` is the base URL clients use."""

    profile: Profile
    faults: frozenset[str] = field(default_factory=frozenset)
    public_url: str = "http://127.0.0.1"
    db_path: Path | None = None
    latency_ms: int = 0  # added to every HTTP request, as a remote server's round trip would

    def __post_init__(self) -> None:
        if not 0 <= self.latency_ms <= MAX_LATENCY_MS:
            raise ValueError(f"latency must be 0 to {MAX_LATENCY_MS} ms, not {self.latency_ms}")
        unknown = sorted(set(self.faults) - fault_names())
        if unknown:
            raise ValueError(
                f"unknown fault {', '.join(unknown)}: `payment-conformance faults` lists them"
            )

    def fault(self, name: str) -> bool:
        """True when the fault ``name`` is switched on; ``name`` must be in the catalogue."""
        if name not in fault_names():
            raise KeyError(f"fault {name!r} is not in the catalogue (faults/*.yaml)")
        return name in self.faults
