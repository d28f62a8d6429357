"""Webhook signing as a profile choice: ``webhooks.signature``, ``[webhooks.signing]``,
``webhooks.verifier`` and ``[webhooks.emits]``, as ``profile check`` reads them.

What the suite cannot verify is refused with the key named, exit 2, never a traceback; what it
can is read back from the headers the reference server writes for it.
"""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.profile import EMIT_KEYS, load_profile
from conformance.core.webhook_scheme import WebhookScheme
from conformance.reference.webhook_dispatch import _faulty_sign
from conformance.reference.webhooks import new_secret
from conformance.suite.webhooks.signatures import signed_with
from tests.profiles import fragment

STRIPE_LIKE = fragment("stripe_like_webhooks")


def check(tmp_path: Path, text: str, name: str = "p.toml") -> Result:
    path = tmp_path / name
    path.write_text('extends = "default"\n' + text, encoding="utf-8")
    return CliRunner().invoke(main, ["profile", "check", str(path)])


def test_the_default_profile_is_standard_webhooks_and_declares_todays_events() -> None:
    webhooks = load_profile("default").webhooks
    assert webhooks.scheme == WebhookScheme.of("standard-webhooks", None)
    assert webhooks.scheme.signature_header == "webhook-signature"
    assert dict(webhooks.emits) == {
        "createPayment": "payment.created",
        "payment_underpaid": "payment.underpaid",
        "payment_settled": "payment.settled",
        "payment_expired": "payment.expired",
        "cancelPayment": "payment.canceled",
        "createSubscription": "subscription.created",
        "cancelSubscription": "subscription.canceled",
        "payout_schedule_changed": "payout_schedule.updated",
        "settleX402Payment": "x402.settled",
    }
    assert set(webhooks.emits) == set(EMIT_KEYS)


def test_a_stripe_like_header_is_accepted_and_read_back(tmp_path: Path) -> None:
    result = check(tmp_path, STRIPE_LIKE)
    assert result.exit_code == 0, result.output
    scheme = load_profile(tmp_path / "p.toml").webhooks.scheme
    secret, body = new_secret(), b'{"id":"evt_1"}'
    headers = {
        k.lower(): v
        for k, v in _faulty_sign(frozenset(), secret, "msg_1", 1700000000, body, scheme).items()
    }
    value = headers["webhook-signature"]
    expected = hmac.new(secret.encode(), b"1700000000." + body, hashlib.sha256).hexdigest()
    assert value == f"t=1700000000,v1={expected}"
    assert scheme.read(headers) == ("msg_1", "1700000000", [expected])
    # several signatures in the one header: any may match; another secret does not
    both = f"t=1700000000,v1={'0' * 64},v1={expected}"
    assert (
        signed_with([new_secret(), secret], "whsec_", "msg_1", "1700000000", body, both, scheme)
        == 1
    )
    assert signed_with([new_secret()], "whsec_", "msg_1", "1700000000", body, both, scheme) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[webhooks]\nsignature = "hmac"\n', "needs the [webhooks.signing] table"),
        ('[webhooks.signing]\nencoding = "hex"\n', "read only with webhooks.signature"),
        (
            '[webhooks]\nsignature = "hmac"\n[webhooks.signing]\nsigned = "{id}.{nonce}.{body}"\n',
            "webhooks.signing.signed: unknown placeholder {nonce}",
        ),
        (
            '[webhooks]\nsignature = "hmac"\n[webhooks.signing]\nsigned = "{id}.{timestamp}"\n',
            "must contain {body} exactly once",
        ),
        (
            '[webhooks]\nsignature = "hmac"\n[webhooks.signing]\nsignature_prefix = "v1,"\n'
            'separator = ","\n',
            "webhooks.signing.signature_prefix: 'v1,' contains the separator ','",
        ),
        (
            '[webhooks]\nsignature = "hmac"\n[webhooks.signing]\nformat = "key-value"\n'
            'timestamp_key = "v1"\n',
            "timestamp_key and signature_key must differ",
        ),
        (
            '[webhooks]\nsignature = "hmac"\n[webhooks.signing]\nid_header = "Webhook-Signature"\n',
            "the id, timestamp and signature headers must differ",
        ),
        (
            '[webhooks]\nsignature = "hmac"\n[webhooks.signing]\nid_header = "Webhook Id"\n',
            "webhooks.signing.id_header: 'Webhook Id' is not an HTTP header name",
        ),
        ('[webhooks]\nsignature = "hmac"\n[webhooks.signing]\nalgorithm = "md5"\n', "algorithm"),
        ('[webhooks]\nsignature = "ed25519"\n', "signature"),
        (
            '[webhooks.emits]\ncreatePayment = "payment.completed"\n',
            "webhooks.emits.createPayment: 'payment.completed' is not one of webhooks.event_types",
        ),
        ('[webhooks.emits]\nrefundPayment = "payment.created"\n', "refundPayment"),
    ],
)
def test_profile_check_refuses_what_the_suite_cannot_verify(
    tmp_path: Path, text: str, message: str
) -> None:
    result = check(tmp_path, text)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("module", "reference", "message"),
    [
        (None, "nohook_here:verify", "cannot import nohook_here: ModuleNotFoundError"),
        (
            "raise RuntimeError('boom')\n",
            "hook_boom:verify",
            "cannot import hook_boom: RuntimeError: boom",
        ),
        ("x = 1\n", "hook_nofunc:verify", "hook_nofunc has no function verify"),
        (None, "not a reference", "must be 'package.module:function'"),
    ],
)
def test_a_verifier_that_cannot_be_loaded_is_one_clear_line(
    tmp_path: Path, module: str | None, reference: str, message: str
) -> None:
    if module is not None:
        (tmp_path / f"{reference.partition(':')[0]}.py").write_text(module, encoding="utf-8")
    result = check(tmp_path, f'[webhooks]\nverifier = "{reference}"\n')
    assert result.exit_code == 2, result.output
    assert f"webhooks.verifier {reference!r}: {message}" in result.output
    assert "Traceback" not in result.output


def test_a_verifier_next_to_the_profile_is_loaded_and_hashed(tmp_path: Path) -> None:
    source = "def verify(headers, body, secret):\n    return secret == 'yes'\n"
    (tmp_path / "hook_next_to_it.py").write_text(source, encoding="utf-8")
    assert check(tmp_path, '[webhooks]\nverifier = "hook_next_to_it:verify"\n').exit_code == 0
    verifier = load_profile(tmp_path / "p.toml").webhook_verifier
    assert verifier is not None
    assert verifier.sha256 == hashlib.sha256(source.encode()).hexdigest()
    assert verifier.verifies({}, b"", "yes") == (True, "")
    assert verifier.verifies({}, b"", "no") == (False, "")


def test_run_with_a_verifier_that_cannot_be_loaded_stops_before_it_starts(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('extends = "default"\n[webhooks]\nverifier = "gone_hook:verify"\n')
    result = CliRunner().invoke(main, ["run", "--profile", str(path), "--only", "DLV-008"])
    assert result.exit_code == 2, result.output
    assert "webhooks.verifier 'gone_hook:verify': cannot import gone_hook" in result.output
    assert "Traceback" not in result.output
