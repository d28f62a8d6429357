"""Robustness of every operation (spec 2, 4, 7, 9; profile 3): malformed requests get the
profile's 4xx JSON error, never a 5xx.

Each operation's known-valid request (from the factories) is sent with one part broken at a time
(``variants.VARIANTS``): malformed JSON, an empty body, a JSON array or string instead of an
object, invalid UTF-8, a text/plain Content-Type, a boolean for an integer, a body over the
profile's ``max_body_bytes``, a bad percent-escape in the query and in a path id, a non-ASCII
unknown id, and the path without its ``/v1`` prefix. Every answer must be a refusal with the
error shape (the profile's status and code where the profile pins one); afterwards the valid
request, unchanged, succeeds under ``/v1``: the refusals left no trace. Unknown paths get the
profile's auth error without credentials (where it checks authentication before routing) and
its not-found error with them. The routing and transport rules (a body over the limit, another
media type, no ``/v1`` prefix, unknown paths) are the judge's (``judge.routing``), as the
validator asks them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import cache

import httpx
import pytest

from conformance.core.catalogue import load_catalogue
from conformance.core.profile import Profile
from conformance.judge.findings import Finding
from conformance.judge.outcomes import (
    ERROR_SHAPE_IDS,
    error_shape_findings,
    json_object,
    status_problems,
    summary,
)
from conformance.judge.outcomes import (
    NO_SERVER_ERROR as SERVER_ERROR_ID,
)
from conformance.judge.routing import RoutingRules
from conformance.suite.factories import RequestSpec
from conformance.suite.robustness.variants import VARIANTS, VERSIONED, Variant, send_raw
from conformance.suite.selection import collection_operations, is_quick
from conformance.suite.stateful import MachineContext, Verdicts, run_guarded
from conformance.suite.tool_errors import PrerequisiteError
from conformance.suite.wire.client import SuiteTransportError

pytestmark = pytest.mark.family("robustness")

NO_SERVER_ERROR = (SERVER_ERROR_ID,)
UNKNOWN_PATH_IDS = ("STATUS-019", "STATUS-020", *ERROR_SHAPE_IDS, *NO_SERVER_ERROR)
# What the variants verify (variants.py), with the error shape of every refusal.
OPERATION_IDS = (
    "SHAPE-030",
    "SHAPE-031",
    "STATUS-003",
    "STATUS-004",
    "STATUS-011",
    "STATUS-013",
    "STATUS-018",
    "STATUS-020",
    "STATUS-021",
    "VER-001",
    *ERROR_SHAPE_IDS,
    *NO_SERVER_ERROR,
)
# --quick: operations that together meet every variant (bodies posted and put, integer query
# parameters, path ids) with cheap prerequisites.
QUICK_OPERATIONS = (
    "createPayment",
    "replaceSplitTemplate",
    "listPayments",
    "getStatement",
    "cancelPayment",
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "operation_id" in metafunc.fixturenames:
        operations = collection_operations(metafunc.config)
        if is_quick(metafunc.config):
            operations = [op for op in operations if op in QUICK_OPERATIONS]
        params = [
            pytest.param(op, marks=pytest.mark.requirement(*applicable(OPERATION_IDS, op)), id=op)
            for op in operations
        ]
        metafunc.parametrize("operation_id", params)


@cache
def _operations_of() -> dict[str, tuple[str, ...]]:
    return {r.id: r.operations for r in load_catalogue().requirements}


def applicable(requirement_ids: Sequence[str], operation_id: str) -> list[str]:
    """The ids whose catalogue entry lists the operation (or names none: unknown paths)."""
    owned = _operations_of()
    return [rid for rid in requirement_ids if not owned[rid] or operation_id in owned[rid]]


def _only(found: Sequence[Finding], ids: Sequence[str]) -> list[Finding]:
    """``found`` with only ``ids`` named (those that apply to the operation)."""
    kept = ((f, tuple(rid for rid in f.ids if rid in ids)) for f in found)
    return [f._replace(ids=named) for f, named in kept if named]


def judge(
    verdicts: Verdicts,
    profile: Profile,
    variant: Variant,
    response: httpx.Response,
    ids: Sequence[str],
) -> None:
    """One malformed request's answer: no 5xx, refused, the profile's answer (the judge's
    verdict where it has a rule for the variant), the error shape. Only ``ids`` (those that
    apply to the operation) are recorded."""
    label = f"{variant.name}: "
    status = response.status_code
    verdicts.check(
        NO_SERVER_ERROR, status < 500, f"{label}a server error: {summary(response)}", fatal=False
    )
    refusal_ids = [rid for rid in variant.refusal_ids if rid in ids]
    if refusal_ids:
        refused = 400 <= status < 500
        verdicts.check(
            refusal_ids, refused, f"{label}not refused: {summary(response)}", fatal=False
        )
    if variant.judged is not None:
        found = variant.judged(RoutingRules(profile), response)
        verdicts.findings(_only(found, ids), variant.name, fatal=False)
    expected = variant.expected(profile) if variant.expected is not None else None
    profile_ids = [rid for rid in expected.ids if rid in ids] if expected else []
    if expected and profile_ids and expected.answers:
        matched = any(not status_problems(response, answer) for answer in expected.answers)
        wanted = " or ".join(
            f"{a.status}" + (f" {a.code}" if a.code else "") for a in expected.answers
        )
        verdicts.check(
            profile_ids, matched, f"{label}expected {wanted}, got {summary(response)}", fatal=False
        )
    if 400 <= status < 500:
        for rid, problems in error_shape_findings(response).items():
            verdicts.problems([rid], [label + p for p in problems], fatal=False)


def malformed_requests(ctx: MachineContext, spec: RequestSpec, ids: Sequence[str]) -> None:
    """Every variant that applies to the operation, then the valid request unchanged."""
    verdicts, transcript = ctx.verdicts, ctx.transcript
    served = False
    for variant in VARIANTS:
        raw = variant.build(spec, ctx.contract, ctx.profile)
        if raw is None:
            continue
        transcript.step(f"{spec.operation_id} with {variant.name}")
        try:
            response = send_raw(ctx.client, spec, raw)
        except SuiteTransportError as exc:
            if not variant.may_drop_connection:
                raise
            transcript.note(f"no answer could be read, not judged: {exc}")
            continue
        served = served or 200 <= response.status_code < 300
        judge(verdicts, ctx.profile, variant, response, ids)
    if served or not spec.ready:  # an accepted variant already explains what follows
        return
    transcript.step(f"{spec.operation_id}: the valid request, unchanged, under /v1")
    response = ctx.factories.send(spec)
    expected = ctx.profile.success_status(spec.operation_id)
    verdicts.check(
        NO_SERVER_ERROR,
        response.status_code < 500,
        f"the valid request: a server error: {summary(response)}",
        fatal=False,
    )
    verdicts.check(
        VERSIONED,
        response.status_code == expected,
        f"the valid request under /v1 after the refused ones: expected {expected}, "
        f"got {summary(response)}",
        fatal=False,
    )
    if spec.operation_id == "createPayment" and isinstance(spec.body, dict):
        transcript.step("re-read: payments with the order number of the refused requests")
        found = ctx.factories.payments_with_order_no(str(spec.body["merchant_order_no"]))
        verdicts.check(
            [rid for rid in ("SHAPE-030", "SHAPE-031") if rid in ids],
            len(found) == 1,
            f"{len(found)} payments carry the order number after the refused requests and "
            "one valid request (expected 1)",
            fatal=False,
        )


def test_malformed_requests_get_the_error_shape(
    operation_id: str, machine_context: MachineContext
) -> None:
    """Every malformed variant of the operation's request refused with the profile's 4xx
    JSON error, never a 5xx; the valid request afterwards succeeds under /v1."""
    ctx = machine_context
    ids = applicable(OPERATION_IDS, operation_id)
    try:
        spec = ctx.factories.request(operation_id)
    except PrerequisiteError as exc:
        ctx.verdicts.finish("malformed requests", ids, f"not exercised: {exc}", operation_id)
        return
    reasons = {
        "STATUS-011": "the operation has no integer query parameter to break with a bad escape",
        "STATUS-013": "a PUT on an unknown id creates the resource: no unknown id to refuse",
        "VER-001": spec.note or "a malformed variant was accepted; the rest is not judged",
        "STATUS-021": "the profile declares no status.unsupported_media_type",
    }
    run_guarded(ctx.verdicts, lambda: malformed_requests(ctx, spec, ids))
    ctx.verdicts.finish("malformed requests", ids, reasons, operation_id)


def unknown_paths(ctx: MachineContext) -> None:
    verdicts, rules = ctx.verdicts, RoutingRules(ctx.profile)
    unknown = uuid.uuid4().hex[:12]
    for method, path in (
        ("GET", f"/v1/conformance-unknown-{unknown}"),
        ("POST", f"/v1/payments/{unknown}/conformance-unknown"),
    ):
        for signed in (False, True):
            ctx.transcript.step(
                f"{method} {path} " + ("signed" if signed else "without credentials")
            )
            response = ctx.client.request(
                method, path, sign=signed, idempotency_key=None, content=b"{}"
            )
            verdicts.check(
                NO_SERVER_ERROR,
                response.status_code < 500,
                f"unknown path: a server error: {summary(response)}",
                fatal=False,
            )
            found = rules.unknown(
                f"{method} {path}",
                None,
                authenticated=signed,
                status=response.status_code,
                code=(json_object(response) or {}).get("code"),
            )
            verdicts.findings([found], fatal=False)
            if 400 <= response.status_code < 500:
                for rid, problems in error_shape_findings(response).items():
                    verdicts.problems([rid], problems, fatal=False)


@pytest.mark.requirement(*UNKNOWN_PATH_IDS)
def test_unknown_paths_are_401_then_404(machine_context: MachineContext) -> None:
    """An unknown path: the profile's auth error without credentials (authentication comes
    before routing), its not-found error with them."""
    run_guarded(machine_context.verdicts, lambda: unknown_paths(machine_context))
    machine_context.verdicts.finish(
        "unknown paths",
        UNKNOWN_PATH_IDS,
        {"STATUS-019": "the profile does not check authentication before routing"},
    )
