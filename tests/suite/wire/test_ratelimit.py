"""The rate-limit policy both HTTP stacks follow: how long to wait, when to give up, the limiter."""

from __future__ import annotations

import email.utils
import itertools
import math
import multiprocessing
import random
import time
from pathlib import Path

import pytest

from conformance.core.profile import RateLimitRule
from conformance.core.results import RateLimitCounts
from conformance.core.run_inputs import parse_rate
from conformance.judge.rate_limits import is_rate_limited
from conformance.suite.wire.ratelimit import (
    BACKOFF_CAP_S,
    RATE_LIMITED,
    RateLimitExhausted,
    RateLimiting,
    RequestWaits,
    SendLimiter,
    backoff_s,
    parse_retry_after,
    rule_problems,
)

NOW = 1_800_000_000.0


# -- Retry-After -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "seconds"), [("0", 0.0), ("1", 1.0), (" 120 ", 120.0), ("007", 7.0)]
)
def test_retry_after_in_delta_seconds(value: str, seconds: float) -> None:
    assert parse_retry_after(value, NOW) == seconds


def test_retry_after_as_an_http_date_is_the_time_left_until_it() -> None:
    assert parse_retry_after(email.utils.formatdate(NOW + 30, usegmt=True), NOW) == 30.0
    # the obsolete RFC 850 form and "-0000" are HTTP-dates too
    assert parse_retry_after("Fri, 15 Jan 2027 08:00:30 -0000", NOW) == 30.0


def test_a_date_in_the_past_means_now() -> None:
    assert parse_retry_after(email.utils.formatdate(NOW - 3600, usegmt=True), NOW) == 0.0


@pytest.mark.parametrize("value", [None, "", "soon", "-5", "1.5", "0x10", "Fri, 99 Foo 2027", "١٢"])
def test_a_malformed_retry_after_counts_as_absent(value: str | None) -> None:
    assert parse_retry_after(value, NOW) is None


def test_a_huge_retry_after_is_forever_not_an_error() -> None:
    assert parse_retry_after("9" * 5000, NOW) == math.inf
    assert parse_retry_after("99999999999", NOW) == 99999999999.0


# -- backoff ---------------------------------------------------------------------------------
class _Highest(random.Random):
    def uniform(self, a: float, b: float) -> float:
        return b


def test_backoff_doubles_from_half_a_second_up_to_the_cap() -> None:
    ceilings = [backoff_s(attempt, _Highest()) for attempt in range(10)]
    assert ceilings == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0, 30.0]
    assert backoff_s(10_000, _Highest()) == BACKOFF_CAP_S


def test_backoff_is_full_jitter_between_zero_and_the_ceiling() -> None:
    rng = random.Random(7)
    for attempt in range(8):
        draws = [backoff_s(attempt, rng) for _ in range(200)]
        ceiling = min(BACKOFF_CAP_S, 0.5 * 2**attempt)
        assert all(0.0 <= d <= ceiling for d in draws)
        assert min(draws) < ceiling * 0.2 and max(draws) > ceiling * 0.8  # spread, not fixed


# -- which answers are rate limits -----------------------------------------------------------
def test_429_and_503_with_retry_after_are_rate_limits_other_answers_are_judged() -> None:
    assert is_rate_limited(429, {}, None)
    assert is_rate_limited(503, {"retry-after": "1"}, None)
    assert not is_rate_limited(503, {}, None)
    assert not is_rate_limited(500, {"Retry-After": "1"}, None)
    assert not is_rate_limited(200, {}, None)


def test_a_profile_that_declares_503_has_every_503_waited_out() -> None:
    assert is_rate_limited(503, {}, RateLimitRule(status=503))


def test_the_profile_rule_names_every_difference_of_an_answer() -> None:
    rule = RateLimitRule(status=429, retry_after_required=True, error_code="rate_limited")
    assert rule_problems(rule, 429, {"Retry-After": "1"}, b'{"code":"rate_limited"}') == []
    problems = rule_problems(rule, 503, {"Retry-After": "later"}, b'{"code":"busy"}')
    assert problems == [
        "status 503, the profile declares 429",
        "no valid Retry-After header (got 'later'), the profile requires one",
        "error code 'busy', the profile declares 'rate_limited'",
    ]
    assert rule_problems(RateLimitRule(), 429, {}, b"not json") == []


# -- --rate-limit ----------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "rate"), [("25/s", 25.0), ("25", 25.0), (" 2.5/s ", 2.5)])
def test_a_rate_is_requests_a_second(text: str, rate: float) -> None:
    assert parse_rate(text) == rate


