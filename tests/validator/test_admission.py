"""AdmissionChecks: a request judged against what the profile refuses, and what it allows.

A request that breaks one of the profile's rules must not be accepted; one that the contract and
profile allow must not get the validation error. A refusal the recording cannot explain (another
status, business state the traffic does not show) is not judged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from conformance.core.profile import load_profile
from conformance.core.redaction import REDACTED
from conformance.core.results import CheckResult, Outcome
from conformance.validator.checks import ExchangeValidator
from conformance.validator.exchange import Exchange
from tests.validator.samples import exchange

AUTH = (
    ("X-Api-Key", "mk_test_alpha"),
    ("X-Timestamp", "1767225600"),
    ("X-Nonce", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
    ("X-Signature", REDACTED),  # as a recorder masks it: these tests judge other things
)
JSON = (("Content-Type", "application/json"),)
POST = (*AUTH, ("Idempotency-Key", "k-0001"), *JSON)
VALIDATION = {"code": "validation_error", "message": "no"}
BUSINESS = {"code": "split_invalid", "message": "no"}


@pytest.fixture(scope="module")
def validator() -> ExchangeValidator:
    return ExchangeValidator(load_profile("default"))


def about(validator: ExchangeValidator, ex: Exchange, rid: str) -> list[CheckResult]:
    return [r for r in validator.validate(ex) if rid in r.requirement_ids]


def outcomes(validator: ExchangeValidator, ex: Exchange, rid: str) -> list[Outcome]:
    return [r.outcome for r in about(validator, ex, rid)]


def split_template(shares: list[dict[str, Any]], status: int, answer: Any) -> Exchange:
    return exchange(
        "PUT", "/v1/split-template", request_headers=POST, request_body={"shares": shares},
        status=status, response_body=answer,
    )  # fmt: skip


SHARES_OVER = [{"merchant_id": "m_gamma", "bps": 6000}, {"merchant_id": "m_delta", "bps": 6000}]
SHARES_REPEATED = [{"merchant_id": "m_gamma", "bps": 100}, {"merchant_id": "m_gamma", "bps": 200}]


def test_split_shares_over_10000_bps_accepted_fail_split_004(
    validator: ExchangeValidator,
) -> None:
    accepted = split_template(SHARES_OVER, 200, {"shares": SHARES_OVER})
    [result] = about(validator, accepted, "SPLIT-004")
    assert result.outcome is Outcome.FAILED and "12000 bps" in result.message
    refused = split_template(SHARES_OVER, 422, BUSINESS)
    assert outcomes(validator, refused, "SPLIT-004") == [Outcome.PASSED]


def test_split_shares_repeating_a_merchant_accepted_fail_split_003(
    validator: ExchangeValidator,
) -> None:
    accepted = split_template(SHARES_REPEATED, 200, {"shares": SHARES_REPEATED})
    assert outcomes(validator, accepted, "SPLIT-003") == [Outcome.FAILED]
    assert outcomes(validator, split_template(SHARES_REPEATED, 422, BUSINESS), "SPLIT-003") == [
        Outcome.PASSED
    ]


def test_a_refusal_with_another_status_is_not_judged(validator: ExchangeValidator) -> None:
    conflict = split_template(SHARES_OVER, 409, {"code": "invalid_state", "message": "busy"})
    assert about(validator, conflict, "SPLIT-004") == []


def statement(start: str, end: str, status: int, answer: Any) -> Exchange:
    query = f"?currency_id=usdc&from={start}&to={end}"
    return exchange(
        "GET", f"/v1/statements{query}", request_headers=AUTH, status=status, response_body=answer
    )


def test_a_statement_with_from_equal_to_to_answered_200_fails_stmt_014(
    validator: ExchangeValidator,
) -> None:
    moment = "2026-01-01T00:00:00Z"
    assert outcomes(validator, statement(moment, moment, 200, {}), "STMT-014") == [Outcome.FAILED]
    assert outcomes(validator, statement(moment, moment, 400, VALIDATION), "STMT-014") == [
        Outcome.PASSED
    ]


def webhook(url: str, status: int = 200, event_type: str = "payment.created") -> Exchange:
    request = {"url": url, "event_types": [event_type]}
    answer = {**request, "id": "we_1", "active": True, "created_at": "2026-01-01T00:00:00Z"}
    return exchange(
        "PUT", "/v1/webhook-endpoints/we_1", request_headers=POST, request_body=request,
        status=status, response_body=answer if status == 200 else BUSINESS,
    )  # fmt: skip


def test_a_plain_http_public_webhook_url_accepted_fails_wh_008(
    validator: ExchangeValidator,
) -> None:
    assert outcomes(validator, webhook("http://hooks.example.com/in"), "WH-008") == [Outcome.FAILED]
    assert outcomes(validator, webhook("http://hooks.example.com/in", 422), "WH-008") == [
        Outcome.PASSED
    ]
    assert about(validator, webhook("http://127.0.0.1:9000/in"), "WH-008") == []
    assert about(validator, webhook("https://hooks.example.com/in"), "WH-008") == []


def test_an_accepted_unknown_event_type_is_wh_009_alone_not_also_its_echo(
    validator: ExchangeValidator,
) -> None:
    accepted = webhook("https://hooks.example.com/in", event_type="conformance.unknown")
    failed = [r for r in validator.validate(accepted) if r.outcome is Outcome.FAILED]
    assert [r.requirement_ids for r in failed] == [("WH-009",)]


def key_request(key: str, status: int, answer: Any) -> Exchange:
    headers = (*AUTH, ("Idempotency-Key", key))
    return exchange(
        "POST", "/v1/payments/pay_1/cancel", request_headers=headers, status=status,
        response_body=answer,
    )  # fmt: skip


def test_a_128_character_idempotency_key_refused_fails_idem_004(
    validator: ExchangeValidator,
) -> None:
    invalid = {"code": "idempotency_key_invalid", "message": "too long"}
    [result] = about(validator, key_request("k" * 128, 400, invalid), "IDEM-004")
    assert result.outcome is Outcome.FAILED and "128 characters" in result.message
    canceled = {
        "id": "pay_1",
        "status": "canceled",
        "quotes": {},
        "expires_at": "2026-01-01T01:00:00Z",
        "merchant_order_no": "o-1",
    }
    assert outcomes(validator, key_request("k" * 128, 200, canceled), "IDEM-004") == [
        Outcome.PASSED
    ]


SUBSCRIPTION = {"currency_id": "usdc", "chain_id": "base", "amount": "5", "interval_secs": 60.0}


def subscription(status: int, answer: Any) -> Exchange:
    return exchange(
        "POST", "/v1/subscriptions", request_headers=POST, request_body=SUBSCRIPTION,
        status=status, response_body=answer,
    )  # fmt: skip


def test_an_integer_in_float_form_refused_as_invalid_fails_status_016(
    validator: ExchangeValidator,
) -> None:
    [result] = about(validator, subscription(400, VALIDATION), "STATUS-016")
    assert result.outcome is Outcome.FAILED and "60.0" in result.message
    # as the boundary case that sent it names the refusal: the create's success status too
    assert result.requirement_ids == ("STATUS-001", "STATUS-016")
    created = {"id": "sub_1", "status": "pending_authorization", "interval_secs": 60}
    assert outcomes(validator, subscription(201, created), "STATUS-016") == [Outcome.PASSED]


def cancel(status: int, answer: Any, headers: tuple[tuple[str, str], ...] = POST) -> Exchange:
    return exchange(
        "POST", "/v1/subscriptions/sub_1/cancel", request_headers=headers, status=status,
        response_body=answer,
    )  # fmt: skip


def test_a_valid_request_refused_with_the_validation_error_fails(
    validator: ExchangeValidator,
) -> None:
    [result] = about(validator, cancel(400, VALIDATION), "STATUS-002")
    assert result.outcome is Outcome.FAILED
    assert "the contract and profile allow" in result.message


def test_a_refusal_that_is_not_a_validation_error_is_not_judged_as_one(
    validator: ExchangeValidator,
) -> None:
    gone = {"code": "not_found", "message": "no such subscription"}
    assert about(validator, cancel(404, gone), "STATUS-002") == []


def test_a_request_with_a_masked_value_cannot_be_judged_valid(
    validator: ExchangeValidator,
) -> None:
    payload = {
        "signature": "[redacted]",
        "authorization": {
            "from": "0x" + "1" * 40,
            "to": "0x" + "2" * 40,
            "value": "1",
            "valid_after": 0,
            "valid_before": 1,
            "nonce": "0x" + "3" * 64,
        },
    }
    requirements = {
        "scheme": "exact",
        "network": "base",
        "asset": "0x" + "4" * 40,
        "pay_to": "0x" + "2" * 40,
        "max_amount_required": "1",
        "resource": "https://api.example.com/r",
        "nonce": "0x" + "3" * 64,
        "valid_before": 1,
    }
    body = {"payment_id": "pay_1", "payment_payload": payload, "payment_requirements": requirements}
    ex = exchange(
        "POST", "/v1/x402/settle", request_headers=POST, request_body=body, status=400,
        response_body=VALIDATION,
    )  # fmt: skip
    assert about(validator, ex, "STATUS-002") == []


def test_a_request_with_an_escaped_character_is_not_judged_valid(
    validator: ExchangeValidator,
) -> None:
    request = {"url": "http://127.0.0.1:9/hook\n", "event_types": ["payment.created"]}
    ex = exchange(
        "PUT", "/v1/webhook-endpoints/we_1", request_headers=POST, request_body=request,
        status=400, response_body=VALIDATION,
    )  # fmt: skip
    assert about(validator, ex, "STATUS-002") == []


def listing(query: str, status: int, answer: Any) -> Exchange:
    return exchange(
        "GET", f"/v1/payments?{query}", request_headers=AUTH, status=status, response_body=answer
    )


def test_a_query_value_with_a_malformed_escape_may_be_refused_or_read_as_text(
    validator: ExchangeValidator,
) -> None:
    """ "50%off": the default profile lets the server refuse it (the validation error, a pass)
    or read it as text (then the value's own checks judge the answer, not STATUS-011); neither
    is a refusal of an allowed request (STATUS-002)."""
    refused = listing("merchant_order_no=50%off", 400, VALIDATION)
    assert outcomes(validator, refused, "STATUS-011") == [Outcome.PASSED]
    assert about(validator, refused, "STATUS-002") == []
    read_as_text = listing("merchant_order_no=50%off", 200, {"payments": []})
    assert about(validator, read_as_text, "STATUS-011") == []
    assert (
        about(validator, listing("merchant_order_no=50%25off", 200, {"payments": []}), "STATUS-011")
        == []
    )


def pinned(reading: str) -> ExchangeValidator:
    profile = load_profile("default")
    status = {**profile.data["status"], "malformed_percent_escape": reading}
    return ExchangeValidator(replace(profile, data={**profile.data, "status": status}))


def test_a_profile_that_pins_refusal_fails_a_malformed_escape_read_as_text() -> None:
    refusing = pinned("refuse")
    refused = listing("merchant_order_no=50%off", 400, VALIDATION)
    assert outcomes(refusing, refused, "STATUS-011") == [Outcome.PASSED]
    accepted = listing("merchant_order_no=50%off", 200, {"payments": []})
    assert outcomes(refusing, accepted, "STATUS-011") == [Outcome.FAILED]


def test_a_profile_that_pins_the_literal_reading_judges_the_literal_value() -> None:
    literal = pinned("literal")
    accepted = listing("merchant_order_no=50%off", 200, {"payments": []})
    assert about(literal, accepted, "STATUS-011") == []
    refused = listing("merchant_order_no=50%off", 400, VALIDATION)
    assert outcomes(literal, refused, "STATUS-002") == [Outcome.FAILED]


@pytest.mark.parametrize("segment", ["pay_1%zz", "pay_1%FF%FE", "pay_1%"])
def test_a_path_id_that_is_no_text_refused_is_no_refusal_of_an_allowed_request(
    validator: ExchangeValidator, segment: str
) -> None:
    """The suite's own bad path ids (a malformed escape, bytes that are not UTF-8), rightly
    refused with 400: never "a request the contract and profile allow was refused". A payment
    id may also be refused as unknown: judged under STATUS-013, as the boundaries family
    names it (the catalogue lists STATUS-011 for no operation with a payment id)."""
    refused = exchange(
        "POST",
        f"/v1/payments/{segment}/cancel",
        request_headers=(*AUTH, ("Idempotency-Key", "k-0002")),
        status=400,
        response_body=VALIDATION,
    )
    assert outcomes(validator, refused, "STATUS-013") == [Outcome.PASSED]
    assert about(validator, refused, "STATUS-011") == about(validator, refused, "STATUS-002") == []
    not_found = exchange(
        "POST",
        f"/v1/payments/{segment}/cancel",
        request_headers=(*AUTH, ("Idempotency-Key", "k-0003")),
        status=404,
        response_body={"code": "not_found", "message": "no"},
    )
    assert about(validator, not_found, "STATUS-002") == []


def test_a_request_the_profile_refuses_answered_with_a_server_error_fails_the_refusal(
    validator: ExchangeValidator,
) -> None:
    """As the suite's robustness case names it: a 500 is not the profile's refusal (and fails
    no_server_error besides); a rate limit is no answer, so it is not judged."""
    crashed = listing("merchant_order_no=50%zz", 500, {"code": "internal", "message": "no"})
    for reading in ("refuse", "either", "literal"):  # read literally, it had to succeed
        [result] = about(pinned(reading), crashed, "STATUS-011")
        assert result.outcome is Outcome.FAILED and "answered 500" in result.message
    assert outcomes(validator, crashed, "ERR-006") == [Outcome.FAILED]
    limited = replace(crashed, status=429, response_headers=(("Retry-After", "1"),))
    assert about(validator, limited, "STATUS-011") == []
