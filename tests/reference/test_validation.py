"""Contract validation: ECMA patterns, formats, integer forms, details, query parsing."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from conformance.core.patterns import ecma_search
from conformance.reference.validation import (
    RequestInvalid,
    check_value,
    json_depth_exceeds,
    normalise_integers,
    operation_validators,
    parse_json,
    unreadable,
)
from tests.reference.factories import payment_body, payout_body, subscription_body
from tests.reference.signed_client import SignedClient

DECIMAL = r"^(0|[1-9][0-9]*)(\.[0-9]+)?$"


@pytest.mark.parametrize("text", ["0", "1", "10.5", "0.000001", "9" * 128])
def test_decimal_pattern_accepts(text: str) -> None:
    assert ecma_search(DECIMAL, text)


@pytest.mark.parametrize("text", ["01", "1.", ".5", "1\n", "-1", "1e5", "١", " 1", "1.5\n"])
def test_decimal_pattern_rejects_including_a_trailing_newline(text: str) -> None:
    assert not ecma_search(DECIMAL, text)


def test_dollar_inside_a_class_and_escaped_dollar_keep_their_meaning() -> None:
    assert ecma_search(r"^[$]+$", "$$")
    assert ecma_search(r"^a\$$", "a$")
    assert not ecma_search(r"^a\$$", "a$\n")


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("https://example.com/a?b=c#d", True),
        ("urn:isbn:0451450523", True),
        ("http://[::1]:8080/x", True),
        ("https://example.com/%41", True),
        ("example.com/path", False),
        ("/relative", False),
        ("https://exa mple.com", False),
        ("https://example.com/%zz", False),
        ("1http://x", False),
        ("https:", False),
        ("https://example.com/\u00e9", False),
    ],
)
def test_uri_format_requires_an_absolute_uri(value: str, ok: bool) -> None:
    try:
        check_value({"type": "string", "format": "uri"}, value, "url")
    except RequestInvalid as invalid:
        assert not ok
        assert invalid.details == [{"field": "url", "message": "is not a valid uri"}]
    else:
        assert ok


def _body(operation: str, body: object) -> object:
    return operation_validators()[operation].json_body(
        json.dumps(body).encode(), "application/json"
    )


def _details(operation: str, body: object) -> list[dict[str, str]]:
    with pytest.raises(RequestInvalid) as caught:
        _body(operation, body)
    return caught.value.details


def test_integral_floats_become_ints_and_others_stay() -> None:
    assert normalise_integers({"a": 60.0, "b": [1.0, 1.5], "c": "60.0", "d": True}) == {
        "a": 60,
        "b": [1, 1.5],
        "c": "60.0",
        "d": True,
    }


def test_payout_body_details_name_each_field() -> None:
    details = _details(
        "createPayoutSchedule",
        {"currency_id": "", "interval_secs": 59, "mode": "x", "min_send_amount": "01"},
    )
    assert {d["field"] for d in details} == {
        "currency_id",
        "interval_secs",
        "mode",
        "min_send_amount",
        "target_chain_id",
        "withdraw_address_id",
    }
    assert all(set(d) == {"field", "message"} for d in details)


def test_nested_paths_use_dots_and_indexes() -> None:
    details = _details(
        "createPayment",
        {
            "quotes": {"usdc": {"amount": 5}},
            "merchant_order_no": "x",
            "splits": [{"type": "percentage", "merchant_id": "m", "bps": 0}],
        },
    )
    assert {d["field"] for d in details} == {"quotes.usdc.amount", "splits[0].bps"}


def test_int64_and_int32_bounds_are_enforced() -> None:
    assert _details(
        "createPayment", {"quotes": {}, "merchant_order_no": "x", "expires_in_secs": 2**63}
    )
    share = {"type": "percentage", "merchant_id": "m", "bps": 2**31}
    assert _details("createPayment", {"quotes": {}, "merchant_order_no": "x", "splits": [share]})


def test_query_integers_accept_the_float_form_only_when_integral() -> None:
    validator = operation_validators()["listPayments"]
    assert validator.query(b"limit=20.0&status=pending") == {"limit": 20, "status": "pending"}
    with pytest.raises(RequestInvalid):
        validator.query(b"limit=20.5")


def test_statement_query_requires_its_parameters_and_date_times() -> None:
    validator = operation_validators()["getStatement"]
    with pytest.raises(RequestInvalid) as caught:
        validator.query(b"from=yesterday")
    fields = {d["field"] for d in caught.value.details}
    assert fields == {"query.from", "query.currency_id", "query.to"}


def test_path_ids_are_checked_where_the_contract_bounds_them() -> None:
    validator = operation_validators()["putWebhookEndpoint"]
    assert validator.path({"id": "x" * 128}) == {"id": "x" * 128}
    with pytest.raises(RequestInvalid):
        validator.path({"id": "x" * 129})


@pytest.mark.parametrize("value", ["%zz", "20%", "%4", "2%4", "%FF%FE", "%C3", "%C0%AF"])
def test_a_query_value_with_a_bad_escape_or_not_utf8_is_refused(value: str) -> None:
    # parse_qsl keeps "%zz" as text: without the check a filter would read "%zz" literally.
    validator = operation_validators()["listPayments"]
    with pytest.raises(RequestInvalid) as caught:
        validator.query(f"limit=20&merchant_order_no={value}".encode())
    assert [d["field"] for d in caught.value.details] == ["query.merchant_order_no"]


def test_a_query_name_with_a_bad_escape_is_refused() -> None:
    with pytest.raises(RequestInvalid) as caught:
        operation_validators()["listPayments"].query(b"lim%zzit=20")
    assert [d["field"] for d in caught.value.details] == ["query"]


@pytest.mark.parametrize("raw", ["abc%zz", "abc%", "%4", "%FF%FE", "%C3"])
def test_a_path_id_with_a_bad_escape_or_not_utf8_is_refused(raw: str) -> None:
    validator = operation_validators()["putWebhookEndpoint"]
    with pytest.raises(RequestInvalid) as caught:
        validator.path({"id": "decoded"}, {"id": raw})
    assert [d["field"] for d in caught.value.details] == ["path.id"]


@pytest.mark.parametrize("raw", ["we_1", "caf%C3%A9", "a%2Fb", "%25zz"])
def test_well_formed_escapes_are_text(raw: str) -> None:
    assert unreadable(raw) is None


def test_every_operation_and_helper_has_a_validator() -> None:
    assert len(operation_validators()) == 22


def test_json_depth_guard() -> None:
    assert json_depth_exceeds(b"[" * 101 + b"]" * 101)
    assert not json_depth_exceeds(b"[" * 100 + b"]" * 100)
    assert not json_depth_exceeds(b'["' + b"[" * 500 + b'"]')
    with pytest.raises(RequestInvalid):
        parse_json(b"[" * 5000)


@pytest.mark.parametrize("raw", [b"{", b"\xff", b"NaN", b'{"a": Infinity}', b"1" * 5000])
def test_parse_json_rejects_non_json(raw: bytes) -> None:
    with pytest.raises(RequestInvalid):
        parse_json(raw)


# ------------------------------------------------------------- hostile bodies (issue 8)
def _unterminated_escapes(size: int) -> bytes:
    """``size`` bytes: a string that never ends, full of ``\\"``, then brackets enough to pass
    the depth guard's bracket count. A scanner that restarts at every quote is quadratic."""
    head = b'{"merchant_order_no": "'
    return head + b'\\"' * ((size - len(head) - 202) // 2) + b"[{" * 101


def _fastest_scan(raw: bytes) -> float:
    """The fastest of a few runs of the depth guard (a busy machine only makes runs slower)."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        json_depth_exceeds(raw)
        best = min(best, time.perf_counter() - started)
        if best > 1.0:
            break
    return best


def test_json_depth_guard_is_linear_on_unterminated_escaped_strings() -> None:
    # Each body is 4 times the last: a linear scan takes ~4 times as long, a quadratic one ~16
    # times. The bound compares the machine with itself; the slack absorbs timer noise on the
    # tiny bodies, and the first quadratic step (16 KiB) already takes seconds.
    sizes = [4 * 1024, 16 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024]
    previous = _fastest_scan(_unterminated_escapes(sizes[0]))
    for size in sizes[1:]:
        took = _fastest_scan(_unterminated_escapes(size))
        assert took < 10 * previous + 0.005, f"{size} bytes: {took:.4f}s after {previous:.4f}s"
        previous = took


@pytest.mark.parametrize("size", [48 * 1024, 1024 * 1024 - 1024], ids=["48KiB", "1MiB"])
def test_unterminated_escaped_strings_are_answered_400(alpha: SignedClient, size: int) -> None:
    response = alpha.post("/v1/payments", content=_unterminated_escapes(size))
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "validation_error"


LONE = "\ud800"  # json.dumps writes it as the escape \ud800: valid JSON, not Unicode text


# Every place a merchant's string reaches the store, at least one per resource kind: field
# values, object keys and array items.
LONE_SURROGATE_CASES: list[tuple[str, str, str, Any]] = [
    ("payment order number", "POST", "/v1/payments", payment_body(merchant_order_no=LONE)),
    ("payment memo", "POST", "/v1/payments", payment_body(memo="memo " + LONE)),
    ("payment user id", "POST", "/v1/payments", payment_body(user_id="u" + LONE)),
    (
        "payment quote key",
        "POST",
        "/v1/payments",
        payment_body(quotes={LONE: {"amount": "1", "chain_ids": ["base"]}}),
    ),
    (
        "payment quote chain",
        "POST",
        "/v1/payments",
        payment_body(quotes={"usdc": {"amount": "1", "chain_ids": [LONE]}}),
    ),
    (
        "webhook url",
        "PUT",
        "/v1/webhook-endpoints/ep_lone",
        {"url": "https://example.com/" + LONE, "event_types": ["payment.created"]},
    ),
    (
        "webhook event type",
        "PUT",
        "/v1/webhook-endpoints/ep_lone",
        {"url": "https://example.com/hooks", "event_types": [LONE]},
    ),
    ("subscription chain", "POST", "/v1/subscriptions", subscription_body(chain_id=LONE)),
    ("payout address", "POST", "/v1/payout-schedules", payout_body(withdraw_address_id=LONE)),
    (
        "split merchant",
        "PUT",
        "/v1/split-template",
        {"shares": [{"merchant_id": "m_" + LONE, "bps": 100}]},
    ),
    (
        "x402 resource",
        "POST",
        "/v1/x402/requirements",
        {"currency_id": "usdc", "chain_id": "base", "amount": "0.05", "resource": LONE},
    ),
    (
        "x402 usage evidence key",
        "POST",
        "/v1/x402/pay_unknown/usage",
        {"actual_amount": "0.01", "usage_id": "u1", "evidence": {LONE: "x"}},
    ),
    (
        "x402 settle payment id",
        "POST",
        "/v1/x402/settle",
        {"payment_id": LONE, "payment_payload": {}, "payment_requirements": {}},
    ),
    (
        "test helper deposit",
        "POST",
        "/v1/test-helpers/payments/pay_unknown/deposit",
        {"currency_id": "usdc", "chain_id": LONE, "amount": "1"},
    ),
]


@pytest.mark.parametrize(
    ("method", "target", "body"),
    [case[1:] for case in LONE_SURROGATE_CASES],
    ids=[case[0] for case in LONE_SURROGATE_CASES],
)
def test_a_lone_surrogate_is_a_validation_error(
    alpha: SignedClient, method: str, target: str, body: Any
) -> None:
    raw = json.dumps(body).encode()
    assert b"\\ud800" in raw
    response = alpha.request(method, target, content=raw)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["code"] == "validation_error"
    assert any("surrogate" in d["message"] for d in error["details"]), error


def test_a_surrogate_pair_is_one_character_and_accepted(alpha: SignedClient) -> None:
    order = "order-\ud83d\ude00"  # json.dumps writes the pair as two escapes
    raw = json.dumps(payment_body(merchant_order_no=order)).encode()
    assert b"\\ud83d\\ude00" in raw
    response = alpha.post("/v1/payments", content=raw)
    assert response.status_code == 201, response.text
    assert response.json()["merchant_order_no"] == "order-😀"


def test_parse_json_refuses_lone_surrogates_anywhere() -> None:
    for raw in (b'"\\udfff"', b'{"\\ud800": 1}', b'[["a", "b\\uDC00c"]]'):
        with pytest.raises(RequestInvalid, match="surrogate"):
            parse_json(raw)
    assert parse_json(b'["\\\\ud800"]') == ["\\ud800"]  # an escaped backslash, not an escape


@pytest.mark.parametrize("media", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_json_body_of_another_media_type_gets_an_answer_the_profile_accepts(
    alpha: SignedClient, media: str
) -> None:
    # STATUS-021: the default profile's status.unsupported_media_type lists the answers
    from conformance.core.profile import ErrorSpec, load_profile

    accepted = [ErrorSpec(**a) for a in load_profile().data["status"]["unsupported_media_type"]]
    response = alpha.post("/v1/payments", payment_body(), content_type=media)
    assert ErrorSpec(response.status_code, response.json()["code"]) in accepted
