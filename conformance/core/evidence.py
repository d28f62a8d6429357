"""Evidence of one exchange, built one way whoever saw it: the suite's client, the schema phases
and the validator.

``evidence_from_parts`` turns the parts of a request and its response into an ``Evidence`` fit for
a report:

- secrets out (``core.redaction``): secret headers by name (signature, authorization, cookie,
  the run's ``-H`` gateway headers), secret JSON fields of bodies, ``whsec_`` webhook secrets
  and the caller's ``secrets`` (the API secret) wherever they appear, URL passwords in the URL
  and header values. The API key (``X-Api-Key``) stays: it names the credential, signs nothing;
- header names in lower case (as HTTP/2 writes them, and httpx gives them), a name repeated
  joined into one value with ", ";
- bodies cut at ``BODY_LIMIT`` bytes, headers capped (``cap_headers``);
- a curl command that repeats the request (``curl_command``).

It also carries a check result to and from the JSON-like dict a pytest-xdist worker sends, and a
report's ``results.json`` holds (``check_to_dict``, ``check_from_dict``).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from conformance.core.redaction import (
    REDACTED,
    WEBHOOK_SECRET,
    redact_headers,
    redact_text,
    run_secrets,
)
from conformance.core.results import CheckResult, Evidence, Outcome
from conformance.core.untrusted import mask_url_passwords

# Equal to the bodies results.json keeps (``reporting.json_report.BODY_LIMIT``): what is
# captured is what the report shows. The report stays bounded: one evidence per check result.
BODY_LIMIT = 64 * 1024
"""Bytes of a request or response body evidence keeps."""

# A server answering 40 headers of 8 KB each, repeated in the evidence of every check, made a
# 20 MB ``results.json``.
MAX_HEADERS = 32
MAX_HEADER_CHARS = 1024
DROPPED_HEADERS = "[headers not shown]"
"""The name of the entry that counts the headers left out."""

# Headers curl sets itself from the URL and the body.
_CURL_SETS = frozenset({"host", "content-length", "accept-encoding", "connection"})

Headers = Iterable[tuple[str, str]] | Mapping[str, str]


def cap_headers(
    headers: Mapping[str, str],
    max_headers: int = MAX_HEADERS,
    max_chars: int = MAX_HEADER_CHARS,
) -> dict[str, str]:
    """The first ``max_headers`` headers, each value cut at ``max_chars`` characters.

    Cut after redaction: a secret cut in two would no longer be recognised.
    """
    kept: dict[str, str] = {}
    for index, (name, value) in enumerate(headers.items()):
        if index == max_headers:
            kept[DROPPED_HEADERS] = f"{len(headers) - max_headers} more headers"
            break
        if len(value) > max_chars:
            value = f"{value[:max_chars]}[... {len(value) - max_chars} more characters]"
        kept[name[:max_chars]] = value
    return kept


def _mask_secrets(text: str, secrets: Iterable[str]) -> str:
    for secret in (*secrets, *run_secrets()):
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def evidence_headers(headers: Headers, secrets: Iterable[str] = ()) -> dict[str, str]:
    """``headers`` as evidence shows them: lower-case names (a repeated one joined with ", "),
    secret headers masked by name, ``secrets``, webhook secrets and URL passwords masked in
    every value, and capped."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    joined: dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        joined[key] = f"{joined[key]}, {value}" if key in joined else value
    secrets = tuple(secrets)
    shown = {
        name: mask_url_passwords(WEBHOOK_SECRET.sub(REDACTED, _mask_secrets(value, secrets)))
        for name, value in redact_headers(joined).items()
    }
    return cap_headers(shown)


def evidence_body(
    raw: bytes | str | None, secrets: Iterable[str] = (), note: str | None = None
) -> str | None:
    """A body as evidence shows it (None when there is none): its first ``BODY_LIMIT`` bytes,
    redacted (``redact_text``), followed by how many bytes were left out, and preceded by the
    line ``note`` when given (the transport's cut marker)."""
    if not raw:
        return None
    data = raw.encode("utf-8", "replace") if isinstance(raw, str) else raw
    text = redact_text(data[:BODY_LIMIT].decode("utf-8", "replace"), tuple(secrets))
    if len(data) > BODY_LIMIT:
        text += f"\n[... {len(data) - BODY_LIMIT} more bytes not shown]"
    if note is not None:
        text = f"{note}\n{text}"
    return text


