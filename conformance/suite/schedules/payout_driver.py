"""Payout schedules: every operation sent, and its answer checked against its own request
(``judge.schedule_rules``, as the validator judges it) and against a model of what the server
must hold (the fields of the last create or replace, the state the profile's transitions lead
to, the last representation the server gave).

There is no read operation for a schedule: the server's state shows in the next operation's
answer. So every refused operation is followed by a re-read: an operation the profile allows in
the schedule's state (a pause of a paused schedule changes nothing), whose answer must show the
fields unchanged; where the profile allows none (a retired schedule), the refused operation
again, which must be refused again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.core.contract import operation as contract_operation
from conformance.core.formats import parse_date_time
from conformance.core.profile import ErrorSpec
from conformance.judge.lifecycle import StateMachine, idle_findings
from conformance.judge.outcomes import status_problems, summary
from conformance.judge.schedule_rules import ScheduleRules, field_problems
from conformance.suite.factories import ABSENT
from conformance.suite.schedules.calls import Answer, Calls, advanced
from conformance.suite.schedules.payout_requests import (
    PayoutFixtures,
    Refusal,
    ScheduleRequest,
    refused,
)
from conformance.suite.stateful import MachineContext, compact
from conformance.suite.wire.client import SuiteClient

RESOURCE = "payout_schedules"
CREATE = "createPayoutSchedule"
RETIRE = "retirePayoutSchedule"


@dataclass
class ScheduleModel:
    """What the server must hold for one schedule."""

    id: str
    request: ScheduleRequest
    sent: dict[str, Any]  # the body of the last create or replace
    status: str
    seen: dict[str, Any]  # the last representation the server gave
    changed_mono: float  # when the answer of the last change arrived (monotonic clock)

    def __repr__(self) -> str:  # hypothesis prints bundle values in a failure
        return f"schedule {self.id} ({self.status})"


class PayoutDriver:
    """Sends payout schedule operations for one test and checks every answer."""

    def __init__(
        self, ctx: MachineContext, *, fatal: bool, client: SuiteClient | None = None
    ) -> None:
        self.ctx = ctx
        self.fatal = fatal
        self.client = client or ctx.client
        self.calls = Calls(ctx)
        profile = ctx.profile
        merchant = self.client.credential.merchant_id
        key = f"schedules.payouts.{merchant}"
        if key not in ctx.extra:  # made once per test: every example of a machine uses it
            machine = StateMachine.of(profile, RESOURCE)
            ctx.extra[key] = (
                PayoutFixtures(profile, ctx.contract, merchant),
                machine,
                {
                    op: contract_operation(op, ctx.contract).has_request_body
                    for op in machine.operations
                },
            )
        self.fixtures, self.machine, self._with_body = ctx.extra[key]
        self.retired = self.machine.targets(RETIRE)
        self.business_rule = profile.error("status", "business_rule")
        self.rules = ScheduleRules(profile)

    # -- recording ------------------------------------------------------------------------
    def check(self, ids: tuple[str, ...] | list[str], ok: bool, message: str) -> bool:
        return self.ctx.verdicts.check(list(ids), ok, message, fatal=self.fatal)

    def expect(
        self, ids: tuple[str, ...] | list[str], answer: Answer, specs: list[ErrorSpec], what: str
    ) -> bool:
        """The answer is one of ``specs`` (status, and code where the profile pins one)."""
        ok = any(not status_problems(answer.response, spec) for spec in specs)
        wanted = " or ".join(f"{s.status}" + (f" {s.code}" if s.code else "") for s in specs)
        return self.check(ids, ok, f"{what}: expected {wanted}, got {summary(answer.response)}")

    def judge(self, answer: Answer) -> None:
        """The answer against its own request (``judge.schedule_rules``)."""
        call = self.calls.judged(answer)
        self.ctx.verdicts.findings(self.rules.payout(call), fatal=self.fatal)

    def succeeded(self, ids: tuple[str, ...] | list[str], answer: Answer, operation: str) -> bool:
        expected = self.ctx.profile.success_status(operation)
        return self.ctx.verdicts.status(
            list(ids), answer.response, expected, operation, fatal=self.fatal
        )

    def send(self, operation: str, *, path_id: str | None = None, body: Any = ABSENT) -> Answer:
        return self.calls.send(operation, path_id=path_id, body=body, client=self.client)

    def has_body(self, operation: str) -> bool:
        return bool(self._with_body.get(operation, False))

    # -- operations -----------------------------------------------------------------------
    def create(
        self, request: ScheduleRequest, *, ids: tuple[str, ...] = ("OPS-003",)
    ) -> ScheduleModel | None:
        body = request.body(self.calls.clock)
        self.ctx.transcript.step(f"create a payout schedule: {request.describe()}")
        answer = self.send(CREATE, body=body)
        if not self.succeeded(ids, answer, CREATE):
            return None
        found = answer.body
        if not self.check(ids, isinstance(found.get("id"), str), "the schedule has no string id"):
            return None
        model = ScheduleModel(
            str(found["id"]), request, body, self.machine.initial, found, answer.finished_mono
        )
        self.check(
            ["PAYOUT-STATE-003"],
            found.get("status") == self.machine.initial,
            f"a new schedule has status {found.get('status')!r}, expected {self.machine.initial!r}",
        )
        self.judge(answer)
        self.representation(answer)
        return model

    def refuse_create(self, request: ScheduleRequest, refusal: Refusal) -> None:
        body = request.body(self.calls.clock)
        self.ctx.transcript.step(f"create a payout schedule with {refusal.name}: refused")
        answer = self.send(CREATE, body=body)
        what = f"a schedule with {refusal.name}"
        if refusal.judged:
            call = self.calls.judged(answer)
            self.ctx.refused(refusal.requirement_ids, call, what, fatal=self.fatal)
        else:
            self.expect(refusal.requirement_ids, answer, [self.business_rule], what)

    def perform(
        self,
        model: ScheduleModel,
        operation: str,
        request: ScheduleRequest | None = None,
        *,
        unchanged_ids: tuple[str, ...] = (),
    ) -> None:
        """Send ``operation`` and check its answer against what the profile's transitions say
        (``unchanged_ids``: this is the re-read after a refusal those ids name)."""
        source = model.status
        target = self.machine.target(operation, source)
        with_body = self.has_body(operation)
        request = (request or model.request) if with_body else None
        body: Any = ABSENT
        if request is not None:
            body = request.body(self.calls.clock)
        title = request.describe() if request is not None else ""
        verb = "re-read through " if unchanged_ids else ""
        title = f": {title}" if title else ""
        self.ctx.transcript.step(f"{verb}{operation} of the {source} {model.id}{title}")
        answer = self.send(operation, path_id=model.id, body=body)
        if target is None:  # a re-read is an allowed operation: this is no re-read
            self.ctx.verdicts.refusal(
                self.machine, source, self.calls.judged(answer), model.id, fatal=self.fatal
            )
            self.reread(model, operation, request, self.machine.refusal_ids(operation, source))
            return
        ids = self.machine.move_ids(operation, source) or ("OPS-003",)
        if not self.succeeded((*ids, *unchanged_ids, "OPS-003"), answer, operation):
            return
        found = answer.body
        if unchanged_ids and not self.same_fields(answer, model, unchanged_ids):
            return  # the refused operation did change it: the model no longer says what is
        if request is None and target == source:  # nothing to do: the schedule as it was
            changed = [
                k for k in model.seen.keys() | found.keys() if model.seen.get(k) != found.get(k)
            ]
            idle = idle_findings(
                self.machine,
                source,
                self.calls.judged(answer),
                changed,
                known_valid=True,
                resource_id=model.id,
            )
            if not idle:
                raise RuntimeError(f"{operation} of a {source} schedule is no idle transition")
            self.ctx.verdicts.findings(idle, _difference(model.seen, found), fatal=self.fatal)
        self.check(
            ids,
            found.get("status") == target,
            f"{operation} of a {source} schedule: status {found.get('status')!r}, "
            f"expected {target!r}",
        )
        before = model.seen
        changed_mono = model.changed_mono
        model.status = target
        if request is not None:
            model.request, model.sent = request, body
        self.judge(answer)
        if with_body:
            self.replaced(answer, before, changed_mono)
        else:  # a pause or a retire keeps the fields
            problems = self._field_problems(found, model)
            self.check(ids, not problems, "the schedule has " + "; ".join(problems))
        self.representation(answer)
        if target in self.retired and source not in self.retired:
            lo, hi = self.calls.clock.window(answer.started, answer.finished)
            moment = parse_date_time(found.get("retired_at"))
            self.check(
                (*ids, "PAYOUT-012"),
                moment is not None and lo <= moment <= hi,
                f"retired_at {found.get('retired_at')!r} is not the time of the retire "
                f"(between {lo.isoformat()} and {hi.isoformat()} on the server's clock)",
            )
        if found != before:
            model.changed_mono = answer.finished_mono
        model.seen = found

    def refuse_replace(
        self, model: ScheduleModel, operation: str, changes: dict[str, Any], refusal: Refusal
    ) -> None:
        """A replace that breaks a business rule: refused as the profile says (or as an invalid
        state when the schedule cannot be replaced at all: the profile does not say which
        wins), then a re-read."""
        request = refused(model.request, changes)
        body = request.body(self.calls.clock)
        name, ids = refusal.name, refusal.requirement_ids
        self.ctx.transcript.step(f"{operation} of the {model.status} {model.id} with {name}")
        answer = self.send(operation, path_id=model.id, body=body)
        specs = [self.business_rule]
        if self.machine.target(operation, model.status) is None:
            specs.append(self.machine.invalid_state)
        what = f"{operation} with {name}"
        if refusal.judged:
            call = self.calls.judged(answer)
            self.ctx.refused(ids, call, what, also=specs[1:], fatal=self.fatal)
        else:
            self.expect(ids, answer, specs, what)
        self.reread(model, operation, request, ids, specs)

    def reread(
        self,
        model: ScheduleModel,
        refused_operation: str,
        refused_request: ScheduleRequest | None,
        ids: tuple[str, ...],
        specs: list[ErrorSpec] | None = None,
    ) -> None:
        """Show that a refused operation changed nothing."""
        allowed = [
            op
            for op in self.machine.operations
            if not self.has_body(op) and self.machine.target(op, model.status) is not None
        ]
        allowed.sort(
            key=lambda op: (
                self.machine.target(op, model.status) != model.status,
                self.machine.target(op, model.status) in self.retired,
            )
        )
        if allowed:
            self.perform(model, allowed[0], unchanged_ids=ids)
            return
        # Nothing is allowed in this state: the refused operation is refused again.
        body: Any = ABSENT
        if refused_request is not None:
            body = refused_request.body(self.calls.clock)
        self.ctx.transcript.step(f"re-read: {refused_operation} of the {model.status} {model.id}")
        answer = self.send(refused_operation, path_id=model.id, body=body)
        what = f"{refused_operation} again: the {model.status} schedule"
        if specs is None:
            call = self.calls.judged(answer)
            self.ctx.verdicts.refusal(self.machine, model.status, call, what, fatal=self.fatal)
        else:
            self.expect(ids, answer, specs, what)

    # -- checks of a representation -------------------------------------------------------
    def same_fields(self, answer: Answer, model: ScheduleModel, ids: tuple[str, ...]) -> bool:
        problems = self._field_problems(answer.body, model)
        return self.check(
            ids, not problems, "after the refusal the schedule has " + "; ".join(problems)
        )

    def _field_problems(self, found: dict[str, Any], model: ScheduleModel) -> list[str]:
        """The fields ``found`` does not keep of the model's schedule."""
        problems = field_problems(model.sent, found)
        if found.get("id") != model.id:
            problems.insert(0, f"id {compact(found.get('id'))}, expected {model.id!r}")
        return problems

    def representation(self, answer: Answer) -> None:
        """A status of the profile's, and ``enabled`` a boolean."""
        found = answer.body
        status = found.get("status")
        self.check(
            ["PAYOUT-STATE-001"],
            status in self.machine.states,
            f"status {compact(status)} is not one of {', '.join(self.machine.states)}",
        )
        enabled = found.get("enabled")
        self.check(["PAYOUT-STATE-002"], isinstance(enabled, bool), f"enabled {compact(enabled)}")

    def replaced(self, answer: Answer, before: dict[str, Any], changed_mono: float) -> None:
        """A replace moved ``updated_at`` on from the schedule's last change."""
        found = answer.body
        moved = advanced(
            before.get("updated_at"),
            found.get("updated_at"),
            answer.started_mono - changed_mono,
        )
        self.check(
            ["PAYOUT-010"],
            moved is not False,
            f"updated_at {compact(found.get('updated_at'))} after a replace, was "
            f"{compact(before.get('updated_at'))}",
        )


def _difference(before: dict[str, Any], after: dict[str, Any]) -> str:
    keys = sorted(set(before) | set(after))
    changes = [
        f"{key} {compact(before.get(key))} -> {compact(after.get(key))}"
        for key in keys
        if before.get(key) != after.get(key)
    ]
    return "; ".join(changes[:6]) or "(no difference)"
