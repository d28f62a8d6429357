"""Profile fragments several tests share (TOML text, no header): ``fragment(name)`` reads one."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def fragment(name: str) -> str:
    return (HERE / f"{name}.toml").read_text(encoding="utf-8")
