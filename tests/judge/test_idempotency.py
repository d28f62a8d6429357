"""Idempotency-Keys: the ids a request's key is judged under, when an answer is a replay, a
request's key against its answer, and the requests sharing a key as a client that sent them in
turn knows them (the validator's reading of recorded ones: tests/validator/test_cross.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.core.redaction import REDACTED
from conformance.core.results import Outcome
from conformance.judge.findings import Finding
from conformance.judge.idempotency import (
    KeyAdmission,
    KeyObserver,
    KeyUse,
    accepted_key_ids,
    is_marked,
    replays,
)

STORED = b'{"id":"pay_1","status":"pending"}'


def test_a_replay_is_the_stored_body_marked_as_one() -> None:
    assert replays(STORED, STORED, marked=True, marker_declared=True)


def test_a_marker_on_another_body_or_with_nothing_stored_replays_nothing() -> None:
    assert not replays(b'{"id":"pay_2"}', STORED, marked=True, marker_declared=True)
    assert not replays(STORED, None, marked=True, marker_declared=True)


def test_the_stored_body_without_the_declared_marker_is_no_replay_without_a_marker_it_is() -> None:
    assert not replays(STORED, STORED, marked=False, marker_declared=True)
    assert replays(STORED, STORED, marked=False, marker_declared=False)


def test_the_marker_reads_true_in_any_case() -> None:
    assert is_marked("True") and is_marked("true")
    assert not is_marked("false") and not is_marked(None)


def test_a_key_on_a_bound_is_also_a_value_on_a_limits_bound() -> None:
    assert accepted_key_ids(128, (1, 128)) == ("IDEM-004", "LIMIT-010")
    assert accepted_key_ids(1, (1, 128)) == ("IDEM-004", "LIMIT-010")
    assert accepted_key_ids(36, (1, 128)) == ("IDEM-004",)


# ---------------------------------------------------------------------- a request's key
@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


@pytest.fixture(scope="module")
def admission(profile: Profile) -> KeyAdmission:
    return KeyAdmission(profile)


def verdicts(found: Sequence[Finding]) -> dict[str, Outcome]:
    return {rid: f.outcome for f in found for rid in f.ids}


def test_a_missing_key_refused_with_another_answer_is_judged_only_when_the_request_is_known_valid(
    admission: KeyAdmission,
) -> None:
    def judge(expected: int | None) -> tuple[Finding, ...]:
        return admission.judge(
            "createPayment",
            None,
            requires=True,
            accepts=True,
            status=409,
            code="conflict",
            expected=expected,
        )

    assert judge(None) == ()
    assert verdicts(judge(201)) == {"IDEM-001": Outcome.PASSED, "IDEM-005": Outcome.FAILED}


def test_a_key_out_of_the_bounds_accepted_fails_and_one_refused_as_the_profile_says_passes(
    admission: KeyAdmission, profile: Profile
) -> None:
    invalid = profile.idempotency.invalid
    long_key = "k" * (profile.idempotency.max_length + 1)
    accepted = admission.judge(
        "createPayment", long_key, requires=True, accepts=True, status=201, code=None
    )
    assert verdicts(accepted) == {"LIMIT-001": Outcome.FAILED, "IDEM-006": Outcome.FAILED}
    refused = admission.judge(
        "createPayment",
        long_key,
        requires=True,
        accepts=True,
        status=invalid.status,
        code=invalid.code,
    )
    assert verdicts(refused) == {"LIMIT-001": Outcome.PASSED, "IDEM-006": Outcome.PASSED}


def test_a_key_within_the_bounds_must_succeed_when_the_request_is_known_to(
    admission: KeyAdmission,
) -> None:
    key = "k" * 36
    unknown = admission.judge(
        "createPayment", key, requires=True, accepts=True, status=409, code="conflict"
    )
    assert unknown == ()
    known = admission.judge(
        "createPayment",
        key,
        requires=True,
        accepts=True,
        status=409,
        code="conflict",
        expected=201,
    )
    assert verdicts(known) == {"IDEM-004": Outcome.FAILED}


def test_a_key_on_a_bound_refused_as_invalid_fails_idem_004_and_limit_010(
    admission: KeyAdmission, profile: Profile
) -> None:
    invalid = profile.idempotency.invalid
    key = "k" * profile.idempotency.max_length
    found = admission.judge(
        "createPayment", key, requires=True, accepts=True, status=invalid.status, code=invalid.code
    )
    assert verdicts(found) == {"IDEM-004": Outcome.FAILED, "LIMIT-010": Outcome.FAILED}


def test_an_operation_that_needs_no_key_must_not_refuse_its_absence(
    admission: KeyAdmission, profile: Profile
) -> None:
    missing = profile.idempotency.missing
    refused = admission.judge(
        "listPayments",
        None,
        requires=False,
        accepts=False,
        status=missing.status,
        code=missing.code,
    )
    assert verdicts(refused) == {"IDEM-003": Outcome.FAILED}
    processed = admission.judge(
        "settleX402Payment", None, requires=False, accepts=True, status=200, code=None
    )
    assert verdicts(processed) == {"IDEM-002": Outcome.PASSED, "IDEM-018": Outcome.PASSED}


def test_a_masked_key_is_taken_to_be_within_the_bounds(admission: KeyAdmission) -> None:
    assert admission.refusal(REDACTED, requires=True, accepts=True) is None


# ---------------------------------------------------------------------- requests sharing a key
def use(status: int, body: bytes = STORED, **fields: Any) -> KeyUse:
    values: dict[str, Any] = {
        "api_key": "key_alpha",
        "key": "k-1",
        "method": "POST",
        "path": "/v1/payments",
        "query": "",
        "request_body": b'{"amount":"1"}',
        "status": status,
        "code": None,
        "body": body,
        "marked": False,
    }
    return KeyUse(**{**values, **fields})


def test_a_replay_of_a_new_key_marked_on_its_first_use_fails_idem_008(profile: Profile) -> None:
    keys = KeyObserver(profile)
    first = keys.observe(use(201, marked=True), expected=201, new_key=True)
    assert verdicts(first.findings) == {"IDEM-008": Outcome.FAILED} and first.first_use
    again = keys.observe(use(201, marked=True), expected=201)
    assert again.replayed
    assert verdicts(again.findings) == {"IDEM-007": Outcome.PASSED, "IDEM-008": Outcome.PASSED}


def test_a_request_sent_after_the_first_was_answered_is_no_original_without_the_marker(
    profile: Profile,
) -> None:
    # recorded traffic may hold a replay before its original; a sequential client's may not
    recorded, sent = KeyObserver(profile), KeyObserver(profile)
    for keys in (recorded, sent):
        keys.observe(use(201, marked=True))
    assert "IDEM-008" not in verdicts(recorded.observe(use(201)).findings)
    assert verdicts(sent.observe(use(201), expected=201).findings)["IDEM-008"] is Outcome.FAILED


def test_an_in_use_answer_is_judged_only_for_a_request_sent_after_the_first_was_answered(
    profile: Profile,
) -> None:
    in_use = profile.idempotency.in_use
    recorded, sent = KeyObserver(profile), KeyObserver(profile)
    other = use(in_use.status, request_body=b'{"amount":"2"}', code=in_use.code)
    for keys in (recorded, sent):
        keys.observe(use(201))
    assert recorded.observe(other).findings == ()
    assert verdicts(sent.observe(other, expected=201).findings) == {"IDEM-010": Outcome.FAILED}


def test_another_path_under_a_stored_key_is_idem_011(profile: Profile) -> None:
    reused = profile.idempotency.reused
    keys = KeyObserver(profile)
    keys.observe(use(201))
    moved = use(reused.status, path="/v1/subscriptions", code=reused.code)
    assert verdicts(keys.observe(moved, expected=201).findings) == {"IDEM-011": Outcome.PASSED}


def test_a_known_valid_request_under_a_refused_or_foreign_key_must_succeed(
    profile: Profile,
) -> None:
    keys = KeyObserver(profile)
    keys.observe(use(404, code="not_found"), expected=201, new_key=True)
    corrected = keys.observe(use(409, code="conflict"), expected=201)
    assert verdicts(corrected.findings) == {"IDEM-014": Outcome.FAILED}
    keys.observe(use(201, key="k-2"), expected=201, new_key=True)
    theirs = keys.observe(use(409, api_key="key_beta", key="k-2", code="conflict"), expected=201)
    assert verdicts(theirs.findings) == {"IDEM-015": Outcome.FAILED}
    assert keys.observe(use(409, api_key="key_gamma", key="k-2", code="conflict")).findings == ()
