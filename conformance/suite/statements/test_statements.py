"""Statements and ledger (profile 5 and 6, spec 1): the ledger adds up, page after page.

A hypothesis state machine makes payments in every profile currency (quotes and deposits
generated within the currency's decimals, with and without splits to the profile's split
merchants and to the second credential's merchant), deposits through the profile's deposit test
helper, and reads windows of both merchants' statements with small limits, recomputing every
figure with exact decimals (``audit``). The ledger of a merchant is shared with every other test
of the run, so the checks are ones that hold whatever other lines exist: the window's edges are
the ``created_at`` of the suite's own, already booked lines, and the expected lines are those a
longer read of the same ledger shows between the edges.

Scenarios: statement requests the profile refuses (limit out of range, ``from`` not before
``to``, an unknown currency), and a replayed deposit or settlement that books no second line.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal, localcontext
from functools import partial
from typing import TypeVar

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    consumes,
    initialize,
    multiple,
    precondition,
    rule,
)

from conformance.core.profile import ErrorSpec
from conformance.judge.statements import (
    CLOSING,
    COUNT,
    CURRENCY,
    CURSOR,
    DEPOSIT_CREDIT,
    DIRECTION,
    EXACT,
    FEE,
    FROM_BEFORE_TO,
    LIMIT,
    LIMIT_RANGE,
    OPENING,
    ORDER,
    PLACES,
    READ,
    RECONCILES,
    RUNNING,
    SIGN,
    SPLIT_INCOME,
    UNKNOWN_CURRENCY,
    WINDOW,
    Line,
)
from conformance.suite.factories import locate_operation
from conformance.suite.stateful import (
    ConformanceFailure,
    ConformanceMachine,
    MachineContext,
    machine_settings,
    run_guarded,
    run_machine,
)
from conformance.suite.statements.audit import Account, History, Statements, edges, iso
from conformance.suite.statements.book import (
    Book,
    PaymentRecord,
    amounts,
    fit,
    splits,
    text,
    unmatched_credits,
    unmatched_shares,
)
from conformance.suite.tool_errors import PrerequisiteError
from conformance.suite.wire.client import SuiteTransportError
from conformance.suite.wire.judged_call import JudgedCall

pytestmark = pytest.mark.family("statements")

MACHINE_IDS = (
    READ,
    WINDOW,
    ORDER,
    DIRECTION,
    SIGN,
    RUNNING,
    OPENING,
    CLOSING,
    RECONCILES,
    PLACES,
    COUNT,
    LIMIT,
    CURSOR,
    FEE,
    CURRENCY,
    DEPOSIT_CREDIT,
    SPLIT_INCOME,
)
REFUSAL_IDS = (READ, LIMIT_RANGE, FROM_BEFORE_TO, UNKNOWN_CURRENCY)
REPLAY = "IDEM-009"
# A statement read checks the page it reads (audit.Statements.page) under these ids too.
PAGE_IDS = (READ, PLACES, CURRENCY, DIRECTION, SIGN, ORDER, RUNNING, FEE)
REPLAY_IDS = (REPLAY, DEPOSIT_CREDIT, *PAGE_IDS)
# (examples, steps): a step is a payment, a deposit or a window read; every example ends with
# an audit of each account it touched.
DEFAULT_RUN = (8, 12)
QUICK_RUN = (1, 5)
NO_HELPERS = "needs the profile's deposit test helper, which the profile declares absent"
SETTLEMENTS = 3  # without a deposit helper: the x402 settlements that book the ledger lines
ANCHOR_SLACK = timedelta(seconds=2)
STOPPED = "statements-stopped"  # MachineContext.extra: a failure ended the machine's run
# Window choices (from edge, to edge, walk size), drawn before the edges are known.
PICKS = st.tuples(st.integers(0, 2**16), st.integers(0, 2**16), st.integers(1, 6))
T = TypeVar("T")


# ---------------------------------------------------------------------------- the machine
class LedgerMachine(ConformanceMachine):
    """Payments and deposits, with windows of both merchants' statements read in between."""

    payments = Bundle("payments")

    def __init__(self) -> None:
        super().__init__()
        self.statements = Statements(self.ctx)
        self.book = Book()
        self.since = datetime.now(UTC)
        self.places: dict[str, int] = {}
        self.anchors: dict[tuple[str, str], Decimal] = {}
        self.recipient: str | None = self.ctx.extra.get("recipient")
        self.audit_picks = (1, 0, 2)

    # -- helpers ------------------------------------------------------------------------
    @property
    def currencies(self) -> list[str]:
        return [c for c, currency in self.ctx.profile.currencies.items() if currency.chains]

    @property
    def payee(self) -> str:
        return self.ctx.client.credential.merchant_id

    def recipients(self) -> list[str]:
        others = [m for m in self.ctx.profile.split_merchants if m != self.payee]
        return others + ([self.recipient] if self.recipient else [])

    def accounts(self, currency_id: str) -> list[Account]:
        found = [Account(self.ctx.client, currency_id)]
        if self.recipient and self.book.paying(currency_id, self.recipient):
            found.append(Account(self.ctx.other_client, currency_id))
        return found

    def create(
        self, currency_id: str, quote: Decimal, shares: list[tuple[str, int]]
    ) -> PaymentRecord:
        chain = self.ctx.profile.currencies[currency_id].chains[0]
        listed = ", ".join(f"{m} {b} bps" for m, b in shares) or "no splits"
        self.step(f"create a payment of {text(quote)} {currency_id} ({listed})")
        payment = self.ctx.factories.create_payment(
            quotes={currency_id: {"amount": text(quote), "chain_ids": [chain]}},
            splits=[{"type": "percentage", "merchant_id": m, "bps": b} for m, b in shares],
        )
        record = PaymentRecord(
            str(payment["id"]), currency_id, chain, quote, tuple(shares), self.places[currency_id]
        )
        return self.book.add(record)

    def pay(self, record: PaymentRecord, amount: Decimal) -> None:
        self.step(f"deposit {text(amount)} {record.currency_id} to {record.payment_id}")
        response = self.ctx.factories.deposit(
            record.payment_id, record.currency_id, record.chain_id, text(amount)
        )
        if response.status_code >= 300:
            raise PrerequisiteError(
                f"the deposit helper refused {text(amount)} {record.currency_id} to an open "
                f"payment (received {record.received} of {record.quote}): "
                f"{response.status_code} {response.text[:200]}"
            )
        record.deposits.append(amount)

    def ledger(self, account: Account) -> tuple[History, list[Line]]:
        """Read the account's recent history, check the example's own lines in it and return
        them (the candidates for window edges)."""
        self.step(f"read the recent ledger of {account}")
        key = (account.merchant_id, account.currency_id)
        anchor = self.anchors.get(key)
        if anchor is None:
            history = self.statements.history(account, self.since)
        else:
            start = datetime.fromtimestamp(int(anchor), UTC) - ANCHOR_SLACK
            history = self.statements.history(account, self.since, start=iso(start))
        if account.merchant_id == self.payee:
            own = self._payee_lines(account, history)
        else:
            own = self._recipient_lines(account, history)
        if own:
            self.anchors.setdefault(key, min(line.created for line in own))
        return history, own

    def _payee_lines(self, account: Account, history: History) -> list[Line]:
        credit = self.statements.profile.statements.directions[0]
        records = self.book.of_currency(account.currency_id)
        problems: list[str] = []
        for record in records:
            credits = [
                line
                for line in history.lines
                if line.payment_id == record.payment_id
                and line.direction == credit
                and not line.split_income
            ]
            missing, extra = unmatched_credits(record, credits)
            if missing:
                problems.append(
                    f"no credit line of {account} for deposits {[text(d) for d in missing]} to "
                    f"payment {record.payment_id} (its credit lines: "
                    f"{[line.describe() for line in credits]})"
                )
            if extra:
                problems.append(
                    f"credit lines of {account} for payment {record.payment_id} that no deposit "
                    f"explains (deposits {[text(d) for d in record.deposits]}): "
                    f"{[line.describe() for line in extra]}"
                )
        self.verdicts.problems([DEPOSIT_CREDIT], problems)
        return self.book.own_lines(history.lines, records)

    def _recipient_lines(self, account: Account, history: History) -> list[Line]:
        records = self.book.paying(account.currency_id, account.merchant_id)
        incomes = [line for line in history.lines if line.split_income]
        problems: list[str] = []
        own: list[Line] = []
        if any(line.payment_id for line in incomes):
            for record in records:
                mine = [line for line in incomes if line.payment_id == record.payment_id]
                missing, extra = unmatched_shares(record, account.merchant_id, mine)
                if missing:
                    problems.append(
                        f"no split income line of {account} for the shares {missing} of "
                        f"payment {record.payment_id} (its lines: "
                        f"{[line.describe() for line in mine]})"
                    )
                if extra:
                    problems.append(
                        f"split income lines of {account} for payment {record.payment_id} that "
                        f"no deposit explains: {[line.describe() for line in extra]}"
                    )
                own += mine
        else:
            # Lines that do not name the payment: all of the example's shares against all the
            # split income the account has (earlier examples' lines may be there too).
            pending = list(incomes)
            for record in records:
                missing, pending = unmatched_shares(record, account.merchant_id, pending)
                if missing:
                    problems.append(
                        f"no split income line of {account} for the shares {missing} of "
                        f"payment {record.payment_id}"
                    )
            own = [line for line in incomes if line not in pending]
        self.verdicts.problems([SPLIT_INCOME], problems)
        return own

    def audit(self, account: Account, picks: tuple[int, int, int], *, after_first: bool) -> None:
        """Read the window between two of the example's own lines (chosen by ``picks``, drawn
        before anything was read) and audit it; ``after_first``: not from the first of them,
        so that the example's own lines come before the window (its opening balance)."""
        history, own = self.ledger(account)
        marks = edges(own)
        if len(marks) < 2:
            return  # the example's lines share one instant: no window between them yet
        if after_first and len(marks) > 2:
            first = 1 + picks[0] % (len(marks) - 2)
        else:
            first = picks[0] % (len(marks) - 1)
        last = first + 1 + picks[1] % (len(marks) - 1 - first)
        self.step(
            f"read {account} from {marks[first].created_text} to {marks[last].created_text}, "
            f"walking {picks[2]} lines at a time"
        )
        self.statements.audit(account, history, marks[first], marks[last], picks[2])

    def attempt(self, action: Callable[[], T], default: T) -> T:
        """Run one step. The first failure is recorded with this example's steps and ends the
        run: the ledger is shared and only grows, so hypothesis could neither replay a failing
        example against the same ledger nor afford to shrink it (every replay books again)."""
        if self.ctx.extra.get(STOPPED):
            return default
        try:
            return action()
        except ConformanceFailure as failure:
            self.verdicts.fail(failure)
        except (SuiteTransportError, PrerequisiteError) as exc:
            self.verdicts.broke_off(exc)
        self.ctx.extra[STOPPED] = True
        return default

    # -- rules (every choice is drawn before the server is asked anything) ----------------
    @initialize(target=payments, data=st.data())
    def open_accounts(self, data: st.DataObject) -> MultipleResults[str]:
        """In every currency: a payment with splits (one of them to the second merchant when it
        can receive splits) and three deposits, two of them short of the quote."""
        self.audit_picks = data.draw(PICKS, label="final windows")
        plans = []
        others = [m for m in self.recipients() if m != self.recipient]
        for currency_id in self.currencies:
            decimals = self.ctx.profile.currencies[currency_id].decimals
            deposits = [data.draw(amounts(decimals), label="deposit") for _ in range(3)]
            rest = data.draw(amounts(decimals), label="rest")
            shares = data.draw(splits(others, least=1), label="splits")
            if self.recipient:
                bps = data.draw(st.integers(1, 4_000), label="recipient bps")
                shares = [(self.recipient, bps), *shares[:1]]
            plans.append((currency_id, deposits, rest, shares))

        def run() -> MultipleResults[str]:
            still_open: list[str] = []
            for currency_id, drawn, rest, shares in plans:
                history, _ = self.ledger(Account(self.ctx.client, currency_id))
                decimals = self.ctx.profile.currencies[currency_id].decimals
                places = min(decimals, history.accounting_decimals)
                self.places[currency_id] = places
                deposits = [fit(amount, places) for amount in drawn]
                record = self.create(
                    currency_id, deposits[0] + deposits[1] + fit(rest, places), shares
                )
                for amount in deposits:
                    if record.open:
                        self.pay(record, amount)
                if record.open:
                    still_open.append(record.payment_id)
            return multiple(*still_open)

        return self.attempt(run, multiple())

    @rule(target=payments, data=st.data())
    def create_payment(self, data: st.DataObject) -> MultipleResults[str]:
        """Always runnable (so that an example stopped by a failure still has a rule to run)."""
        currency_id = data.draw(st.sampled_from(self.currencies), label="currency")
        decimals = self.ctx.profile.currencies[currency_id].decimals
        quote = data.draw(amounts(decimals), label="quote")
        shares = data.draw(splits(self.recipients()), label="splits")
        if currency_id not in self.places:
            return multiple()
        places = self.places[currency_id]
        return self.attempt(
            lambda: multiple(self.create(currency_id, fit(quote, places), shares).payment_id),
            multiple(),
        )

    @rule(target=payments, payment=consumes(payments), data=st.data())
    def deposit(self, payment: str, data: st.DataObject) -> MultipleResults[str]:
        record = self.book.payments[payment]
        rest = record.quote - record.received
        half = fit(rest / 2, record.places)
        amount = data.draw(
            amounts(record.places) | st.sampled_from([rest, half if half > 0 else rest]),
            label="amount",
        )

        def run() -> MultipleResults[str]:
            self.pay(record, amount)
            return multiple(payment) if record.open else multiple()

        return self.attempt(run, multiple())

    @precondition(lambda self: any(p.deposits for p in self.book.payments.values()))
    @rule(data=st.data())
    def read_window(self, data: st.DataObject) -> None:
        currency_id = data.draw(
            st.sampled_from([c for c in self.currencies if self.book.of_currency(c)]),
            label="currency",
        )
        account = data.draw(st.sampled_from(self.accounts(currency_id)), label="account")
        picks = data.draw(PICKS, label="window")
        self.attempt(lambda: self.audit(account, picks, after_first=False), None)

    def teardown(self) -> None:
        """Every account the example touched, audited once more at the end."""
        if sys.exc_info()[1] is not None or self.ctx.extra.get(STOPPED):
            return
        for currency_id in sorted(self.places):
            for account in self.accounts(currency_id):
                self.attempt(partial(self.audit, account, self.audit_picks, after_first=True), None)


