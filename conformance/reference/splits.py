"""Split shares (payments, subscriptions, x402 requirements) and the default split template."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from conformance.reference.context import RequestContext
from conformance.reference.errors import business_rule
from conformance.reference.fixtures import known_merchants
from conformance.reference.operations import Reply, operation
from conformance.reference.timestamps import iso

SCHEMA = """
CREATE TABLE IF NOT EXISTS split_templates (
    merchant_id TEXT PRIMARY KEY,
    shares TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
"""


def validate_splits(ctx: RequestContext, splits: Sequence[dict[str, Any]]) -> list[tuple[str, int]]:
    """The business rules of profile section 5 (422); bps bounds are contract (400, earlier)."""
    rules = ctx.config.profile.splits
    known = known_merchants(ctx)
    seen: set[str] = set()
    total = 0
    result: list[tuple[str, int]] = []
    for index, share in enumerate(splits):
        merchant_id = str(share["merchant_id"])
        bps = int(share["bps"])
        if ctx.fault("validation-bps-range-as-business-rule") and not 1 <= bps <= 10000:
            raise business_rule(
                ctx, "invalid_split_bps", f"splits[{index}]: bps must be 1 to 10000"
            )
        if merchant_id not in known:
            raise business_rule(
                ctx, "unknown_merchant", f"splits[{index}]: unknown merchant {merchant_id!r}"
            )
        if (
            merchant_id == ctx.merchant_id
            and not rules.allow_self
            and not ctx.fault("split-self-allowed")
        ):
            raise business_rule(
                ctx, "split_to_self", f"splits[{index}]: a merchant cannot split to itself"
            )
        if (
            merchant_id in seen
            and not rules.allow_repeated_merchant
            and not ctx.fault("split-repeated-merchant-accepted")
        ):
            raise business_rule(
                ctx, "duplicate_split_merchant", f"splits[{index}]: {merchant_id} is repeated"
            )
        seen.add(merchant_id)
        total += bps
        result.append((merchant_id, bps))
    if total > rules.max_total_bps and not ctx.fault("split-sum-over-10000-accepted"):
        over = f"split shares add up to {total} bps, over {rules.max_total_bps}"
        raise business_rule(ctx, "split_total_exceeded", over)
    return result


@operation("replaceSplitTemplate")
def replace_split_template(ctx: RequestContext) -> Reply:
    shares = validate_splits(ctx, ctx.body["shares"])
    rendered = [{"merchant_id": m, "bps": b} for m, b in shares]
    updated_at = iso(ctx.now)
    if rendered:
        ctx.conn.execute(
            "INSERT INTO split_templates (merchant_id, shares, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (merchant_id) DO UPDATE SET shares = excluded.shares, "
            "updated_at = excluded.updated_at",
            (ctx.merchant_id, json.dumps(rendered), updated_at),
        )
    elif ctx.fault("split-template-empty-keeps-shares"):
        kept = ctx.conn.execute(
            "SELECT shares FROM split_templates WHERE merchant_id = ?", (ctx.merchant_id,)
        ).fetchone()
        rendered = json.loads(kept["shares"]) if kept is not None else []
    else:
        ctx.conn.execute("DELETE FROM split_templates WHERE merchant_id = ?", (ctx.merchant_id,))
    return Reply(
        ctx.config.profile.success_status(ctx.operation_id),
        {"shares": rendered, "updated_at": updated_at},
    )
