"""The fixtures conformance checks ask for: the settings, profile and target of the run, both
merchants' clients, the effective contract, a state machine's context and the check recorder.
All are lazy: a session without conformance checks builds none of them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conformance.core.case_coverage import CaseLog
from conformance.core.profile import Profile
from conformance.core.results import Target
from conformance.suite.plugin.collection import family_of
from conformance.suite.plugin.options import SuiteSettings
from conformance.suite.plugin.results import _item_state
from conformance.suite.plugin.session import _STATE, _SessionState
from conformance.suite.wire.check_properties import CheckRecorder
from conformance.suite.wire.client import SuiteClient

EMBEDDED_TARGET_FIXTURE = "embedded_reference_target"  # conformance.engine.embedded


def _state(request: pytest.FixtureRequest) -> _SessionState:
    return request.config.stash[_STATE]


@pytest.fixture(scope="session")
def conformance_settings(request: pytest.FixtureRequest) -> SuiteSettings:
    return _state(request).settings


@pytest.fixture(scope="session")
def conformance_seed(conformance_settings: SuiteSettings) -> int:
    return conformance_settings.seed


@pytest.fixture(scope="session")
def conformance_profile(request: pytest.FixtureRequest) -> Profile:
    return _state(request).load_profile()


@pytest.fixture(scope="session")
def conformance_target(
    request: pytest.FixtureRequest, conformance_settings: SuiteSettings
) -> Target:
    s = conformance_settings
    if s.embedded_url is not None:
        return Target(s.embedded_url, embedded=True, fault=s.embedded_fault)
    if s.base_url is not None:
        return Target(s.base_url, embedded=False)
    # Without a URL: the engine's plugin (conformance.engine.embedded) starts a reference server.
    try:
        target: Target = request.getfixturevalue(EMBEDDED_TARGET_FIXTURE)
    except pytest.FixtureLookupError:
        raise pytest.UsageError(
            "no --base-url given and the embedded reference server is not available "
            "(plugin payment_conformance_embedded not loaded): give --base-url"
        ) from None
    return target


@pytest.fixture(scope="session")
def suite_client(
    request: pytest.FixtureRequest, conformance_target: Target, conformance_profile: Profile
) -> Iterator[SuiteClient]:
    stats = _state(request).stats
    with SuiteClient(
        conformance_target.base_url, conformance_profile, conformance_profile.primary, stats=stats
    ) as client:
        yield client


@pytest.fixture(scope="session")
def other_client(
    request: pytest.FixtureRequest, conformance_target: Target, conformance_profile: Profile
) -> Iterator[SuiteClient]:
    stats = _state(request).stats
    with SuiteClient(
        conformance_target.base_url,
        conformance_profile,
        conformance_profile.secondary,
        stats=stats,
    ) as client:
        yield client


@pytest.fixture(scope="session")
def effective_contract(conformance_profile: Profile) -> dict[str, Any]:
    from conformance.core.contract import effective_contract as build

    return build(conformance_profile)


@pytest.fixture
def machine_context(
    request: pytest.FixtureRequest,
    suite_client: SuiteClient,
    other_client: SuiteClient,
    conformance_profile: Profile,
    effective_contract: dict[str, Any],
    conformance_settings: SuiteSettings,
    check_recorder: CheckRecorder,
) -> Iterator[Any]:
    """A ``stateful.MachineContext`` for one test: both merchants' clients and factories, and
    verdicts recorded under the test's family, with a transcript of every exchange."""
    from conformance.suite.factories import Factories
    from conformance.suite.stateful import MachineContext, Transcript, Verdicts

    transcript = Transcript(_state(request).secrets).attach(suite_client, other_client)
    ctx = MachineContext(
        client=suite_client,
        other_client=other_client,
        factories=Factories(suite_client, conformance_profile, effective_contract),
        other_factories=Factories(other_client, conformance_profile, effective_contract),
        profile=conformance_profile,
        contract=effective_contract,
        verdicts=Verdicts(check_recorder, check_recorder.family, transcript),
        quick=conformance_settings.quick,
    )
    try:
        yield ctx
    finally:
        transcript.detach(suite_client, other_client)


@pytest.fixture
def check_recorder(request: pytest.FixtureRequest) -> CheckRecorder:
    item = request.node
    item_state = _item_state(item)
    if item_state.recorder is None:
        item_state.recorder = CheckRecorder(
            family_of(item), _state(request).secrets, item_state.operation_id
        )
    return item_state.recorder


@pytest.fixture
def record_operation(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """``record_operation("createPayment")``: the operation this test exercised."""
    item_state = _item_state(request.node)

    def record(operation_id: str) -> None:
        item_state.operation_id = operation_id
        if item_state.recorder is not None:
            item_state.recorder.operation_id = operation_id

    return record


@pytest.fixture
def case_log() -> CaseLog:  # TEMP(h21-params): the plugin's real fixture comes from issue 21
    """The (operation, constraint, near-miss class) triples one test applied and sent."""
    return CaseLog()
