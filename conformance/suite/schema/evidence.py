"""What a schemathesis exchange shows: redacted evidence, and the fields a case or failure names.

``evidence_from`` turns a response (and the request it answers) into the suite's ``Evidence``
as ``core.evidence`` builds every evidence (secrets redacted, bodies and headers bounded).
``case_fields`` and ``failure_fields`` name the request or response fields a negative case
negated or a failed check points at, so that a result can name the requirements about those
fields.
"""

from __future__ import annotations

import re
from typing import Any

import requests
import schemathesis
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.meta import negated_parameters

from conformance.core.evidence import evidence_from_parts
from conformance.core.results import Evidence
from conformance.suite.wire.transport import cut_marker, request_body_cut_at


def evidence_from(response: schemathesis.Response, secrets: tuple[str, ...]) -> Evidence:
    """Redacted evidence of one exchange, with a curl command that repeats the request."""
    cut_at = request_body_cut_at(response.request)
    return request_evidence(
        response.request,
        secrets,
        status=response.status_code,
        response_headers=[(k, ", ".join(v)) for k, v in response.headers.items()],
        response_body=response.content,
        response_note=cut_marker(cut_at) if cut_at is not None else None,
    )


def request_evidence(
    request: requests.PreparedRequest,
    secrets: tuple[str, ...],
    *,
    status: int | None = None,
    response_headers: list[tuple[str, str]] | None = None,
    response_body: bytes | None = None,
    response_note: str | None = None,
) -> Evidence:
    """Redacted evidence of a request (and of its response, when there was one)."""
    body = request.body
    return evidence_from_parts(
        method=str(request.method),
        url=str(request.url),
        request_headers=[(k, str(v)) for k, v in request.headers.items()],
        request_body=body if isinstance(body, (bytes, str)) else None,
        status=status,
        response_headers=response_headers or (),
        response_body=response_body,
        secrets=secrets,
        response_note=response_note,
    )


# ------------------------------------------------------------------- failure details
def case_mode(case: schemathesis.Case[Any]) -> str:
    """``positive`` or ``negative``: how schemathesis generated ``case``."""
    meta = case.meta
    if meta is None or meta.generation.mode.is_positive:
        return "positive"
    return "negative"


def _names_in(text: str) -> set[str]:
    return set(re.findall(r"[`'\"]([A-Za-z_][A-Za-z0-9_]*)[`'\"]", text))


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FORMAT = re.compile(r".* is not a [\"']([A-Za-z0-9-]+)[\"']", re.DOTALL)
_REQUIRED = re.compile(r"[\"']([A-Za-z_][A-Za-z0-9_]*)[\"'] is a required property")


def _properties_in_pointer(pointer: str) -> set[str]:
    """``/properties/quotes/additionalProperties/properties/amount/pattern`` -> quotes, amount."""
    parts = [p for p in pointer.split("/") if p]
    return {
        parts[i + 1]
        for i, part in enumerate(parts[:-1])
        if part == "properties" and _IDENTIFIER.fullmatch(parts[i + 1])
    }


def case_fields(case: schemathesis.Case[Any]) -> set[str]:
    """The fields a negative case made invalid, as far as its metadata tells."""
    meta = case.meta
    if meta is None or meta.generation.mode.is_positive:
        return set()
    data = meta.phase.data
    names: set[str] = set()
    if getattr(data, "parameter_location", None) != ParameterLocation.BODY:
        names |= {name for name, _ in negated_parameters(meta)}
    pointer = getattr(data, "location", None)
    if isinstance(pointer, str):
        names |= _properties_in_pointer(pointer)
    description = getattr(data, "description", None)
    if isinstance(description, str):
        names |= _names_in(description)
        head = description.split(":", 1)[0].strip()
        if ":" in description and _IDENTIFIER.fullmatch(head):
            names.add(head)
    for mutation in getattr(data, "mutations", ()) or ():
        names |= {str(p) for p in mutation.path if isinstance(p, str)}
        names |= _properties_in_pointer(mutation.schema_pointer)
        if mutation.parameter and mutation.parameter_location != ParameterLocation.BODY:
            names.add(mutation.parameter)
    return {n for n in names if _IDENTIFIER.fullmatch(n.replace("-", "_"))}


def failure_fields(failure: Exception) -> set[str]:
    """Field names a JSON Schema failure points at: its instance path (``quotes``, ``usdc``,
    ``amount``) and, for a missing property, the property's name."""
    names = {p for p in getattr(failure, "instance_path", None) or () if isinstance(p, str)}
    raw = getattr(failure, "_raw_message", None)
    if isinstance(raw, str):
        match = _REQUIRED.fullmatch(raw.strip())
        if match:
            names.add(match.group(1))
    return {n for n in names if _IDENTIFIER.fullmatch(n)}


def failure_tags(failure: Exception) -> set[str]:
    """``format:date-time`` when a JSON Schema failure is a broken format."""
    raw = getattr(failure, "_raw_message", None)
    if isinstance(raw, str):
        match = _FORMAT.fullmatch(raw.strip())
        if match:
            return {f"format:{match.group(1)}"}
    return set()


def failure_text(failure: Exception) -> str:
    title = getattr(failure, "title", type(failure).__name__)
    message = getattr(failure, "message", str(failure))
    return f"{title}: {message}".strip()
