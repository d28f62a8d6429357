"""The open points table (profiles/open_points.yaml): every key it names exists in the profile
schema, every schema key pins an open point or is listed as not one, every requirement it
cites exists, and docs/profile.md carries the generated table."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from conformance.core.catalogue import load_catalogue
from conformance.core.open_points import load_open_points, render_markdown
from conformance.core.profile import SHIPPED_PROFILES_DIR, load_profile
from conformance.core.resources import package_data

SCHEMA = json.loads((SHIPPED_PROFILES_DIR / "profile.schema.json").read_text(encoding="utf-8"))
PROFILE_DOC = package_data().parent / "docs" / "profile.md"


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return dict(SCHEMA["$defs"][ref.removeprefix("#/$defs/")])
    return node


def _schema_node(key: str) -> dict[str, Any] | None:
    node: dict[str, Any] = SCHEMA
    for part in key.split("."):
        properties = _resolve(node).get("properties", {})
        if part not in properties:
            return None
        node = properties[part]
    return node


def _leaves(node: dict[str, Any], prefix: str = "") -> Iterator[str]:
    for name, child in node.get("properties", {}).items():
        key = f"{prefix}{name}"
        if "properties" in child:  # an inline table: its own keys are the leaves
            yield from _leaves(child, f"{key}.")
        else:
            yield key


def test_every_point_has_an_id_in_order_and_says_how_it_is_tested() -> None:
    points = load_open_points().points
    assert [p.id for p in points] == [f"OP-{n:02d}" for n in range(1, len(points) + 1)]
    assert len(points) >= 40
    for point in points:
        assert point.tests or point.untested, f"{point.id} says neither how nor why not"
        assert re.fullmatch(r"spec [1-9]", point.section), point.id


def test_every_cited_requirement_exists() -> None:
    known = {r.id for r in load_catalogue().requirements}
    cited = {t for p in load_open_points().points for t in p.tests}
    assert cited - known == set()


def test_every_named_key_is_in_the_schema() -> None:
    for point in load_open_points().points:
        for key in point.keys:
            assert _schema_node(key) is not None, f"{point.id} names {key}: not in the schema"


def test_every_schema_key_pins_an_open_point_or_is_listed_as_not_one() -> None:
    table = load_open_points()
    covered = {*table.keys(), *(n.key for n in table.not_open)}
    for n in table.not_open:
        assert _schema_node(n.key) is not None, f"not_open lists {n.key}: not in the schema"
    for leaf in _leaves(SCHEMA):
        parts = leaf.split(".")
        prefixes = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        assert prefixes & covered, f"schema key {leaf} is in no open point and not in not_open"


def test_the_leaf_walk_sees_nested_tables() -> None:
    leaves = set(_leaves(SCHEMA))
    assert {"x402.payment_payload.nonce_pattern", "status.method_not_allowed.status"} <= leaves
    assert "status.validation" in leaves and "status" not in leaves


def test_docs_carry_the_generated_table() -> None:
    text = PROFILE_DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- open-points:begin -->\n(.*?)<!-- open-points:end -->", text, re.S)
    assert found is not None, "docs/profile.md has no open-points markers"
    assert found.group(1) == render_markdown(load_profile("default")), (
        "docs/profile.md is out of step: paste `payment-conformance profile points "
        "--format markdown` between the open-points markers"
    )