@pytest.mark.parametrize("text", ["0", "-1/s", "abc", "25/m", "inf", "nan", ""])
def test_a_rate_that_is_not_a_positive_number_a_second_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="--rate-limit must be"):
        parse_rate(text)


# -- the waits of one request ----------------------------------------------------------------
def _shared(slept: list[float], max_wait_s: float = 120.0) -> RateLimiting:
    return RateLimiting(sleep=slept.append, max_wait_s=max_wait_s, rng=_Highest())


def test_a_request_waits_as_told_and_the_wait_is_counted() -> None:
    slept: list[float] = []
    shared = _shared(slept)
    waits = RequestWaits(shared, deadline=None)
    waits.wait(429, "2")
    waits.wait(429, None)  # no Retry-After: backoff (the highest draw of attempt 1)
    assert slept == [2.0, 1.0]
    assert shared.counts == RateLimitCounts(waited_s=3.0)


def test_a_request_gives_up_at_once_rather_than_wait_past_its_bound() -> None:
    slept: list[float] = []
    shared = _shared(slept, max_wait_s=10.0)
    waits = RequestWaits(shared, deadline=None)
    waits.wait(429, "6")
    with pytest.raises(RateLimitExhausted, match=r"rate limited \(429, Retry-After '6' after 2"):
        waits.wait(429, "6")
    assert slept == [6.0]
    assert shared.counts.given_up == 1
    assert shared.last_reason.startswith(RATE_LIMITED)


@pytest.mark.parametrize("retry_after", ["0", "Thu, 01 Jan 1970 00:00:00 GMT"])
def test_retry_now_on_every_answer_waits_a_doubling_floor_and_gives_up(retry_after: str) -> None:
    # Issue 28: "Retry-After: 0" (or a past date) on every answer looped ~600 requests in 28 s.
    slept: list[float] = []
    waits = RequestWaits(_shared(slept, max_wait_s=10.0), deadline=None)
    with pytest.raises(RateLimitExhausted):
        for _ in range(1000):
            waits.wait(429, retry_after)
    assert slept[:3] == [0.1, 0.2, 0.4]
    assert len(slept) < 10 and sum(slept) <= 10.0


def test_no_wait_goes_past_the_run_budget() -> None:
    slept: list[float] = []
    shared = _shared(slept)
    waits = RequestWaits(shared, deadline=time.time() + 5)
    with pytest.raises(RateLimitExhausted, match="would go past the run's time budget"):
        waits.wait(503, "30")
    with pytest.raises(RateLimitExhausted):
        RequestWaits(shared, deadline=time.time() + 5).wait(429, "9" * 40)
    assert slept == []
    assert shared.counts.given_up == 2


# -- the client-side limiter -----------------------------------------------------------------
def test_the_limiter_spaces_sends_by_one_nth_of_a_second() -> None:
    limiter = SendLimiter(10.0)
    slots = [limiter.reserve() for _ in range(5)]
    gaps = [b - a for a, b in itertools.pairwise(slots)]
    assert all(gap == pytest.approx(0.1) for gap in gaps)


def test_the_limiter_wait_is_counted_and_never_past_the_deadline() -> None:
    slept: list[float] = []
    shared = RateLimiting(limiter=SendLimiter(2.0), sleep=slept.append)
    for _ in range(3):
        shared.before_send(deadline=None)
    assert len(slept) == 2 and slept[1] == pytest.approx(1.0, abs=0.05)
    assert shared.counts.limiter_waited_s == pytest.approx(sum(slept))
    shared.before_send(deadline=time.time() + 0.2)
    assert slept[-1] <= 0.2


def _send_times(path: str, rate: float, count: int, queue: multiprocessing.Queue[float]) -> None:
    shared = RateLimiting(limiter=SendLimiter(rate, Path(path)))
    for _ in range(count):
        shared.before_send(deadline=None)
        queue.put(time.time())


def test_processes_sharing_the_file_stay_under_the_rate_together(tmp_path: Path) -> None:
    rate, per_process = 20.0, 12
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[float] = context.Queue()
    path = str(tmp_path / "rate-limit")
    workers = [
        context.Process(target=_send_times, args=(path, rate, per_process, queue)) for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    times = sorted(queue.get(timeout=30) for _ in range(2 * per_process))
    for worker in workers:
        worker.join(timeout=30)
    # 24 sends at 20/s take 23/20 s at least; no second holds more than 20 (+1 at its edge)
    assert times[-1] - times[0] >= (2 * per_process - 1) / rate - 0.05
    for i, start in enumerate(times):
        assert sum(1 for t in times[i:] if t < start + 1.0) <= rate + 1
