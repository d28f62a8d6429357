"""Success responses everywhere (spec 2, 4; profile 3): every operation's success is reached at
least once and its body checked against the effective contract's schema for its status.

``Factories.request`` builds each operation's valid request with its prerequisites (a settled
x402 ``upto`` payment to report usage on, an underpaid payment to accept, an endpoint whose
secret is rotated, a delivery to resend...). The answer must carry the profile's success status
(STATUS-001, STATUS-002), be ``application/json`` (OPS-008) and match the documented schema: the
operation's "success response MUST be ..." ids (OPS-0xx) and the shape ids (SHAPE-0xx) of its
fields. A broken field fails the ids whose text names it (as the schema family pins them) and
the operation's OPS ids; the other ids held.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import httpx
import pytest

from conformance.core import jsonsafe
from conformance.core.catalogue import load_catalogue
from conformance.judge.outcomes import SUCCESS_MEDIA, media_type, success_media_problem, summary
from conformance.judge.response_schemas import ResponseSchemas, broken_ids
from conformance.judge.schema_requirements import requirement_ids
from conformance.suite.selection import collection_operations
from conformance.suite.stateful import MachineContext, Verdicts, run_guarded
from conformance.suite.tool_errors import PrerequisiteError

pytestmark = pytest.mark.family("responses")

SCHEMA_CHECK = "response_schema_conformance"  # the schema family's mapping (schema/rules.yaml)
SUCCESS_STATUS = ("STATUS-001", "STATUS-002")
JSON_MEDIA = (SUCCESS_MEDIA,)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "operation_id" in metafunc.fixturenames:
        operations = collection_operations(metafunc.config)
        params = [
            pytest.param(op, marks=pytest.mark.requirement(*operation_ids(op)), id=op)
            for op in operations
        ]
        metafunc.parametrize("operation_id", params)


@cache
def _operations_of() -> dict[str, tuple[str, ...]]:
    return {r.id: r.operations for r in load_catalogue().requirements}


def shape_ids(operation_id: str) -> tuple[str, ...]:
    """The contract's response-shape ids of the operation: its OPS "success response" ids and
    the SHAPE ids of its response fields (as the schema family maps a 2xx response)."""
    return tuple(
        rid
        for rid in requirement_ids(SCHEMA_CHECK, operation_id, 200)
        if rid.startswith(("OPS-", "SHAPE-"))
    )


def success_ids(operation_id: str) -> tuple[str, ...]:
    owned = _operations_of()
    return tuple(
        rid for rid in (*SUCCESS_STATUS, *JSON_MEDIA) if operation_id in owned.get(rid, ())
    )


def operation_ids(operation_id: str) -> tuple[str, ...]:
    return (*success_ids(operation_id), *shape_ids(operation_id))


def check_success(
    verdicts: Verdicts,
    schemas: ResponseSchemas,
    operation_id: str,
    expected: int,
    response: httpx.Response,
) -> None:
    status = response.status_code
    verdicts.check(
        [rid for rid in success_ids(operation_id) if rid in SUCCESS_STATUS],
        status == expected,
        f"expected success {expected}, got {summary(response)}",
        fatal=False,
    )
    if status != expected:
        return
    media = media_type(response.headers.get("content-type"))
    body: Any = None
    refused = ""
    try:
        body = jsonsafe.loads(response.content)
        parsed = True
    except jsonsafe.JsonTooComplex as exc:
        parsed, refused = False, f"refused: {exc}"
    except ValueError:
        parsed = False
    problem = success_media_problem(media, parsed, refused)
    verdicts.check(JSON_MEDIA, problem is None, f"success answer: {problem}", fatal=False)
    if not parsed:
        return
    candidates = shape_ids(operation_id)
    problems = schemas.problems(operation_id, status, body)
    broken = broken_ids(candidates, problems)
    held = [rid for rid in candidates if rid not in broken]
    verdicts.check(held, True, "", fatal=False)
    if broken:
        text = "; ".join(str(p) for p in problems[:6])
        verdicts.check(
            sorted(broken),
            False,
            f"the {operation_id} success response breaks its schema: {text}",
            fatal=False,
        )


def test_success_response_matches_its_schema(
    operation_id: str, machine_context: MachineContext
) -> None:
    """The operation reaches success with the profile's status, as application/json, and its
    body matches the effective contract's schema."""
    ctx = machine_context
    ids = operation_ids(operation_id)
    try:
        spec = ctx.factories.request(operation_id)
    except PrerequisiteError as exc:
        ctx.verdicts.finish("success response", ids, f"not exercised: {exc}", operation_id)
        return
    if not spec.ready:
        ctx.verdicts.finish("success response", ids, spec.note or "not ready", operation_id)
        return
    schemas = ResponseSchemas(ctx.contract)
    expected = ctx.profile.success_status(operation_id)

    def reach() -> None:
        ctx.transcript.step(f"{operation_id}: the valid request")
        check_success(ctx.verdicts, schemas, operation_id, expected, ctx.factories.send(spec))

    run_guarded(ctx.verdicts, reach)
    ctx.verdicts.finish(
        "success response", ids, "the operation did not answer with success", operation_id
    )
