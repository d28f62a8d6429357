"""The open points of the specification and the profile keys that pin them.

``profiles/open_points.yaml`` lists every point the specification leaves "not shown" or does
not state; ``points_table`` joins it with a profile's values for ``profile points`` and the
table of docs/profile.md. Credentials are never read, so no secret can reach the output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from conformance.core.profile import Profile
from conformance.core.resources import package_data
from conformance.core.yamldata import load_yaml

OPEN_POINTS_PATH = package_data("profiles", "open_points.yaml")
NOT_SET = "(not set)"
# Keys whose values are never shown, whatever a point names.
SECRET_ROOTS = ("credentials",)


@dataclass(frozen=True)
class OpenPoint:
    id: str
    point: str
    section: str
    keys: tuple[str, ...]
    values: str
    tests: tuple[str, ...]
    untested: str = ""


@dataclass(frozen=True)
class NotOpen:
    key: str
    why: str


@dataclass(frozen=True)
class OpenPoints:
    points: tuple[OpenPoint, ...]
    not_open: tuple[NotOpen, ...]

    def keys(self) -> Iterator[str]:
        for point in self.points:
            yield from point.keys


@cache
def load_open_points() -> OpenPoints:
    raw = load_yaml(OPEN_POINTS_PATH.read_text(encoding="utf-8"))
    points = tuple(
        OpenPoint(
            id=str(p["id"]),
            point=str(p["point"]),
            section=str(p["section"]),
            keys=tuple(str(k) for k in p["keys"]),
            values=str(p["values"]),
            tests=tuple(str(t) for t in p["tests"]),
            untested=str(p.get("untested", "")),
        )
        for p in raw["points"]
    )
    not_open = tuple(NotOpen(str(n["key"]), str(n["why"])) for n in raw["not_open"])
    return OpenPoints(points, not_open)


_MISSING = object()


def value_at(data: Mapping[str, Any], key: str) -> Any:
    """The value of dotted ``key`` in a profile document, or ``_MISSING``."""
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def show(value: Any) -> str:
    """A profile value on one line: strings quoted with escapes, transitions as arrows."""
    if value is _MISSING:
        return NOT_SET
    if isinstance(value, list) and value and all(_is_transition(v) for v in value):
        return "; ".join(f"{t['operation']}: {', '.join(t['from'])} -> {t['to']}" for t in value)
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _is_transition(value: Any) -> bool:
    return isinstance(value, Mapping) and {"operation", "from", "to"} <= set(value)


def _secret(key: str) -> bool:
    return key.split(".")[0] in SECRET_ROOTS or key.split(".")[-1] == "api_secret"


def points_table(profile: Profile) -> list[dict[str, Any]]:
    """Every open point with ``profile``'s value for each of its keys (JSON-ready)."""
    rows = []
    for point in load_open_points().points:
        values = {
            k: "(secret)" if _secret(k) else show(value_at(profile.data, k)) for k in point.keys
        }
        rows.append(
            {
                "id": point.id,
                "point": point.point,
                "section": point.section,
                "keys": values,
                "accepts": point.values,
                "tests": list(point.tests),
                "untested": point.untested,
            }
        )
    return rows


def _keys_cell(row: Mapping[str, Any], sep: str) -> str:
    if not row["keys"]:
        return "none"
    return sep.join(f"`{k}` = {v}" for k, v in row["keys"].items())


def _tested_cell(row: Mapping[str, Any]) -> str:
    tests = ", ".join(row["tests"])
    untested = row["untested"]
    if tests and untested:
        return f"{tests}; {untested}"
    return tests or f"cannot: {untested}"


def render_text(profile: Profile) -> str:
    lines = [f"Open points of the specification, with profile {profile.name!r}:", ""]
    for row in points_table(profile):
        lines.append(f"{row['id']}  {row['point']} ({row['section']})")
        if row["keys"]:
            for key, value in row["keys"].items():
                lines.append(f"    {key} = {value}")
            lines.append(f"    accepts: {row['accepts']}")
        else:
            lines.append("    no profile key")
        lines.append(f"    tested by: {_tested_cell(row)}")
        lines.append("")
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(profile: Profile) -> str:
    lines = [
        "| Id | Open point | Spec | Profile key = value | Accepts | Tested by |",
        "|---|---|---|---|---|---|",
    ]
    for row in points_table(profile):
        cells = (
            row["id"],
            row["point"],
            row["section"],
            _keys_cell(row, "<br>"),
            row["accepts"],
            _tested_cell(row),
        )
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def render_json(profile: Profile) -> str:
    document = {"profile": profile.name, "points": points_table(profile)}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
