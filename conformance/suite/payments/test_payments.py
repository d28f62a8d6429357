"""Payments over time (profile sections 4, 5 and 6; spec 1 and 4; profile 2 for replays).

- ``test_payment_scenario``: one deterministic scenario each (``scenarios.py``): every
  transition from every state, deposits in every currency, the create refusals, quotes and
  fixtures, lifetimes, the helpers' rules, pagination and cursors, replays.
- ``test_payment_machine``: generated sequences of creates, cancels, accept-underpaids,
  deposits, expiries, replays, duplicate numbers, re-reads and page walks, against a model.
- ``test_a_payment_expires_by_itself``: a payment created with the shortest lifetime when
  the family starts is expired when the session ends; the test waits for what is left of its
  lifetime, within the run's budget (not in --quick: it would wait a minute).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest
from hypothesis import settings

from conformance.judge.payment_rules import HELPERS, PaymentRules
from conformance.suite.payments.book import PaymentBook
from conformance.suite.payments.expiry import (
    LATE_SECS,
    POLL_SECS,
    ExpiringPayment,
    budget_problem,
    handover_file,
)
from conformance.suite.payments.machine import (
    BUDGET,
    OutOfShrinkTime,
    PaymentMachine,
    ShrinkBudget,
)
from conformance.suite.payments.scenarios import SCENARIOS
from conformance.suite.stateful import (
    ConformanceFailure,
    MachineContext,
    machine_settings,
    run_guarded,
    run_machine,
)

pytestmark = pytest.mark.family("payments")

# What every create and re-read may record.
CREATE_IDS = (
    "OPS-001",
    "PAY-STATE-001",
    "PAY-STATE-002",
    *(f"PAY-{n:03d}" for n in range(6, 12)),
    "FIX-003",
    "FIX-004",
    "PAY-015",
    "PAY-019",
)
TRANSITION_IDS = (
    *(f"PAY-STATE-{n:03d}" for n in range(3, 10)),
    "OPS-019",
    "SHAPE-025",
    "HELP-001",
    "HELP-002",
    "HELP-005",
    "HELP-006",
    "HELP-008",
)
# Per scenario: the ids it is there to check, and the ones it may also record on its way.
SCENARIO_IDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "transitions": (TRANSITION_IDS, ()),
    "deposits": (
        ("HELP-001", "HELP-002", "HELP-008", "PAY-STATE-006", "PAY-STATE-007"),
        TRANSITION_IDS,
    ),
    "create refusals": (tuple(f"PAY-{n:03d}" for n in (1, 2, 3, 4, 5, 12, 13)), ()),
    "quotes": (("PAY-006", "PAY-007", "PAY-008", "PAY-009", "FIX-003", "FIX-004"), ()),
    "lifetimes": (("PAY-010", "PAY-011"), ()),
    "helpers": (("HELP-005", "HELP-007", "HELP-008", "HELP-009"), ()),
    "pagination": (
        tuple(f"PAY-{n:03d}" for n in (14, 15, 16, 17, 18, 19, 20)),
        ("PAY-STATE-003", "PAY-STATE-004", "PAY-STATE-005"),
    ),
    "replays": (("IDEM-009",), ("PAY-STATE-003", "PAY-STATE-004", "PAY-STATE-005")),
}
MACHINE_IDS = (
    *CREATE_IDS,
    *TRANSITION_IDS,
    "PAY-013",
    "PAY-014",
    "PAY-016",
    "PAY-018",
    "IDEM-009",
)
EXPIRY_IDS = ("PAY-STATE-010",)

# examples, steps
MACHINE_RUNS = {True: (2, 12), False: (10, 30)}
SHRINK_SECS = {True: 1.0, False: 4.0}


def _ids(name: str) -> tuple[str, ...]:
    """Every id scenario ``name`` may record (its marker)."""
    main, extra = SCENARIO_IDS[name]
    return tuple(dict.fromkeys((*main, *CREATE_IDS, *extra)))


def not_reached(rules: PaymentRules, ids: Sequence[str]) -> dict[str, str]:
    """Why an id was not reached, where the profile explains it."""
    helpers = {"HELP-001", "HELP-002", "HELP-005", "HELP-006", "HELP-007", "HELP-008", "HELP-009"}
    needs_deposits = {"PAY-STATE-005", "PAY-STATE-006", "PAY-STATE-007", "PAY-STATE-009"}
    needs_deposits |= {"OPS-019", "SHAPE-025"}
    reasons = {}
    for rid in ids:
        if rid in helpers and not rules.helpers:
            absent = [name for op, name in HELPERS.items() if not rules.has_helper(op)]
            reasons[rid] = (
                "needs the profile's deposit and expire test helpers; the profile declares "
                f"{' and '.join(absent)} absent"
            )
        elif rid in needs_deposits and not rules.deposits:
            reasons[rid] = "needs the deposit test helper to make a payment underpaid or settled"
        elif rid == "PAY-013" and not rules.unique_order_no:
            reasons[rid] = "the profile does not make merchant_order_no unique"
        else:
            reasons[rid] = "no call sequence of this check reached it"
    return reasons


@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=pytest.mark.requirement(*_ids(name))) for name in SCENARIOS],
)
def test_payment_scenario(name: str, machine_context: MachineContext) -> None:
    book = PaymentBook(machine_context)
    run_guarded(machine_context.verdicts, lambda: SCENARIOS[name](book))
    ids = SCENARIO_IDS[name][0]
    machine_context.verdicts.finish(name, ids, not_reached(book.rules, ids))


@pytest.mark.requirement(*dict.fromkeys(MACHINE_IDS))
def test_payment_machine(machine_context: MachineContext) -> None:
    examples, steps = MACHINE_RUNS[machine_context.quick]
    budget = machine_context.extra[BUDGET] = ShrinkBudget(SHRINK_SECS[machine_context.quick])
    try:
        # one failure reported (the shortest), not an ExceptionGroup of every distinct one
        run_settings = settings(machine_settings(examples, steps), report_multiple_bugs=False)
        run_machine(PaymentMachine.bind(machine_context), run_settings)
    except OutOfShrinkTime:
        budget.report(machine_context.verdicts)
    rules = PaymentRules(machine_context.profile)
    ids = tuple(dict.fromkeys(MACHINE_IDS))
    machine_context.verdicts.finish("machine", ids, not_reached(rules, ids))


@pytest.mark.requirement(*EXPIRY_IDS)
def test_a_payment_expires_by_itself(
    machine_context: MachineContext,
    expiring_payment: ExpiringPayment | None,
    pytestconfig: pytest.Config,
) -> None:
    verdicts = machine_context.verdicts
    rules = PaymentRules(machine_context.profile)
    deadline = machine_context.client.stats.deadline
    reason = _why_not(machine_context, rules, expiring_payment, deadline)
    if reason is None and expiring_payment is not None:
        payment = expiring_payment
        time.sleep(max(0.0, payment.remaining))
        book = PaymentBook(machine_context)
        until = payment.overdue if deadline is None else min(payment.overdue, deadline)
        cut: list[str] = []  # the budget ended the wait before a late server was overdue

        def look() -> None:
            machine_context.transcript.step(
                f"list {payment.order_no}, created {payment.lifetime} s ago or more "
                f"with expires_in_secs {payment.lifetime}; while it is still "
                f"{rules.initial!r}, again every {POLL_SECS:g} s for up to {LATE_SECS:g} s"
            )
            statuses = _statuses(book, payment.order_no)
            while statuses == [rules.initial] and time.time() + POLL_SECS <= until:
                time.sleep(POLL_SECS)
                statuses = _statuses(book, payment.order_no)
            late = max(0.0, time.time() - payment.due)
            if statuses == [rules.initial] and until < payment.overdue:
                cut.append(
                    f"{payment.order_no} was still {statuses} when the run's time budget ended, "
                    f"{late:.0f} s after its expires_at had surely passed (a server may be "
                    f"{LATE_SECS:g} s late)"
                )
                return
            verdicts.check(
                EXPIRY_IDS,
                statuses == [rules.expired],
                f"{payment.order_no} is listed as {statuses} {late:.0f} s after its expires_at "
                f"had surely passed, expected [{rules.expired!r}]",
            )

        run_guarded(verdicts, look)
        reason = cut[0] if cut else None
    verdicts.finish(
        "expiry by time", EXPIRY_IDS, reason or "the payment's expiry was never looked at"
    )
    handover = handover_file(getattr(pytestconfig, "workerinput", None))
    if handover is not None:
        handover.unlink(missing_ok=True)


def _statuses(book: PaymentBook, order_no: str) -> list[object]:
    # the list's own checks are PAY-015's: PAY-STATE-010 holds only if the status is judged
    return [item.get("status") for item in book.read(order_no)]


def _why_not(
    ctx: MachineContext,
    rules: PaymentRules,
    payment: ExpiringPayment | None,
    deadline: float | None,
) -> str | None:
    wait = rules.expires_in.min
    if ctx.quick:
        return f"needs {wait} s of waiting after a payment is created; not in --quick"
    if payment is None or rules.expired is None:
        return "the profile names no expired state"
    if payment.problem:
        ctx.verdicts.fail(ConformanceFailure(EXPIRY_IDS, f"no payment to watch: {payment.problem}"))
        return "no payment to watch"
    return budget_problem(payment, deadline)
