"""Rate limits are the server's right: the one policy both HTTP stacks of the suite follow.

The specification says "Rate limits: not shown", so a conformant server may answer any request
with 429, or with 503 and a ``Retry-After`` header (or with the status its profile declares in
``[rate_limit]``). Such an answer is never judged: the client waits and sends the same request
again, and the check is judged on the answer after the wait.

- **How long.** As ``Retry-After`` says (delta-seconds, or an HTTP-date); a malformed value
  counts as absent, and without one the wait is exponential backoff with full jitter (a random
  time up to 0.5 s, doubling per attempt, capped at 30 s). Never less than a floor that
  doubles per attempt (0.1 s, 0.2 s, ...): "Retry-After: 0" on every answer is no loop.
- **Bounds.** No wait goes past the run's budget (``run --max-duration``) and one request waits
  at most ``MAX_WAIT_PER_REQUEST_S`` in all. A request that cannot get through within them is
  given up at once (waiting until a bound only to give up then would spend it for nothing):
  the client raises an error whose message says "not exercised: rate limited (...)", and the
  plugin records what it cut short as not exercised, never failed (in a state machine the error
  ends its sequences there: ``stateful``); the run is then incomplete (exit 2).
- **The resend.** Same method, URL, body and Idempotency-Key, re-signed with a fresh timestamp
  and nonce. A request built on purpose to test authentication keeps what it tests:
  an explicit nonce is kept (a replayed nonce stays a replay); an explicit timestamp keeps its
  offset from now, not its absolute value (a timestamp 10 minutes old stays 10 minutes old, one
  inside the window stays inside it); explicit authentication headers are set again after
  signing and headers removed on purpose stay removed; an unsigned request stays unsigned.
  The ``requests`` session re-signs by applying its auth to the prepared request again.
- **What is seen.** Observers (a ``stateful.Transcript``) and evidence see the final answer
  only; the recording (``--record``, the wiretap below both stacks) keeps every real exchange,
  the 429s included.
- **Client-side limit.** ``SendLimiter`` (``run --rate-limit N/s``) spaces the sends of every
  process of a run: a small file holds the next free send time, read and moved on under
  ``fcntl.flock``; each send reserves a slot and sleeps until it.
"""

from __future__ import annotations

import email.utils
import fcntl
import json
import math
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import NoReturn

from conformance.core.profile import RateLimitRule
from conformance.core.results import Evidence, RateLimitCounts
from conformance.judge.rate_limits import RETRY_AFTER

BACKOFF_START_S = 0.5
# The least wait before a resend, doubling per attempt (0.1 s, 0.2 s, ...): a server that says
# "Retry-After: 0" (or a date in the past) on every answer is not hammered in a loop, and the
# request reaches its bound (MAX_WAIT_PER_REQUEST_S, the run's budget) and is given up.
MIN_RESEND_GAP_S = 0.1
BACKOFF_CAP_S = 30.0
MAX_WAIT_PER_REQUEST_S = 120.0
RATE_LIMITED_REASON = "rate limited"
"""Starts the reason of every check left not exercised by a request given up for rate limits."""
RATE_LIMITED = f"not exercised: {RATE_LIMITED_REASON}"
"""Starts the message of every request given up for rate limits (the plugin looks for it)."""
RATE_STATUSES = (429, 503)
MAX_VIOLATIONS_KEPT = 20  # the first answers that broke the profile's rule, with evidence
MAX_RETRY_AFTER_DIGITS = 12  # more is "wait forever": int() of thousands of digits is refused
MAX_RETRY_AFTER_SHOWN = 40  # of the header's value, in the reason of a request given up


class RateLimitExhausted(Exception):
    """The request cannot get through within its bounds; the message says why."""


def rate_limited_reason(message: str) -> str | None:
    """The "rate limited (...)" reason a message carries (a not-exercised reason), or None."""
    at = message.find(RATE_LIMITED)
    if at < 0:
        return None
    return message[at + len("not exercised: ") :].split("\n", 1)[0]


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait as ``Retry-After`` says (0 for a date in the past); None when the value
    is absent or malformed (a negative number, a fraction, text that is no HTTP-date)."""
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return math.inf if len(text) > MAX_RETRY_AFTER_DIGITS else float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # "-0000": an HTTP-date is always GMT
        when = when.replace(tzinfo=UTC)
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def backoff_s(attempt: int, rng: random.Random) -> float:
    """Full jitter: a random wait up to ``BACKOFF_START_S * 2**attempt``, at most the cap."""
    ceiling = min(BACKOFF_CAP_S, BACKOFF_START_S * 2.0 ** min(attempt, 32))
    return rng.uniform(0.0, ceiling)


def rule_problems(
    rule: RateLimitRule, status: int, headers: Mapping[str, str], body: bytes
) -> list[str]:
    """What a rate-limit answer does differently from the profile's ``[rate_limit]``."""
    problems = []
    if status != rule.status:
        problems.append(f"status {status}, the profile declares {rule.status}")
    retry_after = next((v for k, v in headers.items() if k.lower() == RETRY_AFTER.lower()), None)
    if rule.retry_after_required and parse_retry_after(retry_after) is None:
        shown = "none" if retry_after is None else repr(retry_after[:80])
        problems.append(f"no valid Retry-After header (got {shown}), the profile requires one")
    if rule.error_code is not None:
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        code = document.get("code") if isinstance(document, dict) else None
        if code != rule.error_code:
            problems.append(f"error code {code!r}, the profile declares {rule.error_code!r}")
    return problems


