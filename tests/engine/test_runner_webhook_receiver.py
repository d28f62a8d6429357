"""The engine's side of the webhook receiver's bounds: what the deliveries test's receiver kept
and dropped reaches the run's result."""

from __future__ import annotations

from conformance.core.receiver_counts import PathDrops, ReceiverCounts
from conformance.engine.collector import ResultCollector
from conformance.engine.progress import NullDisplay
from conformance.suite.wire.check_properties import WEBHOOK_RECEIVER_PROPERTY
from tests.engine.test_runner import FakeReport


def test_the_collector_takes_the_receivers_counts_from_the_deliveries_test() -> None:
    collector = ResultCollector(NullDisplay())
    assert collector.webhook_receiver is None  # no receiver ran (yet)
    counts = ReceiverCounts(3, 2048, (PathDrops("/ok", deliveries=997, bytes=10**9, refused=1),))
    report = FakeReport(
        "conformance/suite/webhooks/test_webhooks.py::test_deliveries",
        "teardown",
        [(WEBHOOK_RECEIVER_PROPERTY, counts.as_dict())],
    )
    collector.pytest_runtest_logreport(report)  # type: ignore[arg-type]
    assert collector.webhook_receiver == counts


def test_counts_from_a_report_are_read_leniently() -> None:
    hostile = {"kept": -1, "kept_bytes": "9", "drops": [{"path": 7, "deliveries": True}, "x"]}
    assert ReceiverCounts.from_dict(hostile) == ReceiverCounts(0, 0, (PathDrops("7"),))
