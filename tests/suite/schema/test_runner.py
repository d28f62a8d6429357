"""Driving the phases (conformance/suite/schema/runner.py): sizes, a server that is gone (no
answer: nothing fails), one whose replies are not HTTP (no_server_error fails) and one that rate
limits past what the run can wait (nothing fails, the stateful sequences end there)."""

from __future__ import annotations

import socket

import pytest

from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.reference.server import ReferenceServer
from conformance.suite.schema.ledger import RecordedCheck
from conformance.suite.schema.loading import load_schemas
from conformance.suite.schema.requirements import requirement_operations
from conformance.suite.schema.runner import (
    PhaseSizes,
    SchemaPhaseRunner,
    ServerGoneError,
    ServerUnreachableError,
    spread,
)
from conformance.suite.wire.client import ClientStats
from tests.engine.hostile import Behaviour, hostile_server
from tests.rate_limiting_proxy import RateLimitingProxy

PROFILE = load_profile()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_spread_takes_one_case_of_each_kind_before_a_second() -> None:
    cases = ["a1", "a2", "a3", "b1", "c1", "c2"]
    assert spread(cases, 4, key=lambda c: c[0]) == ["a1", "b1", "c1", "a2"]
    assert spread(cases, 10, key=lambda c: c[0]) == ["a1", "b1", "c1", "a2", "c2", "a3"]


def phases_against(base_url: str, error: type[ServerGoneError]) -> list[RecordedCheck]:
    """The unit phases of listPayments against ``base_url``, which stop with ``error``."""
    schemas = load_schemas(
        effective_contract(PROFILE),
        PROFILE,
        requirement_operations(),
        base_url=base_url,
        seed=1,
        max_examples=2,
        stateful_steps=4,
    )
    sizes = PhaseSizes(fuzzing_examples=2, coverage_limit=4, stateful_examples=2, stateful_steps=4)
    runner = SchemaPhaseRunner(schemas, PROFILE, seed=1, sizes=sizes)
    try:
        with pytest.raises(ServerGoneError) as raised:
            runner.run_unit_phases("listPayments")
        assert type(raised.value) is error
        return runner.ledger.results("unit", ["no_server_error"], ["listPayments"])
    finally:
        runner.close()


def test_a_server_that_does_not_answer_fails_nothing_and_is_gone() -> None:
    [result] = phases_against(f"http://127.0.0.1:{closed_port()}", ServerUnreachableError)
    # a refused connection is no answer of the server: no_server_error had nothing to check
    assert result.outcome is Outcome.NOT_EXERCISED
    assert result.requirement_ids == ("ERR-006",)


def test_a_server_whose_replies_are_not_http_fails_no_server_error_then_stops_the_phases() -> None:
    with hostile_server(Behaviour.GARBAGE) as base_url:
        [failed] = phases_against(base_url, ServerGoneError)
    assert failed.outcome is Outcome.FAILED
    assert failed.requirement_ids == ("ERR-006",)
    assert "no response" in failed.message
    assert failed.evidence is not None and failed.evidence.status is None
    assert failed.evidence.request_headers["x-signature"] == "[redacted]"


def test_a_server_that_keeps_rate_limiting_leaves_checks_not_exercised_never_failed() -> None:
    proxy = RateLimitingProxy(first=10**9, retry_after="3600")
    with proxy.running():
        schemas = load_schemas(
            effective_contract(PROFILE),
            PROFILE,
            requirement_operations(),
            base_url=proxy.base_url,
            seed=1,
            max_examples=2,
            stateful_steps=4,
        )
        sizes = PhaseSizes(
            fuzzing_examples=2, coverage_limit=4, stateful_examples=2, stateful_steps=4
        )
        stats = ClientStats()
        runner = SchemaPhaseRunner(schemas, PROFILE, seed=1, sizes=sizes, stats=stats)
        try:
            runner.run_unit_phases("listPayments")  # no ServerGoneError: the server answers
            results = runner.ledger.results("unit", ["no_server_error"], ["listPayments"])
        finally:
            runner.close()
    [result] = results
    assert result.outcome is Outcome.NOT_EXERCISED
    assert result.message.startswith("rate limited (429, Retry-After '3600'")
    assert stats.rate_limiting.counts.given_up == proxy.limited > 0


def test_a_rate_limited_stateful_step_ends_the_sequences_and_fails_nothing() -> None:
    retry_after = "Fri, 31 Dec 9999 23:59:59 GMT"
    with ReferenceServer(profile=PROFILE) as server:
        proxy = RateLimitingProxy(server.base_url, every=3, status=503, retry_after=retry_after)
        with proxy.running():
            schemas = load_schemas(
                effective_contract(PROFILE),
                PROFILE,
                requirement_operations(),
                base_url=proxy.base_url,
                seed=1,
                max_examples=2,
                stateful_steps=4,
            )
            sizes = PhaseSizes(
                fuzzing_examples=2, coverage_limit=4, stateful_examples=4, stateful_steps=4
            )
            runner = SchemaPhaseRunner(schemas, PROFILE, seed=1, sizes=sizes, stats=ClientStats())
            try:
                runner.run_stateful()  # neither a failure nor "inconsistent data generation"
            finally:
                runner.close()
    assert (proxy.seen, proxy.limited) == (3, 1)  # no sequence after the one limited
    [reason] = runner.ledger.rate_limited.values()
    assert reason.startswith(f"rate limited (503, Retry-After {retry_after!r}")
    assert [o for o in runner.ledger.observations.values() if o.failures] == []
