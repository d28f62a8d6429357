"""Limits and boundaries: every constraint of every operation's request, at its edge.

The constraints are derived from the effective contract (``constraints.py``), not listed by
hand: lengths at max and max+1, ranges at each edge and one beyond, integers written as floats,
enums with near-miss values, repeated unique items, and for every pattern (and every ``uri`` or
``date-time`` format) a corpus of near misses (leading zero, sign, exponent, whitespace,
trailing newline, non-ASCII digits, empty, no scheme, no time zone...: ``near_misses.py``).
Each case changes ONE field of a known-valid request from the factories (``requests.py``).

Per constraint the results are reported on three sides: the contract's "refused" (any 4xx),
the profile's "refused with the validation status and code", and "accepted" (the in-range
values). The error body of every refusal is checked once per operation (spec 7, profile 3).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conformance.core.case_coverage import CaseLog
from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.core.signing import AUTH_HEADERS
from conformance.judge.boundary_requirements import RequirementMap
from conformance.judge.constraints import PARAMETER_KINDS, Constraint, iter_constraints
from conformance.judge.outcomes import (
    VALIDATION_DETAILS,
    ErrorShapes,
    is_contract_refusal,
    is_validation_error,
    status_problems,
    success_problems,
    summary,
    validation_details_problems,
)
from conformance.suite.boundaries.classes import key as class_key
from conformance.suite.boundaries.classes import keys_of
from conformance.suite.boundaries.near_misses import Case, cases_for
from conformance.suite.boundaries.requests import can_set, get_value, with_value, without
from conformance.suite.boundaries.sides import Side
from conformance.suite.factories import ABSENT, Factories, RequestSpec
from conformance.suite.selection import (
    collection_contract,
    collection_operations,
    collection_profile,
    collection_selection,
    quick_subset,
    selection,
)
from conformance.suite.tool_errors import PrerequisiteError
from conformance.suite.wire.client import IDEMPOTENCY_HEADER, SuiteClient

REQUIREMENTS = RequirementMap.load()
OTHER_FAMILIES_HEADERS = frozenset(h.lower() for h in (*AUTH_HEADERS, IDEMPOTENCY_HEADER))

pytestmark = pytest.mark.family("boundaries")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "operation_id" in metafunc.fixturenames:
        config = metafunc.config
        contract = collection_contract(config)
        profile = collection_profile(config)
        selected = collection_selection(config)
        operations = [
            op
            for op in collection_operations(config, with_constraints=True)
            if any(keys_of(c) for c in constraints_of(contract, op, profile, selected))
        ]
        metafunc.parametrize("operation_id", operations, ids=operations)


def constraints_of(
    contract: dict[str, Any],
    operation_id: str,
    profile: Profile,
    selected: frozenset[str] | None = None,
) -> list[Constraint]:
    """The constraints this test sends cases for (``test_parameters.py`` has the others): with
    a selection (``--only``/``--skip``), those whose results name a selected requirement, so
    that replaying one requirement sends its cases only."""
    created = profile.creates(operation_id)

    def kept(c: Constraint) -> bool:
        return selected is None or not selected.isdisjoint(
            REQUIREMENTS.judged_by(c, created=created)
        )

    return [
        c
        for c in iter_constraints(contract, operation_id, skip_headers=OTHER_FAMILIES_HEADERS)
        if c.kind not in PARAMETER_KINDS and kept(c)
    ]


def shown(value: Any) -> str:
    """A case's value for a message: its repr, cut short (a 2049-character url...)."""
    text = repr(value)
    if len(text) <= 60:
        return text
    size = f", {len(value)} characters" if isinstance(value, (str, list)) else ""
    return f"{text[:40]}...{text[-8:]}{size}"


def _accepted_problems(
    response: httpx.Response, spec: RequestSpec, case: Case, profile: Profile
) -> list[str]:
    """An in-range value must be accepted: success, or, where a profile business rule also
    governs the field (or the request cannot succeed at all), any refusal but a validation one."""
    loose = not spec.ready or spec.governed_by_business_rule(
        case.constraint.field.location, case.constraint.field.pointer
    )
    if not loose:
        return success_problems(response, profile, spec.operation_id)
    if response.status_code >= 500:
        return [f"server error {summary(response)}"]
    if is_contract_refusal(response, profile):
        return [f"refused as a contract violation: {summary(response)}"]
    return []


