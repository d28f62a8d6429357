"""Payments through real HTTP: create, list, cancel, accept-underpaid (profile section 5)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from conformance.core.formats import parse_date_time
from conformance.core.profile import Profile
from conformance.reference.ledger import to_micros
from conformance.reference.server import ReferenceServer
from tests.reference.factories import (
    create_payment,
    deposit,
    error_code,
    event_counts,
    order_no,
    payment_body,
    subscribe_to_everything,
)
from tests.reference.signed_client import SignedClient


def _at(text: str) -> datetime:
    parsed = parse_date_time(text)
    assert parsed is not None, text
    return parsed


# ------------------------------------------------------------------------------- create
def test_create_returns_201_pending_with_checkout_url_and_normalised_quotes(
    alpha: SignedClient,
) -> None:
    body = payment_body(quotes={"usdc": {"amount": "25.50", "chain_ids": ["base"]}})
    response = alpha.post("/v1/payments", body)
    assert response.status_code == 201
    assert response.headers["content-type"].startswith("application/json")
    payment = response.json()
    assert payment["id"].startswith("pay_")
    assert payment["status"] == "pending"
    assert payment["merchant_order_no"] == body["merchant_order_no"]
    assert payment["checkout_url"].startswith("http://127.0.0.1:")
    quote = payment["quotes"]["usdc"]
    assert quote["amount"] == "25.5"
    assert (quote["code"], quote["symbol"], quote["name"]) == ("USDC", "$", "USD Coin")
    assert len(quote["deployments"]) == 1
    deployment = quote["deployments"][0]
    assert deployment["chain_id"] == "base"
    assert deployment["asset_kind"] == "token"
    assert deployment["address"].startswith("0x") and len(deployment["address"]) == 42


def test_deployments_default_to_every_chain_of_the_currency(alpha: SignedClient) -> None:
    payment = create_payment(alpha, quotes={"usdc": {"amount": "1"}, "eth": {"amount": "0.015"}})
    usdc = payment["quotes"]["usdc"]["deployments"]
    eth = payment["quotes"]["eth"]["deployments"]
    assert [d["chain_id"] for d in usdc] == ["base", "ethereum"]
    assert [(d["chain_id"], d["asset_kind"]) for d in eth] == [("ethereum", "native")]
    assert payment["quotes"]["eth"]["symbol"] == "Ξ"


def test_expires_at_is_creation_plus_expires_in_secs_default_3600(alpha: SignedClient) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    default = create_payment(alpha)
    custom = create_payment(alpha, expires_in_secs=60.0)
    after = datetime.now(UTC) + timedelta(seconds=1)
    assert before + timedelta(seconds=3600) <= _at(default["expires_at"])
    assert _at(default["expires_at"]) <= after + timedelta(seconds=3600)
    assert (
        before + timedelta(seconds=60) <= _at(custom["expires_at"]) <= after + timedelta(seconds=60)
    )


@pytest.mark.parametrize("expires_in", [59, 86401, 0, -5])
def test_expires_in_secs_outside_60_to_86400_is_400(alpha: SignedClient, expires_in: int) -> None:
    response = alpha.post("/v1/payments", payment_body(expires_in_secs=expires_in))
    assert response.status_code == 400
    assert error_code(response) == "validation_error"
    assert response.json()["details"][0]["field"] == "expires_in_secs"


@pytest.mark.parametrize("expires_in", [60, 86400])
def test_expires_in_secs_bounds_are_accepted(alpha: SignedClient, expires_in: int) -> None:
    assert alpha.post("/v1/payments", payment_body(expires_in_secs=expires_in)).status_code == 201


@pytest.mark.parametrize(
    ("quotes", "code"),
    [
        ({}, "empty_quotes"),
        ({"doge": {"amount": "1"}}, "unknown_currency"),
        ({"eth": {"amount": "1", "chain_ids": ["base"]}}, "currency_not_on_chain"),
        ({"usdc": {"amount": "1", "chain_ids": ["solana"]}}, "unknown_chain"),
        ({"usdc": {"amount": "1.1234567"}}, "too_many_decimals"),
        ({"usdc": {"amount": "1" * 73}}, "amount_too_large"),
        ({"usdc": {"amount": "abc"}}, "invalid_amount"),
        ({"usdc": {"amount": "0"}}, "invalid_amount"),
    ],
)
def test_business_rule_violations_are_422(
    alpha: SignedClient, quotes: dict[str, object], code: str
) -> None:
    response = alpha.post("/v1/payments", payment_body(quotes=quotes))
    assert response.status_code == 422, response.text
    assert error_code(response) == code


def test_raw_value_of_78_digits_is_accepted(alpha: SignedClient) -> None:
    payment = create_payment(alpha, quotes={"usdc": {"amount": "9" * 72}})
    assert payment["quotes"]["usdc"]["amount"] == "9" * 72


@pytest.mark.parametrize(
    "body",
    [
        {"merchant_order_no": "x"},
        {"quotes": {"usdc": {"amount": "1"}}},
        {"quotes": {"usdc": {"amount": 1}}, "merchant_order_no": "x"},
        {"quotes": {"usdc": {}}, "merchant_order_no": "x"},
        {"quotes": [], "merchant_order_no": "x"},
        {"quotes": {"usdc": {"amount": "1"}}, "merchant_order_no": "x", "redirect_url": "nope"},
        {"quotes": {"usdc": {"amount": "1"}}, "merchant_order_no": "x", "expires_in_secs": 6.5},
        {
            "quotes": {"usdc": {"amount": "1"}},
            "merchant_order_no": "x",
            "splits": [{"type": "fixed", "merchant_id": "m_gamma", "bps": 1}],
        },
    ],
)
def test_contract_violations_are_400_with_details(
    alpha: SignedClient, body: dict[str, object]
) -> None:
    response = alpha.post("/v1/payments", body)
    assert response.status_code == 400
    problem = response.json()
    assert problem["code"] == "validation_error"
    assert isinstance(problem["message"], str)
    assert problem["details"] and all(set(d) == {"field", "message"} for d in problem["details"])


def test_duplicate_merchant_order_no_is_409_but_free_for_another_merchant(
    alpha: SignedClient, beta: SignedClient
) -> None:
    number = order_no()
    create_payment(alpha, merchant_order_no=number)
    again = alpha.post("/v1/payments", payment_body(merchant_order_no=number))
    assert again.status_code == 409
    assert error_code(again) == "duplicate_order"
    assert beta.post("/v1/payments", payment_body(merchant_order_no=number)).status_code == 201


def test_splits_are_validated_on_create(alpha: SignedClient) -> None:
    share = {"type": "percentage", "merchant_id": "m_gamma", "bps": 1500}
    assert alpha.post("/v1/payments", payment_body(splits=[share])).status_code == 201
    own = {**share, "merchant_id": "m_alpha"}
    response = alpha.post("/v1/payments", payment_body(splits=[own]))
    assert (response.status_code, error_code(response)) == (422, "split_to_self")


# ------------------------------------------------------------------------------- list
def test_list_is_newest_first_and_pages_with_next_cursor(alpha: SignedClient) -> None:
    created = [create_payment(alpha)["id"] for _ in range(5)]
    first = alpha.get("/v1/payments?limit=2")
    assert first.status_code == 200
    page = first.json()
    assert [p["id"] for p in page["payments"]] == created[::-1][:2]
    assert "checkout_url" not in page["payments"][0]
    seen = [p["id"] for p in page["payments"]]
    cursor = page["next_cursor"]
    while cursor is not None:
        body = alpha.get(f"/v1/payments?limit=2&cursor={cursor}").json()
        seen += [p["id"] for p in body["payments"]]
        cursor = body.get("next_cursor")
    assert seen[:5] == created[::-1]
    assert len(seen) == len(set(seen))


def test_list_default_limit_is_20_and_last_page_has_no_cursor(alpha: SignedClient) -> None:
    while len(alpha.get("/v1/payments?limit=100").json()["payments"]) < 21:
        create_payment(alpha)
    body = alpha.get("/v1/payments").json()
    assert len(body["payments"]) == 20
    assert "next_cursor" in body
    everything = alpha.get("/v1/payments?limit=100").json()
    if len(everything["payments"]) < 100:
        assert "next_cursor" not in everything


def test_list_filters_by_status_and_merchant_order_no(alpha: SignedClient) -> None:
    target = create_payment(alpha)
    alpha.post(f"/v1/payments/{target['id']}/cancel")
    canceled = alpha.get("/v1/payments?status=canceled&limit=100").json()["payments"]
    assert target["id"] in [p["id"] for p in canceled]
    assert {p["status"] for p in canceled} == {"canceled"}
    by_number = alpha.get(f"/v1/payments?merchant_order_no={target['merchant_order_no']}")
    assert [p["id"] for p in by_number.json()["payments"]] == [target["id"]]


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=101",
        "limit=abc",
        "limit=1.5",
        "colour=red",
        "cursor=nope",
    ],
)
def test_bad_list_queries_are_400(alpha: SignedClient, query: str) -> None:
    response = alpha.get(f"/v1/payments?{query}")
    assert response.status_code == 400
    assert error_code(response) == "validation_error"


def test_a_status_filter_that_is_no_state_matches_nothing(alpha: SignedClient) -> None:
    response = alpha.get("/v1/payments?status=unknown")
    assert response.status_code == 200
    assert response.json()["payments"] == []


def test_limit_bounds_and_float_form_are_accepted(alpha: SignedClient) -> None:
    for query in ("limit=1", "limit=100", "limit=5.0"):
        assert alpha.get(f"/v1/payments?{query}").status_code == 200


def test_list_never_shows_or_pages_into_another_merchant(
    alpha: SignedClient, beta: SignedClient
) -> None:
    mine = create_payment(alpha)
    create_payment(beta)
    create_payment(beta)
    theirs = beta.get("/v1/payments?limit=1").json()
    listed = alpha.get("/v1/payments?limit=100").json()["payments"]
    assert mine["id"] in [p["id"] for p in listed]
    assert all(p["id"] != theirs["payments"][0]["id"] for p in listed)
    foreign = alpha.get(f"/v1/payments?cursor={theirs['next_cursor']}")
    assert foreign.status_code == 400


def _cursor_cases(client: SignedClient, other: SignedClient) -> dict[str, str]:
    """An unknown, another merchant's and a cut cursor, each beside a real one of ``client``."""
    for c in (client, client, other, other):
        create_payment(c)
    mine = client.get("/v1/payments?limit=1").json()["next_cursor"]
    theirs = other.get("/v1/payments?limit=1").json()["next_cursor"]
    return {
        "unknown": "pay_" + uuid.uuid4().hex[:24],
        "foreign": theirs,
        "truncated": mine[: len(mine) // 2],
    }


def test_unknown_foreign_and_truncated_cursors_are_400_never_500(
    alpha: SignedClient, beta: SignedClient
) -> None:
    for kind, cursor in _cursor_cases(alpha, beta).items():
        response = alpha.get(f"/v1/payments?limit=1&cursor={cursor}")
        assert response.status_code == 400, (kind, response.text)
        assert error_code(response) == "validation_error"
        assert [d["field"] for d in response.json()["details"]] == ["query.cursor"]


def test_a_truncated_cursor_crashes_only_with_its_fault(profile: Profile) -> None:
    """payments-cursor-truncated-500: the cut cursor is a 500; an unknown cursor of full length
    and another merchant's are still refused, so only the truncated near miss sees the bug."""
    with (
        ReferenceServer(profile=profile, faults=("payments-cursor-truncated-500",)) as faulty,
        SignedClient(faulty.base_url, profile.primary) as client,
        SignedClient(faulty.base_url, profile.secondary) as other,
    ):
        answers = {
            kind: client.get(f"/v1/payments?limit=1&cursor={cursor}").status_code
            for kind, cursor in _cursor_cases(client, other).items()
        }
    assert answers == {"unknown": 400, "foreign": 400, "truncated": 500}


# ------------------------------------------------------------------------------- transitions
def test_cancel_moves_pending_to_canceled_and_refuses_a_second_time(alpha: SignedClient) -> None:
    payment = create_payment(alpha)
    response = alpha.post(f"/v1/payments/{payment['id']}/cancel")
    assert response.status_code == 200
    canceled = response.json()
    assert canceled["status"] == "canceled"
    assert set(canceled) == {"id", "status", "quotes", "expires_at", "merchant_order_no"}
    again = alpha.post(f"/v1/payments/{payment['id']}/cancel")
    assert (again.status_code, error_code(again)) == (409, "invalid_state")


@pytest.mark.parametrize("state", ["underpaid", "settled", "expired"])
def test_cancel_from_other_states_is_409_and_changes_nothing(
    alpha: SignedClient, state: str
) -> None:
    payment = create_payment(alpha)
    if state == "underpaid":
        deposit(alpha, payment["id"], "1")
    elif state == "settled":
        deposit(alpha, payment["id"], "25")
    else:
        alpha.post(f"/v1/test-helpers/payments/{payment['id']}/expire")
    response = alpha.post(f"/v1/payments/{payment['id']}/cancel")
    assert (response.status_code, error_code(response)) == (409, "invalid_state")
    listed = alpha.get(f"/v1/payments?merchant_order_no={payment['merchant_order_no']}")
    assert listed.json()["payments"][0]["status"] == state


def test_accept_underpaid_settles_with_the_raw_amount_received(alpha: SignedClient) -> None:
    payment = create_payment(alpha)
    deposit(alpha, payment["id"], "10.5")
    deposit(alpha, payment["id"], "0.25")
    response = alpha.post(f"/v1/payments/{payment['id']}/accept-underpaid")
    assert response.status_code == 200
    assert response.json() == {
        "payment_id": payment["id"],
        "currency_id": "usdc",
        "currency_chain_id": "usdc:base",
        "accepted_raw": "10750000",
        "status": "settled",
    }


@pytest.mark.parametrize("state", ["pending", "settled", "expired", "canceled"])
def test_accept_underpaid_from_other_states_is_409(alpha: SignedClient, state: str) -> None:
    payment = create_payment(alpha)
    if state == "settled":
        deposit(alpha, payment["id"], "30")
    elif state == "expired":
        alpha.post(f"/v1/test-helpers/payments/{payment['id']}/expire")
    elif state == "canceled":
        alpha.post(f"/v1/payments/{payment['id']}/cancel")
    response = alpha.post(f"/v1/payments/{payment['id']}/accept-underpaid")
    assert (response.status_code, error_code(response)) == (409, "invalid_state")


@pytest.mark.parametrize("action", ["cancel", "accept-underpaid"])
def test_unknown_or_foreign_payment_is_404(
    alpha: SignedClient, beta: SignedClient, action: str
) -> None:
    theirs = create_payment(beta)
    for payment_id in ("pay_000000000000000000000000", theirs["id"], "é-ü"):
        response = alpha.post(f"/v1/payments/{payment_id}/{action}")
        assert (response.status_code, error_code(response)) == (404, "not_found")
    listed = beta.get(f"/v1/payments?merchant_order_no={theirs['merchant_order_no']}")
    assert listed.json()["payments"][0]["status"] == "pending"


# ------------------------------------------------------------------------------- events, expiry
def test_each_transition_emits_its_event_once(alpha: SignedClient, profile: Profile) -> None:
    subscribe_to_everything(alpha, list(profile.data["webhooks"]["event_types"]))
    before = event_counts(alpha)
    canceled = create_payment(alpha)
    alpha.post(f"/v1/payments/{canceled['id']}/cancel")
    underpaid = create_payment(alpha)
    deposit(alpha, underpaid["id"], "1")
    alpha.post(f"/v1/payments/{underpaid['id']}/accept-underpaid")
    expired = create_payment(alpha)
    alpha.post(f"/v1/test-helpers/payments/{expired['id']}/expire")
    refused = alpha.post(f"/v1/payments/{canceled['id']}/cancel")
    assert refused.status_code == 409
    delta = event_counts(alpha) - before
    assert delta == {
        "payment.created": 3,
        "payment.canceled": 1,
        "payment.underpaid": 1,
        "payment.settled": 1,
        "payment.expired": 1,
    }


def test_a_pending_payment_expires_by_itself(
    alpha: SignedClient, server: ReferenceServer, profile: Profile
) -> None:
    subscribe_to_everything(alpha, list(profile.data["webhooks"]["event_types"]))
    payment = create_payment(alpha, expires_in_secs=60)
    before = event_counts(alpha)
    past = to_micros(datetime.now(UTC) - timedelta(seconds=1))
    with server.store.transaction() as conn:  # as if 60 s had gone by
        conn.execute("UPDATE payments SET expires_us = ? WHERE id = ?", (past, payment["id"]))
    listed = alpha.get(f"/v1/payments?merchant_order_no={payment['merchant_order_no']}")
    assert listed.json()["payments"][0]["status"] == "expired"
    cancel = alpha.post(f"/v1/payments/{payment['id']}/cancel")
    assert (cancel.status_code, error_code(cancel)) == (409, "invalid_state")
    assert (event_counts(alpha) - before) == {"payment.expired": 1}
