"""Driving the phases (conformance/suite/schema/runner.py): sizes, a server that is gone (no
answer: nothing fails), one whose replies are not HTTP (no_server_error fails) and one that rate
limits past what the run can wait (nothing fails, the stateful sequences end there)."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest
from schemathesis.generation import GenerationMode
from schemathesis.generation.meta import coverage_scenario

from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.schema_requirements import pin, requirement_ids, requirement_operations
from conformance.reference.certificates import issue
from conformance.reference.server import ReferenceServer
from conformance.suite.schema.ledger import RecordedCheck
from conformance.suite.schema.loading import load_schemas
from conformance.suite.schema.runner import (
    PhaseSizes,
    SchemaPhaseRunner,
    ServerGoneError,
    ServerUnreachableError,
    spread,
)
from conformance.suite.tool_errors import SERVER_GONE, not_the_servers
from conformance.suite.wire import tls
from conformance.suite.wire.client import ClientStats, gone_reason
from tests.engine.hostile import Behaviour, hostile_server
from tests.rate_limiting_proxy import RateLimitingProxy
from tests.suite.https_servers import echo_server

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


def small_runner(
    base_url: str, stats: ClientStats | None = None, *, stateful_examples: int = 2
) -> SchemaPhaseRunner:
    """A runner of a few cases per phase against ``base_url`` (seed 1)."""
    schemas = load_schemas(
        effective_contract(PROFILE),
        PROFILE,
        requirement_operations(),
        base_url=base_url,
        seed=1,
        max_examples=2,
        stateful_steps=4,
    )
    sizes = PhaseSizes(
        fuzzing_examples=2,
        coverage_limit=4,
        stateful_examples=stateful_examples,
        stateful_steps=4,
    )
    return SchemaPhaseRunner(schemas, PROFILE, seed=1, sizes=sizes, stats=stats)


@contextlib.contextmanager
def running(runner: SchemaPhaseRunner) -> Iterator[SchemaPhaseRunner]:
    try:
        yield runner
    finally:
        runner.close()


def negative_coverage(runner: SchemaPhaseRunner, operation_id: str) -> list[str]:
    operation = runner.schemas.contract.find_operation_by_id(operation_id)
    cases = runner._coverage_cases(operation, GenerationMode.NEGATIVE)
    return [f"{case.method} {coverage_scenario(case)}" for case in cases]


def test_an_operation_gets_the_same_coverage_cases_whatever_ran_before_it() -> None:
    # listPayments shares its path with createPayment: schemathesis probes each undeclared
    # method of a path once per process, and the capped negative cases of the one that came
    # second lost a case to the other's probe (a replay's test processes take operations in
    # another order than the run's did).
    with running(small_runner("http://127.0.0.1:9")) as alone:
        listed_alone = negative_coverage(alone, "listPayments")
    with running(small_runner("http://127.0.0.1:9")) as after:
        negative_coverage(after, "createPayment")
        listed_after = negative_coverage(after, "listPayments")
    assert listed_after == listed_alone
    assert any("unspecified_http_method" in case for case in listed_alone)


def phases_against(base_url: str, error: type[ServerGoneError]) -> list[RecordedCheck]:
    """The unit phases of listPayments against ``base_url``, which stop with ``error``."""
    with running(small_runner(base_url)) as runner:
        with pytest.raises(ServerGoneError) as raised:
            runner.run_unit_phases("listPayments")
        assert type(raised.value) is error
        return runner.ledger.results("unit", ["no_server_error"], ["listPayments"])


def test_a_server_that_does_not_answer_fails_nothing_and_is_gone() -> None:
    [result] = phases_against(f"http://127.0.0.1:{closed_port()}", ServerUnreachableError)
    # a refused connection is no answer of the server: no_server_error had nothing to check
    assert result.outcome is Outcome.NOT_EXERCISED
    assert result.requirement_ids == ("ERR-006",)


def test_a_stateful_phase_that_got_no_answer_is_not_judged() -> None:
    with running(small_runner(f"http://127.0.0.1:{closed_port()}")) as runner:
        runner.reset_ledger()
        runner.run_stateful()
        with pytest.raises(ServerUnreachableError) as raised:
            runner.check_answered("the stateful phase")
    # not "the stateful phase reached no operation", a failure: no answer is no failure
    reason = not_the_servers(raised.value)
    assert reason is not None
    assert reason.startswith("no answer from the server, not judged: the stateful phase: ")
    assert "ConnectionError" in reason


def test_a_certificate_of_another_ca_is_named_and_takes_the_server_as_gone(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (tls.CERT_FILE_ENV, tls.CERT_DIR_ENV):
        monkeypatch.delenv(name, raising=False)
    certs = issue(tmp_path_factory.mktemp("certs"))
    stats = ClientStats()  # the run's, shared with the suite's own client
    with (
        echo_server(certs.server_cert, certs.server_key) as server,
        running(small_runner(server.url, stats)) as runner,
        pytest.raises(ServerUnreachableError) as raised,
    ):
        runner.run_unit_phases("listPayments")
    untrusted = "the server's certificate is not trusted (CERTIFICATE_VERIFY_FAILED"
    # in words, not behind the connection pool's ("SSLError: HTTPSConnectionPool(host=...")
    assert f"got no response; last: {untrusted}" in str(raised.value)
    # connections that cannot be made count as the suite's client counts its own
    assert stats.server_gone
    assert gone_reason(stats).startswith(f"{SERVER_GONE} (3 connections in a row")
    assert untrusted in gone_reason(stats)


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
        stats = ClientStats()
        runner = small_runner(proxy.base_url, stats, stateful_examples=2)
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
            runner = small_runner(proxy.base_url, ClientStats(), stateful_examples=4)
            try:
                runner.run_stateful()  # neither a failure nor "inconsistent data generation"
            finally:
                runner.close()
    assert (proxy.seen, proxy.limited) == (3, 1)  # no sequence after the one limited
    [reason] = runner.ledger.rate_limited.values()
    assert reason.startswith(f"rate limited (503, Retry-After {retry_after!r}")
    assert [o for o in runner.ledger.observations.values() if o.failures] == []


def test_a_response_schema_failure_that_names_no_field_is_pinned_by_the_judges_problems() -> None:
    # schemathesis reports a broken if/then/else of the effective contract at the top of its
    # anyOf; the judge's own validation finds the field, as the validator pins it
    paused = {
        "id": "ps_1",
        "currency_id": "usdc",
        "currency_chain_id": "usdc:base",
        "target_chain_id": "base",
        "withdraw_address_id": "wa_alpha_base",
        "interval_secs": 3600,
        "min_send_amount": "1.5",
        "min_send_raw": "1500000",
        "mode": "auto_request",
        "status": "paused",
        "enabled": False,
        "next_run_at": "2026-01-01T01:00:00Z",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "retired_at": "2026-01-01T00:00:00Z",
    }
    response = SimpleNamespace(content=json.dumps(paused).encode(), status_code=200)
    with running(small_runner(f"http://127.0.0.1:{closed_port()}")) as runner:
        problems = runner._schema_problems("pausePayoutSchedule", cast(Any, response))
    fields = {name for problem in problems for name in problem.fields}
    tags = {tag for problem in problems for tag in problem.tags}
    assert "retired_at" in fields
    check = "response_schema_conformance"
    candidates = requirement_ids(check, "pausePayoutSchedule", 200, "positive", PROFILE)
    assert set(pin(candidates, fields, tags)) == {"SHAPE-010", "PAYOUT-012"}
