"""IDEM-009 in the delivery scenario: a replay that emits a second webhook fails; a replayed
resource whose webhook is merely late is not judged (no false alarm under a busy dispatcher)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conformance.suite.stateful import Transcript, Verdicts
from conformance.suite.webhooks.deliveries import DeliveryScenario

REPLAYS = [("payment.created", "pay_once", "pay_replayed", "a replayed createPayment")]


class InstantReceiver:
    def wait_for(self, predicate: Callable[[Any], bool], timeout: float) -> bool:
        return bool(predicate(None))


def judged(counts: dict[str, int]) -> tuple[Verdicts, dict[str, str]]:
    scenario = DeliveryScenario.__new__(DeliveryScenario)
    scenario.receiver = InstantReceiver()  # type: ignore[assignment]
    scenario.v = Verdicts(recorder=None, family="deliveries", transcript=Transcript())
    scenario.not_reached = {}

    def events_of(event_type: str, resource_id: str) -> int:
        return counts[resource_id]

    scenario.events_of = events_of  # type: ignore[method-assign]
    scenario.judge_replays(REPLAYS)
    return scenario.v, scenario.not_reached


def test_as_many_webhooks_for_the_replayed_resource_as_for_the_one_done_once_passes() -> None:
    verdicts, not_reached = judged({"pay_once": 1, "pay_replayed": 1})
    assert verdicts._tally["IDEM-009"].passes == 1
    assert verdicts._tally["IDEM-009"].failure is None
    assert not_reached == {}


def test_a_second_webhook_for_the_replayed_resource_fails() -> None:
    verdicts, _ = judged({"pay_once": 1, "pay_replayed": 2})
    failure = verdicts._tally["IDEM-009"].failure
    assert failure is not None
    assert "emitted 2 payment.created webhook(s)" in str(failure)


@pytest.mark.parametrize(("once", "replayed"), [(1, 0), (2, 1)])
def test_a_late_webhook_of_the_replayed_resource_is_not_judged(once: int, replayed: int) -> None:
    verdicts, not_reached = judged({"pay_once": once, "pay_replayed": replayed})
    assert "IDEM-009" not in verdicts._tally
    assert "had not arrived" in not_reached["IDEM-009"]
