"""The webhooks family reads its expectations from the profile: how deliveries are signed
(``[webhooks.signing]``, ``webhooks.verifier``) and which operation emits which event
(``[webhooks.emits]``).

Against the reference server under the same profile every check passes; against the reference
server under the default profile the checks the choice changes fail, so they follow the
profile and not what the default profile would say.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome, RunResult
from conformance.engine.options import RunOptions
from conformance.engine.runner import run_suite
from conformance.reference.server import ReferenceServer
from conformance.suite.webhooks import deliveries, judging
from tests.profiles import fragment
from tests.suite.proofs import family_failures, family_passed

pytestmark = pytest.mark.slow

FAMILY = "webhooks"

STRIPE_LIKE = 'extends = "default"\n' + fragment("stripe_like_webhooks")

OTHER_NAMES = """extends = "default"

[webhooks]
event_types = [
  "payment.opened", "payment.partially_paid", "payment.completed", "payment.timed_out",
  "payment.voided", "subscription.started", "subscription.ended", "payout_schedule.changed",
  "x402.completed",
]

[webhooks.emits]
createPayment = "payment.opened"
payment_underpaid = "payment.partially_paid"
payment_settled = "payment.completed"
payment_expired = "payment.timed_out"
cancelPayment = "payment.voided"
createSubscription = "subscription.started"
cancelSubscription = "subscription.ended"
payout_schedule_changed = "payout_schedule.changed"
settleX402Payment = "x402.completed"
"""

# The default event names, but the cancel and the expiry emit each other's.
SWAPPED = """extends = "default"

[webhooks.emits]
cancelPayment = "payment.expired"
payment_expired = "payment.canceled"
"""

VERIFIER = '''import hashlib
import hmac


def verify(headers, body, secret):
    """Webhook-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">."""
    items = dict(item.split("=", 1) for item in headers["webhook-signature"].split(","))
    content = items["t"].encode() + b"." + body
    expected = hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, items["v1"])


def refuse(headers, body, secret):
    raise ValueError("no signature of mine")
'''


@pytest.fixture
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Against a server that does not make the profile's choice, what the checks wait for may
    never come: wait 3 s, not 20."""
    for waits in (deliveries, judging):  # the modules that wait WAIT_SECS for a delivery
        monkeypatch.setattr(waits, "WAIT_SECS", 3.0)


def write(tmp_path: Path, text: str, name: str) -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def run(profile: str, only: tuple[str, ...], *, server_profile: str | None = None) -> RunResult:
    """The family under ``profile``, against the embedded server under the same profile or a
    reference server under ``server_profile``."""
    options = RunOptions(profile=profile, only=only, seed=11, quick=True)
    if server_profile is None:
        return run_suite(options)
    with ReferenceServer(profile=load_profile(server_profile)) as server:
        return run_suite(replace(options, base_url=server.base_url))


def test_a_t_v1_signature_header_is_verified_as_the_profile_declares(
    tmp_path: Path, short_waits: None
) -> None:
    profile = write(tmp_path, STRIPE_LIKE, "stripe_like")
    same = run(profile, ("DLV",))
    assert family_failures(same, FAMILY) == {}
    assert {"DLV-006", "DLV-007", "DLV-008", "DLV-009"} <= family_passed(same, FAMILY)
    # the default server signs Standard Webhooks: no t= item, no hex HMAC of "<t>.<body>"
    other = family_failures(run(profile, ("DLV",), server_profile="default"), FAMILY)
    assert {"DLV-007", "DLV-008"} <= set(other), other
    assert any("Webhook-Signature" in m for m in other["DLV-008"])


def test_a_server_breaking_the_declared_scheme_fails_its_checks(tmp_path: Path) -> None:
    # the t= item in milliseconds, the HMAC keyed with the secret decoded: DLV-007 and DLV-008
    options = RunOptions(
        profile=write(tmp_path, STRIPE_LIKE, "stripe_like"),
        only=("DLV",),
        seed=11,
        quick=True,
        embedded_fault="webhook-timestamp-milliseconds,webhook-signature-key-not-decoded",
    )
    found = family_failures(run_suite(options), FAMILY)
    assert set(found) == {"DLV-007", "DLV-008"}, found


def test_other_event_names_are_caused_and_judged_as_the_profile_maps_them(
    tmp_path: Path,
) -> None:
    result = run(write(tmp_path, OTHER_NAMES, "other_names"), ("EVT",))
    assert family_failures(result, FAMILY) == {}
    assert {f"EVT-00{n}" for n in range(1, 10)} <= family_passed(result, FAMILY)


def test_the_events_expected_are_the_profiles_not_the_defaults(
    tmp_path: Path, short_waits: None
) -> None:
    # the default server emits payment.canceled on cancel: the profile says payment.expired
    found = family_failures(
        run(write(tmp_path, SWAPPED, "swapped"), ("EVT",), server_profile="default"), FAMILY
    )
    assert {"EVT-004", "EVT-005"} <= set(found), found


def test_an_operation_that_emits_nothing_is_not_exercised_never_failed(tmp_path: Path) -> None:
    text = 'extends = "default"\n\n[webhooks.emits]\ncancelPayment = ""\n'
    result = run(write(tmp_path, text, "no_cancel_event"), ("EVT",))
    assert family_failures(result, FAMILY) == {}
    (cancel,) = [r for r in result.requirements if r.requirement.id == "EVT-005"]
    assert cancel.outcome is Outcome.NOT_EXERCISED
    assert "cancelPayment emits no event" in (cancel.reason_not_exercised or "")


def test_a_verifier_hook_judges_the_signatures_and_is_named_in_the_report(
    tmp_path: Path,
) -> None:
    (tmp_path / "my_webhook_hook.py").write_text(VERIFIER, encoding="utf-8")
    profile = write(tmp_path, _with_verifier(STRIPE_LIKE, "verify"), "hooked")
    result = run(profile, ("DLV",))
    assert family_failures(result, FAMILY) == {}
    assert "DLV-008" in family_passed(result, FAMILY)
    recorded = result.options["webhook_verifier"]
    assert recorded.startswith("my_webhook_hook:verify (sha256 ")
    # a hook that accepts nothing fails every signature: the hook, not the scheme, judges them
    refusing = write(tmp_path, _with_verifier(STRIPE_LIKE, "refuse"), "refusing")
    found = family_failures(run(refusing, ("DLV",)), FAMILY)
    assert set(found) == {"DLV-008"}, found
    assert "my_webhook_hook:refuse raised ValueError" in found["DLV-008"][0]


def _with_verifier(profile: str, function: str) -> str:
    return profile.replace(
        'signature = "hmac"\n', f'signature = "hmac"\nverifier = "my_webhook_hook:{function}"\n'
    )
