"""Webhook secrets seen across recorded exchanges: a rotation gives a secret never seen before.

``RotationChecks`` feeds each rotateWebhookEndpointSecret answer that is not a replay, with its
merchant and endpoint id, to ``judge.webhook_secrets`` (WH-011), overlapping exchanges too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from conformance.core.profile import Profile
from conformance.core.redaction import REDACTED
from conformance.judge.tables import TABLE_LIMIT
from conformance.judge.webhook_secrets import SecretRotations
from conformance.validator.checks import FAMILY, api_path
from conformance.validator.exchange import Exchange
from conformance.validator.tables import Finding

API_KEY_HEADER = "x-api-key"
ROTATE = "rotateWebhookEndpointSecret"
SECRET_ROTATION = f"{FAMILY}.secret_rotation"


class RotationChecks:
    """The secrets each endpoint's rotations gave, and the rotations that gave one again."""

    READS_BODY = frozenset({ROTATE})  # the operations whose answers it reads

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self._merchant = {c.api_key: c.merchant_id for c in profile.credentials}
        self._rotations = SecretRotations(limit=limit)

    def observe(
        self,
        exchange: Exchange,
        operation_id: str,
        headers: dict[str, str],
        body: Any,
        *,
        replayed: bool,
    ) -> Iterator[Finding]:
        """Judge a rotation's secret against the endpoint's earlier ones, then remember it (a
        replay answers the stored rotation again: not judged)."""
        if operation_id != ROTATE or replayed or not 200 <= (exchange.status or 0) < 300:
            return
        secret = body.get("secret") if isinstance(body, dict) else None
        api_key = headers.get(API_KEY_HEADER)
        endpoint = _endpoint_id(exchange)
        if not isinstance(secret, str) or secret == REDACTED or not api_key or endpoint is None:
            return  # no secret, or one the recorder masked (``run --record`` masks them)
        merchant = self._merchant.get(api_key) or f"key {api_key}"
        found = self._rotations.rotated(merchant, endpoint, secret, exchange.source)
        yield (SECRET_ROTATION, found.ids, found.outcome, found.message)


def _endpoint_id(exchange: Exchange) -> str | None:
    path = api_path(exchange.path)
    parts = path.strip("/").split("/") if path is not None else []
    return unquote(parts[2]) if len(parts) > 3 else None
