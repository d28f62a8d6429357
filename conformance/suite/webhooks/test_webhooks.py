"""Webhook endpoints, secrets, events and deliveries (spec 6, profile 5, OPS-005, IDEM-009).

``test_endpoint_lifecycle`` runs the endpoint state machine (no receiver needed).
``test_deliveries`` runs the delivery scenario against the suite's webhook receiver; where no
receiver can be reached (the profile takes only https urls and no ``--webhook-url`` was given,
or the receiver cannot listen), the requirements that need one are "not exercised" with the
reason, and the rest is checked on deliveries the server already lists.

The deliveries run first (a module's tests run in order): endpoints the machine leaves behind
hear of later events. The receiver is used by one test only, so that a fixed
``--webhook-bind`` port is bound by one process of a parallel run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from conformance.core.profile import Profile
from conformance.suite.plugin.options import SuiteSettings
from conformance.suite.stateful import MachineContext, machine_settings, run_guarded, run_machine
from conformance.suite.webhooks import deliveries, endpoints
from conformance.suite.webhooks.deliveries import DeliveryScenario
from conformance.suite.webhooks.endpoints import EndpointMachine
from conformance.suite.webhooks.receiver import (
    ReceiverOptionError,
    WebhookReceiver,
    bind_address,
)
from conformance.suite.wire.check_properties import WEBHOOK_RECEIVER_PROPERTY

pytestmark = pytest.mark.family("webhooks")

# (examples, steps) of the endpoint machine
QUICK_MACHINE = (3, 8)
DEFAULT_MACHINE = (10, 14)


@dataclass(frozen=True)
class ReceiverState:
    receiver: WebhookReceiver | None
    reason: str = ""


@pytest.fixture
def webhook_receiver(
    conformance_settings: SuiteSettings, conformance_profile: Profile
) -> Iterator[ReceiverState]:
    public_url = conformance_settings.webhook_url
    if public_url is None and not conformance_profile.webhooks.loopback_http:
        yield ReceiverState(
            None,
            "no webhook receiver the server can reach: the profile takes only https webhook "
            "urls and no --webhook-url was given",
        )
        return
    try:
        host, port = bind_address(public_url, conformance_settings.webhook_bind)
        receiver = WebhookReceiver(host, port, public_url)
    except (ReceiverOptionError, OSError) as exc:
        yield ReceiverState(None, f"the webhook receiver cannot listen: {exc}")
        return
    with receiver:
        yield ReceiverState(receiver)


@pytest.mark.requirement(*deliveries.ALL_IDS)
def test_deliveries(
    machine_context: MachineContext,
    webhook_receiver: ReceiverState,
    conformance_settings: SuiteSettings,
    request: pytest.FixtureRequest,
) -> None:
    ctx = machine_context
    receiver = webhook_receiver.receiver
    if receiver is None:
        run_guarded(ctx.verdicts, lambda: deliveries.without_receiver(ctx))
        reasons = dict.fromkeys(deliveries.RECEIVER_IDS, webhook_receiver.reason)
        ctx.verdicts.finish("deliveries", deliveries.ALL_IDS, not_reached=reasons)
        return
    scenario = DeliveryScenario(ctx, receiver, conformance_settings.seed)
    try:
        run_guarded(ctx.verdicts, scenario.run)
    finally:
        scenario.unsubscribe()
        # what the receiver kept and dropped: the reports say so (a flood is dropped)
        counts = receiver.counts().as_dict()
        request.node.user_properties.append((WEBHOOK_RECEIVER_PROPERTY, counts))
    reasons = {
        rid: scenario.not_reached.get(rid, "the delivery scenario did not reach it")
        for rid in deliveries.ALL_IDS
    }
    ctx.verdicts.finish("deliveries", deliveries.ALL_IDS, not_reached=reasons)


@pytest.mark.requirement(*endpoints.IDS)
def test_endpoint_lifecycle(machine_context: MachineContext) -> None:
    examples, steps = QUICK_MACHINE if machine_context.quick else DEFAULT_MACHINE
    # a quick run does not shrink (run_machine): each replay grows the endpoint list
    run_machine(EndpointMachine.bind(machine_context), machine_settings(examples, steps))
    machine_context.verdicts.finish(
        "endpoint lifecycle",
        endpoints.IDS,
        not_reached="no generated sequence of puts, rotations and listings reached it",
    )
