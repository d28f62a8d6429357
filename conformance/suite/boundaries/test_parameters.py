"""Near misses of query and path parameters (issue 21): encodings and cursors.

For every operation with a query or path parameter, each parameter is sent with a malformed
percent-escape and with escapes of bytes that are not UTF-8 after its valid value; each cursor
parameter with an unknown cursor, the other merchant's cursor of the same listing and this
merchant's cursor cut in half (``parameters.py``). The answer is the profile's refusal (400
``validation_error``; for a path id 400 or the 404 of an unknown id; for a payments cursor the
validation status), never a 2xx and never a 5xx. A case whose real cursor could not be had is
not sent and its result says why. Every case sent is logged as an (operation, constraint,
near-miss class) triple for the coverage gate (``core.case_coverage``).
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.case_coverage import CaseLog
from conformance.core.contract import operations
from conformance.core.profile import Profile
from conformance.suite.boundaries.parameters import (
    check_operation,
    every_id,
    operations_with_parameters,
)
from conformance.suite.selection import collection_contract
from conformance.suite.wire.check_properties import CheckRecorder
from conformance.suite.wire.client import SuiteClient

pytestmark = pytest.mark.family("boundaries")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "operation_id" in metafunc.fixturenames:
        contract = collection_contract(metafunc.config)
        ids = [op.operation_id for op in operations(contract)]
        params = [
            pytest.param(op, marks=pytest.mark.requirement(*every_id(contract, op)), id=op)
            for op in operations_with_parameters(contract, ids)
        ]
        metafunc.parametrize("operation_id", params)


def test_parameters(
    operation_id: str,
    suite_client: SuiteClient,
    other_client: SuiteClient,
    conformance_profile: Profile,
    effective_contract: dict[str, Any],
    conformance_settings: Any,
    conformance_seed: int,
    check_recorder: CheckRecorder,
    case_log: CaseLog,
) -> None:
    """Every query and path parameter of the operation: a value that is no text and a cursor
    never issued to this merchant for this listing are refused, never served, never a 5xx."""
    check_operation(
        operation_id,
        suite_client,
        other_client,
        conformance_profile,
        effective_contract,
        check_recorder,
        case_log,
        quick=bool(getattr(conformance_settings, "quick", False)),
        seed=conformance_seed,
    )
