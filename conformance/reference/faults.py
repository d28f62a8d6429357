"""The fault catalogue: realistic bugs the reference server can switch on one at a time.

Each entry of ``faults/*.yaml`` names one bug (``name``), its ``category``, one sentence of
``description`` and the requirement ids it ``breaks``; an optional ``needs`` names what the
profile must declare for the bug to be one at all (``fault_needs.NEEDS``). The code has a small
``if ctx.fault("name"):`` hook where that bug would live. The suite's own tests start the server
with each fault and check that the suite notices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from conformance.core.yamldata import load_yaml
from conformance.reference.fault_needs import NEEDS, unknown_needs

FAULTS_DIR = Path(__file__).resolve().parent / "faults"
CATEGORIES = (
    "auth",
    "idempotency",
    "validation",
    "shape",
    "state",
    "domain",
    "isolation",
    "robustness",
)


class FaultCatalogueError(ValueError):
    """A catalogue file that is not a list of well-formed fault entries."""


@dataclass(frozen=True)
class Fault:
    name: str
    category: str
    description: str
    breaks: tuple[str, ...]
    source: str  # the catalogue file, e.g. "core.yaml"
    needs: tuple[str, ...] = ()  # names of fault_needs.NEEDS the profile must meet


def _entry(raw: Any, source: str, index: int) -> Fault:
    where = f"{source}[{index}]"
    if not isinstance(raw, dict):
        raise FaultCatalogueError(f"{where}: expected a mapping")
    missing = [k for k in ("name", "category", "description", "breaks") if k not in raw]
    if missing:
        raise FaultCatalogueError(f"{where}: missing {', '.join(missing)}")
    name = raw["name"]
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name):
        raise FaultCatalogueError(f"{where}: name {name!r} is not kebab-case")
    if raw["category"] not in CATEGORIES:
        raise FaultCatalogueError(
            f"{where} ({name}): category {raw['category']!r} is not one of {', '.join(CATEGORIES)}"
        )
    breaks = raw["breaks"]
    if not isinstance(breaks, list) or not breaks or not all(isinstance(b, str) for b in breaks):
        raise FaultCatalogueError(f"{where} ({name}): breaks must be a non-empty list of ids")
    needs = raw.get("needs", [])
    if not isinstance(needs, list) or not all(isinstance(n, str) for n in needs):
        raise FaultCatalogueError(f"{where} ({name}): needs must be a list of names")
    unknown = unknown_needs(needs)
    if unknown:
        raise FaultCatalogueError(
            f"{where} ({name}): unknown need {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(NEEDS)}"
        )
    return Fault(
        name=name,
        category=str(raw["category"]),
        description=str(raw["description"]).strip(),
        breaks=tuple(breaks),
        source=source,
        needs=tuple(needs),
    )


def load_catalogue(directory: Path = FAULTS_DIR) -> tuple[Fault, ...]:
    faults: list[Fault] = []
    for path in sorted(directory.glob("*.yaml")):
        data = load_yaml(path.read_text(encoding="utf-8")) or []
        if not isinstance(data, list):
            raise FaultCatalogueError(f"{path.name}: expected a list of faults")
        faults.extend(_entry(raw, path.name, i) for i, raw in enumerate(data))
    seen: set[str] = set()
    for fault in faults:
        if fault.name in seen:
            raise FaultCatalogueError(f"fault {fault.name!r} is defined twice")
        seen.add(fault.name)
    return tuple(faults)


@cache
def catalogue() -> tuple[Fault, ...]:
    return load_catalogue()


@cache
def fault_names() -> frozenset[str]:
    return frozenset(f.name for f in catalogue())


def find_fault(name: str) -> Fault | None:
    return next((f for f in catalogue() if f.name == name), None)
