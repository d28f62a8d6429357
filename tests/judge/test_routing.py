"""The routing and transport refusals (judge.routing), as the robustness family and the
validator both ask them."""

from __future__ import annotations

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.auth import NOT_READ
from conformance.judge.findings import Finding
from conformance.judge.routing import RoutingRules

PROFILE = load_profile()
DIVERGENT = load_profile("divergent")
RULES = RoutingRules(PROFILE)
NOT_FOUND = PROFILE.error("status", "not_found")
AUTH = PROFILE.auth.error_for("missing")
TOO_LARGE = PROFILE.status.payload_too_large
LIMIT = PROFILE.status.max_body_bytes


def outcomes(found: list[Finding]) -> dict[str, Outcome]:
    return {rid: f.outcome for f in found for rid in f.ids}


# ------------------------------------------------------------------ unknown paths, methods
def test_an_unknown_path_with_credentials_gets_the_not_found_error_with_its_code() -> None:
    def verdict(status: int, code: object) -> tuple[tuple[str, ...], Outcome]:
        found = RULES.unknown("GET /v1/x", None, authenticated=True, status=status, code=code)
        return found.ids, found.outcome

    assert verdict(NOT_FOUND.status, NOT_FOUND.code) == (("STATUS-020",), Outcome.PASSED)
    assert verdict(NOT_FOUND.status, "another") == (("STATUS-020",), Outcome.FAILED)
    assert verdict(NOT_FOUND.status, NOT_READ) == (("STATUS-020",), Outcome.PASSED)
    assert verdict(500, None) == (("STATUS-020",), Outcome.FAILED)


def test_without_credentials_the_auth_error_comes_first_where_the_profile_says_so() -> None:
    assert PROFILE.status.auth_before_routing

    def verdict(status: int, code: object) -> tuple[tuple[str, ...], Outcome]:
        found = RULES.unknown("GET /v1/x", None, authenticated=False, status=status, code=code)
        return found.ids, found.outcome

    assert verdict(AUTH.status, AUTH.code) == (("STATUS-019",), Outcome.PASSED)
    assert verdict(NOT_FOUND.status, NOT_FOUND.code) == (("STATUS-019",), Outcome.FAILED)


def test_a_profile_that_does_not_order_them_takes_either_answer() -> None:
    rules = RoutingRules(DIVERGENT)
    assert not DIVERGENT.status.auth_before_routing
    for spec in (DIVERGENT.error("status", "not_found"), DIVERGENT.auth.error_for("missing")):
        found = rules.unknown("GET /v1/x", None, authenticated=False, status=spec.status,
                              code=spec.code)  # fmt: skip
        assert (found.ids, found.outcome) == (("STATUS-020",), Outcome.PASSED)


@pytest.mark.parametrize(
    ("allow", "outcome"),
    [("GET, POST", Outcome.PASSED), ("get,post", Outcome.PASSED), ("GET", Outcome.FAILED),
     (None, Outcome.FAILED)],
)  # fmt: skip
def test_a_known_path_with_another_method_lists_its_methods_in_allow(
    allow: str | None, outcome: Outcome
) -> None:
    assert PROFILE.status.method_not_allowed.allow_header
    status = PROFILE.status.method_not_allowed.status
    found = RULES.unknown(
        "PUT /v1/payments", ["GET", "POST"], authenticated=True, status=status, code=None,
        allow=allow,
    )  # fmt: skip
    assert (found.ids, found.outcome) == (("STATUS-017",), outcome)


def test_an_unrecorded_answer_is_not_judged() -> None:
    found = RULES.unknown("GET /v1/x", None, authenticated=True, status=None, code=None)
    assert found.outcome is Outcome.NOT_EXERCISED


# ------------------------------------------------------------------------ unversioned
def test_an_unversioned_path_served_fails_both_ids() -> None:
    found = RULES.unversioned("GET", "/payments", status=200, code=None, known_valid=False)
    assert outcomes(found) == {"VER-001": Outcome.FAILED, "STATUS-020": Outcome.FAILED}


def test_an_unversioned_path_refused_otherwise_is_not_served_and_misanswered_when_known_valid(
) -> None:  # fmt: skip
    known = RULES.unversioned("GET", "/payments", status=400, code="x", known_valid=True)
    assert outcomes(known) == {"VER-001": Outcome.PASSED, "STATUS-020": Outcome.FAILED}
    unknown = RULES.unversioned("GET", "/payments", status=400, code="x", known_valid=False)
    assert outcomes(unknown) == {"VER-001": Outcome.PASSED, "STATUS-020": Outcome.NOT_EXERCISED}


def test_a_versioned_path_is_no_case_of_the_rule() -> None:
    assert RULES.unversioned("GET", "/v1/payments", status=404, code=None, known_valid=True) == []


# ---------------------------------------------------------------------------- body size
def test_a_body_over_the_limit_gets_the_payload_too_large_answer() -> None:
    def verdict(status: int, code: object, known_valid: bool) -> Outcome | None:
        found = RULES.too_large(LIMIT + 1, status=status, code=code, known_valid=known_valid)
        return None if found is None else found.outcome

    assert verdict(TOO_LARGE.status, TOO_LARGE.code, False) is Outcome.PASSED
    assert verdict(201, None, False) is Outcome.FAILED
    assert verdict(500, None, False) is Outcome.FAILED
    assert verdict(400, "validation_error", True) is Outcome.FAILED
    assert verdict(400, "validation_error", False) is Outcome.NOT_EXERCISED
    assert RULES.too_large(LIMIT, status=201, code=None, known_valid=True) is None


def test_the_profiles_code_for_a_too_large_body_is_compared() -> None:
    spec = DIVERGENT.status.payload_too_large
    assert spec.code is not None
    rules, size = RoutingRules(DIVERGENT), DIVERGENT.status.max_body_bytes + 1
    wrong = rules.too_large(size, status=spec.status, code="other", known_valid=True)
    right = rules.too_large(size, status=spec.status, code=spec.code, known_valid=True)
    assert wrong is not None and wrong.outcome is Outcome.FAILED
    assert right is not None and right.outcome is Outcome.PASSED


# ---------------------------------------------------------------------------- media type
def test_a_body_of_another_media_type_gets_one_of_the_profiles_answers() -> None:
    [first, *_] = PROFILE.status.unsupported_media_type
    passed = RULES.media("text/plain; charset=utf-8", status=first.status, code=first.code)
    failed = RULES.media("text/plain", status=201, code=None)
    assert passed is not None and (passed.ids, passed.outcome) == (("STATUS-021",), Outcome.PASSED)
    assert failed is not None and failed.outcome is Outcome.FAILED
    assert RULES.media("Application/JSON; charset=utf-8", status=201, code=None) is None
    assert RULES.media(None, status=201, code=None) is None
