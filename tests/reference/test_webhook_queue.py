"""The order in which a claim sends the due deliveries it read."""

from __future__ import annotations

import itertools

from conformance.reference.webhook_queue import Candidate, send_order

_rowids = itertools.count(1)


def due(
    name: str,
    merchant: str = "m_a",
    endpoint: str = "ep_1",
    *,
    retry: bool = False,
    next_us: int = 0,
    failures: int = 0,
) -> Candidate:
    return Candidate(
        next(_rowids), name, merchant, endpoint, next_us, 0, retry, failures, failures > 0
    )


def names(candidates: list[Candidate]) -> list[str]:
    return [c.id for c in send_order(candidates)]


def test_failing_endpoints_go_last_those_that_failed_least_first() -> None:
    candidates = [
        due("dead_long", endpoint="ep_9", failures=40),
        due("dead_lately", endpoint="ep_8", failures=3),
        due("live", endpoint="ep_1"),
    ]
    assert names(candidates) == ["live", "dead_lately", "dead_long"]


def test_merchants_then_their_endpoints_take_turns() -> None:
    candidates = [
        due("a1", "m_a", "ep_1", next_us=1),
        due("a2", "m_a", "ep_1", next_us=2),
        due("a3", "m_a", "ep_2", next_us=3),
        due("b1", "m_b", "ep_1", next_us=4),
    ]
    assert names(candidates) == ["a1", "b1", "a3", "a2"]


def test_first_attempts_go_before_retries_then_the_earliest_due() -> None:
    candidates = [
        due("retry", retry=True, next_us=1),
        due("later", next_us=3),
        due("first", next_us=2),
    ]
    assert names(candidates) == ["first", "later", "retry"]
