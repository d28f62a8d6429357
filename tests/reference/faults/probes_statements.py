"""Probes of the statement and ledger faults (faults/statements.yaml).

Each probe asserts the broken behaviour; against a correct server its assertion fails. Probes
read only windows around their own deposits, so a server shared with other probes does not
disturb them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from tests.reference.domain_factories import statement, statement_pages, utc_now
from tests.reference.factories import create_payment, deposit
from tests.reference.faults import Probe

DEPOSIT_PATH = "/v1/test-helpers/payments/{id}/deposit"


def _window(probe: Probe, amounts: list[str]) -> tuple[datetime, datetime]:
    """A window holding one paid payment per amount (no splits)."""
    start = utc_now()
    for amount in amounts:
        payment = create_payment(
            probe.client, quotes={"usdc": {"amount": amount, "chain_ids": ["base"]}}, splits=[]
        )
        deposit(probe.client, payment["id"], amount)
    return start, utc_now() + timedelta(milliseconds=1)


def _lines(probe: Probe, amounts: list[str]) -> list[dict[str, Any]]:
    start, end = _window(probe, amounts)
    lines: list[dict[str, Any]] = statement(probe.client, start, end).json()["lines"]
    return lines


def statement_reconciles_page_only(probe: Probe) -> None:
    start, end = _window(probe, ["1", "2"])
    first = statement_pages(probe.client, start, end, limit=1)[0]
    assert first["reconciles"] is False


def statement_amounts_trimmed(probe: Probe) -> None:
    (line,) = _lines(probe, ["1.5"])
    assert line["canonical_amount"] == "1.5"


def statement_lines_newest_first(probe: Probe) -> None:
    ids = [line["ledger_entry_id"] for line in _lines(probe, ["1", "2"])]
    assert len(ids) == 2 and ids[0] > ids[1]


def statement_default_limit_50(probe: Probe) -> None:
    now = utc_now()
    assert statement(probe.client, now - timedelta(hours=1), now).json()["limit"] == 50


def statement_limit_max_unchecked(probe: Probe) -> None:
    now = utc_now()
    highest = probe.profile.range("statements", "limit").max
    response = statement(probe.client, now - timedelta(hours=1), now, limit=highest + 1)
    assert response.status_code == 200


def statement_from_equal_to_accepted(probe: Probe) -> None:
    now = utc_now()
    assert statement(probe.client, now, now).status_code == 200


def statement_unknown_currency_empty(probe: Probe) -> None:
    now = utc_now()
    response = statement(probe.client, now - timedelta(hours=1), now, currency_id="nocoin")
    assert response.status_code == 200


def ledger_platform_fee_deducted(probe: Probe) -> None:
    (line,) = _lines(probe, ["10"])
    fee = Decimal(line["platform_fee_canonical"])
    assert fee > 0
    before = Decimal(line["balance_after_canonical"]) - Decimal(line["signed_canonical_amount"])
    start = datetime.fromisoformat(line["created_at"].replace("Z", "+00:00"))
    opening = Decimal(
        statement(probe.client, start, start + timedelta(seconds=1)).json()["opening_canonical"]
    )
    assert before == opening - fee


def helper_deposit_ignores_key(probe: Probe) -> None:
    start = utc_now()
    payment = create_payment(
        probe.client, quotes={"usdc": {"amount": "10", "chain_ids": ["base"]}}, splits=[]
    )
    key = uuid.uuid4().hex
    body = {"currency_id": "usdc", "chain_id": "base", "amount": "4"}
    for _ in range(2):
        response = probe.client.post(
            DEPOSIT_PATH.replace("{id}", payment["id"]), body, idempotency_key=key
        )
        assert response.status_code == 200, response.text
    lines = statement(probe.client, start, utc_now() + timedelta(seconds=1)).json()["lines"]
    credits = [ln for ln in lines if ln["payment_id"] == payment["id"]]
    assert len(credits) == 2


PROBES: dict[str, Callable[[Probe], None]] = {
    "statement-reconciles-page-only": statement_reconciles_page_only,
    "statement-amounts-trimmed": statement_amounts_trimmed,
    "statement-lines-newest-first": statement_lines_newest_first,
    "statement-default-limit-50": statement_default_limit_50,
    "statement-limit-max-unchecked": statement_limit_max_unchecked,
    "statement-from-equal-to-accepted": statement_from_equal_to_accepted,
    "statement-unknown-currency-empty": statement_unknown_currency_empty,
    "ledger-platform-fee-deducted": ledger_platform_fee_deducted,
    "helper-deposit-ignores-key": helper_deposit_ignores_key,
}
