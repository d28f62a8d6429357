"""Checks across recorded exchanges: what one exchange alone cannot show.

``CrossExchangeChecks(profile)`` is fed every exchange in recording order (``observe``) and
judges it against what came before:

- Idempotency (profile 2): a request repeating an earlier successful request's Idempotency-Key
  (same API key) and fingerprint (method, path, query, body) got the stored status and body
  again, byte for byte (IDEM-007), marked with the profile's replay header (IDEM-008); the same
  key with another body (IDEM-010) or another method or path (IDEM-011) was refused; a key whose
  uses were refused (IDEM-014), or another API key's (IDEM-015), was free: the judge's
  ``idempotency.KeyObserver``, as the idempotency family asks it.
- Authentication (profile 1): a nonce the server accepted once with an API key was refused when
  sent again with that key within the clock window (AUTH-016); signatures and timestamps are
  ``auth.AuthChecks``'s.
- x402 (spec x402, profile 5): a requirements nonce issued for one payment was not issued for
  another (X402-007); an authorization nonce the server settled for one payment was not settled
  for another (X402-016; unless it issued that nonce for both: X402-007's); the same settle
  request sent again got the same result (X402-023); a different payload for an already
  settled payment was refused (X402-024): ``judge.x402_history``, as the x402 family asks it;
  a settlement contradicting the requirements issued for its payment (recorded earlier, to the
  same API key) was refused (X402-014 to X402-020, ``judge.x402_settlements``).
- Tenant isolation: ids of one API key named by another (``isolation.TenantChecks``).
- Lists and statements: the order of payments, page walks, the figures of one statement
  window read several times (``walks.WalkChecks``).
- Order numbers: one payment per merchant_order_no and merchant (``orders.OrderChecks``).
- Webhook secrets: a rotation gives a secret the endpoint never had (``rotations``).
- A pause of a paused payout schedule changes nothing, not even updated_at (``pauses``).
- Deposits (test helper): a payment short of its quote stays underpaid, and accept-underpaid
  reports what the deposits paid (``deposits``).
- x402 usage reports: only for a settled upto payment (``usage``; a verdict waits until no
  settlement can have come first, and ``finish`` gives the ones still waiting).
- States (profile 5): the statuses a payment, subscription or payout schedule shows in
  successive responses follow the profile's state machine. A step the traffic did not show may
  have happened (a deposit on chain, an expiry), so a change is judged against every state
  reachable from the states seen before; a transition operation the profile allows from none
  of the states the resource could be in must be refused with its invalid_state error
  (``judge.lifecycle``).

Exchanges that overlap in time (start and duration recorded) have no order: the server may
have answered the later one first. States and repeated settlements are compared only with
exchanges that ended before this one started; without durations, the recording's order is
taken. A response body the recording does not hold leaves the checks that compare bodies "not
exercised" with the reason.

Memory stays bounded whatever the recording's length: every table is an LRU capped at
``TABLE_LIMIT`` entries (keys, nonces, settled and issued payments, resource states, id
owners), holding digests, not bodies. Past that cap the oldest entries are forgotten, so a
replay or a reuse further apart than ``TABLE_LIMIT`` distinct keys in the recording is not seen
(docs/validate.md).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from conformance.core import contract as contract_module
from conformance.core.profile import Profile
from conformance.core.results import CheckResult, Evidence, Outcome
from conformance.core.signing import API_KEY_HEADER, NONCE_HEADER, TIMESTAMP_HEADER
from conformance.judge.auth import NonceUse, NonceUses
from conformance.judge.idempotency import KeyObserver, KeyUse, is_marked, key_scope
from conformance.judge.lifecycle import StateMachine, change_findings, refusal_findings
from conformance.judge.tables import TABLE_LIMIT, BoundedTable, When, digest
from conformance.judge.values import digits, integer
from conformance.judge.x402_history import IssuedNonces, Settlement, X402History, result_digest
from conformance.judge.x402_settlements import (
    CLOCK_MARGIN_S,
    IssuedEntry,
    contradictions,
    settlement_findings,
)
from conformance.validator.auth import AuthChecks, answer_of
from conformance.validator.checks import FAMILY, exchange_evidence
from conformance.validator.deposits import DepositChecks
from conformance.validator.exchange import Exchange
from conformance.validator.findings import Call
from conformance.validator.isolation import CREATED, TenantChecks
from conformance.validator.orders import OrderChecks
from conformance.validator.pauses import PauseChecks
from conformance.validator.rotations import RotationChecks
from conformance.validator.tables import (
    Finding,
    Waiting,
    WaitingRoom,
    json_body,
    request_headers,
    seconds,
)
from conformance.validator.usage import UsageChecks
from conformance.validator.walks import WalkChecks

__all__ = ["TABLE_LIMIT", "BoundedTable", "CrossExchangeChecks"]

IDEMPOTENCY_HEADER = contract_module.IDEMPOTENCY_HEADER
SETTLE = "settleX402Payment"
USAGE = "reportX402Usage"

# Check names (the part of ``check_id`` before the exchange's source).
IDEMPOTENT_REPLAY = f"{FAMILY}.idempotent_replay"
REUSE_IDS = frozenset({"IDEM-010", "IDEM-011"})
AUTH_NONCE_REUSE = f"{FAMILY}.auth_nonce_reuse"
X402_NONCE_REUSE = f"{FAMILY}.x402_nonce_reuse"
X402_SETTLEMENT = f"{FAMILY}.x402_settlement"
X402_FRESH_NONCE = f"{FAMILY}.x402_fresh_nonce"
STATE_TRANSITION = f"{FAMILY}.state_transition"
ISSUE = "createX402Requirements"
CLOCKS_AGREE_S = 2.0
"""The issue time an x402 answer shows (its ``valid_before`` less the profile's offset, in
whole seconds) within this of the issue exchange's recorded span: the server's clock agrees with
the recorder's, and its settlements are judged with that margin (plus the second lost to
rounding and the issue exchange's duration) instead of ``CLOCK_MARGIN_S``."""
OBSERVATIONS_KEPT = 4
"""States kept per resource: when exchanges overlap in time, the last one recorded need not be
the last one the server answered."""