class SendLimiter:
    """At most ``per_second`` sends a second across every process sharing ``path`` (or, without
    a path, across the threads of this process)."""

    def __init__(self, per_second: float, path: Path | None = None) -> None:
        self.per_second = per_second
        self.path = path
        self._lock = threading.Lock()
        self._next_free = 0.0

    def reserve(self) -> float:
        """The epoch time of this send's slot; the next one is 1/N s later."""
        gap = 1.0 / self.per_second
        with self._lock:
            if self.path is None:
                slot = max(time.time(), self._next_free)
                self._next_free = slot + gap
                return slot
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # released when the descriptor closes
                try:
                    next_free = float(os.pread(fd, 64, 0).decode("ascii") or 0.0)
                except (ValueError, UnicodeDecodeError):
                    next_free = 0.0
                slot = max(time.time(), next_free if math.isfinite(next_free) else 0.0)
                os.ftruncate(fd, 0)
                os.pwrite(fd, repr(slot + gap).encode("ascii"), 0)
            finally:
                os.close(fd)
            return slot


@dataclass
class RateLimiting:
    """What the clients of one test process share: the counts, the limiter, the profile's rule
    and its verdicts on the rate-limit answers seen (one per ``ClientStats``)."""

    limiter: SendLimiter | None = None
    rule: RateLimitRule | None = None
    max_wait_s: float = MAX_WAIT_PER_REQUEST_S
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)
    counts: RateLimitCounts = field(default_factory=RateLimitCounts)
    last_reason: str = ""
    answers_judged: int = 0
    # (message, evidence) of the answers that broke the profile's rule, the first few only
    violations: list[tuple[str, Evidence | None]] = field(default_factory=list)
    violations_seen: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, counts: RateLimitCounts) -> None:
        with self.lock:
            self.counts = self.counts + counts

    def gave_up(self, reason: str) -> None:
        with self.lock:
            self.last_reason = reason
            self.counts = self.counts + RateLimitCounts(given_up=1)

    def before_send(self, deadline: float | None) -> None:
        """Wait for this send's slot under ``--rate-limit`` (never past ``deadline``)."""
        if self.limiter is None:
            return
        delay = self.limiter.reserve() - time.time()
        if deadline is not None:
            delay = min(delay, deadline - time.time())
        if delay > 0:
            self.sleep(delay)
            self.add(RateLimitCounts(limiter_waited_s=delay))

    def judge(
        self,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        evidence: Callable[[], Evidence | None],
    ) -> None:
        """Count a rate-limit answer and, when the profile declares a rule, judge it."""
        self.add(
            RateLimitCounts(received_429=1) if status == 429 else RateLimitCounts(received_503=1)
        )
        if self.rule is None:
            return
        problems = rule_problems(self.rule, status, headers, body)
        shown = evidence() if problems and len(self.violations) < MAX_VIOLATIONS_KEPT else None
        with self.lock:
            self.answers_judged += 1
            if problems:
                self.violations_seen += 1
                if len(self.violations) < MAX_VIOLATIONS_KEPT:
                    self.violations.append(("; ".join(problems), shown))


class RequestWaits:
    """The waits of one request between its rate-limited answers and its resends."""

    def __init__(self, shared: RateLimiting, deadline: float | None) -> None:
        self.shared = shared
        self.deadline = deadline
        self.attempt = 0
        self.waited_s = 0.0

    def wait(self, status: int, retry_after: str | None) -> None:
        """Sleep before the next resend; ``RateLimitExhausted`` when it would go past a bound."""
        asked = parse_retry_after(retry_after)
        delay = asked if asked is not None else backoff_s(self.attempt, self.shared.rng)
        delay = max(delay, min(BACKOFF_CAP_S, MIN_RESEND_GAP_S * 2.0 ** min(self.attempt, 32)))
        shown = (retry_after or "")[:MAX_RETRY_AFTER_SHOWN]
        said = f"{status}, Retry-After {shown!r}" if asked is not None else f"{status}"
        if self.waited_s + delay > self.shared.max_wait_s:
            self._give_up(
                f"{said} after {self.attempt + 1} attempt(s) and {self.waited_s:.1f} s waited; "
                f"a request waits at most {self.shared.max_wait_s:g} s"
            )
        if self.deadline is not None and time.time() + delay >= self.deadline:
            self._give_up(f"{said}: waiting {delay:.1f} s would go past the run's time budget")
        self.shared.sleep(delay)
        self.shared.add(RateLimitCounts(waited_s=delay))
        self.waited_s += delay
        self.attempt += 1

    def _give_up(self, detail: str) -> NoReturn:
        reason = f"{RATE_LIMITED} ({detail})"
        self.shared.gave_up(reason)
        raise RateLimitExhausted(reason)