def curl_command(method: str, url: str, headers: Mapping[str, str], body: str | None) -> str:
    """A shell command that repeats the request (POSIX quoting, ``shlex.split`` reads it back).

    The headers curl derives itself (``Host``, ``Content-Length``...) are left out."""
    words = ["curl", "-X", method, url]
    for name, value in headers.items():
        if name.lower() not in _CURL_SETS:
            words += ["-H", f"{name}: {value}"]
    if body is not None:
        words += ["--data-binary", body]
    return shlex.join(words)


def evidence_from_parts(
    *,
    method: str,
    url: str,
    request_headers: Headers,
    request_body: bytes | str | None,
    status: int | None,
    response_headers: Headers = (),
    response_body: bytes | str | None = None,
    secrets: Iterable[str] = (),
    response_note: str | None = None,
) -> Evidence:
    """Redacted evidence of one exchange given as its parts (``status`` None: no response), with
    a curl command that repeats the request. ``response_note`` is a line put before the
    response body (the transport's cut marker)."""
    secrets = tuple(secrets)
    method = str(method)
    url = mask_url_passwords(url)  # a --base-url password is never recorded
    shown_headers = evidence_headers(request_headers, secrets)
    shown_body = evidence_body(request_body, secrets)
    answered = status is not None
    return Evidence(
        method=method,
        url=url,
        request_headers=shown_headers,
        request_body=shown_body,
        status=status,
        response_headers=evidence_headers(response_headers, secrets) if answered else {},
        response_body=evidence_body(response_body, secrets, response_note) if answered else None,
        curl=curl_command(method, url, shown_headers, shown_body),
    )


# ------------------------------------------------------------------- the round trip
_EVIDENCE_FIELDS = (
    "method",
    "url",
    "request_headers",
    "request_body",
    "status",
    "response_headers",
    "response_body",
    "curl",
)


def evidence_to_dict(evidence: Evidence) -> dict[str, Any]:
    return {
        "method": evidence.method,
        "url": evidence.url,
        "request_headers": dict(evidence.request_headers),
        "request_body": evidence.request_body,
        "status": evidence.status,
        "response_headers": dict(evidence.response_headers),
        "response_body": evidence.response_body,
        "curl": evidence.curl,
    }


def evidence_from_dict(data: Mapping[str, Any]) -> Evidence:
    """The evidence of a worker's dict or of a results.json check (whose ``truncated`` and any
    other key it does not hold are ignored)."""
    fields = {name: data[name] for name in _EVIDENCE_FIELDS}
    fields["request_headers"] = dict(fields["request_headers"])
    fields["response_headers"] = dict(fields["response_headers"])
    return Evidence(**fields)


def check_to_dict(check: CheckResult) -> dict[str, Any]:
    """``check`` as plain JSON values (what a worker sends the controller)."""
    return {
        "check_id": check.check_id,
        "family": check.family,
        "requirement_ids": list(check.requirement_ids),
        "outcome": check.outcome.value,
        "message": check.message,
        "operation_id": check.operation_id,
        "duration_s": check.duration_s,
        "evidence": evidence_to_dict(check.evidence) if check.evidence is not None else None,
        "reason_not_exercised": check.reason_not_exercised,
    }


def check_from_dict(data: Mapping[str, Any]) -> CheckResult:
    """The check of ``check_to_dict``'s dict, or of a check of results.json."""
    evidence = data.get("evidence")
    return CheckResult(
        check_id=str(data["check_id"]),
        family=str(data["family"]),
        requirement_ids=tuple(str(r) for r in data["requirement_ids"]),
        outcome=Outcome(data["outcome"]),
        message=str(data.get("message") or ""),
        operation_id=data.get("operation_id"),
        duration_s=float(data.get("duration_s") or 0.0),
        evidence=evidence_from_dict(evidence) if evidence else None,
        reason_not_exercised=data.get("reason_not_exercised"),
    )