def _refused_problems(response: httpx.Response) -> list[str]:
    if 400 <= response.status_code < 500:
        return []
    return [f"not refused: {summary(response)}"]


def _iter_cases(
    constraint: Constraint,
    shared: RequestSpec,
    profile: Profile,
    quick: bool,
    decimals: int | None,
) -> Iterator[Case]:
    example = get_value(shared, constraint.field)
    cases = cases_for(
        constraint,
        None if example is ABSENT else example,
        integer_float_form=profile.status.integer_accepts_float_form,
        decimals=decimals,
    )
    if quick:
        cases = quick_subset(cases)
    yield from cases


def _decimals(factories: Factories) -> int | None:
    """The decimal places of the currency the factories' requests use (the ``decimals`` pin)."""
    try:
        return factories.decimals
    except (PrerequisiteError, KeyError):
        return None


def _edited(base: RequestSpec, case: Case) -> RequestSpec:
    if case.value is ABSENT:
        return without(base, case.constraint.field)
    return with_value(base, case.constraint.field, case.value)


@pytest.mark.requirement(*REQUIREMENTS.every_id())
def test_boundaries(
    operation_id: str,
    suite_client: SuiteClient,
    conformance_profile: Profile,
    effective_contract: dict[str, Any],
    conformance_settings: Any,
    check_recorder: Any,
    case_log: CaseLog,
) -> None:
    """Every constraint of the operation: in-range values accepted, and a case of every
    near-miss class that applies (``near_miss_classes.yaml``) refused with the profile's status
    and the error shape."""
    op = operation_id
    profile = conformance_profile
    factories = Factories(suite_client, profile, effective_contract)
    created = profile.creates(op)
    quick = bool(getattr(conformance_settings, "quick", False))
    selected = selection(conformance_settings.only, conformance_settings.skip)
    constraints = constraints_of(effective_contract, op, profile, selected)
    for constraint in constraints:
        case_log.expect(keys_of(constraint))
    try:
        shared = factories.request(op)
    except PrerequisiteError as exc:
        pytest.skip(f"not exercised: {exc}")
    decimals = _decimals(factories)

    shape = ErrorShapes()
    for constraint in constraints:
        ids = REQUIREMENTS.ids_for(constraint, created=created)
        refusal = profile.error("status", REQUIREMENTS.refusal_status_of(constraint))
        check_id = f"boundaries {constraint.id}"
        if not can_set(shared, constraint.field):
            check_recorder.record(
                check_id,
                ids.all,
                Outcome.NOT_EXERCISED,
                f"the factories' valid {op} request has no place for {constraint.field}",
                op,
            )
            continue
        refused, with_status, accepted = Side(), Side(), Side()
        for case in _iter_cases(constraint, shared, profile, quick, decimals):
            if not case.valid and not (ids.rejected or ids.rejected_with_status):
                continue  # no requirement of the catalogue says this value must be refused
            try:
                base = factories.request(op) if case.valid else shared
            except PrerequisiteError as exc:
                accepted.unexercised.append(f"{case.label}: {exc}")
                continue
            spec = _edited(base, case)
            response = factories.send(spec)
            if case.valid:
                case_log.count(op)
                problems = _accepted_problems(response, spec, case, profile)
                accepted.add(problems, f"{case.label} ({shown(case.value)})", suite_client)
                continue
            if case.near_miss is not None:
                case_log.record(class_key(constraint, case.near_miss))
            else:
                case_log.count(op)
            named = f"{case.label} ({shown(case.value)})"
            refused.add(_refused_problems(response), named, suite_client)
            with_status.add(status_problems(response, refusal), named, suite_client)
            if response.status_code == refusal.status and refusal.code is not None:
                label = f"{named}: "
                shape.add(response, suite_client.last_exchange, label)
                if is_validation_error(response, profile):
                    details = validation_details_problems(response, profile)
                    exchange = suite_client.last_exchange
                    shape.add_problems(VALIDATION_DETAILS, details, exchange, label)
        for side, side_ids, what in (
            (refused, ids.rejected, "refused"),
            (with_status, ids.rejected_with_status, f"refused with the {refusal.status} status"),
            (accepted, ids.accepted, "accepted"),
        ):
            side.record(check_recorder, side_ids, constraint.id, op, what)
    shape.record(check_recorder, f"boundaries {op} error shape", op)
