"""Request signing under each of the profile's built-in choices (core/signing.py)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

import pytest

from conformance.core import signing
from conformance.core.signing import (
    DEFAULT_STRING_TO_SIGN,
    SCHEMES,
    Scheme,
    Signer,
    SigningInput,
    TemplateError,
    format_timestamp,
    parse_timestamp,
    signature,
    signature_pattern,
    string_to_sign,
    template_fields,
    verify,
)

SECRET = "sk_test_alpha_0123456789abcdef"
BODY = b'{"amount":"1.00"}'


def test_the_default_signs_the_documented_example() -> None:
    message = string_to_sign(
        DEFAULT_STRING_TO_SIGN,
        "1763802000",
        "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
        "get",
        "/v1/payments?limit=2",
        b"",
    )
    assert message == b"1763802000\n0f1e2d3c4b5a69788796a5b4c3d2e1f0\nGET\n/v1/payments?limit=2\n"
    expected = hmac.new(SECRET.encode(), message, hashlib.sha256).hexdigest()
    assert signature(SECRET, message) == expected


def test_the_raw_body_follows_a_template_that_names_no_body() -> None:
    assert string_to_sign("{method}\n", "", "", "post", "/", BODY) == b"POST\n" + BODY


@pytest.mark.parametrize(
    ("template", "tail"),
    [
        ("{body_sha256}", hashlib.sha256(BODY).hexdigest().encode()),
        ("{body_sha256_base64}", base64.b64encode(hashlib.sha256(BODY).digest())),
        ("{body}", BODY),
    ],
)
def test_a_template_naming_the_body_or_its_hash_gets_no_body_appended(
    template: str, tail: bytes
) -> None:
    assert string_to_sign("{method}\n" + template, "", "", "post", "/", BODY) == b"POST\n" + tail


def test_every_placeholder_is_filled() -> None:
    inp = SigningInput("POST", "/v1/p?a=1", BODY, "t", "n", "mk", "h:1")
    template = "{method}|{path}|{query}|{target}|{host}|{timestamp}|{nonce}|{api_key}"
    assert signing.message_of(template, inp) == b"POST|/v1/p|a=1|/v1/p?a=1|h:1|t|n|mk" + BODY


@pytest.mark.parametrize(
    ("template", "says"),
    [
        ("{timestamp}{body_sha}", "unknown placeholder {body_sha}"),
        ("{}", "unknown placeholder {}"),
        ("{0}", "unknown placeholder {0}"),
        ("{method!r}", "no conversion or format spec"),
        ("{method:>8}", "no conversion or format spec"),
        ("{method", "not a valid template"),
        ("method}", "not a valid template"),
    ],
)
def test_a_template_the_suite_cannot_fill_is_refused(template: str, says: str) -> None:
    with pytest.raises(TemplateError, match=re.escape(says)):
        template_fields(template)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_each_scheme_signs_in_its_own_form_and_verifies(scheme: str) -> None:
    algorithm, encoding = scheme.split("-")[1:]
    digest = hmac.new(SECRET.encode(), b"m", getattr(hashlib, algorithm)).digest()
    expected = {
        "hex": digest.hex(),
        "base64": base64.b64encode(digest).decode(),
        "base64url": base64.urlsafe_b64encode(digest).decode().rstrip("="),
    }[encoding]
    assert signature(SECRET, b"m", scheme) == expected
    assert re.fullmatch(signature_pattern(scheme), expected)
    assert not re.fullmatch(signature_pattern(scheme), expected[:-1])
    headers = Signer("mk", SECRET, scheme=Scheme(name=scheme)).headers("GET", "/v1/x", b"")
    assert verify(SECRET, DEFAULT_STRING_TO_SIGN, headers, "GET", "/v1/x", b"", scheme=scheme)
    assert not verify("other", DEFAULT_STRING_TO_SIGN, headers, "GET", "/v1/x", b"", scheme=scheme)


@pytest.mark.parametrize(
    ("fmt", "written"),
    [
        ("unix-seconds", "1763802000"),
        ("unix-millis", "1763802000000"),
        ("rfc3339", "2025-11-22T09:00:00Z"),
    ],
)
def test_each_timestamp_format_writes_and_reads_the_same_moment(fmt: str, written: str) -> None:
    assert format_timestamp(1763802000, fmt) == written
    assert parse_timestamp(written, fmt) == 1763802000
    assert parse_timestamp("0x1f", fmt) is None
    assert parse_timestamp("", fmt) is None


def test_rfc3339_reads_offsets_and_fractions_and_refuses_a_bare_date() -> None:
    assert parse_timestamp("2025-11-22T10:00:00.5+01:00", "rfc3339") == 1763802000.5
    assert parse_timestamp("2025-11-22", "rfc3339") is None
    assert parse_timestamp("2025-13-22T10:00:00Z", "rfc3339") is None


def test_a_signer_writes_the_timestamp_in_the_profiles_format() -> None:
    scheme = Scheme(timestamp_format="unix-millis")
    headers = Signer("mk", SECRET, scheme=scheme).headers("GET", "/", timestamp=1763802000)
    assert headers["X-Timestamp"] == "1763802000000"
