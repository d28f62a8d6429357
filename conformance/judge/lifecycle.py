"""The profile's state machines (profile 5) and the rules of an operation asked of a resource
whose state is known from earlier answers.

``StateMachine.of(profile, resource)`` reads a resource's states and transitions. The rules take
the states the resource may be in: the suite's model knows the one state; the validator knows
the states reachable from those earlier answers showed (``StateMachine.reachable``: a deposit or
an expiry need not show in the traffic).

- ``refusal_findings``: a transition its table does not allow from any of those states must be
  refused with the profile's ``invalid_state`` error (PAY-STATE-004, -005, -008, -009,
  SUB-STATE-003, PAYOUT-STATE-006, -009, -012, HELP-006).
- ``change_findings``: a state shown later must be one the earlier one leads to: a refused
  transition leaves its resource unchanged (the requirement of the refusal of the transition
  that leads there).
- ``idle_findings``: an operation sent without a body that leaves its resource in its state
  (a pause of a paused schedule) answers the resource unchanged (PAYOUT-STATE-008).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property

from conformance.core.profile import ErrorSpec, Profile, Transition
from conformance.core.results import Outcome
from conformance.judge.answers import Call
from conformance.judge.findings import NOT_JSON, Finding

CHECK = "state_transition"
IDLE_CHECK = "idle_transition"
UPDATED_AT = "updated_at"
CANCEL_PAYMENT = "cancelPayment"
ACCEPT_UNDERPAID = "acceptUnderpaidPayment"

# Per operation: the requirement of the move from the initial state, of the move from any
# other state, and of the refusal (the payments' refusals depend on the state: ``refusal_ids``).
TRANSITION_IDS: dict[str, tuple[str, str, str]] = {
    CANCEL_PAYMENT: ("PAY-STATE-003", "PAY-STATE-003", "PAY-STATE-005"),
    ACCEPT_UNDERPAID: ("PAY-STATE-006", "PAY-STATE-006", "PAY-STATE-009"),
    "testExpirePayment": ("HELP-005", "HELP-005", "HELP-006"),
    "cancelSubscription": ("SUB-STATE-002", "SUB-STATE-002", "SUB-STATE-003"),
    "replacePayoutSchedule": ("PAYOUT-STATE-004", "PAYOUT-STATE-005", "PAYOUT-STATE-006"),
    "pausePayoutSchedule": ("PAYOUT-STATE-007", "PAYOUT-STATE-008", "PAYOUT-STATE-009"),
    "retirePayoutSchedule": ("PAYOUT-STATE-010", "PAYOUT-STATE-011", "PAYOUT-STATE-012"),
}
# A resource shown in a state its earlier one never leads to: the requirements saying that a
# refused transition leaves it unchanged (a terminal state stays as it is).
UNCHANGED_IDS = {
    "payments": ("PAY-STATE-005", "PAY-STATE-009"),
    "subscriptions": ("SUB-STATE-003",),
    "payout_schedules": ("PAYOUT-STATE-006", "PAYOUT-STATE-009", "PAYOUT-STATE-012"),
}


@dataclass(frozen=True)
class StateMachine:
    """One resource's states and transitions, and the error a refused transition gets."""

    resource: str
    states: tuple[str, ...]
    initial: str
    transitions: tuple[Transition, ...]
    invalid_state: ErrorSpec

    @classmethod
    def of(cls, profile: Profile, resource: str) -> StateMachine:
        lifecycle = profile.lifecycle(resource)
        return cls(
            resource,
            lifecycle.states,
            lifecycle.initial_state,
            lifecycle.transitions,
            profile.error("status", "invalid_state"),
        )

    @cached_property
    def operations(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.operation for t in self.transitions))

    def target(self, operation: str, source: str) -> str | None:
        """The state ``operation`` moves a resource in ``source`` to; None: it is refused."""
        for transition in self.transitions:
            if transition.operation == operation and source in transition.sources:
                return transition.target
        return None

    def targets(self, operation: str) -> frozenset[str]:
        return frozenset(t.target for t in self.transitions if t.operation == operation)

    def sources(self, operation: str) -> tuple[str, ...]:
        found = (s for t in self.transitions if t.operation == operation for s in t.sources)
        return tuple(dict.fromkeys(found))

    def paths(self) -> dict[str, tuple[str, ...]]:
        """Every state reachable from the initial one, with the shortest list of operations
        that leads there (breadth first, in the profile's order)."""
        found: dict[str, tuple[str, ...]] = {self.initial: ()}
        queue = deque([self.initial])
        while queue:
            state = queue.popleft()
            for operation in self.operations:
                target = self.target(operation, state)
                if target is not None and target not in found:
                    found[target] = (*found[state], operation)
                    queue.append(target)
        return found

    @cached_property
    def reachable(self) -> dict[str, frozenset[str]]:
        """Per state, the states a resource in it may be in later (itself included)."""
        edges: dict[str, set[str]] = {s: set() for s in self.states}
        for t in self.transitions:
            for source in t.sources:
                edges.setdefault(source, set()).add(t.target)
        if self.resource == "payments":
            # Deposits (on chain, or by the deposit helper) happen without a transition of the
            # profile's table: a short one leads where accept-underpaid starts, a full one
            # where it ends.
            for t in self.transitions:
                if t.operation == ACCEPT_UNDERPAID:
                    edges.setdefault(self.initial, set()).update({*t.sources, t.target})
        found: dict[str, frozenset[str]] = {}
        for start in edges:
            seen, todo = {start}, [start]
            while todo:
                for nxt in edges.get(todo.pop(), ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            found[start] = frozenset(seen)
        return found

    def possible(self, seen: Collection[str]) -> frozenset[str]:
        """The states a resource may be in now, every state of ``seen`` having been its state
        at some earlier time (empty when they contradict each other)."""
        now = frozenset(self.states)
        for state in seen:
            now &= self.reachable.get(state, frozenset())
        return now

    def move_ids(self, operation: str, source: str) -> tuple[str, ...]:
        """The requirement of ``operation`` accepted from ``source``."""
        ids = TRANSITION_IDS.get(operation)
        if ids is None:
            return ()
        return (ids[0] if source == self.initial else ids[1],)

    def refusal_ids(self, operation: str, source: str) -> tuple[str, ...]:
        """The requirement of ``operation`` refused in ``source``."""
        if operation == CANCEL_PAYMENT and source in self.targets(operation):
            return ("PAY-STATE-004",)
        if operation == ACCEPT_UNDERPAID and source == self.initial:
            return ("PAY-STATE-008",)
        ids = TRANSITION_IDS.get(operation)
        return (ids[2],) if ids is not None else ()


def refusal_findings(
    machine: StateMachine,
    states: Collection[str],
    call: Call,
    *,
    known_valid: bool,
    resource_id: str = "",
) -> list[Finding]:
    """The answer to ``call``'s operation asked of a resource in one of ``states``: where the
    profile allows it from none of them, the profile's ``invalid_state`` error. ``known_valid``:
    the request is valid but for the state (the suite built it so), so another refusal fails
    too; otherwise (a recorded request) only an acceptance does."""
    operation = call.operation_id
    if not states or any(machine.target(operation, s) is not None for s in states):
        return []
    ids = tuple(dict.fromkeys(i for s in sorted(states) for i in machine.refusal_ids(operation, s)))
    what = f"{operation} of {resource_id or 'a resource'} in {' or '.join(sorted(states))}"
    spec = machine.invalid_state
    wanted = f"{spec.status}" + (f" {spec.code}" if spec.code else "")
    if call.success:
        starts = ", ".join(machine.sources(operation)) or "no state"
        return [
            Finding(
                CHECK, ids, Outcome.FAILED, f"{what}: accepted, but it starts only from {starts}"
            )
        ]
    if call.status == spec.status and (spec.code is None or call.code == spec.code):
        return [Finding(CHECK, ids, Outcome.PASSED, f"{what}: refused with {wanted}")]
    if not known_valid:
        return []  # refused for a reason the recorded request may have given
    got = f"{call.status}" + (f" {call.code}" if call.code else "")
    return [Finding(CHECK, ids, Outcome.FAILED, f"{what}: expected {wanted}, got {got}")]


def change_findings(
    machine: StateMachine, resource_id: str, before: str, now: str, where: str = ""
) -> list[Finding]:
    """A resource shown in ``before`` (in ``where``), now in ``now``: a state ``before`` leads
    to, or a transition to ``now`` was accepted where it must have been refused (the
    requirements of those refusals; of every refusal of the resource when no transition leads
    to ``now``)."""
    if before == now or before not in machine.reachable:
        return []
    was = f"{resource_id} was {before}" + (f" in {where}" if where else "") + f", now {now}: "
    unchanged = UNCHANGED_IDS.get(machine.resource, ())
    if now in machine.reachable[before]:
        return [
            Finding(CHECK, unchanged, Outcome.PASSED, was + "a change its state machine allows")
        ]
    ids = tuple(
        i
        for operation in machine.operations
        if now in machine.targets(operation)
        for i in machine.refusal_ids(operation, before)
    )
    return [
        Finding(CHECK, ids or unchanged, Outcome.FAILED, was + f"{before} never leads to {now}")
    ]


def idle_findings(
    machine: StateMachine,
    source: str,
    call: Call,
    changed: Collection[str],
    *,
    known_valid: bool,
    resource_id: str = "",
) -> list[Finding]:
    """An accepted ``call`` without a body whose transition leaves a resource in ``source`` as it
    is: the answer shows it unchanged. ``changed``: the fields that differ from the resource's
    previous answer. ``known_valid``: nothing else can have changed it in between (the suite
    knows); otherwise a change of other fields than ``updated_at`` leaves no verdict."""
    operation = call.operation_id
    if not call.success or call.request is not NOT_JSON:
        return []
    if machine.target(operation, source) != source:
        return []
    ids = machine.move_ids(operation, source)
    what = f"{operation} of {resource_id or 'a resource'}, {source}"
    if not changed:
        return [Finding(IDLE_CHECK, ids, Outcome.PASSED, f"{what}: answered unchanged")]
    if set(changed) <= {UPDATED_AT} or known_valid:
        fields = ", ".join(sorted(changed))
        return [Finding(IDLE_CHECK, ids, Outcome.FAILED, f"{what}: changed ({fields})")]
    return []
