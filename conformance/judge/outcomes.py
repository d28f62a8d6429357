"""What a response must look like, as lists of problems (empty: as expected).

Shared by the auth, idempotency and boundaries families and the validator: an expected error
(the profile's status and code, the spec's error shape ``{code, message, details?}``), an
expected success (the profile's success status for the operation), and a readable one-line
summary of a response for failure messages.
"""

from __future__ import annotations

from typing import Any

import httpx

from conformance.core import jsonsafe
from conformance.core.profile import ErrorSpec, Profile
from conformance.core.redaction import redact_text
from conformance.core.results import Evidence, Outcome


def summary(response: httpx.Response, limit: int = 160) -> str:
    """``422 {"code":"idempotency_key_reused",...}``: status and the start of the body, with
    secrets (a rotated webhook secret, say) redacted."""
    # Clip before decoding and redacting (a redaction of a body cut mid-secret still hides it):
    # decoding and redacting a whole 8 MiB body only to show 160 characters of it takes time.
    head = response.content[: limit * 16]  # at least limit * 4 characters, at 4 bytes each
    raw = head.decode(response.encoding or "utf-8", errors="replace")
    text = redact_text(raw[: limit * 4]).replace("\n", " ")
    if len(text) > limit or len(raw) > limit * 4 or len(response.content) > len(head):
        text = text[:limit] + "..."
    return f"{response.status_code} {text}".rstrip()


def json_body(response: httpx.Response) -> Any:
    """The body as JSON, or None when it is not JSON or is too deep or large to parse safely."""
    try:
        return jsonsafe.loads(response.content)
    except ValueError:
        return None


def json_object(response: httpx.Response) -> dict[str, Any] | None:
    body = json_body(response)
    return body if isinstance(body, dict) else None


# Which requirement each part of the error shape is: spec 7 (contract) and profile 3.
MEDIA_TYPE, OBJECT, CODE, MESSAGE, PROFILE_SHAPE = (
    "ERR-001",
    "ERR-002",
    "ERR-003",
    "ERR-004",
    "ERR-005",
)
ERROR_SHAPE_IDS = (MEDIA_TYPE, OBJECT, CODE, MESSAGE, PROFILE_SHAPE)
VALIDATION_DETAILS = "STATUS-012"
NO_SERVER_ERROR = "ERR-006"  # no request, however malformed, is answered with a 5xx


def media_type(content_type: str | None) -> str:
    """``application/json`` of ``Application/JSON; charset=utf-8``; empty when there is none."""
    return (content_type or "").split(";", 1)[0].strip().lower()


SUCCESS_MEDIA = "OPS-008"


def success_media_problem(media: str, json: bool, refused: str = "") -> str | None:
    """OPS-008: what is wrong with a success answer served as media type ``media`` whose body
    is (``json``) or is not a JSON document (``refused``: why the reader refused it, if it
    did); None: it is JSON served as ``application/json``."""
    problems = [] if media == "application/json" else [f"served as {media or 'no media type'!r}"]
    if not json:
        problems.append(f"the body is not JSON ({refused})" if refused else "the body is not JSON")
    return ", ".join(problems) or None


def error_shape_problems(media: str, body: Any) -> dict[str, str]:
    """Spec section 7 and profile 3: what an error answer of media type ``media`` and JSON
    document ``body`` (None when not JSON) lacks, by requirement id: ``application/json``
    (ERR-001), a JSON object (ERR-002) with a string ``code`` (ERR-003) and ``message``
    (ERR-004). Empty: the error has the shape (and so ERR-005, all of these for every 4xx)."""
    found: dict[str, str] = {}
    if media != "application/json":
        found[MEDIA_TYPE] = f"error media type is {media or 'missing'!r}, not application/json"
    if not isinstance(body, dict):
        found[OBJECT] = "error body is not a JSON object"
    for key, rid in (("code", CODE), ("message", MESSAGE)):
        if not isinstance(body, dict) or not isinstance(body.get(key), str):
            found[rid] = f"error body has no string {key!r}"
    return found


def error_shape_findings(response: httpx.Response) -> dict[str, list[str]]:
    """``error_shape_problems`` of a response, every shape id listed (ERR-005 with them all)."""
    found = error_shape_problems(
        media_type(response.headers.get("content-type")), json_body(response)
    )
    by_id = {rid: [found[rid]] if rid in found else [] for rid in ERROR_SHAPE_IDS}
    by_id[PROFILE_SHAPE] = list(found.values())
    return by_id