# Resources whose states the profile pins, and the operations whose responses show them.
RESOURCE_OPERATIONS = {
    "payments": (
        "createPayment",
        "listPayments",
        "cancelPayment",
        "acceptUnderpaidPayment",
        "testDepositPayment",
        "testExpirePayment",
    ),
    "subscriptions": ("createSubscription", "cancelSubscription"),
    "payout_schedules": (
        "createPayoutSchedule",
        "replacePayoutSchedule",
        "pausePayoutSchedule",
        "retirePayoutSchedule",
    ),
}
DEPOSIT = "testDepositPayment"
EARLIER = "an earlier exchange"


@dataclass(frozen=True, slots=True)
class _Settled:
    payment_id: str
    settlement: Settlement
    when: When
    api_key: str  # whose settlement it was


@dataclass(frozen=True, slots=True)
class _Issued:
    """The x402 requirements issued for one payment, and to which API key."""

    api_key: str
    entries: tuple[IssuedEntry, ...]
    source: str
    # Seconds by which the server's clock may differ from the recorder's: CLOCK_MARGIN_S, or
    # less when the issued valid_before showed the two clocks agree.
    margin: float = CLOCK_MARGIN_S


@dataclass(frozen=True, slots=True)
class _Seen:
    state: str
    source: str
    when: When


