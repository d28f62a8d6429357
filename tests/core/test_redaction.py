"""Secrets never reach output: what the shared redaction removes and what it keeps."""

from __future__ import annotations

import json

from conformance.core.redaction import REDACTED, redact_headers, redact_text


def test_signature_headers_are_redacted_and_the_key_id_kept() -> None:
    headers = redact_headers(
        {"X-Api-Key": "mk_test_alpha", "X-Signature": "ab12", "webhook-signature": "v1,x"}
    )
    assert headers == {
        "X-Api-Key": "mk_test_alpha",
        "X-Signature": REDACTED,
        "webhook-signature": REDACTED,
    }


def test_secret_json_fields_are_redacted_at_any_depth() -> None:
    body = json.dumps({"id": "we_1", "secret": "whsec_abc", "nested": [{"api_secret": "sk"}]})
    redacted = json.loads(redact_text(body))
    assert redacted == {"id": "we_1", "secret": REDACTED, "nested": [{"api_secret": REDACTED}]}


def test_webhook_secrets_are_redacted_in_standard_and_url_safe_base64() -> None:
    for secret in ("whsec_c2VjcmV0+/c2VjcmV0==", "whsec_c2Vj-cmV0_c2VjcmV0"):
        text = redact_text(f"rotated: {secret} done")
        assert text == f"rotated: {REDACTED} done"


def test_known_secret_strings_are_redacted_anywhere() -> None:
    assert redact_text("key sk_test_alpha_0123 in text", ["sk_test_alpha_0123"]) == (
        f"key {REDACTED} in text"
    )
