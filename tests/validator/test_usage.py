"""x402 usage reports only for a settled upto payment (X402-025), across recorded exchanges."""

from __future__ import annotations

from typing import Any

from conformance.core.results import Outcome
from tests.validator.crossing import Traffic

PAY = "pay_x1"
CONFLICT = {"code": "invalid_state", "message": "usage needs a settled upto payment"}


def issue(traffic: Traffic, scheme: str = "upto") -> None:
    entry = {"scheme": scheme, "pay_to": "0x" + "1" * 40, "max_amount_required": "3750000",
             "nonce": "0x" + "2" * 64, "valid_before": 1_767_225_900}  # fmt: skip
    traffic.send(
        "createX402Requirements", "POST", "/v1/x402/requirements", key="k-issue", status=201,
        answer={"payment_id": PAY, "accepts": [entry]},
    )  # fmt: skip


def settle(traffic: Traffic, **kw: Any) -> None:
    body = {"payment_id": PAY, "payment_payload": {"authorization": {"nonce": "0x" + "2" * 64}}}
    answer = {"success": True, "tx_hash": "0x" + "3" * 64, "payment_id": PAY}
    traffic.send("settleX402Payment", "POST", "/v1/x402/settle", request=body, answer=answer, **kw)


def usage(traffic: Traffic, key: str, status: int = 200, **kw: Any) -> None:
    answer: Any = CONFLICT if status == 409 else {"payment_id": PAY, "scheme": "upto"}
    traffic.send(
        "reportX402Usage", "POST", f"/v1/x402/{PAY}/usage", key=key,
        request={"actual_amount": "1", "usage_id": key}, status=status, answer=answer, **kw,
    )  # fmt: skip


def test_usage_accepted_for_an_unsettled_upto_payment_fails_x402_025() -> None:
    traffic = Traffic()
    issue(traffic)
    usage(traffic, "u1")
    traffic.finish()
    assert traffic.outcomes("X402-025") == [Outcome.FAILED]


def test_usage_refused_before_the_settlement_and_accepted_after_passes() -> None:
    traffic = Traffic()
    issue(traffic)
    usage(traffic, "u1", status=409)
    settle(traffic)
    usage(traffic, "u2")
    traffic.finish()
    assert traffic.outcomes("X402-025") == [Outcome.PASSED]


def test_a_settlement_overlapping_the_report_withdraws_the_failure() -> None:
    traffic = Traffic()
    issue(traffic)
    usage(traffic, "u1", at=10, duration_ms=300)
    settle(traffic, at=10.1)
    traffic.finish()
    assert traffic.outcomes("X402-025") == []


def test_usage_of_an_exact_payment_accepted_fails_x402_025() -> None:
    traffic = Traffic()
    issue(traffic, scheme="exact")
    settle(traffic)
    usage(traffic, "u1")
    assert traffic.outcomes("X402-025") == [Outcome.FAILED]


def test_a_payment_issued_before_the_recording_is_not_judged() -> None:
    traffic = Traffic()
    usage(traffic, "u1")
    traffic.finish()
    assert traffic.outcomes("X402-025") == []
