"""The requirement map (conformance/judge/boundary_requirements.py and
boundary_requirements.yaml): which ids a constraint's results are reported under."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.catalogue import Layer, load_catalogue
from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from conformance.judge.boundary_requirements import RequirementMap
from conformance.judge.constraints import iter_constraints


@pytest.fixture(scope="module")
def contract() -> dict[str, Any]:
    return effective_contract(load_profile())


# ------------------------------------------------------------------ requirement ids
def test_requirement_map_names_catalogue_ids_of_the_right_layer() -> None:
    catalogue = load_catalogue()
    mapping = RequirementMap.load()
    for requirement_id in mapping.every_id():
        assert requirement_id in catalogue, requirement_id
    for rule in mapping.rules:
        for requirement_id in rule.get("reject", []):
            assert catalogue.get(requirement_id).layer is Layer.CONTRACT, requirement_id  # type: ignore[union-attr]
        for requirement_id in rule.get("reject_with_status", []):
            assert catalogue.get(requirement_id).layer is Layer.PROFILE, requirement_id  # type: ignore[union-attr]


def test_each_constraint_kind_maps_to_its_status_requirement(contract: dict[str, Any]) -> None:
    mapping = RequirementMap.load()
    interval = next(
        c
        for c in iter_constraints(contract, "createPayoutSchedule")
        if c.kind == "maximum" and c.field.name == "interval_secs"
    )
    ids = mapping.ids_for(interval, created=True)
    assert ids.rejected == ("LIMIT-005",)
    assert ids.rejected_with_status == ("STATUS-008",)
    assert "LIMIT-010" in ids.accepted and "STATUS-001" in ids.accepted
    limit = next(c for c in iter_constraints(contract, "listPayments") if c.kind == "maximum")
    assert set(mapping.ids_for(limit, created=False).rejected_with_status) == {
        "STATUS-008",
        "STATUS-011",
        "PAY-017",
    }
