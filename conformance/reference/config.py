"""The configuration of one reference server instance."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from conformance.core.profile import Profile
from conformance.reference.faults import fault_names

MAX_LATENCY_MS = 10_000
# How the server reads a "%" not followed by two hex digits in a query or path parameter.
ESCAPE_READINGS = ("refuse", "literal")


@dataclass(frozen=True)
class ServerConfig:
    """``faults`` holds catalogue names; ``public_url`` is the base URL clients use."""

    profile: Profile
    faults: frozenset[str] = field(default_factory=frozenset)
    public_url: str = "http://127.0.0.1"
    db_path: Path | None = None
    latency_ms: int = 0  # added to every HTTP request, as a remote server's round trip would
    # "refuse" or "literal"; None: the profile's status.malformed_percent_escape, "refuse" where
    # the profile allows either reading.
    escape_reading: str | None = None

    def __post_init__(self) -> None:
        check_escape_reading(self.profile, self.escape_reading)
        if not 0 <= self.latency_ms <= MAX_LATENCY_MS:
            raise ValueError(f"latency must be 0 to {MAX_LATENCY_MS} ms, not {self.latency_ms}")
        unknown = sorted(set(self.faults) - fault_names())
        if unknown:
            raise ValueError(
                f"unknown fault {', '.join(unknown)}: `payment-conformance faults` lists them"
            )

    @property
    def literal_escapes(self) -> bool:
        """Whether a malformed percent-escape is read as the text it is ("usdc%zz")."""
        return reads_literally(self.profile, self.escape_reading)

    def fault(self, name: str) -> bool:
        """True when the fault ``name`` is switched on; ``name`` must be in the catalogue."""
        if name not in fault_names():
            raise KeyError(f"fault {name!r} is not in the catalogue (faults/*.yaml)")
        return name in self.faults


def check_escape_reading(profile: Profile, reading: str | None) -> None:
    """ValueError (a message for the user) when ``reading`` is no reading, or one the profile
    does not allow."""
    if reading is None:
        return
    if reading not in ESCAPE_READINGS:
        raise ValueError(f"the malformed escape reading is one of {', '.join(ESCAPE_READINGS)}")
    pinned = profile.status.malformed_percent_escape
    if pinned not in ("either", reading):
        raise ValueError(
            f"profile {profile.name} pins status.malformed_percent_escape = {pinned!r}: the "
            f"reference server cannot read a malformed escape as {reading!r} under it"
        )


def reads_literally(profile: Profile, reading: str | None) -> bool:
    """Whether a server of ``profile`` told ``reading`` (None: the profile's pin, refusal where
    it allows either) reads a malformed percent-escape as text."""
    return (reading or profile.status.malformed_percent_escape) == "literal"
