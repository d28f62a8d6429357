"""The payment that expires by itself (PAY-STATE-010) needs the profile's minimum lifetime to
pass: it is created by the session's first test (one short test of this family is moved to the
front), and the test that looks at it runs last, so that the whole run is the waiting time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conformance.core.profile import Profile
from conformance.judge.payment_rules import PaymentRules
from conformance.suite.factories import Factories
from conformance.suite.payments.expiry import (
    EXPIRY_TEST,
    ExpiringPayment,
    create_expiring,
    handover_file,
)
from conformance.suite.plugin.collection import family_of
from conformance.suite.wire.client import SuiteClient

FIRST_TEST = "test_payment_scenario[quotes]"
FAMILY = "payments"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The expiry test last; one short test of the family first (another of its tests when
    the selection left that one out), so that the payment it watches is created when the
    session starts."""
    last = [item for item in items if item.name == EXPIRY_TEST]
    if not last:
        return
    rest = [item for item in items if item.name != EXPIRY_TEST]
    family = [item for item in rest if family_of(item) == FAMILY]
    first = [item for item in family if item.name == FIRST_TEST][:1] or family[:1]
    items[:] = first + [item for item in rest if item not in first] + last


@pytest.fixture(scope="session")
def expiring_payment(
    request: pytest.FixtureRequest,
    suite_client: SuiteClient,
    conformance_profile: Profile,
    effective_contract: dict[str, Any],
    conformance_settings: Any,
) -> ExpiringPayment | None:
    """None in --quick (nothing waits there) or when the profile names no expired state."""
    rules = PaymentRules(conformance_profile)
    if conformance_settings.quick or rules.expired is None:
        return None
    factories = Factories(suite_client, conformance_profile, effective_contract)
    handover = handover_file(getattr(request.config, "workerinput", None))
    return create_expiring(factories, rules, handover)


@pytest.fixture(autouse=True)
def _start_the_expiry_clock(request: pytest.FixtureRequest) -> Iterator[None]:
    """The family's first test creates the expiring payment (when its test will run)."""
    if any(item.name == EXPIRY_TEST for item in request.session.items):
        request.getfixturevalue("expiring_payment")
    yield
