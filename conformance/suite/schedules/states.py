"""A resource's states and transitions as the profile declares them."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from conformance.core.profile import Profile, Transition


@dataclass(frozen=True)
class StateMachine:
    resource: str
    states: tuple[str, ...]
    initial: str
    transitions: tuple[Transition, ...]

    @classmethod
    def of(cls, profile: Profile, resource: str) -> StateMachine:
        lifecycle = profile.lifecycle(resource)
        return cls(resource, lifecycle.states, lifecycle.initial_state, lifecycle.transitions)

    @property
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
