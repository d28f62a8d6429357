"""Proof of the webhooks family (conformance/suite/webhooks/).

Against the unfaulted reference server every check of the family passes, whatever the seed, and
every requirement it is marked with is exercised (the embedded server reaches the suite's
receiver on loopback); against a reference server with one webhook fault switched on, the family
fails exactly the requirements the fault names.
"""

from __future__ import annotations

import pytest

from conformance.core.results import RunResult
from conformance.engine.options import RunOptions
from conformance.engine.runner import run_suite
from conformance.reference.faults import catalogue
from conformance.suite.webhooks import deliveries, endpoints, judging, receiver
from tests.suite.proofs import family_failures, family_passed

pytestmark = pytest.mark.slow

FAMILY = "webhooks"
# Ids only this family's two tests carry: they select both, and nothing of other families.
SELECT = ("DLV-015", "WH-011")
# The webhook faults of domain.yaml and every fault of webhooks.yaml.
WEBHOOK_FAULTS = sorted(
    f.name
    for f in catalogue()
    if f.source == "webhooks.yaml" or (f.source == "domain.yaml" and f.name.startswith("webhook-"))
)


def run(seed: int, *, fault: str | None = None, quick: bool = True) -> RunResult:
    return run_suite(RunOptions(seed=seed, only=SELECT, embedded_fault=fault, quick=quick))


@pytest.mark.parametrize(("seed", "quick"), [(5, False), (31, True)])
def test_the_reference_server_passes_every_webhooks_check(seed: int, quick: bool) -> None:
    result = run(seed, quick=quick)
    assert family_failures(result, FAMILY) == {}
    passed = family_passed(result, FAMILY)
    assert passed == set(endpoints.IDS) | set(deliveries.ALL_IDS)


BREAKS = {f.name: set(f.breaks) for f in catalogue() if f.name in WEBHOOK_FAULTS}


@pytest.mark.parametrize("fault", WEBHOOK_FAULTS)
def test_a_webhook_fault_fails_exactly_the_requirements_it_breaks(fault: str) -> None:
    found = set(family_failures(run(23, fault=fault), FAMILY))
    assert found == BREAKS[fault], f"{fault}: failed {sorted(found)}"


def test_a_receiver_over_its_bounds_fails_no_conformant_server_and_says_what_it_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A receiver that keeps nothing: every webhook of the reference server is dropped, as a
    # flood's would be. What the checks needed and did not get is not exercised, not failed.
    monkeypatch.setattr(receiver, "DEFAULT_LIMITS", receiver.ReceiverLimits(per_path=0))
    for waits in (deliveries, judging):  # the modules that wait WAIT_SECS for a delivery
        monkeypatch.setattr(waits, "WAIT_SECS", 3.0)
    result = run(31)
    assert family_failures(result, FAMILY) == {}
    counts = result.webhook_receiver
    assert counts is not None and counts.kept == 0 and counts.dropped > 0
    (failing_path,) = [r for r in result.requirements if r.requirement.id == "DLV-015"]
    assert "the receiver dropped" in (failing_path.reason_not_exercised or "")
    assert "to endpoint fail over its bounds" in (failing_path.reason_not_exercised or "")
