"""The coverage gate over the real suite: every requirement of the catalogue, and every
operation, documented status code and required field of the effective contract, has a check."""

from __future__ import annotations

from conformance.core.catalogue import load_catalogue
from conformance.core.contract import effective_contract
from conformance.core.coverage_gate import documented, gaps
from conformance.core.profile import load_profile
from conformance.engine.inventory import requirement_checks


def test_every_requirement_operation_status_and_required_field_has_a_check() -> None:
    catalogue = load_catalogue()
    contract = effective_contract(load_profile())
    checks = requirement_checks()
    found = gaps(catalogue, contract, checks)
    assert not found, "no check for:\n" + "\n".join(f"- {gap}" for gap in found)
    # what the gate held the suite to
    operations = documented(contract)
    assert len(checks) == len(catalogue.requirements) == 335
    assert len(operations) == 20
    assert sum(len(o.statuses) for o in operations) == 102
    assert sum(len(o.required) for o in operations) == 304
