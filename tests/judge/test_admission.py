"""What a request breaks and the answer the profile gives it (judge/admission.py), as a suite
family asks it of a case it built (``refusal``) and the validator of a recorded exchange
(``judge``): one rule, two strictnesses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.admission import AdmissionChecks
from conformance.judge.findings import Finding

PROFILE = load_profile()
ADMISSION = AdmissionChecks(PROFILE)
NOW = 1767225600.0  # 2026-01-01T00:00:00Z
OVER = [{"merchant_id": "m_gamma", "bps": 6000}, {"merchant_id": "m_delta", "bps": 6000}]
VALIDATION = PROFILE.error("status", "validation")
INVALID_STATE = PROFILE.error("status", "invalid_state")
BUSINESS = PROFILE.error("status", "business_rule")


@dataclass
class FakeCall:
    """A request as sent and its answer's status and code."""

    operation_id: str
    request: Any
    status: int
    error_code: str | None = None
    raw_query: str = ""
    raw_path: str = "/v1/split-template"
    headers: dict[str, str] = field(default_factory=lambda: {"X-Api-Key": "mk_test_alpha"})
    path_params: dict[str, str] = field(default_factory=dict)
    answer: Any = None

    @property
    def success(self) -> bool:
        return 200 <= self.status < 300

    @property
    def code(self) -> str | None:
        return self.error_code

    @property
    def query(self) -> dict[str, str]:
        return {}

    @property
    def request_body(self) -> bytes:
        return b"{}"

    def field(self, name: str) -> Any:
        return self.request.get(name) if isinstance(self.request, dict) else None

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    def response_header(self, name: str) -> str | None:
        return None

    def handled_between(
        self, slack: float, unix_timestamps: bool
    ) -> tuple[tuple[float, float], ...]:
        return ((NOW - slack, NOW + slack),)


def template(shares: list[dict[str, Any]], status: int, code: str | None = None) -> FakeCall:
    return FakeCall("replaceSplitTemplate", {"shares": shares}, status, code)


def outcomes(found: list[Finding]) -> list[tuple[tuple[str, ...], Outcome]]:
    return [(f.ids, f.outcome) for f in found]


def test_a_case_refused_as_the_profile_says_passes() -> None:
    found = ADMISSION.refusal(template(OVER, BUSINESS.status), ["SPLIT-004"])
    assert outcomes(found) == [(("SPLIT-004",), Outcome.PASSED)]


def test_a_case_accepted_fails() -> None:
    found = ADMISSION.refusal(template(OVER, 200), ["SPLIT-004"])
    assert outcomes(found) == [(("SPLIT-004",), Outcome.FAILED)]
    assert "accepted (200)" in found[0].message


def test_a_case_refused_otherwise_fails_where_a_recording_leaves_it_unjudged() -> None:
    refused_otherwise = template(OVER, VALIDATION.status, VALIDATION.code)
    found = ADMISSION.refusal(refused_otherwise, ["SPLIT-004"])
    assert outcomes(found) == [(("SPLIT-004",), Outcome.FAILED)]
    assert f"not the profile's {BUSINESS.status}" in found[0].message
    judged, _ = ADMISSION.judge(refused_otherwise, contract_problems=False, query_names=frozenset())
    assert judged == []


def test_an_answer_another_broken_rule_gives_is_not_judged() -> None:
    schedule = FakeCall(
        "replacePayoutSchedule",
        {"currency_id": "usdc", "target_chain_id": "base", "min_send_amount": "1.1234567"},
        INVALID_STATE.status,
        INVALID_STATE.code,
    )
    assert ADMISSION.refusal(schedule, ["PAYOUT-003"], also=[INVALID_STATE]) == []
    assert outcomes(ADMISSION.refusal(schedule, ["PAYOUT-003"])) == [
        (("PAYOUT-003",), Outcome.FAILED)
    ]


def test_a_case_the_judge_does_not_see_break_its_rule_is_the_suites_bug() -> None:
    within = [{"merchant_id": "m_gamma", "bps": 100}]
    with pytest.raises(ValueError, match="SPLIT-004"):
        ADMISSION.refusal(template(within, 200), ["SPLIT-004"])


def test_the_calling_merchant_is_read_from_the_api_key() -> None:
    own = template([{"merchant_id": "m_alpha", "bps": 100}], 200)
    assert outcomes(ADMISSION.refusal(own, ["SPLIT-002"])) == [(("SPLIT-002",), Outcome.FAILED)]
    other = template([{"merchant_id": "m_alpha", "bps": 100}], 200)
    other.headers = {"X-Api-Key": "mk_test_beta"}
    with pytest.raises(ValueError):
        ADMISSION.refusal(other, ["SPLIT-002"])


def test_a_first_run_is_in_the_past_only_beyond_the_window_the_call_gives() -> None:
    # the window: the profile's clock window and a minute of latency either side of NOW
    assert PROFILE.auth.clock_window_secs + 60 < 7 * 60
    past = FakeCall("createPayoutSchedule", {"first_run_at": "2025-12-31T23:53:00Z"}, 200)
    assert outcomes(ADMISSION.refusal(past, ["PAYOUT-005"])) == [(("PAYOUT-005",), Outcome.FAILED)]
    near = FakeCall("createPayoutSchedule", {"first_run_at": "2025-12-31T23:59:00Z"}, 200)
    with pytest.raises(ValueError):
        ADMISSION.refusal(near, ["PAYOUT-005"])


def test_an_accepted_broken_rule_names_the_member_an_echo_of_it_repeats() -> None:
    hook = FakeCall(
        "putWebhookEndpoint",
        {"url": "https://hooks.example/x", "event_types": ["conformance.unknown"]},
        200,
        raw_path="/v1/webhook-endpoints/we_1",
    )
    found, echoed = ADMISSION.judge(hook, contract_problems=False, query_names=frozenset())
    assert outcomes(found) == [(("WH-009",), Outcome.FAILED)]
    assert echoed == frozenset({"event_types"})
    hook.status = BUSINESS.status
    found, echoed = ADMISSION.judge(hook, contract_problems=False, query_names=frozenset())
    assert outcomes(found) == [(("WH-009",), Outcome.PASSED)]
    assert echoed == frozenset()
