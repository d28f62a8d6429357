"""What the pytest plugin does with rate limits (``suite.wire.ratelimit`` is the policy).

- ``--rate-limit N/s``: one ``SendLimiter`` per test process, all sharing one file (the run's,
  ``--conformance-rate-file``; without it the controller makes one and hands it to its xdist
  workers), so that the processes together stay under N requests a second;
- a check cut short by a request given up for rate limits is not exercised, never failed
  (``spare_rate_limited``);
- RATE-001: when the profile declares ``[rate_limit]``, each test's rate-limit answers are
  judged against it (``answers_judged``, a check of the ``rate_limit`` family); the family's own
  test says why the requirement is not exercised when nothing was judged.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from conformance.core.results import CheckResult, Outcome, RateLimitCounts
from conformance.core.run_inputs import parse_rate
from conformance.suite.wire.client import ClientStats
from conformance.suite.wire.ratelimit import (
    RateLimiting,
    SendLimiter,
    rate_limited_reason,
)

REQUIREMENT = "RATE-001"
FAMILY = "rate_limit"
CHECK_ID = "rate_limit.answers"
RATE_FILE_INPUT = "conformance_rate_file"  # pytest-xdist workerinput key

_RATE_FILE = pytest.StashKey[Path]()
_OWN_RATE_FILE = pytest.StashKey[Path]()


def configure(config: pytest.Config, stats: ClientStats) -> None:
    """Give ``stats`` the run's send limiter when ``--rate-limit`` asks for one."""
    raw = config.getoption("--rate-limit")
    if raw is None:
        return
    try:
        rate = parse_rate(str(raw))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    given = config.getoption("--conformance-rate-file") or getattr(config, "workerinput", {}).get(
        RATE_FILE_INPUT
    )
    if given is not None:
        path = Path(given)
    else:
        fd, name = tempfile.mkstemp(prefix="payment-conformance-rate-")
        os.close(fd)
        path = Path(name)
        config.stash[_OWN_RATE_FILE] = path
    config.stash[_RATE_FILE] = path
    stats.rate_limiting.limiter = SendLimiter(rate, path)


def configure_node(node: Any) -> None:
    """pytest-xdist: every worker shares the controller's send-time file."""
    path = node.config.stash.get(_RATE_FILE, None)
    if path is not None:
        node.workerinput[RATE_FILE_INPUT] = str(path)


def unconfigure(config: pytest.Config) -> None:
    path = config.stash.get(_OWN_RATE_FILE, None)
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


@dataclass(frozen=True)
class Mark:
    """Where a process's rate-limit counts stood when a test started."""

    counts: RateLimitCounts = field(default_factory=RateLimitCounts)
    judged: int = 0
    violations_seen: int = 0

    @classmethod
    def of(cls, rates: RateLimiting) -> Mark:
        return cls(rates.counts, rates.answers_judged, rates.violations_seen)


def spare_rate_limited(
    outcome: Outcome, message: str, recorded: list[CheckResult], *, synthesized: bool
) -> tuple[Outcome, str, list[CheckResult]]:
    """A request of this test was given up for rate limits: what that cut short is not
    exercised, not failed; a failure for another reason stays one."""
    spared = []
    for check in recorded:
        reason = rate_limited_reason(check.message) if check.outcome is Outcome.FAILED else None
        if reason is not None:
            check = replace(
                check,
                outcome=Outcome.NOT_EXERCISED,
                message=reason,
                evidence=None,
                reason_not_exercised=reason,
            )
        spared.append(check)
    reason = rate_limited_reason(message)
    if outcome is Outcome.FAILED and not synthesized and reason is not None:
        return Outcome.NOT_EXERCISED, reason, spared
    return outcome, message, spared


def answers_judged(
    rates: RateLimiting, mark: Mark, only: tuple[str, ...], skip: tuple[str, ...]
) -> list[CheckResult]:
    """RATE-001 on the rate-limit answers a test saw, when the profile declares the rule."""
    judged = rates.answers_judged - mark.judged
    if rates.rule is None or judged <= 0 or not _selected(only, skip):
        return []
    bad = rates.violations_seen - mark.violations_seen
    if not bad:
        return [
            CheckResult(
                CHECK_ID,
                FAMILY,
                (REQUIREMENT,),
                Outcome.PASSED,
                f"{judged} rate-limit answer(s) as the profile's [rate_limit] declares",
            )
        ]
    first, evidence = (
        rates.violations[mark.violations_seen]
        if mark.violations_seen < len(rates.violations)
        else ("(not kept: too many)", None)
    )
    return [
        CheckResult(
            CHECK_ID,
            FAMILY,
            (REQUIREMENT,),
            Outcome.FAILED,
            f"{bad} of {judged} rate-limit answer(s) differ from the profile's [rate_limit]; "
            f"first: {first}",
            evidence=evidence,
        )
    ]


def _selected(only: tuple[str, ...], skip: tuple[str, ...]) -> bool:
    if not only and not skip:
        return True
    from conformance.core.catalogue import load_catalogue

    try:
        return any(r.id == REQUIREMENT for r in load_catalogue().select(only, skip))
    except ValueError:
        return False
