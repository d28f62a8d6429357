"""The malformed variants (conformance/suite/robustness/variants.py): each breaks one part of
the valid request and leaves the rest as it was."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from conformance.suite.factories import Factories, RequestSpec
from conformance.suite.robustness.variants import VARIANTS, Raw, body_bytes
from conformance.suite.wire.client import SuiteClient

PROFILE = load_profile()
CONTRACT = effective_contract(PROFILE)
BY_NAME = {variant.name: variant for variant in VARIANTS}


@pytest.fixture(scope="module")
def factories() -> Iterator[Factories]:
    # Only requests that need no prerequisite are built here: nothing is sent.
    with SuiteClient("http://127.0.0.1:9", PROFILE) as client:
        yield Factories(client, PROFILE, CONTRACT)


def build(name: str, spec: RequestSpec) -> Raw | None:
    return BY_NAME[name].build(spec, CONTRACT, PROFILE)


def built(name: str, spec: RequestSpec) -> Raw:
    raw = build(name, spec)
    assert raw is not None
    return raw


def test_body_variants_break_only_the_body(factories: Factories) -> None:
    spec = factories.request("createPayment")
    valid = body_bytes(spec)
    with pytest.raises(ValueError):
        json.loads(built("malformed JSON", spec).content or b"")
    assert built("empty body", spec).content == b""
    assert json.loads(built("JSON array body", spec).content or b"") == [spec.body]
    assert json.loads(built("JSON string body", spec).content or b"") == valid.decode()
    plain = built("text/plain body", spec)
    assert (plain.content, plain.headers) == (valid, {"Content-Type": "text/plain"})
    for name in ("malformed JSON", "empty body", "JSON array body", "text/plain body"):
        assert built(name, spec).target == spec.path


def test_invalid_utf8_replaces_one_string_and_nothing_else(factories: Factories) -> None:
    spec = factories.request("createPayment")
    content = built("invalid UTF-8", spec).content or b""
    with pytest.raises(UnicodeDecodeError):
        content.decode("utf-8")
    repaired = json.loads(content.decode("utf-8", errors="replace"))
    assert {k for k in repaired if repaired[k] != spec.body[k]} == {"quotes"}


def test_one_integer_becomes_a_boolean(factories: Factories) -> None:
    spec = factories.request("createPayment")
    body = json.loads(built("boolean integer", spec).content or b"")
    assert body["splits"][0]["bps"] is True
    assert {**body, "splits": spec.body["splits"]} == spec.body


def test_the_oversized_body_is_the_valid_json_one_byte_over_the_limit(
    factories: Factories,
) -> None:
    spec = factories.request("replaceSplitTemplate")
    content = built("body over the limit", spec).content or b""
    assert len(content) == int(PROFILE.data["status"]["max_body_bytes"]) + 1
    assert json.loads(content) == spec.body


def test_the_bad_escape_goes_in_the_integer_query_parameter(factories: Factories) -> None:
    assert built("bad escape in the query", factories.request("listPayments")).target == (
        "/v1/payments?limit=%zz"
    )
    statement = built("bad escape in the query", factories.request("getStatement")).target
    assert statement.endswith("&limit=%zz")
    assert "currency_id=" in statement and "from=" in statement and "to=" in statement


def test_path_variants_need_a_path_id_and_a_prefix_variant_drops_v1(
    factories: Factories,
) -> None:
    spec = factories.request("createPayment")
    assert build("bad escape in the path id", spec) is None
    assert build("non-ASCII path id", spec) is None
    assert build("bad escape in the query", spec) is None
    assert built("no /v1 prefix", spec).target == "/payments"
    put = factories.request("putWebhookEndpoint")
    assert build("non-ASCII path id", put) is None  # a PUT on an unknown id creates it
    listing = factories.request("listPayments")
    assert build("JSON array body", listing) is None
