"""Idempotency-Keys: the ids a request's key is judged under, and when an answer is a replay."""

from __future__ import annotations

from conformance.judge.idempotency import accepted_key_ids, is_marked, replays

STORED = b'{"id":"pay_1","status":"pending"}'


def test_a_replay_is_the_stored_body_marked_as_one() -> None:
    assert replays(STORED, STORED, marked=True, marker_declared=True)


def test_a_marker_on_another_body_or_with_nothing_stored_replays_nothing() -> None:
    assert not replays(b'{"id":"pay_2"}', STORED, marked=True, marker_declared=True)
    assert not replays(STORED, None, marked=True, marker_declared=True)


def test_the_stored_body_without_the_declared_marker_is_no_replay_without_a_marker_it_is() -> None:
    assert not replays(STORED, STORED, marked=False, marker_declared=True)
    assert replays(STORED, STORED, marked=False, marker_declared=False)


def test_the_marker_reads_true_in_any_case() -> None:
    assert is_marked("True") and is_marked("true")
    assert not is_marked("false") and not is_marked(None)


def test_a_key_on_a_bound_is_also_a_value_on_a_limits_bound() -> None:
    assert accepted_key_ids(128, (1, 128)) == ("IDEM-004", "LIMIT-010")
    assert accepted_key_ids(1, (1, 128)) == ("IDEM-004", "LIMIT-010")
    assert accepted_key_ids(36, (1, 128)) == ("IDEM-004",)
