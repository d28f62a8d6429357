"""What an answer gives back of what its request put."""

from __future__ import annotations

from conformance.judge.echoes import event_types_problems, shares_problems

PAID, EXPIRED = "payment.paid", "payment.expired"


def test_the_event_types_put_are_answered_each_once_in_any_order() -> None:
    assert event_types_problems([PAID, EXPIRED], [EXPIRED, PAID]) == []


def test_an_event_type_dropped_added_or_doubled_is_a_problem() -> None:
    assert event_types_problems([PAID, EXPIRED], [PAID])
    assert event_types_problems([PAID], [PAID, EXPIRED])
    assert event_types_problems([PAID], [PAID, PAID])
    assert event_types_problems([PAID], None)


def test_event_types_put_twice_leave_nothing_to_judge_the_acceptance_is_the_failure() -> None:
    assert event_types_problems([PAID, PAID], [PAID, PAID]) is None
    assert event_types_problems(None, [PAID]) is None


def test_the_shares_put_are_answered_with_their_bps_read_as_integers() -> None:
    sent = [{"merchant_id": "m_1", "bps": 2500}, {"merchant_id": "m_2", "bps": 500}]
    kept = [{"merchant_id": "m_2", "bps": 500.0}, {"merchant_id": "m_1", "bps": 2500}]
    assert shares_problems(sent, kept) == []
    assert shares_problems(sent, kept[:1])
    assert shares_problems(sent, [*kept, {"merchant_id": "m_3", "bps": 1}])


def test_an_empty_template_answers_no_share() -> None:
    assert shares_problems([], []) == []
    assert shares_problems([], [{"merchant_id": "m_1", "bps": 2500}])
    assert shares_problems(None, []) is None
