"""Standard Webhooks signatures and the profile's endpoint secret format.

A delivery carries ``webhook-id``, ``webhook-timestamp`` (Unix seconds) and
``webhook-signature``: space-separated ``v1,<base64 HMAC-SHA256>`` entries over
``"{id}.{timestamp}.{body}"``, keyed with the base64-decoded part of the ``whsec_`` secret.
Nothing here ever puts a secret into a message.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence

SIGNATURE_VERSION = "v1"


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


def signature(key: bytes, message_id: str, timestamp: str, body: bytes) -> str:
    content = f"{message_id}.{timestamp}.".encode() + body
    return base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()


def signed_with(
    secrets: Sequence[str], prefix: str, message_id: str, timestamp: str, body: bytes, header: str
) -> int | None:
    """The index in ``secrets`` of the one a ``v1`` entry of ``header`` was made with (the
    last one when a secret was handed out twice)."""
    entries = [
        value
        for version, _, value in (part.partition(",") for part in header.split())
        if version == SIGNATURE_VERSION and value
    ]
    for index, secret in reversed(list(enumerate(secrets))):
        key = secret_key(secret, prefix)
        if key is None:
            continue
        expected = signature(key, message_id, timestamp, body)
        if any(hmac.compare_digest(expected, value) for value in entries):
            return index
    return None
