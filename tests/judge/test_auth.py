"""The authentication rules: which request breaks which, and the verdict on its answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core.profile import ErrorSpec, load_profile
from conformance.core.redaction import REDACTED
from conformance.core.results import Outcome
from conformance.judge.auth import NOT_READ, AuthRules, Clock, Memory, NonceUses
from conformance.judge.findings import Finding
from conformance.judge.signatures import Signed

PROFILE = load_profile("default")
RULES = AuthRules(PROFILE)
UNAUTHORIZED = {"code": "unauthorized", "message": "no"}
EXPIRED_403 = """extends = "default"
[profile]
name = "expired-403"
[auth.errors]
expired = { status = 403, code = "expired" }
"""
GOOD = {
    "X-Api-Key": "mk_test_alpha",
    "X-Signature": "0" * 64,
    "X-Timestamp": "1767225600",
    "X-Nonce": "n0nce-0123456789abcdef",
}


def breach_of(**changes: str | None) -> object:
    headers = {**GOOD, **changes}
    return RULES.headers(headers.get)


def verdicts(found: list[Finding]) -> dict[tuple[str, ...], Outcome]:
    return {f.ids: f.outcome for f in found}


def test_well_formed_headers_break_no_header_rule() -> None:
    assert breach_of() is None
    assert breach_of(**{"X-Signature": REDACTED}) is None  # masked: present, its form unknown


@pytest.mark.parametrize(
    ("changes", "contract", "ids"),
    [
        ({"X-Api-Key": None}, ("AUTH-001",), ("AUTH-006",)),
        ({"X-Nonce": ""}, ("AUTH-004",), ("AUTH-006",)),
        ({"X-Timestamp": "1767225600.0"}, (), ("AUTH-007",)),
        ({"X-Nonce": "short"}, (), ("AUTH-008",)),
        ({"X-Signature": "0" * 63}, (), ("AUTH-013",)),
    ],
)
def test_a_missing_or_malformed_header_breaks_its_rule(
    changes: dict[str, str | None], contract: tuple[str, ...], ids: tuple[str, ...]
) -> None:
    breach = RULES.headers({**GOOD, **changes}.get)
    assert breach is not None
    assert (breach.contract_ids, breach.ids) == (contract, ids)


def test_the_profiles_answer_passes_and_another_fails() -> None:
    breach = RULES.headers({**GOOD, "X-Api-Key": None}.get)
    assert breach is not None
    refused = RULES.refusal(breach, 401, UNAUTHORIZED, known_valid=True)
    assert verdicts(refused) == {("AUTH-001",): Outcome.PASSED, ("AUTH-006",): Outcome.PASSED}
    # a refusal is all the spec's rule asks; the profile's asks its status and code
    forbidden = RULES.refusal(breach, 401, {"code": "forbidden"}, known_valid=True)
    assert verdicts(forbidden) == {("AUTH-001",): Outcome.PASSED, ("AUTH-006",): Outcome.FAILED}
    accepted = RULES.refusal(breach, 201, {"id": "pay_1"}, known_valid=True)
    assert verdicts(accepted) == {("AUTH-001",): Outcome.FAILED, ("AUTH-006",): Outcome.FAILED}
    # a recording that lost the body: the status alone
    assert verdicts(RULES.refusal(breach, 401, NOT_READ, known_valid=False))[("AUTH-006",)] is (
        Outcome.PASSED
    )


def test_another_checks_answer_blames_authentication_before_validation() -> None:
    breach = RULES.signature(Signed.OTHER_SECRET)
    assert breach is not None
    # the caller cannot know the rest of the request is valid: a 400 says validation ran first
    assert verdicts(
        RULES.refusal(breach, 400, {"code": "validation_error"}, known_valid=False)
    ) == {("AUTH-013", "AUTH-020"): Outcome.FAILED}
    assert verdicts(RULES.refusal(breach, 400, None, known_valid=True)) == {
        ("AUTH-013",): Outcome.FAILED
    }
    # a signature over a changed request may have been taken for a good one
    changed = RULES.signature(Signed.BODY_CHANGED)
    assert changed is not None
    assert verdicts(RULES.refusal(changed, 400, None, known_valid=False)) == {
        ("AUTH-014",): Outcome.FAILED
    }
    unsigned = RULES.headers({}.get)
    assert unsigned is not None
    both = RULES.refusal(unsigned, 401, UNAUTHORIZED, known_valid=True, also_invalid=True)
    assert verdicts(both)[("AUTH-006", "AUTH-020")] is Outcome.PASSED


def test_a_helper_names_its_own_rule_too() -> None:
    breach = RULES.signature(Signed.UNKNOWN)
    assert breach is not None
    found = RULES.refusal(breach, 401, UNAUTHORIZED, known_valid=False, helper=True)
    assert verdicts(found) == {("AUTH-013", "HELP-007"): Outcome.PASSED}


def test_a_signature_that_verifies_breaks_nothing() -> None:
    assert RULES.signature(Signed.AS_SENT) is None


def test_a_signature_whose_form_a_recorder_masked_may_be_answered_as_malformed() -> None:
    """A cut-short signature may be read as malformed or as wrong; masked in a recording, its
    form is unknown, so both answers hold (divergent: 403 credentials_malformed)."""
    rules = AuthRules(load_profile("divergent"))
    seen = rules.signature(Signed.UNKNOWN)
    masked = rules.signature(Signed.UNKNOWN, form_known=False)
    assert seen is not None and masked is not None
    assert seen.answers == (ErrorSpec(403, "signature_mismatch"),)
    assert set(masked.answers) == {
        ErrorSpec(403, "credentials_malformed"),
        ErrorSpec(403, "signature_mismatch"),
    }


def test_each_kind_of_failure_has_its_own_answer(tmp_path: Path) -> None:
    path = tmp_path / "expired.toml"
    path.write_text(EXPIRED_403, encoding="utf-8")
    rules = AuthRules(load_profile(path))
    stale = rules.outside_window(1_000.0, 1_000.0 + 400)
    assert stale is not None and stale.ids == ("AUTH-010",)
    assert stale.answers == (ErrorSpec(403, "expired"),)
    found = rules.refusal(stale, 401, UNAUTHORIZED, known_valid=True)
    assert verdicts(found) == {("AUTH-010",): Outcome.FAILED}


@pytest.mark.parametrize(
    ("drift", "where"),
    [
        (0, Clock.INSIDE),
        (297, Clock.INSIDE),
        (-301, Clock.EDGE),
        (-303, Clock.PAST),
        (303, Clock.FUTURE),
    ],
)
def test_a_timestamp_is_placed_against_the_window(drift: float, where: Clock) -> None:
    assert RULES.clock(1_000.0 + drift, 1_000.0) is where
    outside = RULES.outside_window(1_000.0 + drift, 1_000.0)
    ids = {Clock.PAST: ("AUTH-010",), Clock.FUTURE: ("AUTH-011",)}.get(where)
    assert (outside.ids if outside else None) == ids


def test_a_request_signed_as_stated_is_accepted() -> None:
    inside = verdicts(RULES.accepted(201, Clock.INSIDE, known_valid=False))
    assert inside == {("AUTH-005", "AUTH-012"): Outcome.PASSED}
    assert verdicts(RULES.accepted(401, Clock.INSIDE, known_valid=False)) == {
        ("AUTH-005", "AUTH-012"): Outcome.FAILED
    }
    # its nonce was seen before, or its timestamp is near the edge: the refusal may be for that
    assert RULES.accepted(401, Clock.INSIDE, known_valid=False, nonce_fresh=False) == []
    assert RULES.accepted(401, Clock.EDGE, known_valid=False) == []
    # a known valid request answered by another check was still authenticated
    assert verdicts(RULES.accepted(404, Clock.INSIDE, known_valid=True)) == {
        ("AUTH-005", "AUTH-012"): Outcome.PASSED
    }
    assert RULES.accepted(404, Clock.INSIDE, known_valid=False) == []
    assert verdicts(RULES.accepted(500, None, known_valid=True)) == {("AUTH-005",): Outcome.FAILED}


def test_a_nonce_accepted_once_is_reused_within_the_window() -> None:
    uses = NonceUses(RULES, Memory())
    assert uses.observe("k", 1_000.0, "first", accepted=True) == (None, False)
    breach, seen = uses.observe("k", 1_010.0, "second", accepted=True)
    assert seen and breach is not None and breach.ids == ("AUTH-016",)
    assert "first" in breach.what
    # past the window of the first use the server may have forgotten it
    assert uses.observe("k", 1_400.0, "third", accepted=True) == (None, False)


def test_a_refused_use_spends_no_nonce() -> None:
    uses = NonceUses(RULES, Memory())
    assert uses.observe("k", 1_000.0, "refused", accepted=False) == (None, False)
    assert uses.observe("k", 1_001.0, "genuine", accepted=True) == (None, True)
    breach, _ = uses.observe("k", 1_002.0, "replay", accepted=False)
    assert breach is not None and "genuine" in breach.what
