"""x402 usage reports seen across recorded exchanges: only a settled upto payment takes one.

``UsageChecks`` is told the x402 payments whose requirements were issued (their scheme, and to
which API key) and the settlements accepted, and judges each usage report of a payment issued
in the recording to the same API key (X402-025):

- for an ``exact`` payment it must be refused, settled or not;
- for an ``upto`` payment with no accepted settlement recorded before it, a refusal passes and
  an acceptance fails, but only once no settlement can have come first: the verdict waits
  until an exchange starts after the report ended (exchanges overlapping in time have no order),
  and an accepted settlement of the payment overlapping the report withdraws it.

The recording is taken as holding the payment's whole history from its issue on (a settlement
is an API call of the same API key): a payment issued before the recording began is not
judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from conformance.core.profile import Profile
from conformance.core.results import Evidence, Outcome
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
IDS = ("X402-025",)
UPTO = "upto"
USAGE = "reportX402Usage"


@dataclass(frozen=True, slots=True)
class _Payment:
    api_key: str
    schemes: frozenset[str]
    source: str
    settled: Moment | None = None  # when an accepted settlement of it happened


class UsageChecks:
    """The x402 payments issued and settled, and the usage reports their state forbids."""

    def __init__(self, profile: Profile, waiting: WaitingRoom, *, limit: int = TABLE_LIMIT) -> None:
        self._conflict = profile.x402.settled_conflict.status
        self._payments: BoundedTable[str, _Payment] = BoundedTable(limit)
        self._waiting = waiting

    def issued(self, payment_id: str, api_key: str, schemes: frozenset[str], source: str) -> None:
        self._payments.put(payment_id, _Payment(api_key, schemes, source))

    def settled(self, payment_id: str, when: Moment) -> None:
        """An accepted settlement of ``payment_id``: a waiting report it overlaps is withdrawn."""
        payment = self._payments.get(payment_id)
        if payment is not None and payment.settled is None:
            self._payments.put(
                payment_id, _Payment(payment.api_key, payment.schemes, payment.source, when)
            )
        self._waiting.withdraw(_subject(payment_id), when)

    def report(
        self,
        payment_id: str,
        api_key: str,
        status: int,
        when: Moment,
        source: str,
        shown: Callable[[], Evidence],
    ) -> Iterator[Finding]:
        """Judge a usage report of ``payment_id`` answered ``status`` (now, or once due)."""
        payment = self._payments.get(payment_id)
        if payment is None or payment.api_key != api_key:
            return  # not seen issued, or another merchant's payment (the isolation checks)
        accepted = 200 <= status < 300
        if not accepted and status != self._conflict:
            return  # refused for another reason (its form, an amount over the maximum)
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
            return  # settled before (or while) the report was sent: X402-027's to judge
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


def _subject(payment_id: str) -> str:
    return f"x402 {payment_id}"
