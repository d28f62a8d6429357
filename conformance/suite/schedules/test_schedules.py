"""The schedules family: payout schedules, subscriptions, splits and the split template over
several calls (profile section 5, spec 1 to 4).

Each test keeps a model of what the server must hold and compares every answer with it; a
refused operation is followed by a re-read that shows nothing changed. The state machines
shrink a failure to the shortest call sequence that shows it, printed as numbered steps.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from conformance.suite.schedules.payouts import (
    PayoutScheduleMachine,
    check_rules,
    not_usable,
    walk_transitions,
)
from conformance.suite.schedules.splits import SplitChecks
from conformance.suite.schedules.subscriptions import SubscriptionMachine, walk_and_refuse
from conformance.suite.stateful import MachineContext, machine_settings, run_guarded, run_machine

pytestmark = pytest.mark.family("schedules")

PAYOUT_STATE_IDS = tuple(f"PAYOUT-STATE-{n:03d}" for n in range(1, 13))
PAYOUT_IDS = ("OPS-003", "FIX-005", *(f"PAYOUT-{n:03d}" for n in range(1, 13)), *PAYOUT_STATE_IDS)
SUBSCRIPTION_IDS = (
    "OPS-002",
    "OPS-021",
    "SHAPE-021",
    *(f"SUB-{n:03d}" for n in range(1, 6)),
    *(f"SUB-STATE-{n:03d}" for n in range(1, 4)),
)
SPLIT_IDS = ("OPS-004", "FIX-006", *(f"SPLIT-{n:03d}" for n in range(1, 9)), "STATUS-008")
SPLITS_NOT_REACHED = "the split scenario stopped before any case about it"

# (examples, steps) of each state machine, default and --quick
PAYOUT_MACHINE = {False: (30, 20), True: (4, 10)}
SUBSCRIPTION_MACHINE = {False: (8, 10), True: (2, 6)}
SCENARIO_EXAMPLES = {False: 3, True: 1}


def _machine_settings(examples: int, steps: int) -> settings:
    return settings(machine_settings(examples, steps), report_multiple_bugs=False)


def _scenario(ctx: MachineContext, body: Callable[[st.DataObject], None]) -> None:
    """Run ``body`` with generated values; its checks go on after a failure, so there is
    nothing to shrink."""
    run_settings = settings(
        machine_settings(SCENARIO_EXAMPLES[ctx.quick], 1),
        phases=[Phase.explicit, Phase.generate],
    )
    run_guarded(ctx.verdicts, run_settings(given(st.data())(body)))


@pytest.mark.requirement(*PAYOUT_IDS)
def test_every_payout_schedule_transition(machine_context: MachineContext) -> None:
    """Every operation in every state the profile's transitions reach, on a fresh schedule."""
    ctx = machine_context
    reason = not_usable(ctx)
    if reason is None:
        run_guarded(ctx.verdicts, lambda: walk_transitions(ctx))
    ctx.verdicts.finish(
        "payout schedule transitions",
        PAYOUT_IDS,
        reason or "checked by the payout schedule rules and sequences",
    )


@pytest.mark.requirement(*PAYOUT_IDS)
def test_payout_schedule_rules(machine_context: MachineContext) -> None:
    """Scaling, next_run_at, withdraw addresses and every business rule of create and replace."""
    ctx = machine_context
    reason = not_usable(ctx)
    if reason is None:
        _scenario(ctx, lambda data: check_rules(ctx, data))
    elsewhere = "a transition: checked by the payout schedule transitions and sequences"
    reasons = {rid: elsewhere for rid in PAYOUT_IDS}
    reasons["PAYOUT-008"] = "the profile's fixtures list no withdraw address of another merchant"
    ctx.verdicts.finish("payout schedule rules", PAYOUT_IDS, reason or reasons)


@pytest.mark.requirement(*PAYOUT_IDS)
def test_payout_schedule_sequences(machine_context: MachineContext) -> None:
    """Generated sequences of creates, replaces, pauses, retires and refused requests."""
    ctx = machine_context
    reason = not_usable(ctx)
    if reason is None:
        run_machine(PayoutScheduleMachine.bind(ctx), _machine_settings(*PAYOUT_MACHINE[ctx.quick]))
    ctx.verdicts.finish(
        "payout schedule sequences",
        PAYOUT_IDS,
        reason or "no generated call sequence reached it",
    )


@pytest.mark.requirement(*SUBSCRIPTION_IDS)
def test_subscriptions(machine_context: MachineContext) -> None:
    """Every transition in every reachable state, every refused create, then generated
    sequences of creates and cancels."""
    ctx = machine_context
    if not ctx.factories.profile.currencies:
        ctx.verdicts.finish("subscriptions", SUBSCRIPTION_IDS, "the profile lists no currency")
        return
    _scenario(ctx, lambda data: walk_and_refuse(ctx, data))
    run_machine(SubscriptionMachine.bind(ctx), _machine_settings(*SUBSCRIPTION_MACHINE[ctx.quick]))
    ctx.verdicts.finish("subscriptions", SUBSCRIPTION_IDS)


@pytest.mark.requirement(*SPLIT_IDS)
def test_split_rules(machine_context: MachineContext) -> None:
    """Each split rule on payments, subscriptions, x402 requirements and the template."""
    ctx = machine_context
    checks = SplitChecks(ctx)
    _scenario(ctx, checks.run)
    reasons = {rid: checks.rules.not_reached.get(rid, SPLITS_NOT_REACHED) for rid in SPLIT_IDS}
    ctx.verdicts.finish("splits", SPLIT_IDS, reasons)