class CrossExchangeChecks:
    """Judges each exchange against the ones recorded before it (module docstring)."""

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self.profile = profile
        idem = profile.idempotency
        self._replay_header = idem.replay_header
        self._in_use = idem.in_use
        auth = profile.auth
        self._auth_statuses = auth.statuses
        self._nonce_single_use = auth.nonce_single_use
        x402 = profile.x402
        self._settle_failure = x402.settle_failure
        self._history = X402History(profile)
        self._valid_before_offset = x402.valid_before_offset_secs
        self._currencies = profile.currencies
        self._secrets = tuple(c.api_secret for c in profile.credentials)
        self._keys = KeyObserver(profile, limit=limit)
        # Ids created in the recording, and by which API key (IDEM-008 of a first use).
        self._first_start: float | None = None  # when the recording's first exchange began
        self._defaults = {
            "createPayment": float(profile.range("payments", "expires_in_secs").default or 0),
            "createX402Requirements": float(x402.valid_before_offset_secs),
        }
        self._created: BoundedTable[str, tuple[str, str]] = BoundedTable(limit)  # id: key, where
        self._x402_nonces: BoundedTable[str, _Settled] = BoundedTable(limit)
        self._settled: BoundedTable[str, _Settled] = BoundedTable(limit)
        self._issued: BoundedTable[str, _Issued] = BoundedTable(limit)
        self._nonces_issued = IssuedNonces(limit)
        self._states: BoundedTable[bytes, tuple[_Seen, ...]] = BoundedTable(limit)
        self._machines = {r: StateMachine.of(profile, r) for r in RESOURCE_OPERATIONS}
        self._resource_of = {op: r for r, ops in RESOURCE_OPERATIONS.items() for op in ops}
        self._auth = AuthChecks(profile)
        # the first use of a nonce with an API key
        self._nonces: BoundedTable[Hashable, NonceUse] = BoundedTable(limit)
        self._nonce_uses = NonceUses(self._auth.rules, self._nonces)
        # the operations whose answers the checks read (parsed once, for those only)
        self._reads_body = {
            ISSUE,
            USAGE,
            *self._resource_of,
            *TenantChecks.READS_BODY,
            *OrderChecks.READS_BODY,
            *RotationChecks.READS_BODY,
            *PauseChecks.READS_BODY,
            *DepositChecks.READS_BODY,
            *WalkChecks.READS_BODY,
        }
        self._tenants = TenantChecks(profile, limit=limit)
        self._walks = WalkChecks(profile, limit=limit)
        self._orders = OrderChecks(profile, limit=limit)
        self._rotations = RotationChecks(profile, limit=limit)
        self._pauses = PauseChecks(profile, limit=limit)
        self._waiting = WaitingRoom()
        self._usage = UsageChecks(profile, self._waiting, limit=limit)
        self._deposits = DepositChecks(profile, self._waiting, limit=limit)
        self._position = 0
        self._replayed = False  # set by _idempotency: the exchange replays a stored response

    # -- the public API --------------------------------------------------------------------
    def observe(self, exchange: Exchange, operation_id: str | None) -> list[CheckResult]:
        """Record ``exchange`` and return the cross-exchange checks it completes."""
        due, findings = self.judge(exchange, operation_id)
        return due + self.results(exchange, operation_id, findings)

    def judge(
        self, exchange: Exchange, operation_id: str | None
    ) -> tuple[list[CheckResult], list[Finding]]:
        """Record ``exchange``: the failures that waited for it (``tables.WaitingRoom``) and
        what the checks it completes found (``results`` makes them ``CheckResult``s)."""
        if exchange.status is None:
            return [], []  # no response: nothing the server did
        self._position += 1
        if self._first_start is None:
            self._first_start = seconds(exchange.started_at)
        start = seconds(exchange.started_at)
        end = None
        if start is not None and exchange.duration_ms is not None:
            end = start + exchange.duration_ms / 1000
        when = When(start, end, self._position)
        due = [self._waited(w) for w in self._waiting.due(when)] if self._waiting else []
        headers = request_headers(exchange)
        findings, nonce_seen = self._auth_nonce(exchange, headers)
        findings += self._auth.observe(exchange, headers, operation_id, start, nonce_seen)
        if operation_id is not None:
            self._replayed = False
            findings += self._idempotency(exchange, headers, when, operation_id)
            if any(reused_key(f) for f in findings):
                # an answer to a key it had to refuse as reused: another request's stored one,
                # or a request that had to be refused; nothing to learn from it
                return due, findings
            body = None
            if operation_id in self._reads_body and not exchange.response_body_missing:
                body = json_body(exchange.response_body)
            findings += self._tenants.observe(exchange, operation_id, headers, body)
            # a replay's body is the stored one: the resource as it was, not as it is
            replayed = self._replayed or self._marked(exchange)
            if not replayed:
                findings += self._walks.observe(exchange, operation_id, headers, body, when)
            if operation_id in CREATED:
                self._learn_created(exchange, operation_id, headers, body, replayed=replayed)

            def shown() -> Evidence:  # the exchange as a failure shows it, made for failures
                return exchange_evidence(exchange, self._secrets)

            if operation_id in OrderChecks.READS_BODY:
                findings += self._orders.observe(
                    exchange, operation_id, headers, body, replayed=replayed
                )
            if operation_id in RotationChecks.READS_BODY:
                findings += self._rotations.observe(
                    exchange, operation_id, headers, body, replayed=replayed
                )
            if operation_id in PauseChecks.READS_BODY:
                findings += self._pauses.observe(
                    exchange, operation_id, body, when, replayed=replayed
                )
            if operation_id in DepositChecks.READS_BODY:
                findings += self._deposits.observe(
                    exchange, operation_id, headers, body, when, replayed=replayed, shown=shown
                )
            if operation_id == SETTLE:
                findings += self._x402(exchange, headers, when)
            elif operation_id == ISSUE:
                findings += self._issue(exchange, headers, body)
            elif operation_id == USAGE:
                findings += self._usage_report(exchange, headers, when, shown, body)
            resource = self._resource_of.get(operation_id)
            if resource is not None and not replayed:
                findings += self._state(exchange, operation_id, resource, body, when)
        return due, findings

    def results(
        self, exchange: Exchange, operation_id: str | None, findings: Sequence[Finding]
    ) -> list[CheckResult]:
        """``findings`` of ``exchange`` (from ``judge``) as results, failures with the exchange
        as evidence (the engine keeps a failure's, never a pass's)."""
        if not findings:
            return []
        failing = any(outcome is Outcome.FAILED for _, _, outcome, _ in findings)
        evidence = exchange_evidence(exchange, self._secrets) if failing else None
        where = f" {exchange.source}" if exchange.source else ""
        return [
            CheckResult(
                check_id=f"{check}{where}",
                family=FAMILY,
                requirement_ids=ids,
                outcome=outcome,
                message=message,
                operation_id=operation_id,
                evidence=evidence if outcome is Outcome.FAILED else None,
                reason_not_exercised=message if outcome is Outcome.NOT_EXERCISED else None,
            )
            for check, ids, outcome, message in findings
            if ids
        ]

    def finish(self) -> list[CheckResult]:
        """Checks that need the whole recording: the failures still waiting for an exchange
        that could have come first (``tables.WaitingRoom``)."""
        return [self._waited(w) for w in self._waiting.remaining()]

    @staticmethod
    def _waited(waiting: Waiting) -> CheckResult:
        where = f" {waiting.source}" if waiting.source else ""
        return CheckResult(
            check_id=f"{waiting.check}{where}",
            family=FAMILY,
            requirement_ids=waiting.ids,
            outcome=Outcome.FAILED,
            message=waiting.message,
            operation_id=waiting.operation_id,
            evidence=waiting.evidence,
        )

    def _usage_report(
        self,
        exchange: Exchange,
        headers: dict[str, str],
        when: When,
        shown: Callable[[], Evidence],
        body: Any,
    ) -> Iterator[Finding]:
        parts = exchange.path.strip("/").split("/")
        status = exchange.status or 0
        if len(parts) < 2 or status in self._auth_statuses:
            return
        api_key = headers.get(API_KEY_HEADER.lower(), "")
        call = Call(exchange, USAGE, {"payment_id": unquote(parts[-2])}, status, body)
        yield from self._usage.report(call, api_key, when, exchange.source, shown)

    def _learn_created(
        self,
        exchange: Exchange,
        operation_id: str,
        headers: dict[str, str],
        body: Any,
        *,
        replayed: bool,
    ) -> None:
        """Remember the ids a create answered, and to which API key (``_marked_first``). A
        replay's creation may predate the recording: one recorded as a replay of a recorded
        request is not learnt, one only marked as a replay is when the answer shows it created
        after the recording began (less ``CLOCK_MARGIN_S``)."""
        created = CREATED.get(operation_id)
        if created is None or not isinstance(body, dict) or self._replayed:
            return
        if replayed:
            moment = _created_at(operation_id, exchange, body, self._defaults)
            first = self._first_start
            if moment is None or first is None or moment < first - CLOCK_MARGIN_S:
                return
        ident = body.get(created[1])
        if isinstance(ident, str) and 200 <= (exchange.status or 0) < 300:
            api_key = headers.get(API_KEY_HEADER.lower(), "")
            self._created.put(ident, (api_key, exchange.source))

    # -- idempotency -----------------------------------------------------------------------
    def _idempotency(
        self, exchange: Exchange, headers: dict[str, str], when: When, operation_id: str
    ) -> Iterator[Finding]:
        """The rules across the requests sharing a key (``judge.idempotency.KeyObserver``)."""
        key = headers.get(IDEMPOTENCY_HEADER.lower())
        status = exchange.status
        if not key or status is None or status in self._auth_statuses:
            return  # no key, or refused by authentication before the key was looked at
        api_key = headers.get(API_KEY_HEADER.lower(), "")
        scope = key_scope(api_key, key)
        if self._waiting:  # the original of a replay that waits, recorded after it
            self._waiting.withdraw(scope.hex(), when)
        missing = exchange.response_body_missing
        marked = self._marked(exchange)
        verdict = self._keys.observe(
            KeyUse(
                api_key,
                key,
                exchange.method,
                exchange.path,
                exchange.query,
                exchange.request_body,
                status,
                _code(exchange) if 400 <= status < 500 and not missing else None,
                exchange.response_body,
                marked,
                when.start,
                exchange.source,
                missing,
            )
        )
        self._replayed = verdict.replayed
        if verdict.first_use and marked and 200 <= status < 300:
            self._marked_first(exchange, key, api_key, scope, when, operation_id)
        for found in verdict.findings:
            yield (IDEMPOTENT_REPLAY, found.ids, found.outcome, found.message)

    def _marked_first(
        self,
        exchange: Exchange,
        key: str,
        api_key: str,
        scope: bytes,
        when: When,
        operation_id: str,
    ) -> None:
        """IDEM-008 for the first use of a key marked as a replay: a failure when the request
        acts on a resource created in the recording by this API key, so that every request on
        it is recorded and none stored a response under this key. It waits until no request
        with the key recorded later can have been the original."""
        parts = exchange.path.strip("/").split("/")
        created = next(
            (
                (part, made)
                for part in parts[1:]
                if (made := self._created.get(part)) is not None and made[0] == api_key
            ),
            None,
        )
        if created is None:
            return
        ident, (_, source) = created
        message = (
            f"first use of Idempotency-Key {key!r}, on {ident} created in {source or EARLIER} "
            f"(every request on it recorded since): answered {exchange.status} with "
            f"{self._replay_header} true, as a replay"
        )
        self._waiting.add(
            Waiting(
                scope.hex(),
                when,
                exchange.source,
                IDEMPOTENT_REPLAY,
                ("IDEM-008",),
                message,
                operation_id,
                exchange_evidence(exchange, self._secrets),
            )
        )

    def _marked(self, exchange: Exchange) -> bool:
        """The response carries the replay marker (never, when the profile declares none)."""
        if not self._replay_header:
            return False
        return is_marked(exchange.header(self._replay_header, response=True))

    # -- authentication nonces -------------------------------------------------------------
    def _auth_nonce(
        self, exchange: Exchange, headers: dict[str, str]
    ) -> tuple[list[Finding], bool]:
        """AUTH-016, and whether the nonce was sent before with this API key within the clock
        window (then a refusal may be for the nonce alone)."""
        nonce = headers.get(NONCE_HEADER.lower())
        api_key = headers.get(API_KEY_HEADER.lower())
        status = exchange.status
        if not nonce or not api_key or not self._nonce_single_use or status is None:
            return [], False
        # a request whose signature does not verify takes no nonce, whatever the answer
        forged = self._auth.forged(exchange, headers)
        text = headers.get(TIMESTAMP_HEADER.lower())
        breach, seen = self._nonce_uses.observe(
            digest(api_key, nonce),
            None if text is None else self._auth.rules.timestamp(text),
            exchange.source or EARLIER,
            accepted=status not in self._auth_statuses and not forged,
        )
        if breach is None or forged:
            return [], seen  # a forged one may be refused for its signature: AUTH-013 judges it
        verdict = self._auth.rules.refusal(breach, status, answer_of(exchange), known_valid=False)
        return [(AUTH_NONCE_REUSE, f.ids, f.outcome, f.message) for f in verdict], True

    # -- x402 settlement -------------------------------------------------------------------
    def _issue(self, exchange: Exchange, headers: dict[str, str], body: Any) -> Iterator[Finding]:
        """Remember the requirements issued for a payment: what its settlement must answer;
        their nonces were not issued for another payment before (X402-007)."""
        status = exchange.status or 0
        if not 200 <= status < 300 or not isinstance(body, dict):
            return
        payment_id = body.get("payment_id")
        accepts = body.get("accepts")
        if not isinstance(payment_id, str) or not isinstance(accepts, list):
            return
        for finding in self._nonces_issued.issued(payment_id, accepts, exchange.source):
            yield finding._replace(check=X402_FRESH_NONCE)
        entries = tuple(e for e in (IssuedEntry.of(item) for item in accepts) if e is not None)
        if entries:
            api_key = headers.get(API_KEY_HEADER.lower(), "")
            margin = self._clock_margin(exchange, accepts)
            self._issued.put(payment_id, _Issued(api_key, entries, exchange.source, margin))
            schemes = frozenset(e.scheme for e in entries)
            request = json_body(exchange.request_body)
            currency_id = request.get("currency_id") if isinstance(request, dict) else None
            currency = self._currencies.get(currency_id) if isinstance(currency_id, str) else None
            decimals = currency.decimals if currency is not None else None
            self._usage.issued(payment_id, api_key, schemes, exchange.source, decimals)

    def _clock_margin(self, exchange: Exchange, accepts: list[Any]) -> float:
        """The margin for the server's clock that an issue exchange shows (``_Issued``)."""
        start = seconds(exchange.started_at)
        stamps = {a.get("valid_before") for a in accepts if isinstance(a, dict)}
        stamp = stamps.pop() if len(stamps) == 1 else None
        if start is None or exchange.duration_ms is None or not integer(stamp):
            return CLOCK_MARGIN_S
        issued_at = stamp - self._valid_before_offset
        took = exchange.duration_ms / 1000
        if not start - 1 - CLOCKS_AGREE_S <= issued_at <= start + took + CLOCKS_AGREE_S:
            return CLOCK_MARGIN_S
        return CLOCKS_AGREE_S + 1 + took

    def _x402(self, exchange: Exchange, headers: dict[str, str], when: When) -> Iterator[Finding]:
        body = json_body(exchange.request_body)
        if not isinstance(body, dict):
            return
        payload = body.get("payment_payload")
        payment_id = body.get("payment_id")
        authorization = payload.get("authorization") if isinstance(payload, dict) else None
        nonce = authorization.get("nonce") if isinstance(authorization, dict) else None
        status = exchange.status or 0
        if not isinstance(payment_id, str) or status in self._auth_statuses:
            return  # refused by authentication: the settlement was never looked at
        if 200 <= status < 300:
            value = authorization.get("value") if isinstance(authorization, dict) else None
            authorised = int(value) if digits(value) else None
            self._usage.settled(payment_id, when, authorised)
        if isinstance(authorization, dict):
            yield from self._against_issued(exchange, headers, body, authorization, when.start)
        if not isinstance(nonce, str):
            return
        accepted = 200 <= status < 300
        result = None if exchange.response_body_missing else _result(exchange)
        this = _Settled(
            payment_id,
            Settlement.of(body, status, result, exchange.source),
            when,
            headers.get(API_KEY_HEADER.lower(), ""),
        )
        earlier = self._x402_nonces.get(nonce)
        if (
            earlier is not None
            and earlier.payment_id != payment_id
            and not self._issued_nonce(payment_id, nonce)  # then issued twice: X402-007's
        ):
            yield (
                X402_NONCE_REUSE,
                ("X402-016",),
                Outcome.FAILED if accepted else Outcome.PASSED,
                f"authorization nonce {nonce} settled for payment {earlier.payment_id} in "
                f"{earlier.settlement.where}, sent for {payment_id}: "
                + (f"accepted ({status})" if accepted else f"refused ({status})"),
            )
        settled = self._settled.get(payment_id)
        code = _code(exchange)
        in_use = status == self._in_use.status and (result is None or code == self._in_use.code)
        # Sent while the settlement was still being answered (overlapping in time, or its
        # Idempotency-Key still in use): no order between the two, no verdict.
        # Another merchant's settle of the payment is not it sent again (the isolation checks).
        mine = settled is not None and settled.api_key == this.api_key
        if settled is not None and mine and when.after(settled.when) and not in_use:
            for finding in self._history.settle(
                settled.settlement, body, status, code, result, known_valid=False
            ):
                yield finding._replace(check=X402_NONCE_REUSE)
        if accepted:
            if settled is None:
                self._settled.put(payment_id, this)
            if earlier is None:
                self._x402_nonces.put(nonce, this)

    def _issued_nonce(self, payment_id: str, nonce: str) -> bool:
        """``nonce`` is one the requirements issued for ``payment_id`` carry."""
        issued = self._issued.get(payment_id)
        return issued is not None and any(e.has_nonce(nonce) for e in issued.entries)

    def _against_issued(
        self,
        exchange: Exchange,
        headers: dict[str, str],
        body: dict[str, Any],
        authorization: dict[str, Any],
        now: float | None,
    ) -> Iterator[Finding]:
        """A settlement that contradicts the requirements issued for its payment (recorded
        earlier, to the same API key): the judge's verdict (``x402_settlements``)."""
        issued = self._issued.get(str(body["payment_id"]))
        if issued is None or issued.api_key != headers.get(API_KEY_HEADER.lower(), ""):
            return  # not seen issued, or another merchant's payment (the isolation checks)
        broken = contradictions(
            issued.entries, body.get("payment_requirements"), authorization, now, issued.margin
        )
        if not broken:
            return
        status = exchange.status or 0
        answer = None if exchange.response_body_missing else json_body(exchange.response_body)
        for finding in settlement_findings(
            broken,
            Call(exchange, SETTLE, {}, status, answer),
            self._settle_failure,
            known_valid=False,
            what=f"settlement of payment {body['payment_id']} against the requirements issued "
            f"in {issued.source or EARLIER}",
        ):
            yield finding._replace(check=X402_SETTLEMENT)

    # -- states ----------------------------------------------------------------------------
    def _state(
        self, exchange: Exchange, operation_id: str, resource: str, body: Any, when: When
    ) -> Iterator[Finding]:
        status = exchange.status or 0
        machine = self._machines[resource]
        seen = list(_resources(body)) if 200 <= status < 300 else []
        if operation_id in machine.operations:
            target_id = _target_id(exchange, seen)
            if target_id is not None:
                before = self._earlier(digest(resource, target_id), when, machine)
                call = Call(exchange, operation_id, {}, status, body)
                where = ", ".join(f"{s.state} in {s.source or EARLIER}" for s in before)
                for finding in refusal_findings(
                    machine,
                    machine.possible([s.state for s in before]),
                    call,
                    known_valid=False,
                    resource_id=f"{target_id} (seen {where})",
                ):
                    yield finding._replace(check=STATE_TRANSITION)
        for rid, state in seen:
            key = digest(resource, rid)
            history = self._states.get(key) or ()
            before = self._earlier(key, when, machine)
            self._states.put(
                key, (*history[1 - OBSERVATIONS_KEPT :], _Seen(state, exchange.source, when))
            )
            if all(s.state == state for s in before):
                continue
            found = [
                f
                for s in before
                for f in change_findings(machine, rid, s.state, state, s.source or EARLIER)
            ]
            if found:
                failed = [f for f in found if f.outcome is Outcome.FAILED]
                yield (failed or found)[0]._replace(check=STATE_TRANSITION)

    def _earlier(self, key: bytes, when: When, machine: StateMachine) -> list[_Seen]:
        """The states a resource showed in exchanges that ended before this one began: each
        held at some time before it, so each must lead to what it shows. States shown by
        exchanges that overlap this one in time are not compared (no order between them)."""
        history = self._states.get(key) or ()
        return [s for s in history if when.after(s.when) and s.state in machine.reachable]


