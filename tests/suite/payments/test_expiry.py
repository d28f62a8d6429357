"""Proof of the payment that expires by itself (PAY-STATE-010, ``conformance/suite/payments``).

What a default run exercises does not depend on how fast the rest of the run was: a run of the
expiry test alone (the fastest run there is, as against a fast server) waits for the whole
lifetime of its payment and judges it. A server that expires its payments a little late passes;
one that never does fails; only the run's time budget can leave the check not exercised.

The runs here are in-process (one test process), so the embedded server's lazy expiry can be
made late or switched off for one test. Most use the ``short_lived`` profile (``short_lived.py``).
"""

from __future__ import annotations

import dataclasses
import time
from datetime import timedelta
from typing import Any

import pytest

from conformance.core.results import CheckResult, Outcome, RunResult
from conformance.engine.options import RunOptions
from conformance.engine.runner import run_suite
from conformance.reference import payments as reference_payments
from conformance.reference.context import RequestContext
from conformance.suite.payments.expiry import (
    LATE_SECS,
    TOLERANCE_SECS,
    ExpiringPayment,
    budget_problem,
)
from tests.suite.payments.short_lived import LIFETIME_SECS

EXPIRY = "PAY-STATE-010"
SERVER_LAG_SECS = 8.0  # later than the suite's tolerance, within LATE_SECS


def expiry_checks(result: RunResult) -> list[CheckResult]:
    return [check for check in result.checks if check.requirement_ids == (EXPIRY,)]


def run_expiry_alone(**options: Any) -> RunResult:
    return run_suite(RunOptions(seed=11, only=(EXPIRY,), **options))


def test_the_payment_is_due_after_its_lifetime_and_the_tolerance() -> None:
    payment = ExpiringPayment("pay-expiring-1", lifetime=60, created=1000.0)
    assert payment.due == 1060.0 + TOLERANCE_SECS
    assert payment.overdue == payment.due + LATE_SECS


def test_a_budget_that_ends_before_the_payment_is_due_leaves_it_unwatched() -> None:
    payment = ExpiringPayment("pay-expiring-1", lifetime=60, created=1000.0)
    assert budget_problem(payment, None) is None
    assert budget_problem(payment, payment.due) is None
    assert budget_problem(payment, 1030.0) == (
        "needs 60 s of waiting after a payment is created; the run's time budget ends 30 s after it"
    )


@pytest.mark.slow
def test_a_run_of_the_expiry_alone_waits_for_it_and_a_late_server_passes(
    monkeypatch: pytest.MonkeyPatch, short_lived: str
) -> None:
    expire_due = reference_payments.expire_due

    def late(ctx: RequestContext) -> None:
        expire_due(dataclasses.replace(ctx, now=ctx.now - timedelta(seconds=SERVER_LAG_SECS)))

    monkeypatch.setattr(reference_payments, "expire_due", late)
    started = time.monotonic()
    result = run_expiry_alone(profile=short_lived, embedded_latency_ms=30)
    checks = expiry_checks(result)
    assert checks and all(check.outcome is Outcome.PASSED for check in checks), [
        (check.outcome, check.message) for check in checks
    ]
    assert time.monotonic() - started >= LIFETIME_SECS + SERVER_LAG_SECS


@pytest.mark.slow
def test_a_server_whose_payments_never_expire_by_themselves_fails(
    monkeypatch: pytest.MonkeyPatch, short_lived: str
) -> None:
    monkeypatch.setattr(reference_payments, "expire_due", lambda ctx: None)
    checks = expiry_checks(run_expiry_alone(profile=short_lived))
    failed = [check for check in checks if check.outcome is Outcome.FAILED]
    assert failed and "['pending']" in failed[0].message


@pytest.mark.slow
def test_a_budget_too_short_for_the_lifetime_leaves_it_not_exercised_at_once() -> None:
    started = time.monotonic()
    result = run_expiry_alone(max_duration_s=30)
    checks = expiry_checks(result)
    assert checks and all(check.outcome is Outcome.NOT_EXERCISED for check in checks)
    assert "time budget ends" in (checks[0].message or "")
    assert time.monotonic() - started < 30


@pytest.mark.slow
def test_a_budget_that_ends_while_a_late_server_may_still_expire_it_fails_nothing(
    monkeypatch: pytest.MonkeyPatch, short_lived: str
) -> None:
    # created a few seconds into the run (c): due at c + 7 s, overdue at c + 22 s; the budget
    # ends between the two for any c from 0 to 10 s
    monkeypatch.setattr(reference_payments, "expire_due", lambda ctx: None)
    checks = expiry_checks(run_expiry_alone(profile=short_lived, max_duration_s=17))
    assert checks and all(check.outcome is Outcome.NOT_EXERCISED for check in checks), [
        (check.outcome, check.message) for check in checks
    ]
    assert "time budget" in (checks[0].message or "")
