"""Proof of the webhooks family (conformance/suite/webhooks/).

Against the unfaulted reference server every check of the family passes, whatever the seed, and
every requirement it is marked with is exercised (the embedded server reaches the suite's
receiver on loopback); against a reference server with one webhook fault switched on, the family
fails exactly the requirements the fault names.
"""

from __future__ import annotations

import pytest

from conformance.core.results import RunResult
from conformance.engine.runner import RunOptions, run_suite
from conformance.reference.faults import catalogue
from conformance.suite.webhooks import deliveries, endpoints
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
