"""What the comparison's schemathesis hook does (``compare_hooks`` registers it).

Two things only, so that the schemathesis being compared stays plain: every request is signed
as the default profile says (over the body bytes as sent, the suite's ``SignedRequests``), and
an Idempotency-Key that schemathesis generated valid is replaced by a fresh one (schemathesis
repeats values such as ``"0"``; a repeated key is a replay, not a new request). A missing or
invalid key is left alone: that is what the case tests. No check is added.
"""

from __future__ import annotations

import uuid
from typing import Any

from conformance.core.profile import load_profile
from conformance.core.signing import Signer
from conformance.suite.schema.signed_requests import SignedRequests

IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 128  # the spec's maximum; longer keys are refused, so they are left alone

_profile = load_profile("default")
_auth = SignedRequests(
    Signer(_profile.primary.api_key, _profile.primary.api_secret, _profile.string_to_sign)
)


def fresh_key(length: int) -> str:
    """A key of ``length`` characters (at least 32, so that it is unique) never used before."""
    wanted = min(max(length, 32), MAX_KEY_LENGTH)
    text = ""
    while len(text) < wanted:
        text += uuid.uuid4().hex
    return text[:wanted]


def refresh_idempotency_key(headers: dict[str, Any] | None) -> None:
    if not headers:
        return
    for name, value in list(headers.items()):
        if name.lower() != IDEMPOTENCY_HEADER.lower():
            continue
        if isinstance(value, str) and 1 <= len(value) <= MAX_KEY_LENGTH:
            headers[name] = fresh_key(len(value))


def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    refresh_idempotency_key(case.headers)
    kwargs["auth"] = _auth
