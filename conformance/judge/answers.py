"""Checks of an accepted exchange's answer against its own request (profile 5 and 6).

``AnswerChecks(profile)`` reads once what the profile decides (currencies and their decimals,
the clock window, list limits, the state each transition leads to) and ``judge(call)`` compares
one answer with the request that caused it, as the suite's families check the same rules (same
requirement ids, the same pure functions where they exist):

- times the server computes from the request: ``expires_at`` (PAY-010, PAY-011),
  ``next_bill_at`` (SUB-004) and an x402 ``valid_before`` (X402-008) against the request's time
  (its ``X-Timestamp``, else the recorded start), allowing the profile's clock window and a
  minute of latency, so a server clock within the window never fails; ``next_run_at`` against
  the requested ``first_run_at`` or the answer's own ``created_at`` (PAYOUT-004, PAYOUT-006;
  a replace with ``first_run_at``: PAYOUT-010, as the schedules family judges it);
- amounts: a raw amount is the decimal amount times 10^decimals of the currency (PAYOUT-002,
  X402-005), a quote carries the requested amount and its currency's names (PAY-006, PAY-007);
- lists: the status and merchant_order_no filters and the limit (PAY-014 to PAY-016);
- statements, page by page (STMT-*: places, signs, order, window, running balances, the
  opening balance before a first page's first line, the size a page states, count, cursor,
  closing balance and ``reconciles`` when the page is the whole window);
- x402 (``x402_rules``): requirements follow the request and the profile (X402-001 to -006,
  -008 to -010, -029, OPS-030), a settlement and a usage report echo theirs (X402-012,
  X402-027), ``actual_raw`` at most ``max_raw`` (X402-026), a failed settlement names its
  reason as ``code`` (X402-022);
- states: a create starts in the initial state, an accepted transition ends in its target,
  ``enabled`` and ``retired_at`` follow the schedule's status (PAYOUT-011, PAYOUT-012);
- the test helpers (profile 6): deposit and expire (HELP-001, -002, -005, -006, -008, -009).

An answer without a JSON body (not captured by the recorder) is not judged here; what a
request alone decides (refusals) is ``admission``'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, Protocol

from conformance.core.formats import epoch_seconds
from conformance.core.profile import Currency, Profile
from conformance.core.results import Outcome
from conformance.core.test_helpers import extract
from conformance.judge import statements as statement
from conformance.judge.findings import Finding, passed, seconds, verdict
from conformance.judge.payment_rules import PaymentRules, decimal_value, raw_amount
from conformance.judge.x402_rules import X402Rules

CHECK = "answer"
"""The name of every result of this module: one row per requirement in the reports."""
LATENCY_SECS = 60
"""Allowed, on top of the profile's clock window, between a request's time and its handling."""
SAME_INSTANT_SECS = 2
"""Allowed between two times the server derives from one moment (whole-second rounding)."""

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
REPLACED_FIELDS = ("currency_id", "target_chain_id", "withdraw_address_id", "interval_secs", "mode")
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

    def field(self, name: str) -> Any: ...

    def header(self, name: str) -> str | None: ...

    def handled_between(
        self, slack: float, unix_timestamps: bool
    ) -> tuple[tuple[float, float], ...]:
        """When the server handled the request, as windows of Unix seconds: ``slack`` (the
        profile's clock window and latency) either side of each time the request was sent, or
        narrower where the caller knows the server's clock better."""
        ...


Judge = Callable[[Call], Iterator[Finding]]


def _places(text: str) -> int:
    return len(text.partition(".")[2])


def _int(value: object) -> int | None:
    """An integer of a JSON document (60 and 60.0 alike), None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _query_int(text: str | None) -> int | None:
    if text is None:
        return None
    whole, dot, zeros = text.partition(".")
    if not whole.isdigit() or (dot and set(zeros) - {"0"}):
        return None
    return int(whole)


class AnswerChecks:
    """Judges answers against their own requests for one profile."""

    def __init__(self, profile: Profile) -> None:
        auth = profile.auth
        self._tolerance = auth.clock_window_secs + LATENCY_SECS
        self._unix_timestamps = auth.timestamp_format == "unix-seconds"
        self._currencies: dict[str, Currency] = profile.currencies
        self._names = {
            key: (("code", c.code), ("symbol", c.symbol), ("name", c.name))
            for key, c in self._currencies.items()
        }
        self._expires_default = int(profile.range("payments", "expires_in_secs").default or 0)
        self._list_default = int(profile.range("payments", "list_limit").default or 0)
        self._statement_limits = profile.range("statements", "limit")
        self._statement_default = int(self._statement_limits.default or 0)
        self._directions = profile.statements.directions
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
        self._active = self._initial["payout_schedules"]
        self._retired = self._targets.get("retirePayoutSchedule")
        self._invalid_state = profile.error("status", "invalid_state")
        self._not_found = profile.error("status", "not_found")
        self._idem_missing = profile.error("idempotency", "missing").code
        self._idem_invalid = profile.error("idempotency", "invalid").code
        idem = profile.idempotency
        self._key_bounds = (idem.min_length, idem.max_length)
        rules = PaymentRules(profile)
        self._underpaid, self._settled = rules.underpaid, rules.settled
        self._judges: dict[str, Judge] = {
            "createPayment": self._create_payment,
            "listPayments": self._list_payments,
            "createSubscription": self._create_subscription,
            "createPayoutSchedule": self._schedule,
            "replacePayoutSchedule": self._schedule,
            "pausePayoutSchedule": self._schedule,
            "retirePayoutSchedule": self._schedule,
            "createX402Requirements": self._x402_requirements,
            "settleX402Payment": self._settle,
            "reportX402Usage": self._usage,
            "getStatement": self._statement,
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

    # -- times -----------------------------------------------------------------------------
    def _derived_time(
        self, call: Call, check: str, ids: tuple[str, ...], name: str, actual: object, secs: int
    ) -> Iterator[Finding]:
        """``actual`` (a date-time, or Unix seconds) is the request's time plus ``secs``."""
        whole = _int(actual)
        value = float(whole) if whole is not None else seconds(actual)
        windows = call.handled_between(self._tolerance, self._unix_timestamps)
        if not windows or value is None:
            return  # no time recorded, or a malformed value (the schema check's)
        due = value - secs
        if any(low <= due <= high for low, high in windows):
            yield passed(check, ids)
            return
        low, high = min(windows, key=lambda w: abs(due - (w[0] + w[1]) / 2))
        off, allowed = due - (low + high) / 2, (high - low) / 2
        message = (
            f"{name} {actual!r} is {off:+.0f} s from the request's time + {secs} s, beyond "
            f"the {allowed:.0f} s allowed (clock window + latency)"
        )
        yield Finding(check, ids, Outcome.FAILED, message)

    # -- payments --------------------------------------------------------------------------
    def _create_payment(self, call: Call) -> Iterator[Finding]:
        lifetime = _int(call.field("expires_in_secs"))
        given = call.field("expires_in_secs") is not None
        if not given or lifetime is not None:
            ids = ("PAY-010",) if given else ("PAY-011",)
            secs = lifetime if lifetime is not None else self._expires_default
            yield from self._derived_time(
                call, CHECK, ids, "expires_at", call.answer.get("expires_at"), secs
            )
        asked = call.field("quotes")
        quotes = call.answer.get("quotes")
        if not isinstance(asked, dict) or not isinstance(quotes, dict):
            return
        for currency_id, quote in asked.items():
            got = quotes.get(currency_id)
            if not isinstance(quote, dict) or not isinstance(got, dict):
                continue
            want, have = decimal_value(quote.get("amount")), decimal_value(got.get("amount"))
            if want is not None:
                problem = (
                    None
                    if have == want
                    else f"quote {currency_id}: amount {got.get('amount')!r}, requested "
                    f"{quote.get('amount')!r}"
                )
                yield verdict(CHECK, ("PAY-006",), problem)
            names = self._names.get(currency_id)
            if names is not None:
                wrong = [f"{k} {got.get(k)!r} (not {v!r})" for k, v in names if got.get(k) != v]
                problem = f"quote {currency_id}: {', '.join(wrong)}" if wrong else None
                yield verdict(CHECK, ("PAY-007",), problem)
            chains = quote.get("chain_ids")
            deployments = got.get("deployments")
            if isinstance(chains, list) and isinstance(deployments, list):
                shown = {d.get("chain_id") for d in deployments if isinstance(d, dict)}
                missing = [c for c in chains if c not in shown]
                problem = (
                    f"quote {currency_id}: no deployment on {', '.join(map(str, missing))}"
                    if missing
                    else None
                )
                yield verdict(CHECK, ("PAY-009",), problem)

    def _list_payments(self, call: Call) -> Iterator[Finding]:
        items = call.answer.get("payments")
        if not isinstance(items, list):
            return
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
        limit = _query_int(query.get("limit")) if "limit" in query else self._list_default
        if limit is not None and limit > 0:
            problem = (
                f"{len(items)} payments, more than the limit {limit}"
                if len(items) > limit
                else None
            )
            yield verdict(CHECK, ("PAY-016",), problem)

    # -- subscriptions and payout schedules -----------------------------------------------
    def _create_subscription(self, call: Call) -> Iterator[Finding]:
        interval = _int(call.field("interval_secs"))
        if interval is not None:
            yield from self._derived_time(
                call,
                CHECK,
                ("SUB-004",),
                "next_bill_at",
                call.answer.get("next_bill_at"),
                interval,
            )
        yield from self._currency_chain(call, "chain_id", ("SUB-005",))

    def _currency_chain(
        self, call: Call, chain_field: str, ids: tuple[str, ...]
    ) -> Iterator[Finding]:
        currency_id, chain_id = call.field("currency_id"), call.field(chain_field)
        if not isinstance(currency_id, str) or not isinstance(chain_id, str):
            return
        want = f"{currency_id}:{chain_id}"
        got = call.answer.get("currency_chain_id")
        problem = None if got == want else f"currency_chain_id {got!r}, expected {want!r}"
        yield verdict(CHECK, ids, problem)

    def _schedule(self, call: Call) -> Iterator[Finding]:
        oid, answer = call.operation_id, call.answer
        status, enabled = answer.get("status"), answer.get("enabled")
        if isinstance(status, str) and isinstance(enabled, bool):
            active = status == self._active
            problem = None if enabled == active else f"status {status!r} with enabled {enabled}"
            yield verdict(CHECK, ("PAYOUT-011",), problem)
        if isinstance(status, str) and "retired_at" in answer and self._retired is not None:
            retired_at = answer["retired_at"]
            if status == self._retired:
                ok = seconds(retired_at) is not None
                problem = None if ok else f"a retired schedule with retired_at {retired_at!r}"
            else:
                problem = None if retired_at is None else f"{status} with retired_at {retired_at!r}"
            yield verdict(CHECK, ("PAYOUT-012",), problem)
        if oid not in ("createPayoutSchedule", "replacePayoutSchedule"):
            return
        yield from self._currency_chain(call, "target_chain_id", ("PAYOUT-001",))
        yield from self._min_send_raw(call)
        if oid == "replacePayoutSchedule":
            yield from self._replaced(call)
            return
        first = call.field("first_run_at")
        next_run = seconds(answer.get("next_run_at"))
        if next_run is None:
            return
        if first is not None:
            wanted = seconds(first)
            if wanted is not None:
                off = next_run - wanted
                problem = (
                    f"next_run_at {answer.get('next_run_at')!r}, first_run_at {first!r}"
                    if abs(off) >= 1
                    else None
                )
                yield verdict(CHECK, ("PAYOUT-004",), problem)
            return
        interval = _int(call.field("interval_secs"))
        created = seconds(answer.get("created_at"))
        if interval is not None and created is not None:
            off = next_run - created - interval
            problem = (
                f"next_run_at {answer.get('next_run_at')!r} is not created_at "
                f"{answer.get('created_at')!r} + {interval} s"
                if abs(off) > SAME_INSTANT_SECS
                else None
            )
            yield verdict(CHECK, ("PAYOUT-006",), problem)

    def _min_send_raw(self, call: Call) -> Iterator[Finding]:
        amount, currency = call.field("min_send_amount"), self._currency(call.field("currency_id"))
        got = call.answer.get("min_send_raw")
        want = _expected_raw(amount, currency)
        if want is None or currency is None or not isinstance(got, str):
            return
        problem = (
            None
            if got == want
            else f"min_send_raw {got!r} for {amount} {currency.code} ({currency.decimals} "
            f"decimals): expected {want}"
        )
        yield verdict(CHECK, ("PAYOUT-002",), problem)

    def _replaced(self, call: Call) -> Iterator[Finding]:
        answer = call.answer
        wrong = [
            f"{name} {answer.get(name)!r} (requested {call.field(name)!r})"
            for name in REPLACED_FIELDS
            if call.field(name) is not None
            and answer.get(name) != call.field(name)
            and not (
                _int(call.field(name)) is not None
                and _int(answer.get(name)) == _int(call.field(name))
            )
        ]
        want, have = (
            decimal_value(call.field("min_send_amount")),
            decimal_value(answer.get("min_send_amount")),
        )
        if want is not None and have != want:
            wrong.append(f"min_send_amount {answer.get('min_send_amount')!r}")
        first, next_run = seconds(call.field("first_run_at")), seconds(answer.get("next_run_at"))
        if first is not None and next_run is not None and abs(next_run - first) >= 1:
            # the replaced first_run_at is when the schedule runs next, as on a create
            wrong.append(
                f"next_run_at {answer.get('next_run_at')!r} "
                f"(requested first_run_at {call.field('first_run_at')!r})"
            )
        problem = f"the replaced schedule keeps {', '.join(wrong)}" if wrong else None
        yield verdict(CHECK, ("PAYOUT-010",), problem)

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
            if _int(valid_before) is None:
                message = f"{name} {valid_before!r} is not Unix seconds"
                yield Finding(CHECK, ("X402-008",), Outcome.FAILED, message)
                continue
            yield from self._derived_time(
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

    # -- statements --------------------------------------------------------------------------
    def _statement(self, call: Call) -> Iterator[Finding]:
        query = call.query
        try:
            page = statement.parse_page(call.answer)
        except statement.Unreadable:
            return  # unreadable: the response schema check reports it
        check = CHECK
        problems = statement.format_problems(call.answer, page.accounting_decimals)
        yield verdict(check, (statement.PLACES,), _first(problems))
        currency = self._currency(query.get("currency_id"))
        if currency is not None:
            problem = (
                None
                if (page.code, page.symbol) == (currency.code, currency.symbol)
                else f"code {page.code!r} and symbol {page.symbol!r}, not {currency.code!r} "
                f"and {currency.symbol!r}"
            )
            yield verdict(check, (statement.CURRENCY,), problem)
        yield from self._page_size(query, page)
        if not page.lines:
            return
        odd = [line.describe() for line in page.lines if line.direction not in self._directions]
        yield verdict(check, (statement.DIRECTION,), _first(odd))
        signs = [statement.sign_problem(line, self._directions) for line in page.lines]
        yield verdict(check, (statement.SIGN,), _first([s for s in signs if s]))
        ids = page.ids
        problem = None if ids == sorted(ids) else f"lines in the order {ids[:10]}"
        yield verdict(check, (statement.ORDER,), problem)
        chain = statement.chain_problems(page.lines)
        first_page = "cursor" not in query
        if first_page:
            first = page.lines[0]
            if first.balance_after != page.opening + first.signed:
                chain.insert(
                    0, f"{first.describe()}: balance is not opening {page.opening} + signed"
                )
            # The balance before the window's first line is the balance before ``from``.
            before = first.balance_after - first.signed
            problem = (
                None
                if page.opening == before
                else f"opening {page.opening}, but the balance before {first.describe()} is "
                f"{before}"
            )
            yield verdict(check, (statement.OPENING,), problem)
        yield verdict(check, (statement.RUNNING, statement.FEE), _first(chain))
        start, end = epoch_seconds(query.get("from")), epoch_seconds(query.get("to"))
        if start is not None and end is not None:  # exact: a line may sit on an edge
            outside = [
                line.describe() for line in page.lines if not statement.in_window(line, start, end)
            ]
            yield verdict(check, (statement.WINDOW,), _first(outside))
        limit = _query_int(query.get("limit")) if "limit" in query else self._statement_default
        if limit is not None and limit > 0:
            problem = f"{len(ids)} lines, more than the limit {limit}" if len(ids) > limit else None
            yield verdict(check, (statement.LIMIT,), problem)
        if first_page:
            yield from self._whole_window(page)

    def _page_size(self, query: dict[str, str], page: statement.Page) -> Iterator[Finding]:
        """The page states its size: the ``limit`` asked for, or the profile's default."""
        given = "limit" in query
        limit = _query_int(query.get("limit")) if given else self._statement_default
        shown = _int(page.limit)
        if limit is None or limit <= 0 or shown is None:
            return
        if not self._statement_limits.min <= limit <= self._statement_limits.max:
            return  # a limit that must be refused, accepted: STMT-012 judges the request
        asked = "asked for" if given else "the profile's default"
        problem = None if shown == limit else f"limit {shown}, where {asked} is {limit}"
        yield verdict(CHECK, (statement.LIMIT,), problem)

    def _whole_window(self, page: statement.Page) -> Iterator[Finding]:
        """The first page: its count says whether more pages follow; when none does, the page
        is the whole window and the closing balance and ``reconciles`` follow from it."""
        check, shown = CHECK, len(page.lines)
        count = _int(page.count)
        if count is None:
            return
        more = count > shown
        cursor = page.next_cursor is not None
        problem = (
            None
            if more == cursor
            else f"window_entry_count {count} with {shown} lines on the first page and "
            + ("a next_cursor" if cursor else "no next_cursor")
        )
        yield verdict(check, (statement.COUNT, statement.CURSOR), problem)
        if cursor or more:
            return
        closing = page.lines[-1].balance_after
        problem = (
            None if page.closing == closing else f"closing {page.closing}, last balance {closing}"
        )
        yield verdict(check, (statement.CLOSING,), problem)
        total = page.opening + sum((line.signed for line in page.lines), Decimal(0))
        if isinstance(page.reconciles, bool):
            problem = (
                None
                if page.reconciles == (total == page.closing)
                else f"reconciles {page.reconciles}: opening + signed = {total}, closing "
                f"{page.closing}"
            )
            yield verdict(check, (statement.RECONCILES,), problem)

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
        sent, kept = call.field("event_types"), call.answer.get("event_types")
        if not isinstance(sent, list) or not isinstance(kept, list):
            return
        problem = None
        if set(map(str, kept)) != set(map(str, sent)) or len(kept) != len(set(map(str, kept))):
            problem = f"event_types {sent} put, {kept} answered"
        yield verdict(CHECK, ("WH-001", "WH-005"), problem)

    def _split_template(self, call: Call) -> Iterator[Finding]:
        sent, kept = call.field("shares"), call.answer.get("shares")
        if not isinstance(sent, list) or not isinstance(kept, list):
            return
        if not sent:
            problem = None if not kept else f"shares [] put, {len(kept)} share(s) answered"
            yield verdict(CHECK, ("SPLIT-008",), problem)
            return
        pairs = {(s.get("merchant_id"), _int(s.get("bps"))) for s in sent if isinstance(s, dict)}
        shown = {(s.get("merchant_id"), _int(s.get("bps"))) for s in kept if isinstance(s, dict)}
        problem = None if pairs == shown else "the answered shares are not the ones put"
        yield verdict(CHECK, ("SPLIT-007",), problem)

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


def _expected_raw(amount: object, currency: Currency | None) -> str | None:
    """``amount`` (a decimal string) in the currency's raw units; None when there is no
    currency, no decimal amount, or more places than the currency has (a request to be
    refused: the admission checks judge it)."""
    if currency is None or not isinstance(amount, str) or decimal_value(amount) is None:
        return None
    if _places(amount) > currency.decimals:
        return None
    return str(raw_amount(amount, currency.decimals))


def _first(problems: list[str]) -> str | None:
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return problems[0] + more
