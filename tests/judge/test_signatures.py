"""What a request's signature was made over, told with the profile's secrets."""

from __future__ import annotations

import pytest

from conformance.core.profile import load_profile
from conformance.core.redaction import MASKED_VALUES, SIGNATURE_MARKS
from conformance.core.signing import SigningInput, message_of, signature
from conformance.judge.signatures import Scheme, Signed, SignedRequest, diagnose

PROFILE = load_profile("default")
SCHEME = Scheme(PROFILE.auth.string_to_sign, PROFILE.auth.scheme)
MINE, THEIRS = PROFILE.credentials[0], PROFILE.credentials[1]
SECRETS = tuple(c.api_secret for c in PROFILE.credentials)
BODY = b'{"merchant_order_no":"o-1","quotes":{"usdc":{"amount":"25.00"}}}'


def request(
    *,
    secret: str = MINE.api_secret,
    method: str = "POST",
    target: str = "/v1/payments",
    body: bytes = BODY,
    sent: tuple[str, str, bytes] | None = None,
) -> SignedRequest:
    """A request signed over ``method``, ``target`` and ``body``, sent as ``sent`` (the same
    when not given)."""
    inp = SigningInput(method, target, body, "1764403200", "n-0123456789abcdef", MINE.api_key, "")
    headers = {
        "X-Api-Key": MINE.api_key,
        "X-Timestamp": inp.timestamp,
        "X-Nonce": inp.nonce,
        "X-Signature": signature(secret, message_of(SCHEME.template, inp), SCHEME.name),
    }
    return SignedRequest(headers, *(sent or (method, target, body)), "")


def test_a_request_signed_as_sent_verifies() -> None:
    assert diagnose(request(), MINE.api_secret, SECRETS, SCHEME) is Signed.AS_SENT


@pytest.mark.parametrize(
    ("signed", "verdict", "ids"),
    [
        (request(secret=THEIRS.api_secret), Signed.OTHER_SECRET, ("AUTH-013",)),
        (
            request(body=b"", sent=("POST", "/v1/payments", BODY)),
            Signed.BODY_CHANGED,
            ("AUTH-014",),
        ),
        (
            request(sent=("POST", "/v1/payments", BODY.replace(b":", b": "))),
            Signed.BODY_CHANGED,
            ("AUTH-014",),
        ),
        (
            request(sent=("POST", "/v1/payments", BODY[:-1] + b',"tamper":1}')),
            Signed.BODY_CHANGED,
            ("AUTH-014",),
        ),
        (
            request(method="GET", sent=("POST", "/v1/payments", BODY)),
            Signed.TARGET_CHANGED,
            ("AUTH-015",),
        ),
        (
            request(sent=("POST", "/v1/payments?conformance=1", BODY)),
            Signed.TARGET_CHANGED,
            ("AUTH-015",),
        ),
        (request(secret="not a profile secret"), Signed.UNKNOWN, ("AUTH-013",)),
    ],
    ids=[
        "other secret",
        "body unsigned",
        "body reformatted",
        "member added",
        "method",
        "query",
        "unknown",
    ],
)
def test_a_signature_over_something_else_names_what_it_breaks(
    signed: SignedRequest, verdict: Signed, ids: tuple[str, ...]
) -> None:
    found = diagnose(signed, MINE.api_secret, SECRETS, SCHEME)
    assert found is verdict
    assert found.ids == ids


def test_every_verdict_has_a_mark_the_recording_masks_and_reads_back() -> None:
    assert {signed.mark for signed in Signed} == SIGNATURE_MARKS  # core.redaction's list
    for signed in Signed:
        assert signed.mark in MASKED_VALUES
        assert Signed.of_mark(signed.mark) is signed
    assert Signed.of_mark("[redacted]") is None
