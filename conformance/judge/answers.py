"""Checks of an accepted exchange's answer against its own request (profile 5 and 6).

``AnswerChecks(profile)`` reads once what the profile decides (currencies and their decimals,
the clock window, list limits, the state each transition leads to) and ``judge(call)`` compares
one answer with the request that caused it, as the suite's families check the same rules (same
requirement ids, the same pure functions where they exist):

- times the server computes from the request: ``expires_at`` (PAY-010, PAY-011) and an x402
  ``valid_before`` (X402-008) against the request's time (``times.derived_time``: the windows
  the call gives, the profile's clock window and a minute of latency around each time the
  request was sent, so a server clock within the window never fails);
- payout schedules and subscriptions (PAYOUT-001, -002, -004, -006, -010 to -012, SUB-004,
  SUB-005): ``schedule_rules``, which the schedules family uses too;
- amounts: a raw amount is the decimal amount times 10^decimals of the currency (X402-005), a
  created payment's quotes are the requested ones with their currency's names and deployments
  (PAY-006 to PAY-009, FIX-003, FIX-004: ``payment_quotes``), a listed or canceled one's have
  the names and deployments;
- lists: the status and merchant_order_no filters and the limit (PAY-014 to PAY-016);
- statements, page by page (STMT-*: places, signs, order, window, running balances, the
  opening balance before a first page's first line, the size a page states, count, cursor,
  closing balance and ``reconciles`` when the page is the whole window);
- x402 (``x402_rules``): requirements follow the request and the profile (X402-001 to -006,
  -008 to -010, -029, OPS-030), a settlement and a usage report echo theirs (X402-012,
  X402-027), ``actual_raw`` at most ``max_raw`` (X402-026), a failed settlement names its
  reason as ``code`` (X402-022);
- states: a payment answered or listed is in a state of the profile (PAY-STATE-002), a create
  starts in the initial state, an accepted transition ends in its target;
- the test helpers (profile 6): deposit and expire (HELP-001, -002, -005, -006, -008, -009).

An answer without a JSON body (not captured by the recorder) is not judged here; what a
request alone decides (refusals) is ``admission``'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, Protocol

from conformance.core.profile import Currency, Profile
from conformance.core.results import Outcome
from conformance.core.test_helpers import extract
from conformance.judge.echoes import event_types_problems, shares_problems
from conformance.judge.findings import ANSWER, Finding, passed, verdict
from conformance.judge.payment_quotes import quote_problems
from conformance.judge.payment_rules import PaymentRules, decimal_value
from conformance.judge.schedule_rules import (
    SCHEDULE_OPERATIONS,
    SUBSCRIPTION_OPERATIONS,
    ScheduleRules,
)
from conformance.judge.statement_pages import StatementPages
from conformance.judge.times import RequestClock
from conformance.judge.values import first_of, json_int, query_int
from conformance.judge.x402_rules import X402Rules

CHECK = ANSWER

# The state an accepted operation leaves its resource in, and the requirements saying so.
TARGET_IDS = {
    "cancelPayment": ("PAY-STATE-003",),
    "acceptUnderpaidPayment": ("PAY-STATE-006", "PAY-STATE-007"),
    "testExpirePayment": ("HELP-005",),
    "cancelSubscription": ("SUB-STATE-002",),
    "replacePayoutSchedule": ("PAYOUT-STATE-004", "PAYOUT-STATE-005"),
    "pausePayoutSchedule": ("PAYOUT-STATE-007", "PAYOUT-STATE-008"),
    "retirePayoutSchedule": ("PAYOUT-STATE-010", "PAYOUT-STATE-011"),
}
INITIAL_IDS = {
    "createPayment": ("payments", ("PAY-STATE-001",)),
    "createSubscription": ("subscriptions", ("SUB-STATE-001",)),
    "createPayoutSchedule": ("payout_schedules", ("PAYOUT-STATE-003",)),
}
HELPERS = frozenset({"testDepositPayment", "testExpirePayment"})


class Call(Protocol):
    """One accepted or refused exchange as the rules read it: the validator's recorded call, or
    what a suite family sent and got back."""

    operation_id: str
    path_params: dict[str, str]
    status: int
    answer: Any  # the response's JSON document (None when there is none)
    request: Any  # the request's JSON document (``findings.NOT_JSON`` when there is none)

    @property
    def success(self) -> bool: ...

    @property
    def code(self) -> str | None: ...

    @property
    def query(self) -> dict[str, str]: ...

    @property
    def raw_query(self) -> str:
        """The query as sent (escapes kept), without the "?"."""
        ...

    @property
    def raw_path(self) -> str:
        """The path as sent (escapes kept)."""
        ...

    @property
    def request_body(self) -> bytes:
        """The request body's exact bytes."""
        ...

    def field(self, name: str) -> Any: ...

    def header(self, name: str) -> str | None:
        """A header of the request."""
        ...

    def response_header(self, name: str) -> str | None:
        """A header of the answer."""
        ...

    def handled_between(
        self, slack: float, unix_timestamps: bool
    ) -> tuple[tuple[float, float], ...]:
        """When the server handled the request, as windows of Unix seconds: ``slack`` (the
        profile's clock window and latency) either side of each time the request was sent, or
        narrower where the caller knows the server's clock better."""
        ...


