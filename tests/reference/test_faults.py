"""The fault catalogue and its probes.

For every fault: a server started with it shows the broken behaviour (its probe passes), and the
unfaulted server does not (the same probe raises AssertionError). A catalogue fault without a
probe, a probe without a fault, or a fault naming an unknown requirement fails here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conformance.core.profile import Profile
from conformance.reference.faults import (
    CATEGORIES,
    FaultCatalogueError,
    catalogue,
    load_catalogue,
)
from conformance.reference.server import ReferenceServer
from tests.reference.faults import Probe, ProbeFn
from tests.reference.faults.probes_core import PROBES as CORE_PROBES
from tests.reference.faults.probes_domain import PROBES as DOMAIN_PROBES
from tests.reference.faults.probes_isolation import PROBES as ISOLATION_PROBES
from tests.reference.faults.probes_near_misses import PROBES as NEAR_MISS_PROBES
from tests.reference.faults.probes_payments import PROBES as PAYMENTS_PROBES
from tests.reference.faults.probes_responses import PROBES as RESPONSES_PROBES
from tests.reference.faults.probes_robustness import PROBES as ROBUSTNESS_PROBES
from tests.reference.faults.probes_schedules import PROBES as SCHEDULES_PROBES
from tests.reference.faults.probes_statements import PROBES as STATEMENTS_PROBES
from tests.reference.faults.probes_webhooks import PROBES as WEBHOOK_PROBES
from tests.reference.faults.probes_x402 import PROBES as X402_PROBES
from tests.reference.signed_client import SignedClient

REQUIREMENTS = Path(__file__).resolve().parents[2] / "conformance" / "requirements.yaml"
PROBES: dict[str, ProbeFn] = {
    **CORE_PROBES,
    **DOMAIN_PROBES,
    **ISOLATION_PROBES,
    **NEAR_MISS_PROBES,
    **PAYMENTS_PROBES,
    **ROBUSTNESS_PROBES,
    **SCHEDULES_PROBES,
    **RESPONSES_PROBES,
    **STATEMENTS_PROBES,
    **WEBHOOK_PROBES,
    **X402_PROBES,
}
NAMES = [fault.name for fault in catalogue()]


def _requirement_ids() -> set[str]:
    data = yaml.safe_load(REQUIREMENTS.read_text(encoding="utf-8"))
    return {str(r["id"]) for r in data["requirements"]}


def test_catalogue_is_large_and_spread_over_the_categories() -> None:
    faults = catalogue()
    core = [f for f in faults if f.source == "core.yaml"]
    assert len(core) >= 28
    assert len(faults) >= 40
    assert {f.category for f in core} == set(CATEGORIES)


def test_every_fault_breaks_known_requirements() -> None:
    known = _requirement_ids()
    unknown = {f.name: [r for r in f.breaks if r not in known] for f in catalogue()}
    assert {name: ids for name, ids in unknown.items() if ids} == {}


def test_every_fault_has_a_probe_and_every_probe_a_fault() -> None:
    assert sorted(set(NAMES) - set(PROBES)) == []
    assert sorted(set(PROBES) - set(NAMES)) == []


def test_a_malformed_catalogue_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "- name: Not Kebab\n  category: auth\n  description: x\n  breaks: [A]\n"
    )
    with pytest.raises(FaultCatalogueError, match="not kebab-case"):
        load_catalogue(tmp_path)
    (tmp_path / "bad.yaml").write_text(
        "- name: fine\n  category: weather\n  description: x\n  breaks: [A]\n"
    )
    with pytest.raises(FaultCatalogueError, match="category 'weather'"):
        load_catalogue(tmp_path)


def _probe(server: ReferenceServer, profile: Profile) -> Iterator[Probe]:
    with (
        SignedClient(server.base_url, profile.primary) as client,
        SignedClient(server.base_url, profile.secondary) as other,
    ):
        yield Probe(server.base_url, profile, client, other)


@pytest.fixture(scope="module")
def healthy(profile: Profile) -> Iterator[ReferenceServer]:
    with ReferenceServer(profile=profile) as server:
        yield server


@pytest.mark.parametrize("name", NAMES)
def test_probe_sees_the_fault_and_not_the_healthy_server(
    name: str, profile: Profile, healthy: ReferenceServer
) -> None:
    probe_fn = PROBES.get(name)
    assert probe_fn is not None, f"fault {name} has no probe"
    with ReferenceServer(profile=profile, faults=(name,)) as faulty:
        for probe in _probe(faulty, profile):
            probe_fn(probe)
    for probe in _probe(healthy, profile):
        with pytest.raises(AssertionError):
            probe_fn(probe)