def _recipient(ctx: MachineContext) -> tuple[str | None, str]:
    """The second credential's merchant, when the server takes it as a split recipient
    (the only recipient whose statement the suite can read)."""
    other = ctx.other_client.credential.merchant_id
    if other == ctx.client.credential.merchant_id:
        return None, "the profile's two credentials belong to the same merchant"
    _, path = locate_operation(ctx.contract, "createPayment")
    ctx.transcript.step(f"create a payment with a split to the second merchant {other}")
    body = ctx.factories.payment_body(
        splits=[{"type": "percentage", "merchant_id": other, "bps": 100}]
    )
    response = ctx.client.post(path, json=body, operation_id="createPayment")
    if response.status_code == ctx.profile.success_status("createPayment"):
        return other, ""
    refusals = tuple(ctx.profile.error("status", k).status for k in ("unauthorized", "not_found"))
    if response.status_code >= 500 or response.status_code in refusals:
        raise PrerequisiteError(
            f"could not create a payment with a split to {other}: "
            f"{response.status_code} {response.text[:200]}"
        )
    return None, (
        f"the server does not take the second merchant {other} as a split recipient "
        f"({response.status_code}); the split merchants' statements cannot be read"
    )


@pytest.mark.requirement(*MACHINE_IDS)
def test_statements_add_up(machine_context: MachineContext) -> None:
    ctx = machine_context
    if ctx.profile.helper("deposit") is None:
        with localcontext(EXACT):
            run_guarded(ctx.verdicts, partial(_settlement_windows, ctx))
        ctx.verdicts.finish(
            "ledger",
            MACHINE_IDS,
            not_reached={
                rid: NO_HELPERS
                if rid in (DEPOSIT_CREDIT, SPLIT_INCOME)
                else "the x402 settlements' lines left no window with two lines"
                for rid in MACHINE_IDS
            },
            operation_id="getStatement",
        )
        return
    not_reached: dict[str, str] = {}
    recipient: list[str | None] = [None]

    def find_recipient() -> None:
        recipient[0], reason = _recipient(ctx)
        if reason:
            not_reached[SPLIT_INCOME] = reason

    run_guarded(ctx.verdicts, find_recipient)
    ctx.extra["recipient"] = recipient[0]
    examples, steps = QUICK_RUN if ctx.quick else DEFAULT_RUN
    with localcontext(EXACT):
        run_machine(LedgerMachine.bind(ctx), machine_settings(examples, steps))
    ctx.verdicts.finish(
        "ledger",
        MACHINE_IDS,
        not_reached={
            rid: not_reached.get(rid, "no generated sequence reached a window with two lines")
            for rid in MACHINE_IDS
        },
        operation_id="getStatement",
    )


