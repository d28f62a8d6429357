"""Delivery signatures as the profile declares them, and the profile's endpoint secret format.

By default (``webhooks.signature = "standard-webhooks"``) a delivery carries ``webhook-id``,
``webhook-timestamp`` (Unix seconds) and ``webhook-signature``: space-separated
``v1,<base64 HMAC-SHA256>`` entries over ``"{id}.{timestamp}.{body}"``, keyed with the
base64-decoded part of the ``whsec_`` secret. ``[webhooks.signing]`` changes the headers, the
signed template, the algorithm, encoding and key (``core.webhook_scheme``); a
``webhooks.verifier`` hook replaces the check of the signature itself.
Nothing here ever puts a secret into a message.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping, Sequence

from conformance.core.webhook_scheme import KEY_AFTER_PREFIX, STANDARD, WebhookScheme
from conformance.core.webhook_verifier import Verifier

STANDARD_SCHEME = WebhookScheme.of(STANDARD, None)


def secret_problem(secret: object, prefix: str, random_bytes: int) -> str | None:
    """Why ``secret`` is not ``prefix`` + base64 of ``random_bytes`` bytes (None: it is)."""
    if not isinstance(secret, str):
        return "the secret is not a string"
    if not secret.startswith(prefix):
        return f"the secret does not start with {prefix}"
    decoded = secret_key(secret, prefix)
    if decoded is None:
        return f"the part after {prefix} is not base64"
    if len(decoded) != random_bytes:
        return f"the part after {prefix} decodes to {len(decoded)} bytes, not {random_bytes}"
    return None


def secret_key(secret: str, prefix: str) -> bytes | None:
    """The HMAC key of a secret: its base64 part decoded (None when it is not base64)."""
    try:
        return base64.b64decode(secret.removeprefix(prefix), validate=True)
    except (binascii.Error, ValueError):
        return None


def hmac_key(scheme: WebhookScheme, secret: str, prefix: str) -> bytes | None:
    if scheme.key == KEY_AFTER_PREFIX:
        return secret_key(secret, prefix)
    return secret.encode()


def signature(
    key: bytes,
    message_id: str,
    timestamp: str,
    body: bytes,
    scheme: WebhookScheme = STANDARD_SCHEME,
) -> str:
    content = scheme.content(message_id, timestamp, body)
    digest = hmac.new(key, content, getattr(hashlib, scheme.algorithm)).digest()
    return digest.hex() if scheme.encoding == "hex" else base64.b64encode(digest).decode()


def signed_with(
    secrets: Sequence[str],
    prefix: str,
    message_id: str,
    timestamp: str,
    body: bytes,
    header: str,
    scheme: WebhookScheme = STANDARD_SCHEME,
) -> int | None:
    """The index in ``secrets`` of the one a signature of ``header`` (the signature header) was
    made with (the last one when a secret was handed out twice)."""
    entries = scheme.signatures(header)
    if scheme.encoding == "hex":
        entries = [e.lower() for e in entries]
    for index, secret in reversed(list(enumerate(secrets))):
        key = hmac_key(scheme, secret, prefix)
        if key is None:
            continue
        expected = signature(key, message_id, timestamp, body, scheme)
        if any(hmac.compare_digest(expected.encode(), _bytes(value)) for value in entries):
            return index
    return None


def verified_with(
    verifier: Verifier, secrets: Sequence[str], headers: Mapping[str, str], body: bytes
) -> tuple[int | None, str]:
    """The index in ``secrets`` of the last one the hook accepts the delivery for; else None and
    what the hook raised, if it did."""
    raised = ""
    for index, secret in reversed(list(enumerate(secrets))):
        ok, why = verifier.verifies(headers, body, secret)
        if ok:
            return index, ""
        raised = raised or why
    return None, raised


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "replace")  # compare_digest takes ASCII-only str, any bytes
