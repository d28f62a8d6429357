"""x402: requirements, settlement of EIP-712-signed payloads and usage (profile 5 and 6).

Three scenarios check every rule once, deterministically (requirements of every deployment and
scheme; every way a settlement must be refused, then accepted, replayed and protected; every
usage rule on every deployment); the state machine then runs generated sequences of the same
actions against a model of which payment is settled with which payload.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import Phase, settings

from conformance.suite.stateful import MachineContext, machine_settings, run_guarded, run_machine
from conformance.suite.x402.machine import X402Machine
from conformance.suite.x402.model import X402Profile
from conformance.suite.x402.scenarios import Scenarios

pytestmark = pytest.mark.family("x402")

REQUIREMENT_IDS = (
    *(f"X402-{n:03d}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)),
    "X402-029",
    "OPS-030",
)
SETTLEMENT_IDS = (
    *(f"X402-{n:03d}" for n in range(12, 25)),
    "X402-030",
    "X402-PAYLOAD-001",
    "OPS-033",
)
USAGE_IDS = ("X402-025", "X402-026", "X402-027", "X402-028", "OPS-034", "SHAPE-024")
ALL_IDS = (*REQUIREMENT_IDS, *SETTLEMENT_IDS, *USAGE_IDS)

# The machine's budget: hypothesis examples x steps per example.
DEFAULT_RUN = (8, 15)
QUICK_RUN = (1, 8)


def _not_reached(ctx: MachineContext) -> dict[str, str]:
    rules = X402Profile(ctx.profile, ctx.contract)
    reasons = {rid: "no generated call sequence reached it" for rid in ALL_IDS}
    if rules.payload_shape is None:
        reasons["X402-PAYLOAD-001"] = (
            "the profile does not pin the payment_payload shape (x402.payment_payload)"
        )
    if rules.usage_scheme is None:
        for rid in USAGE_IDS:
            reasons[rid] = "the profile has no upto scheme: no payment can report usage"
    return reasons


def _scenario(
    ctx: MachineContext, name: str, ids: tuple[str, ...], body: Callable[[], None]
) -> None:
    ctx.transcript.restart()
    run_guarded(ctx.verdicts, body)
    ctx.verdicts.finish(name, ids, not_reached=_not_reached(ctx))


@pytest.mark.requirement(*REQUIREMENT_IDS)
def test_x402_requirements(machine_context: MachineContext) -> None:
    """Every deployment and scheme: the entries the profile describes, a fresh nonce per call,
    valid_before = issue time + the profile's offset, the business-rule refusals."""
    scenarios = Scenarios(machine_context)
    _scenario(machine_context, "requirements", REQUIREMENT_IDS, scenarios.requirements)


# The settlement and usage scenarios issue requirements and settle payments on the way: they
# may record those requirements too.
@pytest.mark.requirement(*SETTLEMENT_IDS, *REQUIREMENT_IDS)
def test_x402_settlement(machine_context: MachineContext) -> None:
    """Each rejection rule with its status and reason, then a valid payload settles; the
    identical payload again gives the same tx_hash; another payload is refused."""
    scenarios = Scenarios(machine_context)
    _scenario(machine_context, "settlement", SETTLEMENT_IDS, scenarios.settlement)


@pytest.mark.requirement(*USAGE_IDS, *SETTLEMENT_IDS, *REQUIREMENT_IDS)
def test_x402_usage(machine_context: MachineContext) -> None:
    """Usage only on a settled upto payment, bounded by what the payer authorised, in raw
    units of every currency."""
    scenarios = Scenarios(machine_context)
    _scenario(machine_context, "usage", USAGE_IDS, scenarios.usage)


@pytest.mark.requirement(*ALL_IDS)
def test_x402_sequences(machine_context: MachineContext) -> None:
    """Generated sequences of requirements, settle attempts and usage against the model."""
    examples, steps = QUICK_RUN if machine_context.quick else DEFAULT_RUN
    # Hypothesis' explain phase replays a failing sequence step by step, each replay signing and
    # settling again: minutes against a faulty server. The shrunk sequence says enough.
    run_settings = settings(
        machine_settings(examples, steps),
        phases=[p for p in Phase if p is not Phase.explain],
    )
    run_machine(X402Machine.bind(machine_context), run_settings)
    machine_context.verdicts.finish("sequences", ALL_IDS, not_reached=_not_reached(machine_context))
