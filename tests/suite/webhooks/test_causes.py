"""Which events the suite causes and judges follows ``[webhooks.emits]``; what it cannot judge is
"not exercised" with the reason, never failed."""

from __future__ import annotations

from pathlib import Path

from conformance.core.profile import load_profile
from conformance.suite.webhooks.causes import caused_keys, unreachable


def profile_with(tmp_path: Path, emits: str) -> Path:
    path = tmp_path / "p.toml"
    path.write_text(f'extends = "default"\n\n[webhooks.emits]\n{emits}\n', encoding="utf-8")
    return path


def test_the_default_profile_causes_every_event() -> None:
    assert unreachable(load_profile("default")) == {}
    assert len(caused_keys(load_profile("default"))) == 9


def test_an_event_type_two_keys_emit_is_judged_for_the_first_only(tmp_path: Path) -> None:
    profile = load_profile(profile_with(tmp_path, 'cancelPayment = "payment.created"'))
    assert unreachable(profile) == {
        "EVT-005": "cancelPayment emits payment.created, as createPayment does: the suite "
        "cannot tell which of the two a webhook comes from (webhooks.emits)"
    }
    assert "cancelPayment" not in caused_keys(profile)


def test_a_key_that_emits_nothing_is_not_caused(tmp_path: Path) -> None:
    profile = load_profile(profile_with(tmp_path, 'settleX402Payment = ""'))
    assert unreachable(profile) == {
        "EVT-009": "the profile says settleX402Payment emits no event "
        "(webhooks.emits.settleX402Payment)"
    }
    assert profile.webhooks.emitted("settleX402Payment") is None