def _created_at(
    operation_id: str, exchange: Exchange, body: dict[str, Any], defaults: dict[str, float]
) -> float | None:
    """When the server says it created what a create answered (Unix seconds), None when the
    answer does not show it: its ``created_at``, or the time it derived a field from."""
    if isinstance(body.get("created_at"), str):
        return seconds(body["created_at"])
    request = json_body(exchange.request_body)
    asked = request if isinstance(request, dict) else {}
    if operation_id == "createPayment":
        expires, lifetime = seconds(body.get("expires_at")), asked.get("expires_in_secs")
        lifetime = lifetime if integer(lifetime) else defaults[operation_id]
        return expires - lifetime if expires is not None else None
    if operation_id == "createSubscription":
        bill, interval = seconds(body.get("next_bill_at")), asked.get("interval_secs")
        return bill - interval if bill is not None and integer(interval) else None
    if operation_id == "createX402Requirements":
        accepts = body.get("accepts")
        entry = accepts[0] if isinstance(accepts, list) and accepts else None
        before = entry.get("valid_before") if isinstance(entry, dict) else None
        return before - defaults[operation_id] if integer(before) else None
    return None


def _result(exchange: Exchange) -> bytes:
    return result_digest(json_body(exchange.response_body), exchange.response_body)


def _code(exchange: Exchange) -> str | None:
    body = json_body(exchange.response_body)
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, str) else None


def _resources(body: Any) -> Iterable[tuple[str, str]]:
    """(id, status) of the resource a response carries, or of each one a list carries."""
    if not isinstance(body, dict):
        return
    if isinstance(body.get("id"), str) and isinstance(body.get("status"), str):
        yield body["id"], body["status"]
        return
    for value in body.values():
        if isinstance(value, list):
            for item in value:
                if (
                    isinstance(item, dict)
                    and isinstance(item.get("id"), str)
                    and isinstance(item.get("status"), str)
                ):
                    yield item["id"], item["status"]


def _target_id(exchange: Exchange, seen: list[tuple[str, str]]) -> str | None:
    """The id of the resource a transition operation acted on: the one its response shows,
    else the path segment after the collection."""
    if len(seen) == 1:
        return seen[0][0]
    parts = [p for p in exchange.path.split("/") if p]
    return parts[-2] if len(parts) >= 2 else None


def reused_key(finding: Finding) -> bool:
    """``finding`` says a key reused with another request was not refused (IDEM-010, IDEM-011):
    the answer is no answer to that request; only the reuse rule judges it."""
    check, ids, outcome, _ = finding
    return check == IDEMPOTENT_REPLAY and outcome is Outcome.FAILED and bool(REUSE_IDS & set(ids))
