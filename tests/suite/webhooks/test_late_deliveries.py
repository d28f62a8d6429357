"""A webhook that did not arrive in the delivery scenario: the server's delivery records say
whether it is still on its way (not judged) or the server's failure (listed as delivered or
failed, or not listed at all)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from conformance.core.profile import load_profile
from conformance.core.receiver_counts import PathDrops
from conformance.suite.stateful import Transcript, Verdicts
from conformance.suite.webhooks.causes import Expected
from conformance.suite.webhooks.deliveries import DeliveryScenario
from conformance.suite.webhooks.driving import Endpoint, Listing

CREATED = Expected("payment.created", "pay_1", "EVT-001", "createPayment", started_at=100.0)


class SilentReceiver:
    """A live receiver at which nothing arrived."""

    def __init__(self, drops: PathDrops | None = None) -> None:
        self.drops = drops

    def snapshot(self) -> list[Any]:
        return []

    def dropped_at(self, path: str) -> PathDrops | None:
        return self.drops


def judged(
    records: list[dict[str, Any]], listed_before: set[str], drops: PathDrops | None = None
) -> DeliveryScenario:
    scenario = DeliveryScenario.__new__(DeliveryScenario)
    scenario.receiver = SilentReceiver(drops)  # type: ignore[assignment]
    transcript = Transcript()
    scenario.ctx = SimpleNamespace(transcript=transcript)  # type: ignore[assignment]
    scenario.v = Verdicts(recorder=None, family="deliveries", transcript=transcript)
    scenario.ok = Endpoint("ok", "we_ok", "/ok", ["payment.created"])
    scenario.endpoints = [scenario.ok]
    scenario.not_reached = {}
    scenario.listed_before = listed_before
    scenario.clock = lambda: 125.0
    scenario.pending, scenario.succeeded, scenario.failed = load_profile().webhooks.delivery_roles
    listing = Listing({str(r["id"]): r for r in records}, sent_at=124.0, answered_at=124.5)
    scenario.judge_expected([(scenario.ok, CREATED)], listing)
    return scenario


def record(delivery_id: str, status: str, attempts: int) -> dict[str, Any]:
    return {
        "id": delivery_id,
        "event_type": "payment.created",
        "status": status,
        "attempts": attempts,
    }


def test_a_delivery_not_attempted_yet_is_not_judged() -> None:
    scenario = judged([record("dl_old", "failed", 5), record("dl_new", "pending", 0)], {"dl_old"})
    assert "EVT-001" not in scenario.v._tally and "DLV-003" not in scenario.v._tally
    reason = scenario.not_reached["EVT-001"]
    assert reason == (
        "the payment.created delivery was still on its way after 25 s "
        "(the server lists delivery dl_new as 'pending', not attempted yet)"
    )
    assert scenario.not_reached["DLV-003"] == reason


@pytest.mark.parametrize(
    ("records", "listed_before"),
    [
        pytest.param([record("dl_new", "succeeded", 1)], set(), id="listed-as-delivered"),
        pytest.param([record("dl_new", "failed", 3)], set(), id="failed-against-a-live-receiver"),
        pytest.param([], set(), id="no-delivery-record"),
        pytest.param([record("dl_old", "pending", 0)], {"dl_old"}, id="only-an-earlier-runs"),
        # a try that did not reach the live receiver was some other endpoint's
        pytest.param([record("dl_new", "pending", 2)], set(), id="tried-elsewhere"),
    ],
)
def test_a_missing_webhook_the_server_does_not_list_as_on_its_way_fails(
    records: list[dict[str, Any]], listed_before: set[str]
) -> None:
    scenario = judged(records, listed_before)
    failure = scenario.v._tally["EVT-001"].failure
    assert failure is not None
    assert "0 payment.created webhook(s) reached endpoint ok within 20 s" in failure.message
    assert scenario.not_reached == {}


def test_a_missing_webhook_the_receiver_may_have_dropped_is_not_judged() -> None:
    # a flood over the receiver's bounds: what it dropped may hold the missing webhook
    drops = PathDrops("/ok", deliveries=988, bytes=988 * 1024 * 1024, refused=2)
    scenario = judged([record("dl_new", "succeeded", 1)], set(), drops)
    assert "EVT-001" not in scenario.v._tally and "DLV-003" not in scenario.v._tally
    assert scenario.not_reached["EVT-001"] == (
        "the receiver dropped 988 request(s) (1,035,993,088 bytes) to endpoint ok over its "
        "bounds, 2 of them refused with 413 (body too large); the missing webhook may be "
        "among them"
    )
