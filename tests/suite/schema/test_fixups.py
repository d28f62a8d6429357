"""Making generated cases safe to send (conformance/suite/schema/fixups.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any

from schemathesis.generation import GenerationMode
from schemathesis.generation.drivers import CoverageGenerator
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.generation.meta import CoverageScenario, coverage_scenario
from schemathesis.generation.overrides import Override

from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from conformance.judge.schema_requirements import requirement_operations
from conformance.suite.schema.fixups import FRAMING_HEADERS, IDEMPOTENCY_HEADER, CasePreparer
from conformance.suite.schema.loading import LoadedSchemas, load_schemas

PROFILE = load_profile()


@cache
def schemas() -> LoadedSchemas:
    return load_schemas(
        effective_contract(PROFILE),
        PROFILE,
        requirement_operations(),
        base_url="http://127.0.0.1:1",
        seed=5,
        max_examples=2,
        stateful_steps=4,
    )


def case(operation_id: str, **parts: Any) -> Any:
    return schemas().generation.find_operation_by_id(operation_id).Case(**parts)


def negative_cases(operation_id: str) -> list[Any]:
    operation = schemas().contract.find_operation_by_id(operation_id)
    config = operation.schema.config.generation_for(operation=operation, phase="coverage")
    return [
        c
        for c in CoverageGenerator(
            operation=operation,
            generation_modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
            generation_config=config,
            auth_storage=None,
            override=Override(),
            feedback=FeedbackSources(),
        )
        if c.meta is not None and c.meta.generation.mode is GenerationMode.NEGATIVE
    ]


def test_a_repeated_key_and_order_number_become_fresh() -> None:
    preparer = CasePreparer(seed=1)
    body = {"quotes": {"usdc": {"amount": "1"}}, "merchant_order_no": "0"}
    first = case("createPayment", headers={IDEMPOTENCY_HEADER: "0"}, body=dict(body))
    second = case("createPayment", headers={IDEMPOTENCY_HEADER: "0"}, body=dict(body))
    assert preparer.prepare(first, "createPayment")
    preparer.prepare(second, "createPayment")
    assert first.headers[IDEMPOTENCY_HEADER] != second.headers[IDEMPOTENCY_HEADER]
    assert 32 <= len(first.headers[IDEMPOTENCY_HEADER]) <= 128
    assert first.body["merchant_order_no"] != second.body["merchant_order_no"]
    assert first.body["quotes"] == body["quotes"]


def test_a_long_valid_key_keeps_its_length() -> None:
    long_key = case("createPayment", headers={IDEMPOTENCY_HEADER: "k" * 128}, body={})
    CasePreparer(seed=1).prepare(long_key, "createPayment")
    assert len(long_key.headers[IDEMPOTENCY_HEADER]) == 128
    assert long_key.headers[IDEMPOTENCY_HEADER] != "k" * 128


def test_the_window_of_a_statement_is_put_in_order() -> None:
    preparer = CasePreparer(seed=1)
    swapped = case(
        "getStatement",
        query={"currency_id": "usdc", "from": "2030-01-02T00:00:00Z", "to": "0398-01-01T00:00:00Z"},
    )
    preparer.prepare(swapped, "getStatement")
    assert swapped.query["from"] == "0398-01-01T00:00:00Z"
    assert swapped.query["to"] == "2030-01-02T00:00:00Z"
    same = case(
        "getStatement",
        query={"currency_id": "usdc", "from": "2030-01-02T00:00:00Z", "to": "2030-01-02T00:00:00Z"},
    )
    preparer.prepare(same, "getStatement")
    assert same.query["to"] == "2030-01-02T00:00:01Z"


def test_a_first_run_in_the_past_moves_to_the_future() -> None:
    payout = case(
        "createPayoutSchedule",
        headers={IDEMPOTENCY_HEADER: "0"},
        body={"first_run_at": "2000-01-01T00:00:00Z", "mode": "notify_only"},
    )
    CasePreparer(seed=1).prepare(payout, "createPayoutSchedule")
    moved = datetime.fromisoformat(payout.body["first_run_at"].replace("Z", "+00:00"))
    assert moved > datetime.now(UTC)


def test_a_case_testing_the_key_itself_keeps_it_missing() -> None:
    missing = [
        c
        for c in negative_cases("createPayment")
        if coverage_scenario(c) is CoverageScenario.MISSING_PARAMETER
        and IDEMPOTENCY_HEADER not in (c.headers or {})
    ]
    assert missing
    for c in missing:
        CasePreparer(seed=1).prepare(c, "createPayment")
        assert IDEMPOTENCY_HEADER not in (c.headers or {})


def test_a_case_testing_the_body_gets_a_valid_key() -> None:
    body_cases = [
        c
        for c in negative_cases("putWebhookEndpoint")
        if coverage_scenario(c) is CoverageScenario.NON_UNIQUE_ITEMS
    ]
    assert body_cases
    for c in body_cases:
        CasePreparer(seed=1).prepare(c, "putWebhookEndpoint")
        assert 1 <= len(c.headers[IDEMPOTENCY_HEADER]) <= 128
        assert c.meta.generation.mode is GenerationMode.NEGATIVE


def test_a_generated_header_that_frames_the_message_is_never_sent() -> None:
    # seed 42 at 50 ms sent ``content-length: &m`` on a cancel: invalid HTTP, which uvicorn
    # refused with a text/plain 400 that the error checks then blamed on the server
    headers = {"Content-Length": "&m", "transfer-encoding": "x", "Host": "", "X-Other": "kept"}
    cancel = case("cancelPayment", path_parameters={"payment_id": "p"}, headers=dict(headers))
    CasePreparer(seed=1).prepare(cancel, "cancelPayment")
    assert not {name.lower() for name in cancel.headers} & FRAMING_HEADERS
    assert cancel.headers["X-Other"] == "kept"