def _settlement_windows(ctx: MachineContext) -> None:
    """Without a deposit helper, a real flow books the ledger lines: x402 settlements, a
    second apart so that their lines have distinct instants; then the window between the
    first and the last of them is audited like the machine's windows."""
    statements = Statements(ctx)
    account = Account(ctx.client, ctx.factories.currency)
    since = datetime.now(UTC)
    settled: set[str] = set()
    for n in range(SETTLEMENTS):
        if n:
            time.sleep(1.0)
        ctx.transcript.step(f"settle x402 payment {n + 1} of {SETTLEMENTS}")
        settled.add(ctx.factories.settled_x402("exact"))
    ctx.transcript.step(f"read the recent ledger of {account}")
    history = statements.history(account, since)
    marks = edges([line for line in history.lines if line.payment_id in settled])
    if len(marks) >= 2:
        ctx.transcript.step(f"read {account} between the first and the last settlement")
        statements.audit(account, history, marks[0], marks[-1], 1)


# ---------------------------------------------------------------------------- refusals
@dataclass(frozen=True)
class Request:
    """A statement request that differs from a valid one in one part, and its answer."""

    requirement_id: str
    what: str
    expected: int | ErrorSpec | None  # None: a rule the judge reads from the request
    start: str | None = None
    end: str | None = None
    limit: int | None = None
    currency_id: str | None = None


