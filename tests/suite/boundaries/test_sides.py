"""One side of a constraint's cases is one result (conformance/suite/boundaries/sides.py)."""

from __future__ import annotations

from typing import Any

from conformance.core.results import Outcome
from conformance.suite.boundaries.sides import Side


class Recorder:
    def __init__(self) -> None:
        self.results: list[tuple[Any, ...]] = []

    def record(self, *args: Any) -> None:
        self.results.append(args)


class Client:
    last_exchange = "the first failing exchange"


def recorded(side: Side, ids: tuple[str, ...] = ("SHAPE-040",)) -> list[tuple[Any, ...]]:
    recorder = Recorder()
    side.record(recorder, ids, "op body.amount pattern", "op", "refused")  # type: ignore[arg-type]
    return recorder.results


def test_a_side_whose_cases_all_pass_is_one_passed_result() -> None:
    side = Side()
    side.add([], "leading zero ('012')", Client())  # type: ignore[arg-type]
    [(check_id, ids, outcome, message, operation_id, evidence)] = recorded(side)
    assert (check_id, ids, outcome) == (
        "boundaries op body.amount pattern refused",
        ("SHAPE-040",),
        Outcome.PASSED,
    )
    assert message == "op body.amount pattern: 1 cases refused"
    assert (operation_id, evidence) == ("op", None)


def test_a_failing_case_fails_the_side_and_keeps_the_first_exchange() -> None:
    side = Side()
    side.add(["not refused: 201"], "leading zero ('012')", Client())  # type: ignore[arg-type]
    side.add([], "trailing dot ('12.')", Client())  # type: ignore[arg-type]
    [(_, _, outcome, message, _, evidence)] = recorded(side)
    assert outcome is Outcome.FAILED
    assert message == (
        "op body.amount pattern: 1 of 2 cases not refused: leading zero ('012'): not refused: 201"
    )
    assert evidence == "the first failing exchange"


def test_a_side_without_a_case_sent_is_not_exercised_and_says_why() -> None:
    side = Side(unexercised=["no payment could be made"])
    [(_, _, outcome, message, _, _)] = recorded(side)
    assert outcome is Outcome.NOT_EXERCISED
    assert "no case could be sent (1 not exercised: no payment could be made)" in message


def test_nothing_is_recorded_without_an_id_to_judge_it_or_a_case_tried() -> None:
    tried = Side()
    tried.add([], "x", Client())  # type: ignore[arg-type]
    assert recorded(tried, ids=()) == []
    assert recorded(Side()) == []
