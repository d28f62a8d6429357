"""Checks across exchanges: replays, nonces and state transitions seen in recorded traffic."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.core.results import CheckResult, Outcome
from conformance.core.signing import Signer
from conformance.validator import validator_for
from conformance.validator.cross import BoundedTable, CrossExchangeChecks
from conformance.validator.exchange import Exchange
from conformance.validator.readers import iter_exchanges
from tests.validator.samples import exchange

_counter = itertools.count(1)
SECRETS = {c.api_key: c.api_secret for c in load_profile("default").credentials}


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile("default")


@pytest.fixture
def cross(profile: Profile) -> CrossExchangeChecks:
    return CrossExchangeChecks(profile)


def signed(
    method: str,
    path: str,
    *,
    key: str | None = None,
    nonce: str | None = None,
    api_key: str = "mk_test_alpha",
    timestamp: int = 1_767_225_600,
    **kwargs: Any,
) -> Exchange:
    """A request signed with ``api_key``'s secret from the default profile, as sent at
    ``timestamp`` (the recording's default start time)."""
    ex = exchange(method, path, **kwargs)
    secret = SECRETS[api_key]
    target = ex.path + (f"?{ex.query}" if ex.query else "")
    signer = Signer(api_key, secret)
    nonce = nonce or f"nonce-{next(_counter):012d}"
    auth = signer.headers(method, target, ex.request_body, timestamp=timestamp, nonce=nonce)
    headers = [(name, auth[name]) for name in ("X-Api-Key", "X-Timestamp", "X-Nonce")]
    headers.append(("X-Signature", auth["X-Signature"]))
    if key is not None:
        headers.append(("Idempotency-Key", key))
    return replace(
        ex, request_headers=tuple(headers), source=f"traffic.jsonl line {next(_counter)}"
    )


def outcomes(results: list[CheckResult], requirement: str) -> list[Outcome]:
    return [r.outcome for r in results if requirement in r.requirement_ids]


def judged(results: list[CheckResult]) -> list[CheckResult]:
    """The results other than the authentication of each signed request (tests/validator/
    test_auth.py covers those)."""
    return [r for r in results if not r.check_id.startswith("validate.auth_signature")]


PAYMENT = {"merchant_order_no": "o-1", "quotes": {}}
CREATED = {"id": "pay_1", "status": "pending"}
REPLAYED = (("Content-Type", "application/json"), ("Idempotent-Replayed", "true"))


# -- idempotency ---------------------------------------------------------------------------
def test_a_replay_with_the_stored_response_passes(cross: CrossExchangeChecks) -> None:
    first = signed(
        "POST", "/v1/payments", key="k1", request_body=PAYMENT, status=201, response_body=CREATED
    )
    again = signed(
        "POST",
        "/v1/payments",
        key="k1",
        request_body=PAYMENT,
        status=201,
        response_body=CREATED,
        response_headers=REPLAYED,
    )
    assert judged(cross.observe(first, "createPayment")) == []
    results = cross.observe(again, "createPayment")
    assert outcomes(results, "IDEM-007") == [Outcome.PASSED]
    assert outcomes(results, "IDEM-008") == [Outcome.PASSED]


def test_a_replay_with_another_body_or_without_the_header_fails(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(
        signed(
            "POST",
            "/v1/payments",
            key="k1",
            request_body=PAYMENT,
            status=201,
            response_body=CREATED,
        ),
        "createPayment",
    )
    again = signed(
        "POST",
        "/v1/payments",
        key="k1",
        request_body=PAYMENT,
        status=201,
        response_body={"id": "pay_2", "status": "pending"},
    )
    results = cross.observe(again, "createPayment")
    assert outcomes(results, "IDEM-007") == [Outcome.FAILED]
    assert outcomes(results, "IDEM-008") == [Outcome.FAILED]
    failed = next(r for r in results if "IDEM-007" in r.requirement_ids)
    assert failed.check_id == f"validate.idempotent_replay {again.source}"
    assert failed.evidence is not None and failed.evidence.status == 201
    assert "sk_test" not in repr(failed)


def test_a_key_reused_with_another_body_must_be_refused(cross: CrossExchangeChecks) -> None:
    cross.observe(
        signed(
            "POST",
            "/v1/payments",
            key="k1",
            request_body=PAYMENT,
            status=201,
            response_body=CREATED,
        ),
        "createPayment",
    )
    other = {**PAYMENT, "merchant_order_no": "o-2"}
    accepted = signed(
        "POST",
        "/v1/payments",
        key="k1",
        request_body=other,
        status=201,
        response_body={"id": "pay_2", "status": "pending"},
    )
    refused = signed(
        "POST",
        "/v1/payments",
        key="k1",
        request_body=other,
        status=422,
        response_body={"code": "idempotency_key_reused", "message": "m"},
    )
    assert outcomes(cross.observe(accepted, "createPayment"), "IDEM-010") == [Outcome.FAILED]
    assert outcomes(cross.observe(refused, "createPayment"), "IDEM-010") == [Outcome.PASSED]


def test_keys_are_scoped_per_api_key_and_errors_are_not_stored(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(
        signed(
            "POST",
            "/v1/payments",
            key="k1",
            request_body=PAYMENT,
            status=400,
            response_body={"code": "validation_error", "message": "m"},
        ),
        "createPayment",
    )
    corrected = cross.observe(
        signed(
            "POST",
            "/v1/payments",
            key="k1",
            request_body=PAYMENT,
            status=201,
            response_body=CREATED,
        ),
        "createPayment",
    )
    assert outcomes(corrected, "IDEM-014") == [Outcome.PASSED]
    beta = signed(
        "POST",
        "/v1/payments",
        key="k1",
        api_key="mk_test_beta",
        request_body=PAYMENT,
        status=201,
        response_body={"id": "pay_9", "status": "pending"},
    )
    results = judged(cross.observe(beta, "createPayment"))
    assert outcomes(results, "IDEM-015") == [Outcome.PASSED]
    assert all(r.outcome is Outcome.PASSED for r in results)


# -- nonces ----------------------------------------------------------------------------------
def test_an_auth_nonce_accepted_twice_fails_and_refused_passes(
    cross: CrossExchangeChecks,
) -> None:
    nonce = "n" * 20
    cross.observe(
        signed("GET", "/v1/payments", nonce=nonce, response_body={"data": []}), "listPayments"
    )
    refused = signed(
        "GET",
        "/v1/payments",
        nonce=nonce,
        status=401,
        response_body={"code": "unauthorized", "message": "m"},
    )
    accepted = signed("GET", "/v1/payments", nonce=nonce, response_body={"data": []})
    assert outcomes(cross.observe(refused, "listPayments"), "AUTH-016") == [Outcome.PASSED]
    assert outcomes(cross.observe(accepted, "listPayments"), "AUTH-016") == [Outcome.FAILED]


def test_a_nonce_outside_the_clock_window_may_be_accepted_again(
    cross: CrossExchangeChecks,
) -> None:
    nonce = "m" * 20
    cross.observe(signed("GET", "/v1/payments", nonce=nonce, timestamp=1000), "listPayments")
    later = signed("GET", "/v1/payments", nonce=nonce, timestamp=1000 + 301)
    assert outcomes(cross.observe(later, "listPayments"), "AUTH-016") == []


def settle(payment_id: str, nonce: str, value: str = "100", status: int = 200) -> Exchange:
    body = {
        "payment_id": payment_id,
        "payment_payload": {
            "signature": "0x" + "a" * 130,
            "authorization": {
                "from": "0x" + "1" * 40,
                "to": "0x" + "2" * 40,
                "value": value,
                "valid_after": 0,
                "valid_before": 9,
                "nonce": nonce,
            },
        },
    }
    answer = (
        {"success": True, "tx_hash": "0x" + "b" * 64, "payment_id": payment_id}
        if status == 200
        else {"code": "conflict", "message": "m"}
    )
    return signed("POST", "/v1/x402/settle", request_body=body, status=status, response_body=answer)


def test_an_x402_nonce_settled_for_two_payments_fails(cross: CrossExchangeChecks) -> None:
    nonce = "0x" + "c" * 64
    assert judged(cross.observe(settle("pay_1", nonce), "settleX402Payment")) == []
    results = cross.observe(settle("pay_2", nonce), "settleX402Payment")
    assert outcomes(results, "X402-016") == [Outcome.FAILED]
    assert "pay_1" in judged(results)[0].message


def test_the_same_settlement_again_gets_the_same_result(cross: CrossExchangeChecks) -> None:
    nonce = "0x" + "d" * 64
    cross.observe(settle("pay_1", nonce), "settleX402Payment")
    assert outcomes(cross.observe(settle("pay_1", nonce), "settleX402Payment"), "X402-023") == [
        Outcome.PASSED
    ]
    other = settle("pay_1", "0x" + "e" * 64, value="99")
    assert outcomes(cross.observe(other, "settleX402Payment"), "X402-024") == [Outcome.FAILED]
    refused = settle("pay_1", "0x" + "e" * 64, value="99", status=409)
    assert outcomes(cross.observe(refused, "settleX402Payment"), "X402-024") == [Outcome.PASSED]


def test_the_same_result_is_its_success_tx_hash_and_payment_not_its_bytes(
    cross: CrossExchangeChecks,
) -> None:
    nonce = "0x" + "d" * 64
    first = settle("pay_1", nonce)
    cross.observe(first, "settleX402Payment")
    reordered = {"payment_id": "pay_1", "tx_hash": "0x" + "b" * 64, "success": True, "at": 1}
    again = replace(first, response_body=json.dumps(reordered).encode())
    assert outcomes(cross.observe(again, "settleX402Payment"), "X402-023") == [Outcome.PASSED]
    other = {**reordered, "tx_hash": "0x" + "f" * 64}
    new_hash = replace(first, response_body=json.dumps(other).encode())
    assert outcomes(cross.observe(new_hash, "settleX402Payment"), "X402-023") == [Outcome.FAILED]


def test_another_payload_refused_with_another_code_than_settled_conflicts_fails() -> None:
    cross = CrossExchangeChecks(load_profile("divergent"))  # settled_conflict: 409 already_settled
    cross.observe(settle("pay_1", "0x" + "d" * 64), "settleX402Payment")
    refused = settle("pay_1", "0x" + "e" * 64, value="99", status=409)  # code "conflict"
    results = cross.observe(refused, "settleX402Payment")
    assert outcomes(results, "X402-024") == [Outcome.FAILED]
    assert "answer is 409 already_settled" in judged(results)[0].message
    key_reused = replace(
        refused, response_body=b'{"code":"idempotency_key_conflict","message":"m"}'
    )
    assert outcomes(cross.observe(key_reused, "settleX402Payment"), "X402-024") == []


# -- states --------------------------------------------------------------------------------
def listed(*payments: tuple[str, str]) -> Exchange:
    body = {"data": [{"id": pid, "status": status} for pid, status in payments]}
    return signed("GET", "/v1/payments", response_body=body)


def test_pending_then_expired_then_settled_is_not_allowed(cross: CrossExchangeChecks) -> None:
    assert judged(cross.observe(listed(("pay_1", "pending")), "listPayments")) == []
    assert outcomes(
        cross.observe(listed(("pay_1", "expired")), "listPayments"), "PAY-STATE-005"
    ) == [Outcome.PASSED]
    results = cross.observe(listed(("pay_1", "settled")), "listPayments")
    assert outcomes(results, "PAY-STATE-009") == [Outcome.FAILED]  # an accept-underpaid's
    assert "expired never leads to settled" in judged(results)[0].message


def test_unobserved_steps_are_allowed(cross: CrossExchangeChecks) -> None:
    """A deposit on chain is not in the traffic: pending to settled is a change it allows."""
    cross.observe(listed(("pay_1", "pending")), "listPayments")
    assert outcomes(
        cross.observe(listed(("pay_1", "settled")), "listPayments"), "PAY-STATE-005"
    ) == [Outcome.PASSED]


def test_a_cancel_accepted_for_a_settled_payment_fails(cross: CrossExchangeChecks) -> None:
    cross.observe(listed(("pay_1", "settled")), "listPayments")
    cancel = signed(
        "POST",
        "/v1/payments/pay_1/cancel",
        key="c1",
        status=200,
        response_body={"id": "pay_1", "status": "canceled"},
    )
    results = cross.observe(cancel, "cancelPayment")
    assert outcomes(results, "PAY-STATE-005") == [Outcome.FAILED, Outcome.FAILED]


def test_the_expire_helper_accepted_for_a_settled_payment_fails_help_006(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(listed(("pay_1", "settled")), "listPayments")
    expire = signed(
        "POST",
        "/v1/test-helpers/payments/pay_1/expire",
        key="e1",
        status=200,
        response_body={"id": "pay_1", "status": "expired"},
    )
    results = cross.observe(expire, "testExpirePayment")
    assert outcomes(results, "HELP-006") == [Outcome.FAILED, Outcome.FAILED]  # and the change


def test_a_retired_schedule_stays_retired(cross: CrossExchangeChecks) -> None:
    retired = signed(
        "POST",
        "/v1/payout-schedules/ps_1/retire",
        key="r1",
        response_body={"id": "ps_1", "status": "retired"},
    )
    cross.observe(retired, "retirePayoutSchedule")
    paused = signed(
        "POST",
        "/v1/payout-schedules/ps_1/pause",
        key="p1",
        response_body={"id": "ps_1", "status": "paused"},
    )
    results = cross.observe(paused, "pausePayoutSchedule")
    assert outcomes(results, "PAYOUT-STATE-009") == [Outcome.FAILED, Outcome.FAILED]


def test_a_cancel_of_a_canceled_subscription_refused_with_invalid_state_passes(
    cross: CrossExchangeChecks,
) -> None:
    cancel = signed(
        "POST",
        "/v1/subscriptions/sub_1/cancel",
        key="c1",
        response_body={"id": "sub_1", "status": "canceled"},
    )
    cross.observe(cancel, "cancelSubscription")
    again = signed(
        "POST",
        "/v1/subscriptions/sub_1/cancel",
        key="c2",
        status=409,
        response_body={"code": "invalid_state", "message": "m"},
    )
    assert outcomes(cross.observe(again, "cancelSubscription"), "SUB-STATE-003") == [Outcome.PASSED]
    other = replace(again, status=404, response_body=b'{"code":"not_found","message":"m"}')
    assert outcomes(cross.observe(other, "cancelSubscription"), "SUB-STATE-003") == []


# -- memory ------------------------------------------------------------------------------------
def test_tables_keep_only_their_most_recent_entries() -> None:
    table: BoundedTable[int, int] = BoundedTable(limit=3)
    for n in range(10):
        table.put(n, n)
    assert len(table) == 3
    assert table.get(0) is None and table.get(9) == 9


def test_a_long_recording_keeps_the_tables_capped(profile: Profile) -> None:
    cross = CrossExchangeChecks(profile, limit=50)
    for n in range(500):
        cross.observe(
            signed(
                "POST",
                "/v1/payments",
                key=f"k{n}",
                request_body=PAYMENT,
                status=201,
                response_body={"id": f"pay_{n}", "status": "pending"},
            ),
            "createPayment",
        )
    assert len(cross._keys) == 50 and len(cross._nonces) == 50 and len(cross._states) == 50


def test_a_replayed_response_shows_the_resource_as_it_was(cross: CrossExchangeChecks) -> None:
    """A cancel replayed after the payment moved on returns the stored body: no transition."""
    cancel = dict(key="c1", status=200, response_body={"id": "pay_1", "status": "canceled"})
    cross.observe(listed(("pay_1", "pending")), "listPayments")
    cross.observe(signed("POST", "/v1/payments/pay_1/cancel", **cancel), "cancelPayment")
    replay = cross.observe(signed("POST", "/v1/payments/pay_1/cancel", **cancel), "cancelPayment")
    assert outcomes(replay, "IDEM-007") == [Outcome.PASSED]
    assert [r for r in replay if r.check_id.startswith("validate.state_transition")] == []
    created = dict(key="k9", request_body=PAYMENT, status=201, response_body=CREATED)
    cross.observe(signed("POST", "/v1/payments", **created), "createPayment")
    cross.observe(listed(("pay_1", "canceled")), "listPayments")
    again = cross.observe(signed("POST", "/v1/payments", **created), "createPayment")
    assert outcomes(again, "PAY-STATE-005") == []  # "pending" again is the stored body


def test_a_settlement_refused_by_authentication_is_no_result(cross: CrossExchangeChecks) -> None:
    nonce = "0x" + "f" * 64
    cross.observe(settle("pay_1", nonce), "settleX402Payment")
    refused = settle("pay_1", nonce, status=401)
    assert judged(cross.observe(refused, "settleX402Payment")) == []


def test_requests_sent_at_once_may_record_a_replay_before_the_original(
    cross: CrossExchangeChecks,
) -> None:
    """A burst under one key is recorded in start order: the original execution (no replay
    header) may come after a replay. One unmarked answer is the original; a second is not."""

    def burst(marked: bool) -> Exchange:
        return signed(
            "POST",
            "/v1/payments",
            key="k-burst",
            request_body=PAYMENT,
            status=201,
            response_body=CREATED,
            response_headers=REPLAYED if marked else (("Content-Type", "application/json"),),
        )

    assert judged(cross.observe(burst(True), "createPayment")) == []
    assert outcomes(cross.observe(burst(False), "createPayment"), "IDEM-008") == []
    assert outcomes(cross.observe(burst(True), "createPayment"), "IDEM-008") == [Outcome.PASSED]
    assert outcomes(cross.observe(burst(False), "createPayment"), "IDEM-008") == [Outcome.FAILED]


def test_another_payload_refused_for_its_format_says_nothing_about_the_settled_state(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(settle("pay_9", "0x" + "f" * 64), "settleX402Payment")
    malformed = settle("pay_9", "0x" + "a" * 64, value="99", status=400)
    assert outcomes(cross.observe(malformed, "settleX402Payment"), "X402-024") == []


# -- exchanges that overlap in time -----------------------------------------------------------
RECORDINGS = Path(__file__).parent / "recordings"


def judge_file(path: Path, profile: Profile) -> list[CheckResult]:
    validator = validator_for(profile)
    cross = CrossExchangeChecks(profile)
    results: list[CheckResult] = []
    for ex in iter_exchanges(path):
        results += cross.observe(ex, validator.identify(ex))
    return results


def test_exchanges_that_overlap_in_time_have_no_order(profile: Profile, tmp_path: Path) -> None:
    """Four entries of `run --workers 8 --record`: a list sent 1.2 ms after a cancel that took
    47 ms shows the payment still pending. Neither answer came first; a later list that
    started after both ended shows it canceled."""
    results = judge_file(RECORDINGS / "overlapping-cancel.har", profile)
    assert set(outcomes(results, "PAY-STATE-005")) == {Outcome.PASSED}
    # The same list sent after the cancel ended: pending after canceled is a failure.
    document = json.loads((RECORDINGS / "overlapping-cancel.har").read_text())
    cancel, listing = document["log"]["entries"][1:3]
    listing["startedDateTime"] = _later(cancel["startedDateTime"], cancel["time"] + 1)
    ordered = tmp_path / "ordered.har"
    ordered.write_text(json.dumps(document))
    results = judge_file(ordered, profile)
    assert Outcome.FAILED in outcomes(results, "PAY-STATE-005")
    failure = next(r for r in results if r.outcome is Outcome.FAILED)
    assert "was canceled in ordered.har entry 2, now pending" in failure.message


def _later(started: str, ms: float) -> str:
    at = datetime.fromisoformat(started.replace("Z", "+00:00")) + timedelta(milliseconds=ms)
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_without_durations_the_recording_order_is_taken(cross: CrossExchangeChecks) -> None:
    cross.observe(listed(("pay_1", "canceled")), "listPayments")
    assert outcomes(
        cross.observe(listed(("pay_1", "pending")), "listPayments"), "PAY-STATE-005"
    ) == [Outcome.FAILED]


# -- x402: the whole request, and the requirements issued ---------------------------------------
ENTRY = {
    "scheme": "upto",
    "network": "base",
    "asset": "0x" + "3" * 40,
    "pay_to": "0x" + "2" * 40,
    "max_amount_required": "1000",
    "resource": "https://api.example.com/paid",
    "nonce": "0x" + "4" * 64,
    "valid_before": 1_767_225_900,
}
SENT_AT = 1_767_225_600  # the recording's default start: 2026-01-01T00:00:00Z


def issued(payment_id: str = "pay_x", api_key: str = "mk_test_alpha") -> Exchange:
    return signed(
        "POST",
        "/v1/x402/requirements",
        key=f"issue-{payment_id}",
        api_key=api_key,
        request_body={"scheme": "upto", "currency_id": "usdc", "chain_id": "base", "amount": "1"},
        status=201,
        response_body={"payment_id": payment_id, "accepts": [ENTRY]},
    )


def paying(
    payment_id: str = "pay_x",
    *,
    status: int = 200,
    api_key: str = "mk_test_alpha",
    requirements: dict[str, Any] | None = None,
    **authorization: Any,
) -> Exchange:
    body = {
        "payment_id": payment_id,
        "payment_payload": {
            "signature": "0x" + "a" * 130,
            "authorization": {
                "from": "0x" + "1" * 40,
                "to": ENTRY["pay_to"],
                "value": "1000",
                "valid_after": SENT_AT - 60,
                "valid_before": ENTRY["valid_before"],
                "nonce": ENTRY["nonce"],
                **authorization,
            },
        },
        "payment_requirements": requirements or ENTRY,
    }
    answers = {
        200: {"success": True, "tx_hash": "0x" + "b" * 64, "payment_id": payment_id},
        400: {"code": "validation_error", "message": "m"},
        404: {"code": "not_found", "message": "m"},
        409: {"code": "conflict", "message": "m"},
        422: {"code": "invalid_exact_evm_payload_recipient_mismatch", "message": "m"},
    }
    return signed(
        "POST",
        "/v1/x402/settle",
        api_key=api_key,
        request_body=body,
        status=status,
        response_body=answers[status],
    )


def test_a_settle_is_identical_only_with_the_whole_request_and_a_400_is_not_judged(
    cross: CrossExchangeChecks,
) -> None:
    """Issue 18: the same payment_payload with other payment_requirements is not the same
    settlement, and a 400 was refused for its form before the settled state was looked at."""
    cross.observe(paying(), "settleX402Payment")
    other = {**ENTRY, "valid_before": ENTRY["valid_before"] + 60}
    results = cross.observe(paying(status=422, requirements=other), "settleX402Payment")
    assert outcomes(results, "X402-023") == []
    assert outcomes(cross.observe(paying(status=400), "settleX402Payment"), "X402-023") == []
    assert outcomes(cross.observe(paying(), "settleX402Payment"), "X402-023") == [Outcome.PASSED]


def test_settles_sent_at_once_under_one_key_are_not_compared(cross: CrossExchangeChecks) -> None:
    first = replace(paying(), duration_ms=76.0)
    cross.observe(first, "settleX402Payment")
    busy = replace(
        paying(status=409),
        response_body=b'{"code":"idempotency_key_in_use","message":"m"}',
        started_at="2026-01-01T00:00:00.002Z",
        duration_ms=71.0,
    )
    assert outcomes(cross.observe(busy, "settleX402Payment"), "X402-023") == []


@pytest.mark.parametrize(
    "change, requirement",
    [
        ({"to": "0x" + "9" * 40}, "X402-015"),
        ({"nonce": "0x" + "5" * 64}, "X402-016"),
        ({"valid_after": SENT_AT + 120}, "X402-017"),
        ({"valid_after": SENT_AT - 600, "valid_before": SENT_AT - 60}, "X402-018"),
        ({"value": "1001"}, "X402-020"),
    ],
)
def test_a_settlement_contradicting_the_issued_requirements_must_be_refused(
    profile: Profile, change: dict[str, Any], requirement: str
) -> None:
    cross = CrossExchangeChecks(profile)
    cross.observe(issued(), "createX402Requirements")
    accepted = cross.observe(paying(**change), "settleX402Payment")
    assert outcomes(accepted, requirement) == [Outcome.FAILED]
    failure = next(r for r in accepted if requirement in r.requirement_ids)
    assert failure.check_id.startswith("validate.x402_settlement")
    refused = cross.observe(paying(status=422, **change), "settleX402Payment")
    assert outcomes(refused, requirement) == [Outcome.PASSED]


def test_requirements_other_than_the_issued_ones_must_be_refused(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(issued(), "createX402Requirements")
    lower = {**ENTRY, "max_amount_required": "500"}
    results = cross.observe(paying(requirements=lower, value="500"), "settleX402Payment")
    assert outcomes(results, "X402-014") == [Outcome.FAILED]


def test_a_settlement_answering_the_issued_requirements_is_not_judged_by_them(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(issued(), "createX402Requirements")
    results = cross.observe(paying(value="999"), "settleX402Payment")  # upto: below the maximum
    assert [r for r in results if r.check_id.startswith("validate.x402_settlement")] == []


def test_another_merchants_settlement_is_left_to_the_isolation_checks(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(issued(), "createX402Requirements")
    results = cross.observe(paying(api_key="mk_test_beta", to="0x" + "9" * 40), "settleX402Payment")
    assert outcomes(results, "X402-015") == []
    assert outcomes(results, "TEN-006") == [Outcome.FAILED]


def test_an_expired_authorization_is_judged_to_the_second_when_the_issue_shows_the_clocks_agree(
    cross: CrossExchangeChecks,
) -> None:
    """The issue's valid_before is its issue time plus 300 s on the server's clock: within the
    issue exchange's recorded span, the server's clock is the recorder's, and an authorization
    that expired 10 s before the settle was sent cannot have been valid when it was handled."""
    cross.observe(replace(issued(), duration_ms=5.0), "createX402Requirements")
    late = paying(valid_before=SENT_AT - 10)
    assert outcomes(cross.observe(late, "settleX402Payment"), "X402-018") == [Outcome.FAILED]


def test_without_the_clocks_shown_to_agree_an_authorization_that_close_is_not_judged(
    cross: CrossExchangeChecks,
) -> None:
    ahead = {**ENTRY, "valid_before": SENT_AT + 300 + 60}  # a server clock a minute ahead
    issue = replace(issued(), duration_ms=5.0)
    issue = replace(
        issue, response_body=json.dumps({"payment_id": "pay_x", "accepts": [ahead]}).encode()
    )
    cross.observe(issue, "createX402Requirements")
    late = paying(valid_before=SENT_AT - 10, requirements=ahead)
    assert outcomes(cross.observe(late, "settleX402Payment"), "X402-018") == []


# -- bodies the recording does not hold -----------------------------------------------------
MISSING = "the recording holds no response body (HAR response.content.text absent)"


def test_a_reused_key_refused_without_a_captured_body_is_not_exercised(
    cross: CrossExchangeChecks,
) -> None:
    """Issue 18: "got 422, expected 422 idempotency_key_reused" on a HAR without bodies."""
    first = dict(key="k-nb", request_body=PAYMENT, status=201, response_body=CREATED)
    cross.observe(
        replace(signed("POST", "/v1/payments", **first), response_body_missing=MISSING),
        "createPayment",
    )
    other = {**PAYMENT, "merchant_order_no": "o-2"}
    refused = replace(
        signed("POST", "/v1/payments", key="k-nb", request_body=other, status=422),
        response_body_missing=MISSING,
    )
    results = cross.observe(refused, "createPayment")
    assert outcomes(results, "IDEM-010") == [Outcome.NOT_EXERCISED]
    [result] = [r for r in results if "IDEM-010" in r.requirement_ids]
    assert "content.text absent" in (result.reason_not_exercised or "")
    replay = replace(
        signed("POST", "/v1/payments", response_headers=REPLAYED, **first),
        response_body_missing=MISSING,
    )
    assert outcomes(cross.observe(replay, "createPayment"), "IDEM-007") == [Outcome.NOT_EXERCISED]
    # what the statuses show is still judged
    accepted = replace(
        signed("POST", "/v1/payments", key="k-nb", request_body=other, status=201),
        response_body_missing=MISSING,
    )
    assert outcomes(cross.observe(accepted, "createPayment"), "IDEM-010") == [Outcome.FAILED]


# -- idempotency keys: errors not stored, scoped per API key, the replay header only on replays
REUSED = {"code": "idempotency_key_reused", "message": "m"}
INVALID = {"code": "invalid_amount", "message": "m"}


def create(
    key: str,
    body: dict[str, Any],
    status: int,
    answer: Any,
    *,
    api_key: str = "mk_test_alpha",
    replayed: bool = False,
) -> Exchange:
    ex = signed("POST", "/v1/payments", key=key, api_key=api_key, request_body=body,
                status=status, response_body=answer)  # fmt: skip
    return replace(ex, response_headers=REPLAYED) if replayed else ex


def test_a_corrected_request_refused_as_a_reuse_of_a_refused_key_fails_idem_014(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(create("k1", {**PAYMENT, "amount": "1,5"}, 422, INVALID), "createPayment")
    results = cross.observe(create("k1", PAYMENT, 422, REUSED), "createPayment")
    assert outcomes(results, "IDEM-014") == [Outcome.FAILED]


def test_another_api_key_refused_as_reusing_a_key_fails_idem_015(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(create("k1", PAYMENT, 201, CREATED), "createPayment")
    beta = create(
        "k1", {**PAYMENT, "merchant_order_no": "o-9"}, 422, REUSED, api_key="mk_test_beta"
    )
    assert outcomes(cross.observe(beta, "createPayment"), "IDEM-015") == [Outcome.FAILED]


def test_another_api_key_answered_the_first_keys_response_as_a_replay_fails_idem_015(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(create("k1", PAYMENT, 201, CREATED), "createPayment")
    beta = create("k1", PAYMENT, 201, CREATED, api_key="mk_test_beta", replayed=True)
    assert outcomes(cross.observe(beta, "createPayment"), "IDEM-015") == [Outcome.FAILED]


def cancel(key: str, *, replayed: bool = False, at: str = "2026-01-01T00:00:05.000Z") -> Exchange:
    ex = signed("POST", "/v1/payments/pay_1/cancel", key=key, status=200,
                response_body={"id": "pay_1", "status": "canceled"})  # fmt: skip
    ex = replace(ex, started_at=at, duration_ms=10.0)
    return replace(ex, response_headers=REPLAYED) if replayed else ex


def test_a_first_use_marked_as_a_replay_on_a_resource_created_in_the_recording_fails_idem_008(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(replace(create("k1", PAYMENT, 201, CREATED), duration_ms=10.0), "createPayment")
    cross.observe(cancel("k2", replayed=True), "cancelPayment")
    assert outcomes(cross.finish(), "IDEM-008") == [Outcome.FAILED]


def test_a_first_use_answered_without_the_replay_header_passes(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(replace(create("k1", PAYMENT, 201, CREATED), duration_ms=10.0), "createPayment")
    cross.observe(cancel("k2"), "cancelPayment")
    replay = cross.observe(
        cancel("k2", replayed=True, at="2026-01-01T00:00:06.000Z"), "cancelPayment"
    )
    assert outcomes(replay, "IDEM-008") == [Outcome.PASSED]
    assert outcomes(cross.finish(), "IDEM-008") == []


def test_a_replay_recorded_before_its_overlapping_original_is_not_judged(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(replace(create("k1", PAYMENT, 201, CREATED), duration_ms=10.0), "createPayment")
    cross.observe(cancel("k2", replayed=True), "cancelPayment")
    cross.observe(cancel("k2", at="2026-01-01T00:00:05.001Z"), "cancelPayment")
    assert outcomes(cross.finish(), "IDEM-008") == []


def test_a_first_use_marked_as_a_replay_on_a_resource_the_recording_did_not_create_is_not_judged(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(cancel("k2", replayed=True), "cancelPayment")
    assert outcomes(cross.finish(), "IDEM-008") == []


def test_a_reuse_of_a_refused_key_without_a_captured_body_is_not_exercised(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(create("k1", {**PAYMENT, "amount": "1,5"}, 422, INVALID), "createPayment")
    uncaptured = replace(
        create("k1", PAYMENT, 422, REUSED), response_body=b"", response_body_missing=MISSING
    )
    assert outcomes(cross.observe(uncaptured, "createPayment"), "IDEM-014") == [
        Outcome.NOT_EXERCISED
    ]


def test_another_merchants_settle_of_a_settled_payment_is_not_the_settlement_sent_again(
    cross: CrossExchangeChecks,
) -> None:
    """A run --record of the reference server: the isolation family sends the first merchant's
    settle request with the second merchant's key, rightly answered 404."""
    cross.observe(paying(), "settleX402Payment")
    foreign = cross.observe(paying(status=404, api_key="mk_test_beta"), "settleX402Payment")
    assert outcomes(foreign, "X402-023") == []


def marked_create(expires_at: str) -> Exchange:
    body = {**PAYMENT, "expires_in_secs": 900}
    answer = {**CREATED, "expires_at": expires_at}
    return replace(create("k1", body, 201, answer, replayed=True), duration_ms=10.0)


def test_a_creation_marked_as_a_replay_but_made_in_the_recording_counts_as_created(
    cross: CrossExchangeChecks,
) -> None:
    """Every answer marked: the creation's expires_at, less its lifetime, is the recording's
    start, so the payment was created in it and a cancel marked as a replay is a first use."""
    cross.observe(marked_create("2026-01-01T00:15:00Z"), "createPayment")
    cross.observe(cancel("k2", replayed=True), "cancelPayment")
    assert outcomes(cross.finish(), "IDEM-008") == [Outcome.FAILED]


def test_a_replayed_creation_made_before_the_recording_does_not_count(
    cross: CrossExchangeChecks,
) -> None:
    cross.observe(marked_create("2025-12-31T23:15:00Z"), "createPayment")  # an hour before
    cross.observe(cancel("k2", replayed=True), "cancelPayment")
    assert outcomes(cross.finish(), "IDEM-008") == []


# -- a profile that declares no replay header ----------------------------------------------
def without_replay_header(profile: Profile) -> CrossExchangeChecks:
    idempotency = {**profile.data["idempotency"], "replay_header": ""}
    return CrossExchangeChecks(replace(profile, data={**profile.data, "idempotency": idempotency}))


def test_without_a_replay_header_a_replay_is_judged_by_its_answer_alone(profile: Profile) -> None:
    cross = without_replay_header(profile)
    cross.observe(create("k1", PAYMENT, 201, CREATED), "createPayment")
    same = cross.observe(create("k1", PAYMENT, 201, CREATED), "createPayment")
    assert outcomes(same, "IDEM-007") == [Outcome.PASSED]
    assert outcomes(same, "IDEM-008") == [Outcome.NOT_EXERCISED]
    [reason] = [r.message for r in same if "IDEM-008" in r.requirement_ids]
    assert 'replay_header = ""' in reason
    other = cross.observe(create("k1", PAYMENT, 201, {**CREATED, "id": "pay_2"}), "createPayment")
    assert outcomes(other, "IDEM-007") == [Outcome.FAILED]


def test_without_a_replay_header_another_merchants_stored_answer_is_a_foreign_replay(
    profile: Profile,
) -> None:
    cross = without_replay_header(profile)
    cross.observe(create("k1", PAYMENT, 201, CREATED), "createPayment")
    beta = create("k1", PAYMENT, 201, CREATED, api_key="mk_test_beta")
    assert outcomes(cross.observe(beta, "createPayment"), "IDEM-015") == [Outcome.FAILED]


def test_a_requirements_nonce_issued_for_two_payments_fails_x402_007(
    cross: CrossExchangeChecks,
) -> None:
    assert outcomes(cross.observe(issued("pay_1"), "createX402Requirements"), "X402-007") == [
        Outcome.PASSED
    ]
    again = cross.observe(issued("pay_1"), "createX402Requirements")  # a replay: the same payment
    assert outcomes(again, "X402-007") == [Outcome.PASSED]
    results = cross.observe(issued("pay_2"), "createX402Requirements")
    assert outcomes(results, "X402-007") == [Outcome.FAILED]
    assert "issued for pay_1" in judged(results)[0].message


def test_a_nonce_issued_for_both_payments_settled_twice_is_x402_007s(
    cross: CrossExchangeChecks,
) -> None:
    for payment_id in ("pay_1", "pay_2"):
        cross.observe(issued(payment_id), "createX402Requirements")
    cross.observe(paying("pay_1"), "settleX402Payment")
    assert outcomes(cross.observe(paying("pay_2"), "settleX402Payment"), "X402-016") == []
