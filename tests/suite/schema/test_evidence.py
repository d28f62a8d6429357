"""Evidence of a schemathesis exchange (conformance/suite/schema/evidence.py)."""

from __future__ import annotations

import requests
from schemathesis import Response

from conformance.core.profile import load_profile
from conformance.suite.schema.evidence import evidence_from, failure_fields, failure_tags
from conformance.suite.schema.loading import signed_session

PROFILE = load_profile()
SECRET = PROFILE.primary.api_secret


def test_evidence_repeats_the_request_without_any_secret() -> None:
    body = b'{"memo": "' + SECRET.encode() + b'"}'
    prepared = requests.Request(
        "POST", "http://127.0.0.1:1/v1/payments", data=body, auth=signed_session(PROFILE).auth
    ).prepare()
    answer = b'{"id": "whsec_abc", "secret": "whsec_QUJD"}'
    response = Response(
        200, {"Content-Type": ["application/json"]}, answer, prepared, elapsed=0.1, verify=True
    )
    evidence = evidence_from(response, (SECRET,))
    assert evidence.status == 200
    assert evidence.request_headers["x-signature"] == "[redacted]"
    assert evidence.request_headers["x-api-key"] == PROFILE.primary.api_key
    everything = evidence.curl + (evidence.request_body or "") + (evidence.response_body or "")
    assert SECRET not in everything
    assert "whsec_" not in everything
    assert str(prepared.headers["X-Signature"]) not in everything
    assert evidence.curl.startswith("curl -X POST http://127.0.0.1:1/v1/payments -H ")


class SchemaError(Exception):
    instance_path = ("quotes", "usdc", "amount", 0)
    _raw_message = '"checkout_url" is a required property'


class FormatError(Exception):
    instance_path = ("expires_at",)
    _raw_message = '"2026-11-22 10:04:11" is not a "date-time"'


def test_a_failure_names_its_fields_and_broken_format() -> None:
    assert failure_fields(SchemaError()) == {"quotes", "usdc", "amount", "checkout_url"}
    assert failure_fields(FormatError()) == {"expires_at"}
    assert failure_tags(FormatError()) == {"format:date-time"}
    assert failure_tags(SchemaError()) == set()
    assert failure_fields(AssertionError("plain")) == set()