class CallReading:
    """What a ``Call`` reads from its status, answer and request, the same for every kind of
    call (a base for the validator's recorded one and the suite's ``JudgedCall``)."""

    __slots__ = ()
    status: int
    answer: Any
    request: Any

    @property
    def success(self) -> bool:
        return 200 <= self.status < 300

    @property
    def code(self) -> str | None:
        """The error code of the answer (None when it has none)."""
        code = self.answer.get("code") if isinstance(self.answer, dict) else None
        return code if isinstance(code, str) else None

    def field(self, name: str) -> Any:
        """A top-level member of the request body (None when absent or no object)."""
        return self.request.get(name) if isinstance(self.request, dict) else None


Judge = Callable[[Call], Iterator[Finding]]


class AnswerChecks:
    """Judges answers against their own requests for one profile."""

    def __init__(self, profile: Profile) -> None:
        self._clock = RequestClock(profile)
        self._currencies: dict[str, Currency] = profile.currencies
        expires_in = profile.range("payments", "expires_in_secs").default
        self._expires_default = None if expires_in is None else int(expires_in)
        # with no default pinned a server may choose any page size up to the maximum
        list_limit = profile.range("payments", "list_limit")
        self._list_default = int(list_limit.default or list_limit.max)
        self._statements = StatementPages(profile)
        self._deposit_route = profile.helper("deposit")
        self._x402 = X402Rules(profile)
        self._targets = {
            t.operation: t.target
            for resource in ("payments", "subscriptions", "payout_schedules")
            for t in profile.transitions(resource)
        }
        self._initial = {
            resource: profile.lifecycle(resource).initial_state
            for resource in ("payments", "subscriptions", "payout_schedules")
        }
        self._invalid_state = profile.error("status", "invalid_state")
        self._not_found = profile.error("status", "not_found")
        self._idem_missing = profile.error("idempotency", "missing").code
        self._idem_invalid = profile.error("idempotency", "invalid").code
        idem = profile.idempotency
        self._key_bounds = (idem.min_length, idem.max_length)
        rules = PaymentRules(profile)
        self._underpaid, self._settled = rules.underpaid, rules.settled
        self._payment_states = rules.states
        schedules = ScheduleRules(profile)
        self._judges: dict[str, Judge] = {
            "createPayment": self._create_payment,
            "listPayments": self._list_payments,
            "cancelPayment": self._cancel_payment,
            **dict.fromkeys(SCHEDULE_OPERATIONS, schedules.payout),
            **dict.fromkeys(SUBSCRIPTION_OPERATIONS, schedules.subscription),
            "createX402Requirements": self._x402_requirements,
            "settleX402Payment": self._settle,
            "reportX402Usage": self._usage,
            "getStatement": self._statements.judge,
            "testDepositPayment": self._deposit,
            "acceptUnderpaidPayment": self._accept_underpaid,
            "putWebhookEndpoint": self._webhook_endpoint,
            "replaceSplitTemplate": self._split_template,
        }

    def judge(self, call: Call) -> list[Finding]:
        """The findings of one exchange (none when its operation has no such rule)."""
        helper = call.operation_id in HELPERS
        if helper and not call.success:
            return list(self._helper_refusal(call))
        if call.operation_id == "settleX402Payment" and not call.success:
            return self._settle_refusal(call)
        if not call.success or not isinstance(call.answer, dict):
            return []  # a refusal, or an answer the recording did not capture
        found: list[Finding] = []
        if helper:
            found.append(passed(CHECK, ("HELP-008",)))
        judge = self._judges.get(call.operation_id)
        if judge is not None:
            found += judge(call)
        found += self._state(call)
        return merged(found)

    # -- payments --------------------------------------------------------------------------
    def _create_payment(self, call: Call) -> Iterator[Finding]:
        yield from self._states_of([call.answer])
        lifetime = json_int(call.field("expires_in_secs"))
        given = call.field("expires_in_secs") is not None
        secs = lifetime if given else self._expires_default
        if secs is not None:
            ids = ("PAY-010",) if given else ("PAY-011",)
            yield from self._clock.derived(
                call, CHECK, ids, "expires_at", call.answer.get("expires_at"), secs
            )
        asked = call.field("quotes")
        if isinstance(asked, dict):
            found = quote_problems(
                call.answer.get("quotes"), asked, self._currencies, creating=True
            )
            for rid, problems in found.items():
                yield verdict(CHECK, (rid,), first_of(problems))

    def _cancel_payment(self, call: Call) -> Iterator[Finding]:
        yield from self._states_of([call.answer])
        yield from self._quotes_of([call.answer])

    def _quotes_of(self, payments: list[Any]) -> Iterator[Finding]:
        """The names and deployments of the quotes of payments whose create is not at hand."""
        found: dict[str, list[str]] = {}
        for item in payments:
            if not isinstance(item, dict):
                continue
            own = quote_problems(item.get("quotes"), None, self._currencies, creating=False)
            for rid, problems in own.items():
                found.setdefault(rid, []).extend(f"{item.get('id')}: {p}" for p in problems)
        for rid, problems in found.items():
            yield verdict(CHECK, (rid,), first_of(problems))

    def _states_of(self, payments: list[Any]) -> Iterator[Finding]:
        """Each payment's status is a state of the profile (a missing one is the schema's)."""
        shown = [p["status"] for p in payments if isinstance(p, dict) and "status" in p]
        if not shown:
            return
        odd = sorted({repr(s) for s in shown if s not in self._payment_states})
        problem = f"status {', '.join(odd)}: not a state of the profile" if odd else None
        yield verdict(CHECK, ("PAY-STATE-002",), problem)

    def _list_payments(self, call: Call) -> Iterator[Finding]:
        items = call.answer.get("payments")
        if not isinstance(items, list):
            return
        yield from self._states_of(items)
        yield from self._quotes_of(items)
        query = call.query
        for name, rid in (("status", "PAY-014"), ("merchant_order_no", "PAY-015")):
            wanted = query.get(name)
            if wanted is None:
                continue
            other = [p.get(name) for p in items if isinstance(p, dict) and p.get(name) != wanted]
            problem = (
                f"?{name}={wanted} answered with {len(other)} payment(s) of {name} {other[0]!r}"
                if other
                else None
            )
            yield verdict(CHECK, (rid,), problem)
        limit = query_int(query.get("limit")) if "limit" in query else self._list_default
        if limit is not None and limit > 0:
            problem = (
                f"{len(items)} payments, more than the limit {limit}"
                if len(items) > limit
                else None
            )
            yield verdict(CHECK, ("PAY-016",), problem)

    # -- x402 (the rules are ``x402_rules``; the time of valid_before is judged here) ---------
    def _x402_requirements(self, call: Call) -> Iterator[Finding]:
        accepts = call.answer.get("accepts")
        if not isinstance(accepts, list):
            return
        for ids, problem in self._x402.requirements(call.field, accepts):
            yield verdict(CHECK, ids, problem)
        for index, entry in enumerate(accepts):
            if not isinstance(entry, dict):
                continue
            name, valid_before = f"accepts[{index}].valid_before", entry.get("valid_before")
            if json_int(valid_before) is None:
                message = f"{name} {valid_before!r} is not Unix seconds"
                yield Finding(CHECK, ("X402-008",), Outcome.FAILED, message)
                continue
            yield from self._clock.derived(
                call, CHECK, ("X402-008",), name, valid_before, self._x402.offset
            )

    def _settle(self, call: Call) -> Iterator[Finding]:
        asked = call.field("payment_id")
        if isinstance(asked, str):
            yield verdict(CHECK, *self._x402.settlement(asked, call.answer))

    def _settle_refusal(self, call: Call) -> list[Finding]:
        if not isinstance(call.answer, dict):
            return []  # no body recorded: its code is unknown
        rule = self._x402.settle_refusal(call.status, call.code)
        return [] if rule is None else [verdict(CHECK, *rule)]

    def _usage(self, call: Call) -> Iterator[Finding]:
        payment_id, usage_id = call.path_params.get("payment_id"), call.field("usage_id")
        for ids, problem in self._x402.usage(payment_id, usage_id, call.answer):
            yield verdict(CHECK, ids, problem)

    # -- states ------------------------------------------------------------------------------
    def _state(self, call: Call) -> Iterator[Finding]:
        oid, status = call.operation_id, call.answer.get("status")
        if not isinstance(status, str):
            return
        ids: tuple[str, ...]
        if oid in INITIAL_IDS:
            resource, ids = INITIAL_IDS[oid]
            want = self._initial[resource]
        elif oid in TARGET_IDS and oid in self._targets:
            want, ids = self._targets[oid], TARGET_IDS[oid]
        else:
            return
        problem = None if status == want else f"{oid} answered {call.status} with status {status!r}"
        yield verdict(CHECK, ids, problem)
        own = call.answer.get("payment_id", call.answer.get("id"))
        path_id = call.path_params.get("id")
        if path_id is not None and isinstance(own, str) and own != path_id:
            message = f"{oid} of {path_id} answered for {own}"
            yield Finding(CHECK, ids, Outcome.FAILED, message)

    def _accept_underpaid(self, call: Call) -> Iterator[Finding]:
        # Underpaid means something was received: an accepted_raw of 0 accepted a payment that
        # had received nothing, a pending one.
        accepted = call.answer.get("accepted_raw")
        if isinstance(accepted, str) and accepted.isdigit():
            problem = None
            if int(accepted) == 0:
                problem = f"accept-underpaid answered {call.status} with accepted_raw 0"
                problem += ": nothing was received, the payment was pending"
            yield verdict(CHECK, ("PAY-STATE-008",), problem)

    # -- echoes of what the request put ------------------------------------------------------
    def _webhook_endpoint(self, call: Call) -> Iterator[Finding]:
        problems = event_types_problems(call.field("event_types"), call.answer.get("event_types"))
        if problems is not None:
            yield verdict(CHECK, ("WH-001", "WH-005"), first_of(problems))

    def _split_template(self, call: Call) -> Iterator[Finding]:
        sent = call.field("shares")
        problems = shares_problems(sent, call.answer.get("shares"))
        if problems is not None:
            ids = ("SPLIT-008",) if sent == [] else ("SPLIT-007",)
            yield verdict(CHECK, ids, first_of(problems))

    # -- test helpers ------------------------------------------------------------------------
    def _deposit_values(self, call: Call) -> tuple[object, Decimal | None]:
        """The currency and the decimal amount a deposit request names, read through the
        profile's body template of the deposit helper (a mapped helper may say ``units`` for
        the amount in the currency's smallest unit)."""
        route = self._deposit_route
        template = route.body if route is not None else None
        values = extract(template, call.request) if template is not None else None
        if values is None:
            return call.field("currency_id"), decimal_value(call.field("amount"))
        currency_id = values.get("currency_id")
        amount = decimal_value(values.get("amount"))
        currency = self._currency(currency_id)
        raw = values.get("raw_amount")
        if amount is None and currency is not None and raw and re.fullmatch("[0-9]+", raw):
            amount = Decimal(int(raw)).scaleb(-currency.decimals)
        return currency_id, amount

    def _deposit(self, call: Call) -> Iterator[Finding]:
        status, quotes = call.answer.get("status"), call.answer.get("quotes")
        currency_id, amount = self._deposit_values(call)
        settled, underpaid = self._settled, self._underpaid
        quote = (
            quotes.get(currency_id)
            if isinstance(quotes, dict) and isinstance(currency_id, str)
            else None
        )
        quoted = decimal_value(quote.get("amount")) if isinstance(quote, dict) else None
        if not isinstance(status, str) or settled is None:
            return
        if status not in (settled, underpaid):
            message = f"a deposit answered {call.status} with status {status!r}"
            yield Finding(CHECK, ("HELP-001", "HELP-002"), Outcome.FAILED, message)
            return
        if amount is None or quoted is None:
            return
        if amount >= quoted:  # this deposit alone pays the quote in full, whatever came before
            problem = (
                None
                if status == settled
                else f"a deposit of {amount} against a quote of {quoted} left it {status!r}"
            )
            yield verdict(CHECK, ("HELP-002",), problem)
        elif status == underpaid:
            yield passed(CHECK, ("HELP-001",))

    def _helper_refusal(self, call: Call) -> Iterator[Finding]:
        code, status = call.code, call.status
        key = call.header("Idempotency-Key")
        low, high = self._key_bounds
        valid_key = key is not None and low <= len(key) <= high
        if code == self._idem_missing or (code == self._idem_invalid and valid_key):
            message = f"a test helper refused with {status} {code}: it takes any valid key or none"
            yield Finding(CHECK, ("HELP-008",), Outcome.FAILED, message)
        if status == self._not_found.status and code is not None:
            problem = None if code == self._not_found.code else f"{status} with code {code!r}"
            yield verdict(CHECK, ("HELP-009",), problem)
        if call.operation_id == "testExpirePayment" and status == self._invalid_state.status:
            want = self._invalid_state.code
            problem = None if code == want else f"{status} with code {code!r}, not {want!r}"
            yield verdict(CHECK, ("HELP-006",), problem)

    # -- helpers -----------------------------------------------------------------------------
    def _currency(self, currency_id: object) -> Currency | None:
        return self._currencies.get(currency_id) if isinstance(currency_id, str) else None


def merged(found: list[Finding]) -> list[Finding]:
    """The passes of each check folded into one finding (fewer results to count: a statement
    page passes a dozen rules), failures kept one by one; a requirement that failed on this
    exchange is left out of the passes."""
    if len(found) < 2:
        return found
    failed: set[str] = set()
    kept: list[Finding] = []
    passes: dict[str, list[str]] = {}
    for finding in found:
        if finding.outcome is Outcome.PASSED:
            ids = passes.get(finding.check)
            if ids is None:
                passes[finding.check] = list(finding.ids)
            else:
                ids += finding.ids
        else:
            kept.append(finding)
            failed.update(finding.ids)
    for check, ids in passes.items():
        unique = set(ids) - failed
        if unique:
            kept.append(
                passed(check, tuple(ids) if len(unique) == len(ids) else tuple(sorted(unique)))
            )
    return kept
