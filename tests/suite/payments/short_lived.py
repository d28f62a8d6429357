"""A profile whose payments may live :data:`LIFETIME_SECS` seconds. The suite waits for the
profile's shortest lifetime (the default profile's is 60 s) and the reference server honours it,
so a run that waits for a payment to expire takes seconds."""

from __future__ import annotations

from pathlib import Path

LIFETIME_SECS = 5


def short_lived_profile(directory: Path) -> str:
    """Write the profile in ``directory``; its path."""
    path = directory / "short-lived.toml"
    path.write_text(
        'extends = "default"\n[payments]\n'
        f"expires_in_secs = {{ min = {LIFETIME_SECS}, max = 86400, default = 3600 }}\n",
        encoding="utf-8",
    )
    return str(path)
