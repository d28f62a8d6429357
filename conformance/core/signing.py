"""Request signing under a profile's authentication scheme.

The default profile signs ``"{timestamp}\\n{nonce}\\n{METHOD}\\n{target}\\n"`` followed by the raw
body bytes with HMAC-SHA256 keyed by the API secret, hex encoded. ``target`` is the path as sent,
plus ``?`` and the raw query string when there is one.
"""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from dataclasses import dataclass

API_KEY_HEADER = "X-Api-Key"
SIGNATURE_HEADER = "X-Signature"
TIMESTAMP_HEADER = "X-Timestamp"
NONCE_HEADER = "X-Nonce"
AUTH_HEADERS = (API_KEY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, NONCE_HEADER)

DEFAULT_STRING_TO_SIGN = "{timestamp}\n{nonce}\n{method}\n{target}\n"


def string_to_sign(
    template: str, timestamp: str, nonce: str, method: str, target: str, body: bytes
) -> bytes:
    head = template.format(timestamp=timestamp, nonce=nonce, method=method.upper(), target=target)
    return head.encode("utf-8") + body


def signature(secret: str, message: bytes) -> str:
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def new_nonce() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Signer:
    """Produces the four authentication headers for one credential."""

    api_key: str
    api_secret: str
    template: str = DEFAULT_STRING_TO_SIGN

    def __repr__(self) -> str:
        return f"Signer(api_key={self.api_key!r})"

    def headers(
        self,
        method: str,
        target: str,
        body: bytes = b"",
        *,
        timestamp: int | None = None,
        nonce: str | None = None,
    ) -> dict[str, str]:
        ts = str(int(time.time()) if timestamp is None else timestamp)
        nc = new_nonce() if nonce is None else nonce
        message = string_to_sign(self.template, ts, nc, method, target, body)
        return {
            API_KEY_HEADER: self.api_key,
            SIGNATURE_HEADER: signature(self.api_secret, message),
            TIMESTAMP_HEADER: ts,
            NONCE_HEADER: nc,
        }


def verify(
    secret: str, template: str, headers: dict[str, str], method: str, target: str, body: bytes
) -> bool:
    """Constant-time check of ``X-Signature`` against the expected one."""
    expected = signature(
        secret,
        string_to_sign(
            template, headers[TIMESTAMP_HEADER], headers[NONCE_HEADER], method, target, body
        ),
    )
    return hmac.compare_digest(expected, headers[SIGNATURE_HEADER])
