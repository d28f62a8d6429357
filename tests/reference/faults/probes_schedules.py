"""Probes of the schedules faults (faults/schedules.yaml): payout schedules, subscriptions,
splits and the split template.

Each probe asserts the broken behaviour; against a correct server its assertion fails. Probes
create what they look at (fresh schedules and subscriptions), so one server serves them all.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from conformance.reference.timestamps import iso
from tests.reference.factories import create_payout, payout_body, subscription_body
from tests.reference.faults import Probe, ProbeFn


def _path(schedule: dict[str, object]) -> str:
    return f"/v1/payout-schedules/{schedule['id']}"


def payout_replace_keeps_interval(probe: Probe) -> None:
    schedule = create_payout(probe.client, interval_secs=86400)
    replaced = probe.client.put(_path(schedule), payout_body(interval_secs=3600)).json()
    assert replaced["interval_secs"] == 86400


def payout_pause_paused_bumps_updated_at(probe: Probe) -> None:
    path = _path(create_payout(probe.client))
    first = probe.client.post(f"{path}/pause").json()
    again = probe.client.post(f"{path}/pause").json()
    assert again["status"] == "paused"
    assert again["updated_at"] != first["updated_at"]


def payout_retire_leaves_enabled(probe: Probe) -> None:
    retired = probe.client.delete(_path(create_payout(probe.client))).json()
    assert retired["status"] == "retired" and retired["enabled"] is True


def payout_min_send_raw_truncates_fraction(probe: Probe) -> None:
    schedule = create_payout(probe.client, min_send_amount="1.5")
    assert schedule["min_send_raw"] == "1000000"


def payout_retired_at_set_on_pause(probe: Probe) -> None:
    paused = probe.client.post(f"{_path(create_payout(probe.client))}/pause").json()
    assert paused["status"] == "paused" and paused["retired_at"] is not None


def payout_replace_skips_withdraw_address_check(probe: Probe) -> None:
    path = _path(create_payout(probe.client))
    foreign = probe.profile.withdraw_addresses(probe.profile.secondary.merchant_id)[0]
    response = probe.client.put(path, payout_body(withdraw_address_id=foreign))
    assert response.status_code == 200


def payout_next_run_at_ignores_first_run_at(probe: Probe) -> None:
    first_run = iso(datetime.now(UTC).replace(microsecond=0) + timedelta(days=3))
    schedule = create_payout(probe.client, first_run_at=first_run)
    assert schedule["next_run_at"] != first_run


def subscription_undeployed_chain_accepted(probe: Probe) -> None:
    undeployed = [
        (currency.currency_id, chain)
        for currency in probe.profile.currencies.values()
        for chain in probe.profile.chains
        if chain not in currency.chains
    ]
    currency_id, chain = undeployed[0]
    body = subscription_body(currency_id=currency_id, chain_id=chain, amount="1")
    assert probe.client.post("/v1/subscriptions", body).status_code == 201


def split_repeated_merchant_accepted(probe: Probe) -> None:
    merchant = probe.profile.split_merchants[0]
    shares = [{"merchant_id": merchant, "bps": 100}, {"merchant_id": merchant, "bps": 200}]
    assert probe.client.put("/v1/split-template", {"shares": shares}).status_code == 200


def split_template_empty_keeps_shares(probe: Probe) -> None:
    shares = [{"merchant_id": probe.profile.split_merchants[0], "bps": 250}]
    assert probe.client.put("/v1/split-template", {"shares": shares}).status_code == 200
    cleared = probe.client.put("/v1/split-template", {"shares": []}).json()
    assert cleared["shares"] == shares


PROBES: dict[str, ProbeFn] = {
    "payout-replace-keeps-interval": payout_replace_keeps_interval,
    "payout-pause-paused-bumps-updated-at": payout_pause_paused_bumps_updated_at,
    "payout-retire-leaves-enabled": payout_retire_leaves_enabled,
    "payout-min-send-raw-truncates-fraction": payout_min_send_raw_truncates_fraction,
    "payout-retired-at-set-on-pause": payout_retired_at_set_on_pause,
    "payout-replace-skips-withdraw-address-check": payout_replace_skips_withdraw_address_check,
    "payout-next-run-at-ignores-first-run-at": payout_next_run_at_ignores_first_run_at,
    "subscription-undeployed-chain-accepted": subscription_undeployed_chain_accepted,
    "split-repeated-merchant-accepted": split_repeated_merchant_accepted,
    "split-template-empty-keeps-shares": split_template_empty_keeps_shares,
}