@pytest.mark.requirement(*REFUSAL_IDS)
def test_statement_requests_the_profile_refuses(machine_context: MachineContext) -> None:
    ctx = machine_context
    statements = Statements(ctx)
    limits = statements.limits
    validation = ctx.profile.error("status", "validation")
    business = ctx.profile.error("status", "business_rule")
    success = ctx.profile.success_status("getStatement")
    now = datetime.now(UTC)
    earlier, later = iso(now - timedelta(hours=1)), iso(now + timedelta(hours=1))
    account = Account(ctx.client, ctx.factories.currency)
    unknown = ctx.factories.unique("conformance_unknown_")
    cases = [
        Request(LIMIT_RANGE, f"limit {limits.min - 1}", validation, limit=limits.min - 1),
        Request(LIMIT_RANGE, f"limit {limits.max + 1}", validation, limit=limits.max + 1),
        Request(LIMIT_RANGE, f"limit {limits.min}", success, limit=limits.min),
        Request(LIMIT_RANGE, f"limit {limits.max}", success, limit=limits.max),
        Request(FROM_BEFORE_TO, "from equal to to", None, end=earlier),
        Request(FROM_BEFORE_TO, "from after to", None, start=later, end=earlier),
        Request(UNKNOWN_CURRENCY, f"unknown currency {unknown}", business, currency_id=unknown),
    ]

    def scenario() -> None:
        for case in cases:
            ctx.transcript.step(f"read a statement with {case.what}")
            response = statements.get(
                account,
                case.start or earlier,
                case.end or later,
                limit=case.limit,
                currency_id=case.currency_id,
            )
            what = f"statement with {case.what}"
            if case.expected is None:
                call = JudgedCall(response, "getStatement")
                ctx.refused([case.requirement_id], call, what, fatal=False)
                continue
            ids = [case.requirement_id] + ([READ] if case.expected == success else [])
            ctx.verdicts.status(ids, response, case.expected, what, fatal=False)

    run_guarded(ctx.verdicts, scenario)
    ctx.verdicts.finish("refusals", REFUSAL_IDS, operation_id="getStatement")


