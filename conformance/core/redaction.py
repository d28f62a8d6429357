"""Keep secrets out of output and reports: API secrets, signatures, webhook secrets."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"
SECRET_HEADERS = frozenset({"x-signature", "webhook-signature", "authorization", "cookie"})
SECRET_FIELDS = frozenset({"secret", "api_secret", "signature", "private_key"})
# Webhook secrets in standard or URL-safe base64.
WEBHOOK_SECRET = re.compile(r"whsec_[A-Za-z0-9+/=_-]+")


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: (REDACTED if k.lower() in SECRET_HEADERS else v) for k, v in headers.items()}


def _redact_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (REDACTED if k.lower() in SECRET_FIELDS else _redact_value(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_redact_value(v) for v in value]
    return value


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Redact a body: secret JSON fields, ``whsec_`` values and any known secret string."""
    try:
        parsed = json.loads(text)
    except ValueError:
        redacted = text
    else:
        redacted = json.dumps(_redact_value(parsed), ensure_ascii=False)
    redacted = WEBHOOK_SECRET.sub(REDACTED, redacted)
    for secret in secrets:
        if secret:
            redacted = redacted.replace(secret, REDACTED)
    return redacted
