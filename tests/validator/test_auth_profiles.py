"""Recorded traffic under a profile that signs and refuses otherwise than the default: each
exchange is judged with that profile's scheme, timestamp format and error of each kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.core.results import Outcome
from conformance.validator import validate_exchange
from conformance.validator.auth import AuthChecks
from conformance.validator.exchange import Exchange
from conformance.validator.tables import request_headers
from tests.validator.samples import exchange
from tests.validator.test_checks import KEY, PAYMENT_REQUEST

SENT_AT = 1_767_225_600  # 2026-01-01T00:00:00Z, the samples' start time
DIVERGENT = """extends = "default"
[profile]
name = "divergent-auth"
[auth]
scheme = "hmac-sha512-base64"
timestamp_format = "unix-millis"
string_to_sign = "{method}\\n{target}\\n{timestamp}\\n{nonce}\\n{body_sha256}"
[auth.errors]
malformed = { status = 403, code = "forbidden" }
bad_signature = { status = 403, code = "forbidden" }
expired = { status = 403, code = "forbidden" }
replayed = { status = 403, code = "forbidden" }
"""
DENIED = {"code": "forbidden", "message": "no"}


@pytest.fixture(scope="module")
def divergent(tmp_path_factory: pytest.TempPathFactory) -> Profile:
    path: Path = tmp_path_factory.mktemp("profiles") / "divergent.toml"
    path.write_text(DIVERGENT, encoding="utf-8")
    return load_profile(path)


def signed(profile: Profile, *, status: int, secret: str | None = None) -> Exchange:
    """A payment creation signed under ``profile`` (with another ``secret``: a bad one)."""
    credential = profile.primary
    signer = profile.signer(credential)
    if secret is not None:
        signer = type(signer)(
            credential.api_key, secret, signer.template, signer.scheme, credential
        )
    body = b'{"merchant_order_no":"o-1"}'
    headers = signer.headers(
        "POST", "/v1/payments", body, timestamp=SENT_AT, nonce="n0nce-0123456789abcdef"
    )
    return exchange(
        "POST",
        "/v1/payments",
        request_headers=list(headers.items()),
        request_body=body,
        status=status,
        response_body={"id": "pay_1", "status": "pending"} if status < 300 else DENIED,
        started_at="2026-01-01T00:00:00.000Z",
    )


def verdicts(profile: Profile, ex: Exchange, rid: str) -> list[Outcome]:
    findings = AuthChecks(profile).observe(ex, request_headers(ex), "createPayment", SENT_AT, False)
    return [outcome for _, ids, outcome, _ in findings if rid in ids]


def test_a_request_signed_under_the_profile_verifies_with_it_and_not_with_the_default(
    divergent: Profile,
) -> None:
    accepted = signed(divergent, status=201)
    assert verdicts(divergent, accepted, "AUTH-005") == [Outcome.PASSED]
    assert verdicts(divergent, accepted, "AUTH-012") == [Outcome.PASSED]
    assert verdicts(load_profile(), accepted, "AUTH-005") == []  # malformed for the default


def test_a_bad_signature_is_judged_by_the_profiles_bad_signature_answer(
    divergent: Profile,
) -> None:
    forged = signed(divergent, status=403, secret="sk_wrong")
    assert verdicts(divergent, forged, "AUTH-013") == [Outcome.PASSED]
    refused_401 = signed(divergent, status=401, secret="sk_wrong")
    assert verdicts(divergent, refused_401, "AUTH-013") == [Outcome.FAILED]


def test_a_malformed_timestamp_is_expected_with_the_profiles_malformed_answer(
    divergent: Profile,
) -> None:
    headers = (
        ("X-Api-Key", "mk_test_alpha"),
        ("X-Timestamp", "2026-01-01T00:00:00Z"),
        ("X-Nonce", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
        ("X-Signature", "A" * 86 + "=="),
        ("Content-Type", "application/json"),
    )

    def outcome(profile: Profile, status: int) -> list[Outcome]:
        ex = exchange(
            "POST",
            "/v1/payments",
            request_headers=headers + KEY,
            request_body=PAYMENT_REQUEST,
            status=status,
            response_body=DENIED,
        )
        results = validate_exchange(ex, profile)
        return [r.outcome for r in results if "AUTH-007" in r.requirement_ids]

    assert outcome(divergent, 403) == [Outcome.PASSED]
    assert outcome(divergent, 401) == [Outcome.FAILED]


def test_an_auth_error_of_another_kind_is_a_status_the_operation_documents(
    divergent: Profile,
) -> None:
    forged = signed(divergent, status=403, secret="sk_wrong")
    failed = [r for r in validate_exchange(forged, divergent) if r.outcome is Outcome.FAILED]
    assert failed == []
    # under the default profile its signature is malformed (read as malformed or as wrong, as the
    # auth family names a signature cut short), and 403 is not the answer to either
    failed = [r for r in validate_exchange(forged, "default") if r.outcome is Outcome.FAILED]
    assert [r.requirement_ids for r in failed] == [("AUTH-013",)]
