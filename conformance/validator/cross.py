"""Checks across recorded exchanges: what one exchange alone cannot show.

``CrossExchangeChecks(profile)`` is fed every exchange in recording order (``observe``) and
judges it against what came before:

- Idempotency (profile 2): a request repeating an earlier successful request's Idempotency-Key
  (same API key) and fingerprint (method, path, query, body) got the stored status and body
  again, byte for byte (IDEM-007), marked with the profile's replay header (IDEM-008); the same
  key with another body (IDEM-010) or another method or path (IDEM-011) was refused.
- Authentication nonces (profile 1): a nonce the server accepted once with an API key was
  refused when sent again with that key within the clock window (AUTH-016).
- x402 (spec x402, profile 5): an authorization nonce the server settled for one payment was
  not settled for another (X402-016); the identical payload settled again got the same result
  (X402-023); a different payload for an already settled payment was refused (X402-024).
- States (profile 5): the statuses a payment, subscription or payout schedule shows in
  successive responses follow the profile's state machine. A step the traffic did not show may
  have happened (a deposit on chain, an expiry), so a change is judged against every state
  reachable from the last one seen; a transition operation the server accepted must start from
  a state that could have been the resource's.

Memory stays bounded whatever the recording's length: every table is an LRU capped at
``TABLE_LIMIT`` entries (keys, nonces, settled payments, resource states), holding digests, not
bodies. Past that cap the oldest entries are forgotten, so a replay or a reuse further apart
than ``TABLE_LIMIT`` distinct keys in the recording is not seen (docs/validate.md).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Generic, TypeVar

from conformance.core import contract as contract_module
from conformance.core.profile import Profile
from conformance.core.results import CheckResult, Outcome
from conformance.validator.checks import FAMILY, exchange_evidence
from conformance.validator.exchange import Exchange

TABLE_LIMIT = 100_000
"""Entries each table keeps (least recently used forgotten first)."""

IDEMPOTENCY_HEADER = contract_module.IDEMPOTENCY_HEADER
API_KEY_HEADER = "X-Api-Key"
NONCE_HEADER = "X-Nonce"
TIMESTAMP_HEADER = "X-Timestamp"
SETTLE = "settleX402Payment"

# Check names (the part of ``check_id`` before the exchange's source).
IDEMPOTENT_REPLAY = f"{FAMILY}.idempotent_replay"
AUTH_NONCE_REUSE = f"{FAMILY}.auth_nonce_reuse"
X402_NONCE_REUSE = f"{FAMILY}.x402_nonce_reuse"
STATE_TRANSITION = f"{FAMILY}.state_transition"

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
# A resource's status changing to one its state machine cannot reach: the requirements that say
# a refused transition leaves the resource unchanged (terminal states stay as they are).
ILLEGAL_CHANGE_IDS = {
    "payments": ("PAY-STATE-005", "PAY-STATE-009"),
    "subscriptions": ("SUB-STATE-003",),
    "payout_schedules": ("PAYOUT-STATE-006", "PAYOUT-STATE-009", "PAYOUT-STATE-012"),
}
# A transition operation accepted from a state it does not start from, as the suite names it.
REFUSED_TRANSITION_IDS = {
    "cancelSubscription": ("SUB-STATE-003",),
    "replacePayoutSchedule": ("PAYOUT-STATE-006",),
    "pausePayoutSchedule": ("PAYOUT-STATE-009",),
    "retirePayoutSchedule": ("PAYOUT-STATE-012",),
}
DEPOSIT = "testDepositPayment"

K = TypeVar("K")
V = TypeVar("V")


class BoundedTable(Generic[K, V]):
    """A mapping that keeps its ``limit`` most recently used entries."""

    def __init__(self, limit: int = TABLE_LIMIT) -> None:
        self.limit = limit
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self.limit:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


def _digest(*parts: bytes | str) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\x00")
    return h.digest()


def _json(raw: bytes) -> Any:
    if not raw or raw[:1] not in (b"{", b"["):
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _seconds(started_at: str | None) -> float | None:
    if not started_at:
        return None
    try:
        return datetime.fromisoformat(started_at.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() and len(text) < 20 else None


@dataclass(frozen=True, slots=True)
class _Stored:
    """An accepted request under an Idempotency-Key: its fingerprint and its response."""

    fingerprint: bytes  # digest of method, path, query and body
    target: bytes  # digest of method and path
    status: int
    body: bytes  # digest
    at: float | None
    source: str
    # Whether an answer without the replay header was seen: requests sent at once with one key
    # are recorded in start order, so the original execution need not come first.
    original_seen: bool


@dataclass(frozen=True, slots=True)
class _Settled:
    payment_id: str
    payload: bytes  # digest
    status: int
    body: bytes  # digest
    source: str


@dataclass(frozen=True, slots=True)
class _Seen:
    state: str
    source: str


class _StateMachine:
    """One resource's states and the states reachable from each (profile 5)."""

    def __init__(self, profile: Profile, resource: str) -> None:
        data = profile.data[resource]
        self.states = tuple(str(s) for s in data["states"])
        self.initial = str(data["initial_state"])
        self.transitions = {t.operation: t for t in profile.transitions(resource)}
        edges: dict[str, set[str]] = {s: set() for s in self.states}
        for t in self.transitions.values():
            for source in t.sources:
                edges.setdefault(source, set()).add(t.target)
        if resource == "payments":
            # Deposits (on chain, or by the deposit helper) and expiry happen without a
            # transition of the profile's table: a short deposit leads where accept-underpaid
            # starts, a full one where it ends; a pending payment expires by itself.
            accept = self.transitions.get("acceptUnderpaidPayment")
            if accept is not None:
                for source in accept.sources:
                    edges.setdefault(self.initial, set()).update({source, accept.target})
            expire = self.transitions.get("testExpirePayment")
            if expire is not None:
                for source in expire.sources:
                    edges.setdefault(source, set()).add(expire.target)
        self.reachable = {s: self._closure(s, edges) for s in edges}

    @staticmethod
    def _closure(start: str, edges: dict[str, set[str]]) -> frozenset[str]:
        seen = {start}
        todo = [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return frozenset(seen)


class CrossExchangeChecks:
    """Judges each exchange against the ones recorded before it (module docstring)."""

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self.profile = profile
        idem = profile.data["idempotency"]
        self._replay_header = str(idem["replay_header"])
        self._retention = float(idem["retention_secs"])
        self._reused = profile.error("idempotency", "reused")
        self._in_use = profile.error("idempotency", "in_use")
        auth = profile.data["auth"]
        self._auth_status = profile.error("auth", "error").status
        self._nonce_single_use = bool(auth.get("nonce_single_use", True))
        self._window = int(auth["clock_window_secs"])
        self._secrets = tuple(c.api_secret for c in profile.credentials)
        self._keys: BoundedTable[bytes, _Stored] = BoundedTable(limit)
        self._nonces: BoundedTable[bytes, tuple[int | None, str]] = BoundedTable(limit)
        self._x402_nonces: BoundedTable[str, _Settled] = BoundedTable(limit)
        self._settled: BoundedTable[str, _Settled] = BoundedTable(limit)
        self._states: BoundedTable[bytes, _Seen] = BoundedTable(limit)
        self._machines = {r: _StateMachine(profile, r) for r in RESOURCE_OPERATIONS}
        self._resource_of = {op: r for r, ops in RESOURCE_OPERATIONS.items() for op in ops}
        self._replayed = False  # set by _idempotency: the exchange replays a stored response

    # -- the public API --------------------------------------------------------------------
    def observe(self, exchange: Exchange, operation_id: str | None) -> list[CheckResult]:
        """Record ``exchange`` and return the cross-exchange checks it completes."""
        if exchange.status is None:
            return []  # no response: nothing the server did
        findings: list[tuple[str, tuple[str, ...], Outcome, str]] = []
        headers = _request_headers(exchange)
        findings += self._auth_nonce(exchange, headers)
        if operation_id is not None:
            self._replayed = False
            findings += self._idempotency(exchange, headers)
            if operation_id == SETTLE:
                findings += self._x402(exchange)
            resource = self._resource_of.get(operation_id)
            # a replay's body is the stored one: the resource as it was, not as it is
            marked = exchange.header(self._replay_header, response=True) or ""
            if resource is not None and not self._replayed and marked.lower() != "true":
                findings += self._state(exchange, operation_id, resource)
        if not findings:
            return []
        # evidence for failures only: the engine keeps a failure's, never a pass's
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
            )
            for check, ids, outcome, message in findings
            if ids
        ]

    def finish(self) -> list[CheckResult]:
        """Checks that need the whole recording: none so far (every check completes on the
        exchange that decides it)."""
        return []

    # -- idempotency -----------------------------------------------------------------------
    def _idempotency(
        self, exchange: Exchange, headers: dict[str, str]
    ) -> Iterator[tuple[str, tuple[str, ...], Outcome, str]]:
        key = headers.get(IDEMPOTENCY_HEADER.lower())
        status = exchange.status
        if not key or status is None or status == self._auth_status:
            return  # no key, or refused by authentication before the key was looked at
        scope = _digest(headers.get(API_KEY_HEADER.lower(), ""), key)
        fingerprint = _digest(exchange.method, exchange.path, exchange.query, exchange.request_body)
        stored = self._keys.get(scope)
        at = _seconds(exchange.started_at)
        then = stored.at if stored is not None else None
        if then is not None and at is not None and at - then > self._retention:
            stored = None  # past the retention: a first use again
        if stored is None:
            if 200 <= status < 300:
                self._keys.put(
                    scope,
                    _Stored(
                        fingerprint,
                        _digest(exchange.method, exchange.path),
                        status,
                        _digest(exchange.response_body),
                        at,
                        exchange.source,
                        not self._marked(exchange),
                    ),
                )
            return
        first = f"the request of {stored.source or 'an earlier exchange'}"
        if status == self._in_use.status and _code(exchange) == self._in_use.code:
            return  # recorded concurrently with the first: the key was still in use
        if stored.fingerprint == fingerprint:
            self._replayed = True
            same = status == stored.status and _digest(exchange.response_body) == stored.body
            yield (
                IDEMPOTENT_REPLAY,
                ("IDEM-007",),
                Outcome.PASSED if same else Outcome.FAILED,
                f"replay of {first} under Idempotency-Key {key!r}: "
                + (
                    "same status and body"
                    if same
                    else f"got {status} and another body, the stored response was "
                    f"{stored.status}"
                    + (
                        " with the same body"
                        if _digest(exchange.response_body) == stored.body
                        else ""
                    )
                ),
            )
            marked = self._marked(exchange)
            if not marked and not stored.original_seen:
                # the original execution, recorded after a replay that started before it
                self._keys.put(scope, replace(stored, original_seen=True))
                return
            yield (
                IDEMPOTENT_REPLAY,
                ("IDEM-008",),
                Outcome.PASSED if marked else Outcome.FAILED,
                f"replay of {first}: header {self._replay_header} "
                + ("is true" if marked else "missing or not true"),
            )
            return
        moved = _digest(exchange.method, exchange.path) != stored.target
        ids = ("IDEM-011",) if moved else ("IDEM-010",)
        what = "another method or path" if moved else "another body"
        refused = status == self._reused.status and (
            self._reused.code is None or _code(exchange) == self._reused.code
        )
        yield (
            IDEMPOTENT_REPLAY,
            ids,
            Outcome.PASSED if refused else Outcome.FAILED,
            f"Idempotency-Key {key!r} of {first} reused with {what}: got {status}"
            + ("" if refused else f", expected {self._reused.status} {self._reused.code or ''}"),
        )

    def _marked(self, exchange: Exchange) -> bool:
        return (exchange.header(self._replay_header, response=True) or "").lower() == "true"

    # -- authentication nonces -------------------------------------------------------------
    def _auth_nonce(
        self, exchange: Exchange, headers: dict[str, str]
    ) -> Iterator[tuple[str, tuple[str, ...], Outcome, str]]:
        nonce = headers.get(NONCE_HEADER.lower())
        api_key = headers.get(API_KEY_HEADER.lower())
        if not nonce or not api_key or not self._nonce_single_use:
            return
        accepted = exchange.status != self._auth_status
        timestamp = _int(headers.get(TIMESTAMP_HEADER.lower()))
        scope = _digest(api_key, nonce)
        earlier = self._nonces.get(scope)
        if earlier is not None:
            then, _source = earlier
            if then is not None and timestamp is not None and abs(timestamp - then) > self._window:
                earlier = None  # outside the clock window: the server may have forgotten it
        if earlier is None:
            if accepted:
                self._nonces.put(scope, (timestamp, exchange.source))
            return
        yield (
            AUTH_NONCE_REUSE,
            ("AUTH-016",),
            Outcome.FAILED if accepted else Outcome.PASSED,
            f"nonce already accepted with this API key in {earlier[1] or 'an earlier exchange'}: "
            + (f"accepted again ({exchange.status})" if accepted else "refused"),
        )

    # -- x402 settlement -------------------------------------------------------------------
    def _x402(self, exchange: Exchange) -> Iterator[tuple[str, tuple[str, ...], Outcome, str]]:
        body = _json(exchange.request_body)
        if not isinstance(body, dict):
            return
        payload = body.get("payment_payload")
        payment_id = body.get("payment_id")
        authorization = payload.get("authorization") if isinstance(payload, dict) else None
        nonce = authorization.get("nonce") if isinstance(authorization, dict) else None
        if not isinstance(payment_id, str) or not isinstance(nonce, str):
            return
        status = exchange.status or 0
        if status == self._auth_status:
            return  # refused by authentication: the settlement was never looked at
        accepted = 200 <= status < 300
        this = _Settled(
            payment_id,
            _digest(json.dumps(payload, sort_keys=True)),
            status,
            _digest(exchange.response_body),
            exchange.source,
        )
        earlier = self._x402_nonces.get(nonce)
        if earlier is not None and earlier.payment_id != payment_id:
            yield (
                X402_NONCE_REUSE,
                ("X402-016",),
                Outcome.FAILED if accepted else Outcome.PASSED,
                f"authorization nonce {nonce} settled for payment {earlier.payment_id} in "
                f"{earlier.source or 'an earlier exchange'}, sent for {payment_id}: "
                + (f"accepted ({status})" if accepted else f"refused ({status})"),
            )
        settled = self._settled.get(payment_id)
        if settled is not None:
            if settled.payload == this.payload:
                same = (status, this.body) == (settled.status, settled.body)
                yield (
                    X402_NONCE_REUSE,
                    ("X402-023",),
                    Outcome.PASSED if same else Outcome.FAILED,
                    f"payload settled in {settled.source or 'an earlier exchange'} sent again: "
                    + ("same result" if same else f"got {status} and another result"),
                )
            else:
                conflict = self.profile.data["x402"].get("settled_conflict", {}).get("status")
                # A refusal with another status (a malformed or unverifiable payload) was
                # decided before the settled state was looked at: no verdict on this rule.
                if accepted or conflict is None or status == conflict:
                    yield (
                        X402_NONCE_REUSE,
                        ("X402-024",),
                        Outcome.FAILED if accepted else Outcome.PASSED,
                        f"another payload for payment {payment_id}, settled in "
                        f"{settled.source or 'an earlier exchange'}: got {status}",
                    )
        if accepted:
            if settled is None:
                self._settled.put(payment_id, this)
            if earlier is None:
                self._x402_nonces.put(nonce, this)

    # -- states ----------------------------------------------------------------------------
    def _state(
        self, exchange: Exchange, operation_id: str, resource: str
    ) -> Iterator[tuple[str, tuple[str, ...], Outcome, str]]:
        status = exchange.status or 0
        if not 200 <= status < 300:
            return
        machine = self._machines[resource]
        seen = list(_resources(_json(exchange.response_body)))
        transition = machine.transitions.get(operation_id)
        target_id = _target_id(exchange, seen) if transition is not None else None
        if transition is not None and target_id is not None:
            before = self._states.get(_digest(resource, target_id))
            if before is not None and before.state in machine.reachable:
                possible = machine.reachable[before.state]
                ok = bool(possible & set(transition.sources))
                yield (
                    STATE_TRANSITION,
                    _refused_ids(operation_id, before.state, machine),
                    Outcome.PASSED if ok else Outcome.FAILED,
                    f"{operation_id} of {target_id}, {before.state} in {before.source}: "
                    + (
                        "accepted from a state it starts from"
                        if ok
                        else f"accepted, but it starts only from {', '.join(transition.sources)}"
                    ),
                )
        for rid, state in seen:
            key = _digest(resource, rid)
            before = self._states.get(key)
            self._states.put(key, _Seen(state, exchange.source))
            if before is None or before.state == state or before.state not in machine.reachable:
                continue
            ok = state in machine.reachable[before.state]
            yield (
                STATE_TRANSITION,
                ILLEGAL_CHANGE_IDS[resource],
                Outcome.PASSED if ok else Outcome.FAILED,
                f"{rid} was {before.state} in {before.source or 'an earlier exchange'}, now "
                f"{state}: "
                + (
                    "a change its state machine allows"
                    if ok
                    else f"{before.state} never leads to {state}"
                ),
            )


def _request_headers(exchange: Exchange) -> dict[str, str]:
    """The request's headers by lower-case name, the first of duplicates winning (as
    ``Exchange.header`` reads them)."""
    return {name.lower(): value for name, value in reversed(exchange.request_headers)}


def _code(exchange: Exchange) -> str | None:
    body = _json(exchange.response_body)
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


def _refused_ids(operation_id: str, before: str, machine: _StateMachine) -> tuple[str, ...]:
    if operation_id == "cancelPayment":
        canceled = machine.transitions[operation_id].target
        return ("PAY-STATE-004",) if before == canceled else ("PAY-STATE-005",)
    if operation_id == "acceptUnderpaidPayment":
        return ("PAY-STATE-008",) if before == machine.initial else ("PAY-STATE-009",)
    if operation_id == "testExpirePayment":
        return ILLEGAL_CHANGE_IDS["payments"]
    return REFUSED_TRANSITION_IDS.get(operation_id, ())
