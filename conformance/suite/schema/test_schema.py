"""Schema phases: schemathesis over the effective contract (issue 4).

For every operation, ``test_unit_phases`` runs schemathesis' examples, coverage and fuzzing
phases; ``test_stateful_phase`` follows the contract's links across operations. Every response
goes through all of schemathesis' built-in checks (expected statuses from the profile) and ours
(``checks``); each (check, operation) is recorded as one result naming the requirement ids
it verified, broke, or could not reach (``rules.yaml`` maps checks to requirements).

Authentication is not schemathesis' business here: every request is signed with the profile's
signer and the auth family tests the headers themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conformance.core.contract import operations
from conformance.core.profile import Profile
from conformance.core.results import Target
from conformance.judge.schema_requirements import requirement_ids, requirement_operations
from conformance.suite.plugin.options import SuiteSettings
from conformance.suite.schema.loading import OUR_CHECKS, load_schemas
from conformance.suite.schema.runner import (
    METHOD_CHECK,
    STATEFUL_GROUP,
    UNIT_GROUP,
    PhaseSizes,
    SchemaPhaseRunner,
    describe_counts,
)
from conformance.suite.wire.check_properties import CheckRecorder
from conformance.suite.wire.client import SuiteClient

FAMILY = "schema"
# schemathesis' built-in checks run on every response of the unit phases.
UNIT_CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "positive_data_acceptance",
    "negative_data_rejection",
    "missing_required_header",
    METHOD_CHECK,
    *OUR_CHECKS,
)
# The stateful phase sends positive, linked requests: these are the checks it can exercise.
STATEFUL_CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "positive_data_acceptance",
    "ensure_resource_availability",
    "use_after_free",
    *OUR_CHECKS,
)
QUICK_COVERAGE_CASES = 8  # per operation and generation mode, one of each kind first
QUICK_STATEFUL_STEPS = 8
STATEFUL_STEPS = 10


def _ids(checks: tuple[str, ...], operation_ids: list[str]) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for operation_id in operation_ids:
        for check in checks:
            found.update(dict.fromkeys(requirement_ids(check, operation_id)))
    return tuple(found)


OPERATION_IDS = [op.operation_id for op in operations()]
UNIT_PARAMS = [
    pytest.param(op, marks=pytest.mark.requirement(*_ids(UNIT_CHECKS, [op])), id=op)
    for op in OPERATION_IDS
]


@pytest.fixture(scope="session")
def schema_runner(
    conformance_target: Target,
    conformance_profile: Profile,
    conformance_settings: SuiteSettings,
    effective_contract: dict[str, Any],
    suite_client: SuiteClient,
) -> Iterator[SchemaPhaseRunner]:
    quick = conformance_settings.quick
    examples = conformance_settings.max_examples
    sizes = PhaseSizes(
        fuzzing_examples=examples,
        coverage_limit=QUICK_COVERAGE_CASES if quick else None,
        stateful_examples=max(3, examples // 2),
        stateful_steps=QUICK_STATEFUL_STEPS if quick else STATEFUL_STEPS,
    )
    schemas = load_schemas(
        effective_contract,
        conformance_profile,
        requirement_operations(),
        base_url=conformance_target.base_url,
        seed=conformance_settings.seed,
        max_examples=examples,
        stateful_steps=sizes.stateful_steps,
    )
    runner = SchemaPhaseRunner(
        schemas,
        conformance_profile,
        seed=conformance_settings.seed,
        sizes=sizes,
        stats=suite_client.stats,
    )
    yield runner
    runner.close()


def _record(
    runner: SchemaPhaseRunner,
    recorder: CheckRecorder,
    client: SuiteClient,
    group: str,
    checks: tuple[str, ...],
    operation_ids: list[str],
) -> None:
    before = sum(runner.counts.cases.values())
    for result in runner.ledger.results(group, checks, operation_ids):
        recorder.record(
            result.check_id,
            result.requirement_ids,
            result.outcome,
            result.message,
            result.operation_id,
            result.evidence,
        )
    # Requests sent outside SuiteClient still count in the run's total.
    client.stats.requests_sent += before - runner.counted
    runner.counted = before


def _skip_if_rate_limited(runner: SchemaPhaseRunner) -> None:
    """Nothing was checked because the server rate limited the cases past what the run can
    wait: not exercised, with that reason (a rate limit is never a failure)."""
    reasons = runner.ledger.rate_limited
    if reasons:
        pytest.skip(next(iter(reasons.values())))


@pytest.mark.family(FAMILY)
@pytest.mark.parametrize("operation_id", UNIT_PARAMS)
def test_unit_phases(
    operation_id: str,
    schema_runner: SchemaPhaseRunner,
    check_recorder: CheckRecorder,
    suite_client: SuiteClient,
) -> None:
    """Examples, coverage and fuzzing of one operation: every check on every response."""
    schema_runner.reset_ledger()
    schema_runner.run_unit_phases(operation_id)
    _record(schema_runner, check_recorder, suite_client, UNIT_GROUP, UNIT_CHECKS, [operation_id])
    schema_runner.check_answered(f"the unit phases of {operation_id}")
    checked = {op for _, op in schema_runner.ledger.observations}
    if not checked:
        _skip_if_rate_limited(schema_runner)
    assert checked == {operation_id}, f"no response of {operation_id} was checked"


@pytest.mark.family(FAMILY)
@pytest.mark.requirement(*_ids(STATEFUL_CHECKS, OPERATION_IDS))
def test_stateful_phase(
    schema_runner: SchemaPhaseRunner,
    check_recorder: CheckRecorder,
    suite_client: SuiteClient,
) -> None:
    """Linked sequences (create, then cancel, pause, settle... the created resource)."""
    schema_runner.reset_ledger()
    schema_runner.run_stateful()
    operations_seen = sorted({op for _, op in schema_runner.ledger.observations})
    _record(
        schema_runner,
        check_recorder,
        suite_client,
        STATEFUL_GROUP,
        STATEFUL_CHECKS,
        operations_seen,
    )
    schema_runner.check_answered("the stateful phase")
    if not operations_seen:
        _skip_if_rate_limited(schema_runner)
    assert operations_seen, (
        f"the stateful phase reached no operation ({describe_counts(schema_runner.counts)})"
    )
