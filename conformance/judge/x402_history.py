"""Later requests on an x402 payment, judged against what its earlier exchanges showed
(profile 5): the settlement that settled it and the requirements issued for it.

- The nonces of issued requirements were issued for no other payment before (X402-007:
  ``IssuedNonces``).
- The identical settle request sent again answers the first result (X402-023); another payload
  for the settled payment is refused with the profile's settled conflict (X402-024).
- A usage report of a payment that is not a settled payment of the usage scheme is refused with
  ``status.invalid_state`` (X402-025; ``x402.usage_requires``); one over the value the payer
  authorised in the settled authorization with ``status.business_rule`` (X402-026); an accepted
  one answers that value as ``max_raw`` and the reported amount in raw units as ``actual_raw``
  (X402-027).

The x402 family knows the history from its model (and builds its requests valid but for the
rule: ``known_valid``); the validator from the recording's earlier exchanges, as digests
(``Settlement``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.judge.answers import Call
from conformance.judge.findings import Finding, passed, verdict
from conformance.judge.outcomes import malformed_refusal
from conformance.judge.payment_rules import expected_raw
from conformance.judge.tables import TABLE_LIMIT, BoundedTable, digest
from conformance.judge.values import canonical
from conformance.judge.x402_rules import (
    Refusal,
    settle_result,
    usage_against_payment,
    usage_scheme,
)

FRESH_NONCE = "x402_fresh_nonce"
SETTLED = "x402_settled_again"
USAGE_STATE = "x402_usage_state"
USAGE_ANSWER = "x402_usage_answer"
USAGE = "reportX402Usage"


def result_digest(answer: Any, body: bytes) -> bytes:
    """A settle answer's result (``settle_result``) as a digest, or its bytes' when it is no
    JSON object."""
    result = settle_result(answer)
    return digest(body) if result is None else digest(canonical(result))


class IssuedNonces:
    """The requirements nonces issued, each for which payment and where (digests of the nonces
    in lower case, in a table that may forget the oldest)."""

    def __init__(self, limit: int = TABLE_LIMIT) -> None:
        self._issued: BoundedTable[bytes, tuple[str, str]] = BoundedTable(limit)

    def issued(self, payment_id: str, accepts: Sequence[Any], where: str) -> Iterator[Finding]:
        """Requirements issued for ``payment_id`` (``accepts``; in ``where``): each nonce was
        not issued for another payment (a replay of the issue answers the same payment)."""
        for item in accepts:
            nonce = item.get("nonce") if isinstance(item, Mapping) else None
            if not isinstance(nonce, str) or not nonce:
                continue
            key = digest(nonce.lower())
            earlier = self._issued.get(key)
            if earlier is not None and earlier[0] != payment_id:
                message = (
                    f"nonce {nonce} of {payment_id} was issued for {earlier[0]} in {earlier[1]}"
                )
                yield Finding(FRESH_NONCE, ("X402-007",), Outcome.FAILED, message)
                continue
            yield passed(FRESH_NONCE, ("X402-007",))
            if earlier is None:
                self._issued.put(key, (payment_id, where or "an earlier exchange"))


@dataclass(frozen=True, slots=True)
class Settlement:
    """An accepted settlement, as a later settle request for its payment is judged against it."""

    request: bytes  # digest of the whole request body
    payload: bytes  # digest of its payment_payload
    status: int
    result: bytes | None  # ``result_digest``; None: the answer's body is not known
    where: str = "an earlier exchange"

    @classmethod
    def of(
        cls, request: Mapping[str, Any], status: int, result: bytes | None, where: str
    ) -> Settlement:
        return cls(
            digest(canonical(request)),
            digest(canonical(request.get("payment_payload"))),
            status,
            result,
            where or "an earlier exchange",
        )


@dataclass(frozen=True, slots=True)
class Payment:
    """What earlier exchanges showed of one x402 payment, as a usage report of it is judged."""

    schemes: frozenset[str]  # of the requirements issued for it
    decimals: int | None  # of its currency
    settled: bool = False
    authorised: int | None = None  # the value of the settled authorization (None: not known)
    used: int = 0  # raw units of the usage reports accepted before (0: not counted)


class X402History:
    """The profile's answers to later requests on an x402 payment."""

    def __init__(self, profile: Profile) -> None:
        x402 = profile.x402
        invalid_state = profile.error("status", "invalid_state")
        self.conflict = Refusal.of(profile, x402.settled_conflict, kin=(invalid_state,))
        self.failure = Refusal.of(profile, x402.settle_failure)
        self.invalid_state = Refusal.of(profile, invalid_state)
        self.over = Refusal.of(profile, profile.error("status", "business_rule"))
        self._malformed = malformed_refusal(profile)
        self.usage_scheme = usage_scheme(profile)
        self._usage_success = profile.success_status(USAGE)

    # -- settlement ------------------------------------------------------------------------
    def settle(
        self,
        settled: Settlement,
        request: Mapping[str, Any],
        status: int,
        code: str | None,
        result: bytes | None,
        *,
        known_valid: bool,
        also: Sequence[Refusal] = (),
    ) -> list[Finding]:
        """A settle ``request`` for a payment ``settled`` before, answered ``status`` with
        ``code`` and ``result`` (``result_digest``; None: not known). ``also``: refusals the
        request earns too (a payload that does not verify), each as good an answer."""
        again = Settlement.of(request, status, result, "")
        what = f"the settle request of {settled.where}"
        if again.request == settled.request:
            if not known_valid and self._malformed.matches(status, code):
                return []  # refused for its form: decided before the settlement was looked at
            if status == settled.status and None in (result, settled.result):
                reason = "the body of one of the two answers is not known"
                message = f"{what} sent again: {reason}"
                return [Finding(SETTLED, ("X402-023",), Outcome.NOT_EXERCISED, message)]
            same = (status, result) == (settled.status, settled.result)
            outcome = Outcome.PASSED if same else Outcome.FAILED
            message = f"{what} sent again: " + (
                "the same result" if same else f"answered {status} and another result"
            )
            return [Finding(SETTLED, ("X402-023",), outcome, message)]
        if again.payload == settled.payload:
            return []
        what = f"another payload for the payment settled by {what}"
        for refusal in also:
            found = refusal.verdict(SETTLED, ("X402-024",), status, code, what, known_valid=False)
            if found is not None and found.outcome is Outcome.PASSED:
                return [found]
        found = self.conflict.verdict(
            SETTLED, ("X402-024",), status, code, what, known_valid=known_valid
        )
        return [] if found is None else [found]

    # -- usage -----------------------------------------------------------------------------
    def takes_usage(self, payment: Payment) -> bool:
        """The payment is of the scheme a usage report needs (settled or not)."""
        return self.usage_scheme is not None and self.usage_scheme in payment.schemes

    def usage(self, payment: Payment, call: Call, *, known_valid: bool) -> list[Finding]:
        """A usage report ``call`` of ``payment``. ``known_valid``: the report is valid but for
        what ``payment`` makes of it (the suite built it so)."""
        status, amount = call.status, call.field("actual_amount")
        if not self.takes_usage(payment) or not payment.settled:
            state = "settled" if payment.settled else "not settled"
            what = f"usage report of a {state} {'/'.join(sorted(payment.schemes))} payment"
            return self._refused(self.invalid_state, "X402-025", call, what, known_valid)
        authorised, decimals = payment.authorised, payment.decimals
        if authorised is None or decimals is None:
            return []  # the settled value, or the currency, is not known
        actual = expected_raw(amount, decimals)
        if call.success:
            # a recorded answer may not be known; one the suite got is wrong unless an object
            answer = (
                call.answer if isinstance(call.answer, Mapping) else {} if known_valid else None
            )
            if actual is None or answer is None:
                return []
            found = [
                verdict(USAGE_ANSWER, ids, problem)
                for ids, problem in usage_against_payment(
                    amount, answer, decimals=decimals, authorised=authorised
                )
            ]
            if known_valid and status != self._usage_success:
                message = f"usage of {amount}: answered {status}, not {self._usage_success}"
                found.append(Finding(USAGE_ANSWER, ("X402-027",), Outcome.FAILED, message))
            return found
        if actual is not None and actual > authorised:
            what = f"usage of {amount} ({actual} raw units) over the authorised {authorised}"
            return self._refused(self.over, "X402-026", call, what, known_valid)
        if actual is not None and payment.used + actual > authorised:
            # The reports add up to more than was authorised: the profile bounds each report,
            # not their sum, but a server that bounds the sum is within it too.
            what = f"usage of {amount}, over the {authorised - payment.used} raw units left"
            found = self._refused(self.over, "X402-026", call, what, known_valid)
            if found and found[0].outcome is Outcome.PASSED:
                return found
        if not known_valid:
            return []
        message = f"usage of {amount}: answered {status}, expected {self._usage_success}"
        return [Finding(USAGE_ANSWER, ("X402-027",), Outcome.FAILED, message)]

    @staticmethod
    def _refused(
        refusal: Refusal, rid: str, call: Call, what: str, known_valid: bool
    ) -> list[Finding]:
        found = refusal.verdict(
            USAGE_STATE, (rid,), call.status, call.code, what, known_valid=known_valid
        )
        return [] if found is None else [found]
