"""``--workers auto`` (conformance/engine/workers.py): processes for the cores and the round trip.

Never more than the cores against a server that answers at once (on 2 cores, 8 processes cost
three times the CPU of 2 and are no faster), more as the round trip grows, and never more than
``MAX_AUTO_WORKERS``.
"""

from __future__ import annotations

import pytest

from conformance.engine.workers import MAX_AUTO_WORKERS, choose_workers, usable_cores


@pytest.mark.parametrize(
    ("cores", "round_trip_ms", "embedded", "workers"),
    [
        (2, 0.5, True, 2),  # the embedded server on a small machine
        (2, 1.5, False, 2),  # a local server
        (1, 1.0, False, 1),
        (8, 1.0, True, 2),  # the embedded server is one process
        (4, 2.0, False, 4),  # a local server may use every core
        (2, 21.0, False, 6),
        (2, 50.0, True, 8),  # run --latency-ms 50
        (1, 50.0, False, 6),
        (16, 80.0, False, MAX_AUTO_WORKERS),
    ],
)
def test_auto_picks_from_the_cores_and_the_round_trip(
    cores: int, round_trip_ms: float, embedded: bool, workers: int
) -> None:
    assert choose_workers(cores, round_trip_ms, embedded=embedded).workers == workers


@pytest.mark.parametrize(
    ("cores", "round_trip_ms", "rate_limit", "workers"),
    [
        (2, 55.0, 25.0, 2),  # a rate-limited sandbox far away: 8 without --rate-limit
        (2, 3.0, 20.0, 2),  # never fewer than the cores
        (2, 55.0, 100.0, 7),  # enough processes to send 100 requests a second
        (2, 55.0, 1000.0, MAX_AUTO_WORKERS),
    ],
)
def test_under_a_client_rate_limit_auto_picks_no_more_than_it_takes_to_send_that_many(
    cores: int, round_trip_ms: float, rate_limit: float, workers: int
) -> None:
    choice = choose_workers(cores, round_trip_ms, rate_limit=rate_limit)
    assert choice.workers == workers
    assert choice.why.endswith(f", --rate-limit {rate_limit:g}/s")


def test_auto_says_what_it_picked_and_why() -> None:
    choice = choose_workers(2, 21.4)
    assert choice.line() == "workers: 6 (auto: 2 cores, 21 ms round trip)"
    assert choose_workers(1, 0.2).why == "1 core, 0 ms round trip"


def test_the_usable_cores_are_at_least_one() -> None:
    assert usable_cores() >= 1
