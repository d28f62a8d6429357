"""Partial profiles: ``extends = "default"`` and a deep merge over the shipped profile named.

A profile that extends a shipped profile writes only what differs: its tables are merged key by
key into the base's, recursively; any other value (a string, a number, an array, an array of
tables such as ``[[credentials]]`` or ``[[payments.transitions]]``) replaces the base's whole.
Only a shipped profile can be extended, one level deep, so a profile's meaning never depends on
another file of the user's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

EXTENDS = "extends"


def merged(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` written over it: tables merged, everything else replaced."""
    result = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def extended(
    data: dict[str, Any],
    path: Path,
    shipped: list[str],
    read_shipped: Callable[[str], dict[str, Any]],
) -> tuple[dict[str, Any], str | None]:
    """The whole profile ``data`` stands for, and the name of the shipped profile it extends.

    ``data`` without ``extends`` is returned as is. With it, ``extends`` must name one of
    ``shipped`` (raises ValueError with the one-line reason otherwise); the result is that
    profile's document (``read_shipped(name)``) with ``data`` merged over it, named after
    ``path``'s stem unless ``data`` names itself.
    """
    if EXTENDS not in data:
        return data, None
    base_name = data[EXTENDS]
    names = ", ".join(shipped)
    if not isinstance(base_name, str):
        raise ValueError(
            f"{EXTENDS}: must be the name of a shipped profile ({names}), "
            f"not {type(base_name).__name__} {base_name!r}; shipped profiles are {names}"
        )
    if base_name not in shipped:
        raise ValueError(
            f"{EXTENDS}: no shipped profile named {base_name!r}; shipped profiles are {names} "
            "(a profile extends a shipped one by name, never another file)"
        )
    base = read_shipped(base_name)
    if EXTENDS in base:
        raise ValueError(f"{EXTENDS}: the shipped profile {base_name!r} extends another one")
    changes = {k: v for k, v in data.items() if k != EXTENDS}
    whole = merged(base, changes)
    if "name" not in (changes.get("profile") or {}):
        whole["profile"] = {**whole["profile"], "name": path.stem}
    return whole, base_name
