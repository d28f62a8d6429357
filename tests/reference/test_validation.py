"""Contract validation: ECMA patterns, formats, integer forms, details, query parsing."""

from __future__ import annotations

import json

import pytest

from conformance.core.patterns import ecma_search
from conformance.reference.validation import (
    RequestInvalid,
    is_absolute_uri,
    json_depth_exceeds,
    normalise_integers,
    operation_validators,
    parse_json,
)

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
    assert is_absolute_uri(value) is ok


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
