"""One parser of gateway headers: what ``run -H`` sends is what ``serve --require-header``
can require, and a value never appears in a refusal."""

from __future__ import annotations

import pytest

from conformance.core import run_inputs as client_side
from conformance.core.headers import HeaderError, parse_header
from conformance.reference import gateway as server_side

TEXTS = [
    "X-Gateway-Key: s3cret-value",
    "x-gateway-key:\ts3cret value\t",
    "X-Gateway-Key",
    "X-Gateway-Key:",
    ": s3cret",
    "X Gateway: s3cret",
    "X-Gateway-Key: s3cret\r\nX-Injected: 1",
    "X-Gateway-Key: s3cr\u00e9t",
    "X-Api-Key: s3cret",
    "idempotency-key: s3cret",
    "Host: s3cret.example",
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("X-Gateway-Key: s3cret-value", ("X-Gateway-Key", "s3cret-value")),
        ("x-gateway-key:\ts3cret value\t", ("x-gateway-key", "s3cret value")),
    ],
)
def test_a_header_is_a_token_a_colon_and_a_visible_value(
    text: str, expected: tuple[str, str]
) -> None:
    assert parse_header(text) == expected


@pytest.mark.parametrize("text", TEXTS[2:])
def test_anything_else_is_refused_without_the_value(text: str) -> None:
    with pytest.raises(HeaderError) as refused:
        parse_header(text)
    assert "s3cret" not in str(refused.value)


@pytest.mark.parametrize("text", TEXTS)
def test_the_suite_and_the_reference_server_read_a_header_alike(text: str) -> None:
    def read(parse: object) -> tuple[str, str] | None:
        try:
            return parse(text)  # type: ignore[operator,no-any-return]
        except ValueError:
            return None

    assert read(client_side.parse_header) == read(server_side.header)
