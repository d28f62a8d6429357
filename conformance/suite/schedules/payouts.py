"""Payout schedules over time: the profile's transitions in generated orders, once each in a
fixed walk, and the business rules of a create and a replace.

- ``PayoutScheduleMachine`` creates schedules with generated requests (every deployment of the
  profile, amounts with up to the currency's decimals, with and without ``first_run_at``) and
  applies the profile's operations to them in any order, including replaces that break a
  business rule; the model says what each answer must be.
- ``walk_transitions`` applies every operation to a fresh schedule in every state the profile
  can reach, so each allowed and each refused transition is seen in every run.
- ``check_rules`` creates one schedule per deployment (``min_send_raw`` for each currency's
  decimals, ``next_run_at`` with and without ``first_run_at``), one per withdraw address of
  both merchants, refuses a create and a replace for each business rule (followed by a
  re-read), and replaces every field of a schedule.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, multiple, rule

from conformance.suite.schedules.payout_driver import PayoutDriver, ScheduleModel
from conformance.suite.schedules.payout_requests import PayoutFixtures, refused
from conformance.suite.stateful import ConformanceMachine, MachineContext


def not_usable(ctx: MachineContext) -> str | None:
    """Why payout schedules cannot be created from the profile's fixtures, if they cannot."""
    fixtures = PayoutFixtures(ctx.profile, ctx.contract, ctx.client.credential.merchant_id)
    if not fixtures.deployments:
        return "the profile's fixtures list no currency deployed on a chain"
    if not fixtures.addresses:
        return f"the profile's fixtures list no withdraw address for {fixtures.merchant_id}"
    return None


class PayoutScheduleMachine(ConformanceMachine):
    """Schedules created and operated on in generated orders."""

    schedules = Bundle("schedules")

    def __init__(self) -> None:
        super().__init__()
        self.driver = PayoutDriver(self.ctx, fatal=True)

    @rule(target=schedules, data=st.data())
    def create(self, data: st.DataObject) -> Any:
        request = data.draw(self.driver.fixtures.requests(), label="request")
        model = self.driver.create(request)
        return multiple() if model is None else model

    @rule(schedule=schedules, data=st.data())
    def operate(self, schedule: ScheduleModel, data: st.DataObject) -> None:
        operation = data.draw(st.sampled_from(self.driver.machine.operations), label="operation")
        request = None
        if self.driver.has_body(operation):
            request = data.draw(self.driver.fixtures.requests(), label="request")
        self.driver.perform(schedule, operation, request)

    @rule(schedule=schedules, data=st.data())
    def refuse_replace(self, schedule: ScheduleModel, data: st.DataObject) -> None:
        operations = [op for op in self.driver.machine.operations if self.driver.has_body(op)]
        refusals = [r for r in self.driver.fixtures.refusals() if not r.create_only]
        if not operations or not refusals:
            return
        operation = data.draw(st.sampled_from(operations), label="operation")
        refusal = data.draw(st.sampled_from(refusals), label="refusal")
        changes = data.draw(refusal.changes, label="changes")
        self.driver.refuse_replace(schedule, operation, changes, refusal)

    @rule(data=st.data())
    def refuse_create(self, data: st.DataObject) -> None:
        refusal = data.draw(st.sampled_from(self.driver.fixtures.refusals()), label="refusal")
        request = data.draw(self.driver.fixtures.requests(), label="request")
        changes = data.draw(refusal.changes, label="changes")
        self.driver.refuse_create(refused(request, changes), refusal)


def walk_transitions(ctx: MachineContext) -> None:
    """Every operation of the profile's transitions, in every reachable state."""
    driver = PayoutDriver(ctx, fatal=False)
    fixtures = driver.fixtures
    for state, path in driver.machine.paths().items():
        for operation in driver.machine.operations:
            ctx.transcript.restart()
            model = driver.create(fixtures.example())
            if model is None:
                continue
            for step in path:
                request = fixtures.different(model.request) if driver.has_body(step) else None
                driver.perform(model, step, request)
            if model.status != state:
                continue  # a step on the way was refused: noted there
            request = fixtures.different(model.request) if driver.has_body(operation) else None
            driver.perform(model, operation, request)


def check_rules(ctx: MachineContext, data: st.DataObject) -> None:
    """The business rules of a create and a replace, each once."""
    driver = PayoutDriver(ctx, fatal=False)
    fixtures = driver.fixtures
    # min_send_raw for every deployment; next_run_at without and then with first_run_at
    for deployment in fixtures.deployments:
        ctx.transcript.restart()
        driver.create(data.draw(fixtures.requests(first_run=False, deployment=deployment)))
    ctx.transcript.restart()
    driver.create(data.draw(fixtures.requests(first_run=True)))
    # every withdraw address of both merchants
    for address in fixtures.addresses:
        ctx.transcript.restart()
        driver.create(replace(fixtures.example(), withdraw_address_id=address), ids=("FIX-005",))
    other = PayoutDriver(ctx, fatal=False, client=ctx.other_client)
    for address in other.fixtures.addresses:
        ctx.transcript.restart()
        other.create(data.draw(other.fixtures.requests(address=address)), ids=("FIX-005",))
    # every business rule, on a create and on a replace of a fresh schedule
    replacing = [op for op in driver.machine.operations if driver.has_body(op)]
    for refusal in fixtures.refusals():
        ctx.transcript.restart()
        changes = data.draw(refusal.changes)
        base = data.draw(fixtures.requests())
        driver.refuse_create(refused(base, changes), refusal)
        if refusal.create_only:
            continue
        for operation in replacing:
            model = driver.create(fixtures.example())
            if model is not None:
                driver.refuse_replace(model, operation, changes, refusal)
    # a replace that changes every field
    for operation in replacing:
        ctx.transcript.restart()
        model = driver.create(fixtures.example())
        if model is not None:
            driver.perform(model, operation, fixtures.different(model.request))
