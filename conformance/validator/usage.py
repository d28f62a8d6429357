"""x402 usage reports seen across recorded exchanges: only a settled upto payment takes one,
up to the value its payer authorised.

``UsageChecks`` is told the x402 payments whose requirements were issued (their scheme, the
decimals of their currency, and to which API key) and the settlements accepted (the value of the
authorization), and judges each usage report of a payment issued in the recording to the same
API key:

- for an ``exact`` payment it must be refused with the profile's ``status.invalid_state``,
  settled or not (X402-025; ``x402.usage_requires``);
- for an ``upto`` payment with no accepted settlement recorded before it, that refusal passes
  and an acceptance fails, but only once no settlement can have come first: the verdict waits
  until an exchange starts after the report ended (exchanges overlapping in time have no order),
  and an accepted settlement of the payment overlapping the report withdraws it;
- an accepted report of a settled ``upto`` payment answers the authorised value as ``max_raw``
  and the reported amount in the currency's raw units as ``actual_raw`` (X402-027), and was
  not over that value (X402-026): ``judge.x402_rules.usage_against_payment``, as the x402
  family judges it from its model.

The recording is taken as holding the payment's whole history from its issue on (a settlement
is an API call of the same API key): a payment issued before the recording began is not
judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from conformance.core.profile import Profile
from conformance.core.results import Evidence, Outcome
from conformance.judge.findings import verdict
from conformance.judge.x402_rules import UPTO, other_codes, usage_against_payment
from conformance.validator.checks import FAMILY
from conformance.validator.tables import (
    TABLE_LIMIT,
    BoundedTable,
    Finding,
    Moment,
    Waiting,
    WaitingRoom,
)

USAGE_STATE = f"{FAMILY}.x402_usage_state"
USAGE_ANSWER = f"{FAMILY}.x402_usage_answer"
IDS = ("X402-025",)
USAGE = "reportX402Usage"


@dataclass(frozen=True, slots=True)
class _Payment:
    api_key: str
    schemes: frozenset[str]
    source: str
    decimals: int | None  # of the currency it was issued in
    settled: Moment | None = None  # when an accepted settlement of it happened
    authorised: int | None = None  # the value of that settlement's authorization


class UsageChecks:
    """The x402 payments issued and settled, and the usage reports their state forbids."""

    def __init__(self, profile: Profile, waiting: WaitingRoom, *, limit: int = TABLE_LIMIT) -> None:
        self._refusal = profile.error("status", "invalid_state")
        self._other_codes = other_codes(profile, self._refusal)
        self._payments: BoundedTable[str, _Payment] = BoundedTable(limit)
        self._waiting = waiting

    def issued(
        self,
        payment_id: str,
        api_key: str,
        schemes: frozenset[str],
        source: str,
        decimals: int | None,
    ) -> None:
        if self._payments.get(payment_id) is None:  # a replay of the issue changes nothing
            self._payments.put(payment_id, _Payment(api_key, schemes, source, decimals))

    def settled(self, payment_id: str, when: Moment, authorised: int | None) -> None:
        """An accepted settlement of ``payment_id`` authorising ``authorised`` raw units: a
        waiting report it overlaps is withdrawn."""
        payment = self._payments.get(payment_id)
        if payment is not None and payment.settled is None:
            self._payments.put(payment_id, replace(payment, settled=when, authorised=authorised))
        self._waiting.withdraw(_subject(payment_id), when)

    def report(
        self,
        payment_id: str,
        api_key: str,
        status: int,
        code: str | None,
        when: Moment,
        source: str,
        shown: Callable[[], Evidence],
        actual_amount: object,
        answer: Any,
    ) -> Iterator[Finding]:
        """Judge a usage report of ``payment_id`` answered ``status`` with ``code`` and, when
        accepted, ``answer`` to the reported ``actual_amount`` (now, or once due)."""
        payment = self._payments.get(payment_id)
        if payment is None or payment.api_key != api_key:
            return  # not seen issued, or another merchant's payment (the isolation checks)
        accepted = 200 <= status < 300
        refusal = self._refusal
        if not accepted and (status != refusal.status or code in self._other_codes):
            # refused for another reason (its form, an amount over the maximum, its
            # Idempotency-Key reused or in use)
            return
        if not accepted and code is not None and refusal.code is not None and code != refusal.code:
            message = (
                f"usage report of {payment_id} refused with {status} {code}, not {refusal.code}"
            )
            yield (USAGE_STATE, IDS, Outcome.FAILED, message)
            return
        where = payment.source or "an earlier exchange"
        if UPTO not in payment.schemes:
            yield (
                USAGE_STATE,
                IDS,
                Outcome.FAILED if accepted else Outcome.PASSED,
                f"usage report of {payment_id}, issued {'/'.join(sorted(payment.schemes))} in "
                f"{where}: " + ("accepted" if accepted else "refused") + f" ({status})",
            )
            return
        if payment.settled is not None:
            if accepted:  # settled before (or while) the report was sent
                yield from self._answer(payment, actual_amount, answer)
            return
        if not accepted:
            yield (
                USAGE_STATE,
                IDS,
                Outcome.PASSED,
                f"usage report of {payment_id}, not settled: refused ({status})",
            )
            return
        message = (
            f"usage report of {payment_id}, issued upto in {where} and not settled before: "
            f"accepted ({status})"
        )
        subject = _subject(payment_id)
        self._waiting.add(Waiting(subject, when, source, USAGE_STATE, IDS, message, USAGE, shown()))

    @staticmethod
    def _answer(payment: _Payment, actual_amount: object, answer: Any) -> Iterator[Finding]:
        decimals, authorised = payment.decimals, payment.authorised
        if decimals is None or authorised is None or not isinstance(answer, Mapping):
            return
        for ids, problem in usage_against_payment(
            actual_amount, answer, decimals=decimals, authorised=authorised
        ):
            yield verdict(USAGE_ANSWER, ids, problem)


def _subject(payment_id: str) -> str:
    return f"x402 {payment_id}"
