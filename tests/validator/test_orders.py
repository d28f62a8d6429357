"""One payment per merchant_order_no and merchant, judged across recorded exchanges."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from tests.validator.crossing import ALPHA, BETA, Traffic

DUPLICATE = {"code": "duplicate_order", "message": "merchant_order_no is already used"}


def order(number: str = "order-1") -> dict[str, Any]:
    return {"quotes": {"usdc": {"amount": "10"}}, "merchant_order_no": number}


def payment(pid: str, number: str = "order-1") -> dict[str, Any]:
    return {"id": pid, "status": "pending", "merchant_order_no": number}


def create(
    traffic: Traffic, key: str, status: int, answer: Any, *, api_key: str = ALPHA, **kw: Any
) -> None:
    traffic.send(
        "createPayment", "POST", "/v1/payments", api_key=api_key, key=key, request=order(),
        status=status, answer=answer, **kw,
    )  # fmt: skip


def test_a_second_payment_with_a_used_order_number_created_fails_pay_013() -> None:
    traffic = Traffic()
    create(traffic, "k1", 201, payment("pay_1"))
    create(traffic, "k2", 201, payment("pay_2"))
    assert traffic.outcomes("PAY-013") == [Outcome.FAILED]


def test_a_used_order_number_refused_as_a_duplicate_passes_pay_013() -> None:
    traffic = Traffic()
    create(traffic, "k1", 201, payment("pay_1"))
    create(traffic, "k2", 409, DUPLICATE)
    assert traffic.outcomes("PAY-013") == [Outcome.PASSED]


def test_a_duplicate_refused_with_any_code_passes_when_the_profile_pins_none() -> None:
    # duplicate_order = { status = 409 }: the status alone is the profile's answer
    default = load_profile("default")
    status = {**default.data["status"], "duplicate_order": {"status": 409}}
    traffic = Traffic(replace(default, data={**default.data, "status": status}))
    create(traffic, "k1", 201, payment("pay_1"))
    create(traffic, "k2", 409, {"code": "order_exists", "message": "used"})
    assert traffic.outcomes("PAY-013") == [Outcome.PASSED]


def test_a_replay_of_the_creation_is_not_a_second_payment() -> None:
    traffic = Traffic()
    create(traffic, "k1", 201, payment("pay_1"))
    create(traffic, "k1", 201, payment("pay_1"), replayed=True)
    assert traffic.outcomes("PAY-013") == []


def test_another_merchants_order_number_refused_fails_ten_008() -> None:
    traffic = Traffic()
    create(traffic, "k1", 201, payment("pay_1"))
    create(traffic, "k1", 409, DUPLICATE, api_key=BETA)
    assert traffic.outcomes("TEN-008") == [Outcome.FAILED]


def test_another_merchants_order_number_accepted_passes_ten_008() -> None:
    traffic = Traffic()
    create(traffic, "k1", 201, payment("pay_1"))
    create(traffic, "k1", 201, payment("pay_9"), api_key=BETA)
    assert traffic.outcomes("TEN-008") == [Outcome.PASSED]


def test_two_keys_the_profile_does_not_know_are_not_judged_as_two_merchants() -> None:
    traffic = Traffic()
    create(traffic, "k1", 201, payment("pay_1"), api_key="mk_live_one")
    create(traffic, "k1", 409, DUPLICATE, api_key="mk_live_two")
    assert traffic.outcomes("TEN-008") == []


def listed(traffic: Traffic, *items: dict[str, Any]) -> None:
    traffic.send("listPayments", "GET", "/v1/payments", answer={"payments": list(items)})


def test_a_list_showing_a_replayed_creation_twice_fails_idem_009() -> None:
    traffic = Traffic()
    create(traffic, "k1", 201, payment("pay_1"))
    create(traffic, "k1", 201, payment("pay_1"), replayed=True)
    listed(traffic, payment("pay_2"), payment("pay_1"))
    assert traffic.outcomes("IDEM-009") == [Outcome.FAILED]


def test_a_list_showing_a_replayed_creation_once_passes_idem_009() -> None:
    traffic = Traffic()
    create(traffic, "k1", 201, payment("pay_1"))
    create(traffic, "k1", 201, payment("pay_1"), replayed=True)
    listed(traffic, payment("pay_1"), payment("pay_3", "order-2"))
    assert traffic.outcomes("IDEM-009") == [Outcome.PASSED]
