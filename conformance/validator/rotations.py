"""Webhook secrets seen across recorded exchanges: a rotation gives a secret never seen before.

``RotationChecks`` keeps, per merchant and endpoint id, digests of the secrets the
rotateWebhookEndpointSecret answers gave (never the secrets), and judges each rotation that is
not a replay: its secret must differ from every secret the endpoint had before (WH-011). Two
answers of one endpoint with one secret break it whatever their order, so overlapping
exchanges are judged too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from conformance.core.profile import Profile
from conformance.core.redaction import REDACTED
from conformance.core.results import Outcome
from conformance.validator.checks import FAMILY, api_path
from conformance.validator.exchange import Exchange
from conformance.validator.tables import TABLE_LIMIT, BoundedTable, Finding, digest

API_KEY_HEADER = "x-api-key"
ROTATE = "rotateWebhookEndpointSecret"
SECRET_ROTATION = f"{FAMILY}.secret_rotation"


class RotationChecks:
    """The secrets each endpoint's rotations gave, and the rotations that gave one again."""

    READS_BODY = frozenset({ROTATE})  # the operations whose answers it reads

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self._merchant = {c.api_key: c.merchant_id for c in profile.credentials}
        # digest of (merchant, endpoint id, secret): where that secret was first answered
        self._secrets: BoundedTable[bytes, str] = BoundedTable(limit)

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
        slot = digest(merchant, endpoint, secret)
        first = self._secrets.get(slot)
        if first is None:
            self._secrets.put(slot, exchange.source)
        yield (
            SECRET_ROTATION,
            ("WH-011",),
            Outcome.PASSED if first is None else Outcome.FAILED,
            f"rotate-secret of endpoint {endpoint}: "
            + (
                "a secret it did not have before"
                if first is None
                else f"the secret already answered in {first or 'an earlier exchange'}"
            ),
        )


def _endpoint_id(exchange: Exchange) -> str | None:
    path = api_path(exchange.path)
    parts = path.strip("/").split("/") if path is not None else []
    return unquote(parts[2]) if len(parts) > 3 else None