class ErrorShapes:
    """The error bodies one test saw, judged per requirement (one result per requirement)."""

    def __init__(self) -> None:
        self.seen = 0
        self.problems: dict[str, list[str]] = {}
        self.evidence: dict[str, Evidence | None] = {}

    def add(self, response: httpx.Response, evidence: Evidence | None, label: str = "") -> None:
        """Judge ``response`` (a refusal); ``evidence`` is kept for the first problem of each."""
        self.seen += 1
        for rid, problems in error_shape_findings(response).items():
            self.add_problems(rid, problems, evidence, label)

    def add_problems(
        self, rid: str, problems: list[str], evidence: Evidence | None, label: str = ""
    ) -> None:
        bucket = self.problems.setdefault(rid, [])
        if problems and not bucket:
            self.evidence[rid] = evidence
        bucket += [f"{label}{p}" for p in problems]

    def record(self, recorder: Any, check_id: str, operation_id: str) -> None:
        """One result per requirement, nothing when no refusal was seen."""
        if not self.seen:
            return
        for rid, problems in self.problems.items():
            outcome = Outcome.FAILED if problems else Outcome.PASSED
            message = (
                f"{len(problems)} problems: " + "; ".join(problems[:8])
                if problems
                else f"{self.seen} refusals had the error shape"
            )
            recorder.record(
                f"{check_id} {rid}", (rid,), outcome, message, operation_id, self.evidence.get(rid)
            )


def validation_details_problems(response: httpx.Response, profile: Profile) -> list[str]:
    """Profile 3: a validation error's ``details`` is a list of ``{field, message}``."""
    if not profile.status.field_message_details:
        return []
    body = json_object(response) or {}
    details = body.get("details")
    if not isinstance(details, list) or not details:
        return ["validation error has no non-empty details list"]
    for item in details:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("field"), str)
            and isinstance(item.get("message"), str)
        ):
            return [f"validation error details item {item!r} is not a {{field, message}} object"]
    return []


def is_validation_error(response: httpx.Response, profile: Profile) -> bool:
    """Whether ``response`` is the profile's validation error: its status and, when pinned, its
    code. Without a pinned code, a status the profile also gives business rules tells nothing:
    a business-rule refusal (422 ``unknown_currency``) is never taken for one."""
    validation = profile.error("status", "validation")
    if response.status_code != validation.status:
        return False
    if validation.code is None:
        return profile.error("status", "business_rule").status != validation.status
    return (json_object(response) or {}).get("code") == validation.code


def shares_open_status(profile: Profile, spec: ErrorSpec) -> bool:
    """Another answer the profile declares without a code (a business rule's 422) has
    ``spec``'s status: then the status alone does not tell the two apart, the code does."""
    specs = profile.error_specs
    return any(o.code is None and o.status == spec.status and o != spec for o in specs)


def malformed_refusal(profile: Profile) -> ErrorSpec:
    """What tells the refusal of a malformed request by the status alone where that is enough:
    the validation status, with the validation code where an open-coded answer shares it."""
    validation = profile.error("status", "validation")
    if shares_open_status(profile, validation):
        return validation
    return ErrorSpec(validation.status)


def is_contract_refusal(response: httpx.Response, profile: Profile) -> bool:
    """Whether ``response`` refuses the request as breaking the contract (``status.validation``).
    The status decides, and where the profile gives business rules the same status, the code:
    a business-rule refusal (422 ``unknown_currency``) is never the refusal of a malformed case."""
    return not status_problems(response, malformed_refusal(profile))


def status_problems(response: httpx.Response, expected: ErrorSpec) -> list[str]:
    """The response has ``expected``'s status and, when the profile pins one, its code."""
    if response.status_code != expected.status:
        return [f"expected {expected.status}, got {summary(response)}"]
    if expected.code is not None:
        code = (json_object(response) or {}).get("code")
        if code != expected.code:
            return [f"expected code {expected.code!r}, got {summary(response)}"]
    return []


def success_problems(response: httpx.Response, profile: Profile, operation_id: str) -> list[str]:
    expected = profile.success_status(operation_id)
    if response.status_code != expected:
        return [f"expected success {expected}, got {summary(response)}"]
    return []
