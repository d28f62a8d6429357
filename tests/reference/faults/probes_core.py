"""Probes of the core faults (faults/core.yaml).

Each probe drives the API and asserts the *broken* behaviour; against a correct server its
assertion fails. Probes create what they look at (random order numbers, fresh keys), so one
server can serve many probes.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta

import httpx

from conformance.core.formats import parse_date_time
from conformance.reference.timestamps import iso
from tests.reference.factories import (
    create_payment,
    create_payout,
    create_subscription,
    deposit,
    error_code,
    payment_body,
    payout_body,
)
from tests.reference.faults import Probe, ProbeFn


# ------------------------------------------------------------------------------ auth
def auth_accepts_stale_timestamp(probe: Probe) -> None:
    response = probe.client.get("/v1/payments", timestamp=int(time.time()) - 3600)
    assert response.status_code == 200


def auth_nonce_not_checked(probe: Probe) -> None:
    nonce = uuid.uuid4().hex
    assert probe.client.get("/v1/payments", nonce=nonce).status_code == 200
    assert probe.client.get("/v1/payments", nonce=nonce).status_code == 200


def auth_signature_ignores_body(probe: Probe) -> None:
    headers = probe.client.signed_headers("POST", "/v1/payments", b"")
    headers.update({"Content-Type": "application/json", "Idempotency-Key": uuid.uuid4().hex})
    response = httpx.post(probe.base_url + "/v1/payments", json=payment_body(), headers=headers)
    assert response.status_code == 201


def auth_signature_ignores_query(probe: Probe) -> None:
    headers = probe.client.signed_headers("GET", "/v1/payments")
    response = httpx.get(probe.base_url + "/v1/payments?limit=6", headers=headers)
    assert response.status_code == 200


def auth_after_routing(probe: Probe) -> None:
    assert httpx.get(probe.base_url + "/v1/nowhere").status_code == 404


def auth_nonce_recorded_before_signature(probe: Probe) -> None:
    nonce = uuid.uuid4().hex
    forged = probe.client.signed_headers("GET", "/v1/payments", nonce=nonce)
    forged["X-Signature"] = "0" * 64
    assert httpx.get(probe.base_url + "/v1/payments", headers=forged).status_code == 401
    assert probe.client.get("/v1/payments", nonce=nonce).status_code == 401


def auth_bad_signature_403(probe: Probe) -> None:
    headers = probe.client.signed_headers("GET", "/v1/payments")
    headers["X-Signature"] = "f" * 64
    assert httpx.get(probe.base_url + "/v1/payments", headers=headers).status_code == 403


def auth_nonce_optional(probe: Probe) -> None:
    headers = probe.client.signed_headers("GET", "/v1/payments", nonce="")
    del headers["X-Nonce"]
    assert httpx.get(probe.base_url + "/v1/payments", headers=headers).status_code == 200


# ------------------------------------------------------------------------------ idempotency
def _twice(probe: Probe) -> tuple[httpx.Response, httpx.Response]:
    key = uuid.uuid4().hex
    body = payment_body()
    first = probe.client.post("/v1/payments", body, idempotency_key=key)
    return first, probe.client.post("/v1/payments", body, idempotency_key=key)


def idem_replay_reexecutes(probe: Probe) -> None:
    first, second = _twice(probe)
    assert first.status_code == 201
    assert second.json().get("id") != first.json()["id"] or second.status_code != 201


def idem_replay_missing_header(probe: Probe) -> None:
    first, second = _twice(probe)
    assert second.content == first.content
    assert "Idempotent-Replayed" not in second.headers


def idem_reuse_replays_first(probe: Probe) -> None:
    key = uuid.uuid4().hex
    first = probe.client.post("/v1/payments", payment_body(), idempotency_key=key)
    second = probe.client.post("/v1/payments", payment_body(), idempotency_key=key)
    assert second.status_code != 422
    assert second.content == first.content


def idem_errors_stored(probe: Probe) -> None:
    key = uuid.uuid4().hex
    bad = payment_body(quotes={"doge": {"amount": "1"}})
    probe.client.post("/v1/payments", bad, idempotency_key=key)
    again = probe.client.post("/v1/payments", bad, idempotency_key=key)
    assert again.headers.get("Idempotent-Replayed") == "true"


def idem_key_128_rejected(probe: Probe) -> None:
    response = probe.client.post("/v1/payments", payment_body(), idempotency_key="k" * 128)
    assert error_code(response) == "idempotency_key_invalid"


def idem_key_not_required(probe: Probe) -> None:
    response = probe.client.post("/v1/payments", payment_body(), idempotency_key=None)
    assert response.status_code == 201


def idem_scope_global(probe: Probe) -> None:
    key = uuid.uuid4().hex
    body = payment_body()
    mine = probe.client.post("/v1/payments", body, idempotency_key=key)
    theirs = probe.other.post("/v1/payments", body, idempotency_key=key)
    assert theirs.content == mine.content


# ------------------------------------------------------------------------------ validation
def _payout_status(probe: Probe, **overrides: object) -> int:
    return probe.client.post("/v1/payout-schedules", payout_body(**overrides)).status_code


def validation_amount_leading_zero(probe: Probe) -> None:
    assert _payout_status(probe, min_send_amount="01") == 201


def validation_decimal_amount_trailing_dot(probe: Probe) -> None:
    assert _payout_status(probe, min_send_amount="10.") == 201
    assert _payout_status(probe, min_send_amount="10.5.") == 400  # only a dot without fraction


def validation_pattern_trailing_newline(probe: Probe) -> None:
    assert _payout_status(probe, min_send_amount="1\n") in (201, 422)


def validation_interval_max_off_by_one(probe: Probe) -> None:
    assert _payout_status(probe, interval_secs=31536001) == 201


def validation_url_max_length_ignored(probe: Probe) -> None:
    url = "https://example.com/" + "a" * 2030
    response = probe.client.put(
        f"/v1/webhook-endpoints/we_{uuid.uuid4().hex[:8]}",
        {"url": url, "event_types": ["payment.created"]},
    )
    assert len(url) > 2048
    assert response.status_code == 200


def validation_unique_items_ignored(probe: Probe) -> None:
    response = probe.client.put(
        f"/v1/webhook-endpoints/we_{uuid.uuid4().hex[:8]}",
        {"url": "https://example.com/h", "event_types": ["payment.created", "payment.created"]},
    )
    assert response.status_code == 200


def validation_integer_float_rejected(probe: Probe) -> None:
    assert _payout_status(probe, interval_secs=60.0) == 400


def validation_ignores_content_type(probe: Probe) -> None:
    response = probe.client.post("/v1/payments", payment_body(), content_type="text/plain")
    assert response.status_code == 201


def payments_list_limit_max_unenforced(probe: Probe) -> None:
    assert probe.client.get("/v1/payments?limit=101").status_code == 200


def payments_expires_in_unbounded(probe: Probe) -> None:
    response = probe.client.post("/v1/payments", payment_body(expires_in_secs=86401))
    assert response.status_code == 201


# ------------------------------------------------------------------------------ shape
def shape_missing_checkout_url(probe: Probe) -> None:
    assert "checkout_url" not in create_payment(probe.client)


def shape_expires_at_not_date_time(probe: Probe) -> None:
    assert parse_date_time(create_payment(probe.client)["expires_at"]) is None


def shape_checkout_url_everywhere(probe: Probe) -> None:
    payment = create_payment(probe.client)
    canceled = probe.client.post(f"/v1/payments/{payment['id']}/cancel").json()
    assert "checkout_url" in canceled


def shape_cancel_subscription_has_authorize_url(probe: Probe) -> None:
    sub = create_subscription(probe.client)
    assert "authorize_url" in probe.client.post(f"/v1/subscriptions/{sub['id']}/cancel").json()


def error_body_text_plain(probe: Probe) -> None:
    response = probe.client.get("/v1/nowhere")
    assert not response.headers["content-type"].startswith("application/json")


def method_not_allowed_without_allow(probe: Probe) -> None:
    response = probe.client.request("DELETE", "/v1/payments")
    assert response.status_code == 405
    assert "Allow" not in response.headers


# ------------------------------------------------------------------------------ state
def state_cancel_canceled_payment_200(probe: Probe) -> None:
    payment = create_payment(probe.client)
    probe.client.post(f"/v1/payments/{payment['id']}/cancel")
    assert probe.client.post(f"/v1/payments/{payment['id']}/cancel").status_code == 200


def state_accept_underpaid_pending(probe: Probe) -> None:
    payment = create_payment(probe.client)
    response = probe.client.post(f"/v1/payments/{payment['id']}/accept-underpaid")
    assert response.status_code == 200


def state_cancel_canceled_subscription_200(probe: Probe) -> None:
    sub = create_subscription(probe.client)
    probe.client.post(f"/v1/subscriptions/{sub['id']}/cancel")
    assert probe.client.post(f"/v1/subscriptions/{sub['id']}/cancel").status_code == 200


def _retired(probe: Probe) -> str:
    schedule = create_payout(probe.client)
    path = f"/v1/payout-schedules/{schedule['id']}"
    assert probe.client.delete(path).status_code == 200
    return path


def state_pause_retired_allowed(probe: Probe) -> None:
    assert probe.client.post(f"{_retired(probe)}/pause").status_code == 200


def state_put_does_not_resume(probe: Probe) -> None:
    schedule = create_payout(probe.client)
    path = f"/v1/payout-schedules/{schedule['id']}"
    probe.client.post(f"{path}/pause")
    assert probe.client.put(path, payout_body()).json()["status"] == "paused"


def state_enabled_while_paused(probe: Probe) -> None:
    schedule = create_payout(probe.client)
    paused = probe.client.post(f"/v1/payout-schedules/{schedule['id']}/pause").json()
    assert paused["status"] == "paused" and paused["enabled"] is True


def state_retire_twice_allowed(probe: Probe) -> None:
    assert probe.client.delete(_retired(probe)).status_code == 200


# ------------------------------------------------------------------------------ isolation
def isolation_payment_cross_merchant(probe: Probe) -> None:
    theirs = create_payment(probe.other)
    assert probe.client.post(f"/v1/payments/{theirs['id']}/cancel").status_code == 200


def isolation_list_all_merchants(probe: Probe) -> None:
    theirs = create_payment(probe.other)
    number = theirs["merchant_order_no"]
    listed = probe.client.get(f"/v1/payments?merchant_order_no={number}").json()["payments"]
    assert [p["id"] for p in listed] == [theirs["id"]]


def isolation_payout_cross_merchant(probe: Probe) -> None:
    theirs = create_payout(probe.other, withdraw_address_id="wa_beta_base")
    response = probe.client.post(f"/v1/payout-schedules/{theirs['id']}/pause")
    assert response.status_code == 200


def isolation_order_no_global(probe: Probe) -> None:
    theirs = create_payment(probe.other)
    response = probe.client.post(
        "/v1/payments", payment_body(merchant_order_no=theirs["merchant_order_no"])
    )
    assert response.status_code == 409


# ------------------------------------------------------------------------------ robustness
def robust_huge_body_500(probe: Probe) -> None:
    response = probe.client.post("/v1/payments", content=b"x" * (1024 * 1024 + 1))
    assert response.status_code == 500


def robust_malformed_json_500(probe: Probe) -> None:
    assert probe.client.post("/v1/payments", content=b"{not json").status_code == 500


def robust_non_ascii_id_500(probe: Probe) -> None:
    assert probe.client.post("/v1/payments/pay_é/cancel").status_code == 500


# ------------------------------------------------------------------------------ domain
def payout_min_send_raw_wrong_decimals(probe: Probe) -> None:
    schedule = create_payout(probe.client, min_send_amount="1")
    assert schedule["min_send_raw"] != "1000000"


def payout_first_run_at_past_accepted(probe: Probe) -> None:
    past = iso(datetime.now(UTC) - timedelta(hours=1))
    assert _payout_status(probe, first_run_at=past) == 201


def payout_foreign_withdraw_address_accepted(probe: Probe) -> None:
    assert _payout_status(probe, withdraw_address_id="wa_beta_base") == 201


def payment_expires_at_ignores_expires_in(probe: Probe) -> None:
    payment = create_payment(probe.client, expires_in_secs=600)
    expires = parse_date_time(payment["expires_at"])
    assert expires is not None
    assert expires - datetime.now(UTC) > timedelta(seconds=1200)


def payments_list_oldest_first(probe: Probe) -> None:
    first = create_payment(probe.client)
    second = create_payment(probe.client)
    listed = [p["id"] for p in probe.client.get("/v1/payments?limit=100").json()["payments"]]
    assert listed.index(first["id"]) < listed.index(second["id"])


def payments_cursor_foreign_accepted(probe: Probe) -> None:
    create_payment(probe.other)
    create_payment(probe.other)
    cursor = probe.other.get("/v1/payments?limit=1").json()["next_cursor"]
    assert probe.client.get(f"/v1/payments?cursor={cursor}").status_code == 200


def payment_empty_quotes_accepted(probe: Probe) -> None:
    assert probe.client.post("/v1/payments", payment_body(quotes={})).status_code == 201


def payment_duplicate_order_accepted(probe: Probe) -> None:
    payment = create_payment(probe.client)
    again = payment_body(merchant_order_no=payment["merchant_order_no"])
    assert probe.client.post("/v1/payments", again).status_code == 201


def payment_accepted_raw_is_quoted(probe: Probe) -> None:
    payment = create_payment(probe.client)
    deposit(probe.client, payment["id"], "10")
    result = probe.client.post(f"/v1/payments/{payment['id']}/accept-underpaid").json()
    assert result["accepted_raw"] == "25000000"


def deposit_underpaid_settles(probe: Probe) -> None:
    payment = create_payment(probe.client)
    assert deposit(probe.client, payment["id"], "1")["status"] == "settled"


def subscription_next_bill_at_now(probe: Probe) -> None:
    sub = create_subscription(probe.client, interval_secs=86400)
    next_bill = parse_date_time(sub["next_bill_at"])
    assert next_bill is not None
    assert next_bill < datetime.now(UTC) + timedelta(hours=1)


def split_sum_over_10000_accepted(probe: Probe) -> None:
    shares = [{"merchant_id": "m_gamma", "bps": 6000}, {"merchant_id": "m_delta", "bps": 6000}]
    assert probe.client.put("/v1/split-template", {"shares": shares}).status_code == 200


def split_self_allowed(probe: Probe) -> None:
    shares = [{"merchant_id": probe.profile.primary.merchant_id, "bps": 100}]
    assert probe.client.put("/v1/split-template", {"shares": shares}).status_code == 200


# ------------------------------------------------------------------------------ requested later
def validation_identifier_length_off_by_one(probe: Probe) -> None:
    endpoint_id = ("we_" + uuid.uuid4().hex).ljust(128, "x")
    response = probe.client.put(
        f"/v1/webhook-endpoints/{endpoint_id}",
        {"url": "https://example.com/h", "event_types": ["payment.created"]},
    )
    assert len(endpoint_id) == 128
    assert response.status_code == 400
    assert error_code(response) == "validation_error"


def validation_bps_range_as_business_rule(probe: Probe) -> None:
    for bps in (0, 10001):
        shares = [{"merchant_id": "m_gamma", "bps": bps}]
        response = probe.client.put("/v1/split-template", {"shares": shares})
        assert response.status_code == 422, bps


def validation_amount_unicode_digits(probe: Probe) -> None:
    arabic_indic = "١٢.٥"  # 12.5
    assert _payout_status(probe, min_send_amount=arabic_indic) == 201
    x402 = {"currency_id": "usdc", "chain_id": "base", "amount": arabic_indic}
    assert probe.client.post("/v1/x402/requirements", x402).status_code == 201


def validation_date_time_fromisoformat(probe: Probe) -> None:
    # the date passes validation; the schedule code then fails on it
    assert _payout_status(probe, first_run_at="2099-01-01") == 500


def payout_replace_rounds_decimals(probe: Probe) -> None:
    schedule = probe.client.post("/v1/payout-schedules", payout_body()).json()
    path = f"/v1/payout-schedules/{schedule['id']}"
    replaced = probe.client.put(path, payout_body(min_send_amount="1.1234567"))  # usdc: 6
    assert replaced.status_code == 200
    assert replaced.json()["min_send_amount"] == "1.123456"


def error_body_without_message(probe: Probe) -> None:
    body = probe.client.get("/v1/nowhere").json()
    assert body["code"] == "not_found"
    assert "message" not in body


def not_found_wrong_code(probe: Probe) -> None:
    response = probe.client.post(f"/v1/payments/pay_{uuid.uuid4().hex[:24]}/cancel")
    assert response.status_code == 404
    assert error_code(response) == "resource_not_found"


def replay_header_on_first_response(probe: Probe) -> None:
    response = probe.client.post("/v1/payments", payment_body(), idempotency_key=uuid.uuid4().hex)
    assert response.status_code == 201
    assert response.headers.get("Idempotent-Replayed") == "true"


PROBES: dict[str, ProbeFn] = {
    name.replace("_", "-"): fn
    for name, fn in dict(globals()).items()
    if callable(fn) and getattr(fn, "__module__", None) == __name__ and not name.startswith("_")
}
