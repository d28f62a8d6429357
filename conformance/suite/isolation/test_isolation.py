"""Tenant isolation: the second merchant of the profile against the first one's objects.

An id of another merchant behaves exactly like an unknown id (the profile's not-found status
and code) and changes nothing, as the owner's re-reads show; no list, delivery list or
statement shows another merchant's objects; order numbers and endpoint ids are per merchant;
each credential acts for the merchant the profile gives it.
"""

from __future__ import annotations

import pytest

from conformance.suite.isolation.machine import REQUIREMENT_IDS, bound, tour
from conformance.suite.isolation.scenarios import (
    NO_OWNER_LINE,
    STATEMENT_IDS,
    WEBHOOK_IDS,
    statements_and_credentials,
    webhook_scopes,
)
from conformance.suite.stateful import MachineContext, machine_settings, run_guarded, run_machine

pytestmark = pytest.mark.family("isolation")

# Examples and steps of the machine (the tour after it names every operation once).
RUNS = {False: (20, 20), True: (3, 8)}  # by --quick


@pytest.mark.requirement(*REQUIREMENT_IDS)
def test_another_merchants_ids_behave_as_unknown_ids(machine_context: MachineContext) -> None:
    machine = bound(machine_context)
    # The machine first: a failure it finds is recorded with its shrunk step list; the tour
    # then makes sure that every operation was named, and records what the machine missed.
    run_machine(machine, machine_settings(*RUNS[machine_context.quick]))
    run_guarded(machine_context.verdicts, lambda: tour(machine()))
    machine_context.verdicts.finish(
        "foreign ids",
        REQUIREMENT_IDS,
        not_reached={"HELP-009": "needs the profile's test helpers"},
    )


@pytest.mark.requirement(*WEBHOOK_IDS)
def test_webhook_endpoints_and_deliveries_are_per_merchant(
    machine_context: MachineContext,
) -> None:
    run_guarded(machine_context.verdicts, lambda: webhook_scopes(machine_context))
    machine_context.verdicts.finish("webhook scopes", WEBHOOK_IDS)


@pytest.mark.requirement(*STATEMENT_IDS)
def test_statements_and_credentials_are_per_merchant(machine_context: MachineContext) -> None:
    run_guarded(machine_context.verdicts, lambda: statements_and_credentials(machine_context))
    machine_context.verdicts.finish(
        "statements and credentials", STATEMENT_IDS, not_reached={"TEN-007": NO_OWNER_LINE}
    )
