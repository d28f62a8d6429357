"""What the deposits a payment received oblige its answers (profile 6, HELP-001; PAY-STATE-007,
FIX-003), given those deposits: the payments family knows them from its model, the validator
from the recorded deposit helper calls of the payment.

- A deposit after which the payment has received less than the quote in all leaves it underpaid,
  never settled (HELP-001). A deposit that alone pays the quote is ``judge.answers``' (HELP-002):
  its answer tells the rule.
- Accept-underpaid answers the currency received and, as ``accepted_raw``, the amount received
  in raw units of that currency: times 10^decimals (PAY-STATE-007; FIX-003, the decimals).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from conformance.core.profile import Profile
from conformance.judge.findings import Finding, verdict
from conformance.judge.payment_rules import PaymentRules

CHECK = "deposits_received"
SHORT_IDS = ("HELP-001",)
CURRENCY_IDS = ("PAY-STATE-007",)
ACCEPTED_IDS = ("PAY-STATE-007", "FIX-003")


class DepositRules:
    """The profile's states after a deposit and its currencies' decimals."""

    def __init__(self, profile: Profile) -> None:
        rules = PaymentRules(profile)
        self._settled, self._underpaid = rules.settled, rules.underpaid
        self._decimals = {cid: c.decimals for cid, c in profile.currencies.items()}

    def deposited(self, received: Decimal, quoted: Decimal, status: object) -> Finding | None:
        """The answer to a deposit after which the payment received ``received`` in all (this
        deposit and the earlier ones) against a quote of ``quoted``; None where this rule says
        nothing (paid in full, or a status that is neither state: ``judge.answers``')."""
        if received >= quoted or status not in (self._settled, self._underpaid):
            return None
        problem = (
            None
            if status == self._underpaid
            else f"deposits of {received} in all, quoted {quoted}: answered {status!r}"
        )
        return verdict(CHECK, SHORT_IDS, problem)

    def accepted(
        self, answer: Mapping[str, Any], currency_id: str, received: Decimal
    ) -> Iterator[Finding]:
        """The answer to accept-underpaid of a payment that received ``received`` (a decimal
        amount) of ``currency_id``; nothing for a currency the profile does not list."""
        decimals = self._decimals.get(currency_id)
        if decimals is None:
            return
        answered = answer.get("currency_id")
        yield verdict(
            CHECK,
            CURRENCY_IDS,
            None
            if answered == currency_id
            else f"currency_id {answered!r}, the payment received {currency_id}",
        )
        raw = int(received.scaleb(decimals))
        accepted = answer.get("accepted_raw")
        yield verdict(
            CHECK,
            ACCEPTED_IDS,
            None
            if accepted == str(raw)
            else f"accepted_raw {accepted!r}, the payment received {raw} raw "
            f"({received} {currency_id})",
        )
