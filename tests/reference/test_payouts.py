"""Payout schedules through real HTTP: create, replace, pause, retire (profile section 5)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from conformance.core.formats import parse_date_time
from conformance.core.profile import Profile
from conformance.reference.timestamps import iso
from tests.reference.factories import (
    create_payout,
    error_code,
    event_counts,
    payout_body,
    subscribe_to_everything,
)
from tests.reference.signed_client import SignedClient


def _at(text: str) -> datetime:
    parsed = parse_date_time(text)
    assert parsed is not None, text
    return parsed


def test_create_is_active_with_derived_fields(alpha: SignedClient) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    response = alpha.post("/v1/payout-schedules", payout_body(min_send_amount="100.5"))
    assert response.status_code == 201
    schedule = response.json()
    assert schedule["id"].startswith("ps_")
    assert (schedule["status"], schedule["enabled"], schedule["retired_at"]) == (
        "active",
        True,
        None,
    )
    assert schedule["currency_chain_id"] == "usdc:base"
    assert schedule["min_send_amount"] == "100.5"
    assert schedule["min_send_raw"] == "100500000"
    assert schedule["mode"] == "auto_request"
    next_run = _at(schedule["next_run_at"])
    assert (
        before + timedelta(days=1) <= next_run <= datetime.now(UTC) + timedelta(days=1, seconds=1)
    )
    assert schedule["created_at"] == schedule["updated_at"]


def test_eth_min_send_raw_uses_18_decimals_and_first_run_at(alpha: SignedClient) -> None:
    first = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0)
    schedule = create_payout(
        alpha,
        currency_id="eth",
        target_chain_id="ethereum",
        withdraw_address_id="wa_alpha_eth",
        min_send_amount="0.5",
        first_run_at=iso(first),
    )
    assert schedule["min_send_raw"] == "500000000000000000"
    assert schedule["currency_chain_id"] == "eth:ethereum"
    assert _at(schedule["next_run_at"]) == first


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"min_send_amount": "1.1234567"}, "too_many_decimals"),
        ({"withdraw_address_id": "wa_nowhere"}, "unknown_withdraw_address"),
        ({"withdraw_address_id": "wa_beta_base"}, "unknown_withdraw_address"),
        ({"currency_id": "doge"}, "unknown_currency"),
        ({"currency_id": "eth"}, "currency_not_on_chain"),
        ({"first_run_at": "2020-01-01T00:00:00Z"}, "first_run_at_not_in_future"),
    ],
)
def test_business_rules_are_422(
    alpha: SignedClient, overrides: dict[str, object], code: str
) -> None:
    response = alpha.post("/v1/payout-schedules", payout_body(**overrides))
    assert (response.status_code, error_code(response)) == (422, code)


@pytest.mark.parametrize(
    "overrides",
    [
        {"interval_secs": 59},
        {"interval_secs": 31536001},
        {"min_send_amount": "01"},
        {"min_send_amount": "1.5\n"},
        {"min_send_amount": "1" * 129},
        {"min_send_amount": 100},
        {"mode": "sometimes"},
        {"first_run_at": "tomorrow"},
        {"currency_id": ""},
        {"withdraw_address_id": "w" * 129},
    ],
)
def test_contract_violations_are_400(alpha: SignedClient, overrides: dict[str, object]) -> None:
    response = alpha.post("/v1/payout-schedules", payout_body(**overrides))
    assert (response.status_code, error_code(response)) == (400, "validation_error")


@pytest.mark.parametrize("interval", [60, 60.0, 31536000])
def test_interval_bounds_accepted(alpha: SignedClient, interval: float) -> None:
    assert create_payout(alpha, interval_secs=interval)["interval_secs"] == int(interval)


def test_replace_sets_every_field_and_bumps_updated_at(alpha: SignedClient) -> None:
    schedule = create_payout(alpha)
    replacement = payout_body(
        currency_id="eth",
        target_chain_id="ethereum",
        withdraw_address_id="wa_alpha_eth",
        interval_secs=604800,
        min_send_amount="0.25",
        mode="notify_only",
    )
    response = alpha.put(f"/v1/payout-schedules/{schedule['id']}", replacement)
    assert response.status_code == 200
    replaced = response.json()
    for field in ("currency_id", "target_chain_id", "withdraw_address_id", "interval_secs", "mode"):
        assert replaced[field] == replacement[field]
    assert replaced["min_send_raw"] == "250000000000000000"
    assert replaced["currency_chain_id"] == "eth:ethereum"
    assert _at(replaced["updated_at"]) > _at(schedule["updated_at"])
    assert replaced["created_at"] == schedule["created_at"]


def test_replace_with_missing_field_is_400(alpha: SignedClient) -> None:
    schedule = create_payout(alpha)
    body = payout_body()
    del body["mode"]
    response = alpha.put(f"/v1/payout-schedules/{schedule['id']}", body)
    assert response.status_code == 400


def test_pause_resume_retire_lifecycle(alpha: SignedClient) -> None:
    schedule = create_payout(alpha)
    path = f"/v1/payout-schedules/{schedule['id']}"
    paused = alpha.post(f"{path}/pause")
    assert paused.status_code == 200
    assert (paused.json()["status"], paused.json()["enabled"]) == ("paused", False)
    again = alpha.post(f"{path}/pause")
    assert again.status_code == 200
    assert again.json() == paused.json()
    resumed = alpha.put(path, payout_body())
    assert (resumed.json()["status"], resumed.json()["enabled"]) == ("active", True)
    retired = alpha.delete(path)
    assert retired.status_code == 200
    body = retired.json()
    assert (body["status"], body["enabled"]) == ("retired", False)
    assert _at(body["retired_at"]) == _at(body["updated_at"])


def test_retire_from_paused(alpha: SignedClient) -> None:
    schedule = create_payout(alpha)
    path = f"/v1/payout-schedules/{schedule['id']}"
    alpha.post(f"{path}/pause")
    assert alpha.delete(path).json()["status"] == "retired"


def test_retired_schedule_refuses_replace_pause_and_retire(alpha: SignedClient) -> None:
    schedule = create_payout(alpha)
    path = f"/v1/payout-schedules/{schedule['id']}"
    assert alpha.delete(path).status_code == 200
    for response in (
        alpha.put(path, payout_body()),
        alpha.post(f"{path}/pause"),
        alpha.delete(path),
    ):
        assert (response.status_code, error_code(response)) == (409, "invalid_state")


def test_schedules_of_another_merchant_are_404(alpha: SignedClient, beta: SignedClient) -> None:
    theirs = create_payout(beta, withdraw_address_id="wa_beta_base")
    path = f"/v1/payout-schedules/{theirs['id']}"
    for response in (
        alpha.put(path, payout_body()),
        alpha.post(f"{path}/pause"),
        alpha.delete(path),
    ):
        assert (response.status_code, error_code(response)) == (404, "not_found")
    assert beta.post(f"{path}/pause").json()["status"] == "paused"


def test_replace_pause_and_retire_emit_payout_schedule_updated(
    alpha: SignedClient, profile: Profile
) -> None:
    subscribe_to_everything(alpha, list(profile.data["webhooks"]["event_types"]))
    before = event_counts(alpha)
    schedule = create_payout(alpha)
    path = f"/v1/payout-schedules/{schedule['id']}"
    alpha.put(path, payout_body())
    alpha.post(f"{path}/pause")
    alpha.post(f"{path}/pause")  # already paused: unchanged, no event
    alpha.delete(path)
    alpha.delete(path)  # refused: no event
    assert event_counts(alpha) - before == {"payout_schedule.updated": 3}
