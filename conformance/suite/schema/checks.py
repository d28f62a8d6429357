"""Our checks, registered with schemathesis and run on every response of the schema phases.

schemathesis' built-in checks validate a response against what the contract documents for its
status. These add what the contract and the profile say about every response, documented or not:

- ``no_server_error``: no 5xx, whatever the request (profile 3; stricter than the built-in
  ``not_a_server_error``, which excuses a 5xx to some malformed Content-Type probes). The runner
  adds to its failure the refusal a request that had to be refused did not get
  (``judge.server_errors``), as the validator names the same exchange;
- ``error_content_type`` and ``error_body_shape``: every 4xx is ``application/json``
  ``{code, message, details?}`` (spec 7, profile 3);
- ``success_content_type``: every 2xx is a JSON document served as ``application/json``;
- ``ErrorCodeMatchesProfile``: an error status the profile pins carries one of its codes, and a
  validation error lists ``{field, message}`` details (profile 3);
- ``ReplayHeaderOnlyOnReplays``: the replay header marks replays only (profile 2).

The two classes take their data from the schemathesis configuration (``loading``), which
takes it from the profile.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis
from schemathesis import Case, CheckContext, Response

from conformance.core import jsonsafe
from conformance.judge.outcomes import success_media_problem

JSON_MEDIA_TYPE = "application/json"


def _header(response: Response, name: str) -> str | None:
    values = response.headers.get(name.lower())
    return values[0] if values else None


def _media_type(response: Response) -> str | None:
    value = _header(response, "content-type")
    if value is None:
        return None
    return value.split(";", 1)[0].strip().lower()


def _json_body(response: Response) -> tuple[bool, Any]:
    try:
        return True, jsonsafe.loads(response.content)
    except ValueError:
        return False, None


def refused_body(response: Response) -> str | None:
    """Why the body cannot be parsed safely (too deep, too large), or None when it can be.

    schemathesis' own checks parse the body with ``json.loads``; the runner asks this first and
    records a response-schema failure instead of letting them recurse into a hostile document.
    """
    try:
        jsonsafe.check(response.content)
    except jsonsafe.JsonTooComplex as exc:
        return str(exc)
    return None


@schemathesis.check
def no_server_error(ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
    """No response, to any request however malformed, has a 5xx status."""
    if response.status_code >= 500:
        raise AssertionError(
            f"{response.status_code}: no request, however malformed, may get a 5xx "
            f"({case.method} {case.formatted_path})"
        )
    return None


@schemathesis.check
def error_content_type(ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
    """Every 4xx response is served as application/json."""
    if not 400 <= response.status_code < 500:
        return True
    media_type = _media_type(response)
    if media_type != JSON_MEDIA_TYPE:
        raise AssertionError(
            f"{response.status_code} error served as {media_type or 'no Content-Type'}, "
            f"expected {JSON_MEDIA_TYPE}"
        )
    return None


@schemathesis.check
def error_body_shape(ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
    """Every 4xx body is a JSON object with string code and message (details optional)."""
    if not 400 <= response.status_code < 500:
        return True
    parsed, body = _json_body(response)
    if not parsed or not isinstance(body, dict):
        raise AssertionError(f"{response.status_code} error body is not a JSON object")
    problems = [
        f"{field} is {'missing' if field not in body else 'not a string'}"
        for field in ("code", "message")
        if not isinstance(body.get(field), str)
    ]
    if problems:
        raise AssertionError(f"{response.status_code} error body: " + "; ".join(problems))
    return None


@schemathesis.check
def success_content_type(ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
    """Every 2xx response is a JSON document served as application/json."""
    if not 200 <= response.status_code < 300:
        return True
    parsed = _json_body(response)[0]
    refused = "" if parsed else refused_body(response) or ""
    problem = success_media_problem(_media_type(response) or "", parsed, refused)
    if problem is not None:
        raise AssertionError(f"{response.status_code} success answer: {problem}")
    return None


@schemathesis.check
class ErrorCodeMatchesProfile:
    """An error status the profile pins carries one of the profile's codes for it.

    ``codes``: status -> codes the profile gives that status; ``open_statuses``: statuses the
    profile also uses without a fixed code (422 "with a specific code"), where any code not
    pinned to another status is right; ``validation``: the validation error's status and code,
    whose details must be a list of ``{field, message}`` objects.
    """

    def __init__(
        self,
        codes: dict[str, list[str]] | None = None,
        open_statuses: list[str] | None = None,
        validation: dict[str, Any] | None = None,
    ) -> None:
        self.codes = {int(k): set(v) for k, v in (codes or {}).items()}
        self.open_statuses = {int(s) for s in (open_statuses or [])}
        self.validation = validation or {}

    def after_response(self, ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
        status = response.status_code
        if status not in self.codes and status not in self.open_statuses:
            return True
        parsed, body = _json_body(response)
        if not parsed or not isinstance(body, dict) or not isinstance(body.get("code"), str):
            return True  # error_body_shape reports it
        code = body["code"]
        if status in self.open_statuses:
            pinned_elsewhere = {
                c for s, cs in self.codes.items() if s != status for c in cs
            } - self.codes.get(status, set())
            if code in pinned_elsewhere:
                raise AssertionError(
                    f"{status} with code {code!r}, a code the profile gives another status"
                )
        elif code not in self.codes[status]:
            expected = " or ".join(repr(c) for c in sorted(self.codes[status]))
            raise AssertionError(f"{status} with code {code!r}, the profile says {expected}")
        if status == self.validation.get("status") and code == self.validation.get("code"):
            details = body.get("details")
            if not isinstance(details, list) or not all(
                isinstance(d, dict)
                and isinstance(d.get("field"), str)
                and isinstance(d.get("message"), str)
                for d in details
            ):
                raise AssertionError(
                    f"{status} {code}: details must be a list of {{field, message}} objects, "
                    f"got {json.dumps(details)[:200]}"
                )
        return None


@schemathesis.check
class ReplayHeaderOnlyOnReplays:
    """The replay header appears only on a response to a key used before.

    Every key this check has not seen in an earlier request is a first use: its response must
    not say it is a replay.
    """

    def __init__(self, header: str = "", key_header: str = "Idempotency-Key") -> None:
        """``header``: the profile's replay header; "" (none declared): nothing to check."""
        self.header = header
        self.key_header = key_header
        self.seen: set[str] = set()

    def after_response(self, ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
        raw = response.request.headers.get(self.key_header)
        if raw is None or not self.header:  # "": the profile declares no replay header
            return True
        key = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        first_use = key not in self.seen
        self.seen.add(key)
        value = _header(response, self.header)
        if first_use and value is not None and value.strip().lower() == "true":
            raise AssertionError(
                f"{self.header}: {value} on the response to the first use of an "
                f"{self.key_header}: nothing was replayed"
            )
        return None


OUR_CHECKS = (
    "no_server_error",
    "error_content_type",
    "error_body_shape",
    "success_content_type",
    "ErrorCodeMatchesProfile",
    "ReplayHeaderOnlyOnReplays",
)
