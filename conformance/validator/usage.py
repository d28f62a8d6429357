"""x402 usage reports seen across recorded exchanges: only a settled upto payment takes one,
up to the value its payer authorised (``judge.x402_history``, as the x402 family asks it).

``UsageChecks`` is told the x402 payments whose requirements were issued (their schemes, the
decimals of their currency, and to which API key) and the settlements accepted (the value of the
authorization), and has the judge judge each usage report of a payment issued in the recording
to the same API key. An acceptance of a payment of the usage scheme with no accepted settlement
recorded before it fails only once no settlement can have come first: the verdict waits until
an exchange starts after the report ended (exchanges overlapping in time have no order), and an
accepted settlement of the payment overlapping the report withdraws it.

The recording is taken as holding the payment's whole history from its issue on (a settlement
is an API call of the same API key): a payment issued before the recording began is not
judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from conformance.core.profile import Profile
from conformance.core.results import Evidence, Outcome
from conformance.judge.tables import TABLE_LIMIT, BoundedTable
from conformance.judge.x402_history import Payment, X402History
from conformance.validator.checks import FAMILY
from conformance.validator.findings import Call
from conformance.validator.tables import Finding, Moment, Waiting, WaitingRoom

USAGE = "reportX402Usage"


@dataclass(frozen=True, slots=True)
class _Payment:
    api_key: str
    payment: Payment
    source: str
    settled: Moment | None = None  # when an accepted settlement of it happened


class UsageChecks:
    """The x402 payments issued and settled, and the usage reports their state forbids."""

    def __init__(self, profile: Profile, waiting: WaitingRoom, *, limit: int = TABLE_LIMIT) -> None:
        self._judge = X402History(profile)
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
            self._payments.put(payment_id, _Payment(api_key, Payment(schemes, decimals), source))

    def settled(self, payment_id: str, when: Moment, authorised: int | None) -> None:
        """An accepted settlement of ``payment_id`` authorising ``authorised`` raw units: a
        waiting report it overlaps is withdrawn."""
        known = self._payments.get(payment_id)
        if known is not None and known.settled is None:
            payment = replace(known.payment, settled=True, authorised=authorised)
            self._payments.put(payment_id, replace(known, payment=payment, settled=when))
        self._waiting.withdraw(_subject(payment_id), when)

    def report(
        self, call: Call, api_key: str, when: Moment, source: str, shown: Callable[[], Evidence]
    ) -> Iterator[Finding]:
        """Judge a usage report ``call`` (now, or once due)."""
        payment_id = call.path_params["payment_id"]
        known = self._payments.get(payment_id)
        if known is None or known.api_key != api_key:
            return  # not seen issued, or another merchant's payment (the isolation checks)
        found = self._judge.usage(known.payment, call, known_valid=False)
        where = known.source or "an earlier exchange"
        for check, ids, outcome, message in found:
            message = f"{message} ({payment_id}, issued in {where})"
            if (
                outcome is Outcome.FAILED
                and call.success
                and known.settled is None
                and self._judge.takes_usage(known.payment)
            ):  # a settlement recorded later may have come first
                subject = _subject(payment_id)
                check = f"{FAMILY}.{check}"
                self._waiting.add(
                    Waiting(subject, when, source, check, ids, message, USAGE, shown())
                )
                continue
            yield (f"{FAMILY}.{check}", ids, outcome, message)


def _subject(payment_id: str) -> str:
    return f"x402 {payment_id}"
