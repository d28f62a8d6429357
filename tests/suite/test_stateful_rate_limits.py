"""A rate limit in a state machine is never a failure (conformance/suite/stateful.py).

A proxy in front of the reference server answers every third request 429 or 503 with a
``Retry-After`` longer than a request may wait (huge seconds, an HTTP-date in year 9999, a
day): the request is given up at once. The machine's sequences end there, without shrinking or
replaying it (no "inconsistent behaviour"), and no further sequence is sent: what held before
passes, the ids no check reached are not exercised, "rate limited (...)". A failure found
before the limit is still reported.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from hypothesis import core
from hypothesis.stateful import Bundle, rule

from conformance.core.profile import Profile, load_profile
from conformance.core.results import CheckResult, Outcome
from conformance.reference.server import ReferenceServer
from conformance.suite.stateful import (
    ConformanceMachine,
    Transcript,
    Verdicts,
    machine_settings,
    run_guarded,
    run_machine,
)
from conformance.suite.tool_errors import not_the_servers
from conformance.suite.wire.check_properties import CheckRecorder
from conformance.suite.wire.client import (
    NoAnswerError,
    RateLimitedError,
    RateLimitedStop,
    SuiteClient,
)
from tests.rate_limiting_proxy import RateLimitingProxy
from tests.suite.test_stateful import context

RETRY_AFTERS = ["999999999", "Fri, 31 Dec 9999 23:59:59 GMT", "86400"]
NEVER_REACHED = "SUB-005"


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


@pytest.fixture(scope="module")
def server(profile: Profile) -> Iterator[ReferenceServer]:
    with ReferenceServer(profile=profile) as running:
        yield running


@pytest.fixture(autouse=True)
def seeded() -> Iterator[None]:
    previous = core.global_force_seed
    core.global_force_seed = 7  # type: ignore[assignment]
    yield
    core.global_force_seed = previous


class Subscriptions(ConformanceMachine):
    """Create subscriptions; cancel any of them any number of times."""

    subscriptions = Bundle("subscriptions")

    @rule(target=subscriptions)
    def create(self) -> str:
        self.step("create a subscription")
        response = self.ctx.factories.send(self.ctx.factories.request("createSubscription"))
        self.verdicts.status(["SUB-002"], response, 201, "create")
        return str(response.json()["id"])

    @rule(subscription=subscriptions)
    def cancel(self, subscription: str) -> None:
        self.step(f"cancel {subscription}")
        response = self.cancel_request(subscription)
        self.verdicts.check(
            ["SUB-STATE-003"],
            response.status_code in (200, 409),
            f"cancel answered {response.status_code}",
        )

    def cancel_request(self, subscription: str) -> httpx.Response:
        return self.ctx.client.post(
            f"/v1/subscriptions/{subscription}/cancel", operation_id="cancelSubscription"
        )


def run_behind(
    proxy: RateLimitingProxy, profile: Profile, machine: type[ConformanceMachine]
) -> dict[str, CheckResult]:
    """The checks of ``machine`` run through ``proxy``, by requirement id; none fails for
    every id (a sequence broken off by the server's answer would)."""
    recorder = CheckRecorder("stateful-test")
    with proxy.running():
        ctx = context(proxy.base_url, profile, recorder)
        try:
            run_machine(machine.bind(ctx), machine_settings(examples=8, steps=6))
            ctx.verdicts.finish("subscriptions", ["SUB-002", "SUB-STATE-003", NEVER_REACHED])
        finally:
            ctx.client.close()
            ctx.other_client.close()
    assert [c.message for c in recorder.checks if len(c.requirement_ids) > 1] == []
    return {c.requirement_ids[0]: c for c in recorder.checks}


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("retry_after", RETRY_AFTERS)
def test_a_rate_limited_step_ends_the_sequences_and_fails_nothing(
    server: ReferenceServer, profile: Profile, status: int, retry_after: str
) -> None:
    proxy = RateLimitingProxy(server.base_url, every=3, status=status, retry_after=retry_after)
    results = run_behind(proxy, profile, Subscriptions)
    assert [c for c in results.values() if c.outcome is Outcome.FAILED] == []
    # the two requests before the limit were judged; nothing was sent after it
    assert results["SUB-002"].outcome is Outcome.PASSED
    assert (proxy.seen, proxy.limited) == (3, 1)
    reason = results[NEVER_REACHED].reason_not_exercised or ""
    assert reason.startswith(f"rate limited ({status}, Retry-After {retry_after!r}"), reason
    assert reason.endswith("; no generated call sequence reached it")


def test_a_failure_found_before_the_rate_limit_is_still_reported(
    server: ReferenceServer, profile: Profile
) -> None:
    class Strict(Subscriptions):
        @rule(subscription=Subscriptions.subscriptions)
        def cancel(self, subscription: str) -> None:
            self.step(f"cancel {subscription}")
            response = self.cancel_request(subscription)
            self.verdicts.status(["SUB-STATE-003"], response, 404, "cancel")  # wrongly

    # the first sequence fails at its second request; replaying it to shrink meets the limit
    proxy = RateLimitingProxy(server.base_url, every=3, retry_after="86400")
    results = run_behind(proxy, profile, Strict)
    failed = results["SUB-STATE-003"]
    assert failed.outcome is Outcome.FAILED
    assert failed.message.startswith("cancel: expected 404, got 200")
    assert "inconsistent" not in failed.message
    assert "2. cancel " in failed.message  # the steps of the sequence that failed
    assert results["SUB-002"].outcome is Outcome.PASSED
    assert (results[NEVER_REACHED].reason_not_exercised or "").startswith("rate limited (429")


def test_a_scenario_whose_request_is_given_up_fails_nothing(
    server: ReferenceServer, profile: Profile
) -> None:
    proxy = RateLimitingProxy(server.base_url, first=1, retry_after="86400")
    recorder = CheckRecorder("stateful-test")
    with proxy.running():
        client = SuiteClient(proxy.base_url, profile)
        verdicts = Verdicts(recorder, "stateful-test", Transcript().attach(client))
        run_guarded(verdicts, lambda: client.get("/v1/payments"))
        verdicts.finish("scenario", ["PAY-001"])
        client.close()
    [check] = recorder.checks
    assert check.outcome is Outcome.NOT_EXERCISED
    assert (check.reason_not_exercised or "").startswith("rate limited (429, Retry-After '86400'")


def test_a_request_given_up_for_rate_limits_is_never_the_servers_failure() -> None:
    given_up = "GET /v1/payments: not exercised: rate limited (429, Retry-After '86400' ...)"
    reason = "rate limited (429, Retry-After '86400' ...)"
    assert not_the_servers(RateLimitedError(given_up)) == reason
    assert not_the_servers(RateLimitedStop(given_up)) == reason
    # beside a request that got no answer, the rate limit is the reason given
    group = ExceptionGroup("two", [NoAnswerError("GET /x: refused"), RateLimitedError(given_up)])
    assert not_the_servers(group) == reason