# ---------------------------------------------------------------------------- replays
@pytest.mark.requirement(*REPLAY_IDS)
def test_a_replayed_deposit_or_settlement_books_no_second_line(
    machine_context: MachineContext,
) -> None:
    ctx = machine_context
    factories = ctx.factories
    statements = Statements(ctx)
    since = datetime.now(UTC)
    deposits = ctx.profile.helper("deposit") is not None
    not_reached = {} if deposits else {rid: NO_HELPERS for rid in REPLAY_IDS}
    booked: dict[str, tuple[str, Decimal | None]] = {}

    def replay_deposit() -> None:
        currency, chain = factories.currency, factories.chain
        ctx.transcript.step(f"create a payment of 10 {currency}")
        payment = factories.create_payment(
            quotes={currency: {"amount": "10", "chain_ids": [chain]}}, splits=[]
        )
        key = str(uuid.uuid4())
        for attempt in ("deposit 4", "replay the deposit (same Idempotency-Key, same body)"):
            ctx.transcript.step(f"{attempt} to {payment['id']}")
            response = factories.deposit(payment["id"], currency, chain, "4", idempotency_key=key)
            if response.status_code >= 300:
                raise PrerequisiteError(
                    f"the deposit helper answered {response.status_code} to {attempt}: "
                    f"{response.text[:200]}"
                )
        booked[str(payment["id"])] = ("a deposit of 4", Decimal(4))

    def replay_settlement() -> None:
        requirements = factories.x402_requirements("exact")
        body = factories.settle_body(requirements)
        _, path = locate_operation(ctx.contract, "settleX402Payment")
        key = str(uuid.uuid4())
        for attempt in ("settle an x402 payment", "replay the settlement (same key, same body)"):
            ctx.transcript.step(attempt)
            response = ctx.client.post(
                path, json=body, idempotency_key=key, operation_id="settleX402Payment"
            )
            if response.status_code != ctx.profile.success_status("settleX402Payment"):
                raise PrerequisiteError(f"{attempt}: {response.status_code} {response.text[:200]}")
        booked[str(requirements["payment_id"])] = ("an x402 settlement", None)

    def count_lines() -> None:
        account = Account(ctx.client, factories.currency)
        ctx.transcript.step(f"read the recent ledger of {account}")
        history = statements.history(account, since)
        credit = statements.profile.statements.directions[0]
        for payment_id, (what, value) in booked.items():
            credits = [
                line
                for line in history.lines
                if line.payment_id == payment_id
                and line.direction == credit
                and not line.split_income
            ]
            if value is not None:
                ctx.verdicts.check(
                    [DEPOSIT_CREDIT],
                    any(line.amount == value for line in credits),
                    f"no credit line of {value} for {what} to {payment_id} in {account}'s "
                    f"statement (its credit lines: {[line.describe() for line in credits]})",
                    fatal=False,
                )
            ctx.verdicts.check(
                [REPLAY],
                len(credits) == 1,
                f"{what} to {payment_id}, sent twice with one Idempotency-Key, booked "
                f"{len(credits)} credit lines: {[line.describe() for line in credits]}",
                fatal=False,
            )

    with localcontext(EXACT):
        if deposits:
            run_guarded(ctx.verdicts, replay_deposit)
        run_guarded(ctx.verdicts, replay_settlement)
        if booked:
            run_guarded(ctx.verdicts, count_lines)
    ctx.verdicts.finish("replays", REPLAY_IDS, not_reached=not_reached)
