"""A valid JSON body sent as text/plain is a profile matter (STATUS-021, profile 3), not a
contract one: the body is valid JSON, so SHAPE-030 ("not valid JSON") does not judge it. The
default profile accepts 415 unsupported_media_type or 400 validation_error; a profile may
choose otherwise (``status.unsupported_media_type``)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from conformance.core.catalogue import load_catalogue
from conformance.core.profile import ErrorSpec, Profile, ProfileError, load_profile
from conformance.core.results import Outcome
from conformance.suite.robustness.test_robustness import OPERATION_IDS, judge
from conformance.suite.robustness.variants import VARIANTS
from conformance.suite.stateful import Transcript, Verdicts
from conformance.suite.tool_errors import CaseError
from conformance.suite.wire.check_properties import CheckRecorder

PROFILE = load_profile()
TEXT_PLAIN = next(v for v in VARIANTS if v.name == "text/plain body")
IDS = ("SHAPE-030", "STATUS-021", "ERR-006")


def _answer(status: int, code: str | None) -> httpx.Response:
    request = httpx.Request(
        "POST", "http://server.test/v1/payments", headers={"Content-Type": "text/plain"}
    )
    body = {"code": code, "message": "refused"} if code else {"id": "pay_1"}
    return httpx.Response(status, json=body, request=request)


def _outcomes(profile: Profile, response: httpx.Response) -> dict[str, Outcome]:
    recorder = CheckRecorder("robustness")
    verdicts = Verdicts(recorder, "robustness", Transcript())
    judge(verdicts, profile, TEXT_PLAIN, response, IDS)
    verdicts.finish("malformed requests", ())
    return {c.requirement_ids[0]: c.outcome for c in recorder.checks}


def test_the_requirement_is_a_profile_requirement_of_section_3() -> None:
    entry = next(r for r in load_catalogue().requirements if r.id == "STATUS-021")
    assert (entry.layer.value, entry.section.key, entry.level) == ("profile", "profile 3", "MUST")
    assert "Content-Type" in entry.text
    assert "STATUS-021" in OPERATION_IDS


def test_the_text_plain_variant_is_not_judged_as_a_body_that_is_not_json() -> None:
    assert "SHAPE-030" not in TEXT_PLAIN.refusal_ids
    assert TEXT_PLAIN.expected is None  # the judge's media rule gives the verdict
    assert PROFILE.status.unsupported_media_type == (
        ErrorSpec(415, "unsupported_media_type"),
        ErrorSpec(400, "validation_error"),
    )


def test_a_json_body_is_a_case_error_not_a_verdict() -> None:
    request = httpx.Request("POST", "http://server.test/v1/payments", json={})
    response = httpx.Response(415, json={"code": "unsupported_media_type"}, request=request)
    with pytest.raises(CaseError):
        judge(Verdicts(CheckRecorder("robustness"), "robustness", Transcript()), PROFILE,
              TEXT_PLAIN, response, IDS)  # fmt: skip


@pytest.mark.parametrize(
    ("status", "code"), [(415, "unsupported_media_type"), (400, "validation_error")]
)
def test_the_default_profile_accepts_either_refusal(status: int, code: str) -> None:
    assert _outcomes(PROFILE, _answer(status, code))["STATUS-021"] is Outcome.PASSED


def test_accepting_a_text_plain_body_fails_the_profile_requirement_not_the_contract() -> None:
    outcomes = _outcomes(PROFILE, _answer(201, None))
    assert outcomes["STATUS-021"] is Outcome.FAILED
    assert outcomes.get("SHAPE-030") is not Outcome.FAILED


def test_another_refusal_fails_the_default_profile() -> None:
    outcomes = _outcomes(PROFILE, _answer(422, "unsupported_media_type"))
    assert outcomes["STATUS-021"] is Outcome.FAILED


def test_a_profile_may_choose_only_415(tmp_path: Path) -> None:
    path = tmp_path / "strict.toml"
    path.write_text(
        'extends = "default"\n[status]\n'
        'unsupported_media_type = [{ status = 415, code = "unsupported_media_type" }]\n',
        encoding="utf-8",
    )
    strict = load_profile(path)
    assert _outcomes(strict, _answer(415, "unsupported_media_type"))["STATUS-021"] is (
        Outcome.PASSED
    )
    assert _outcomes(strict, _answer(400, "validation_error"))["STATUS-021"] is Outcome.FAILED


def test_a_profile_must_accept_at_least_one_answer(tmp_path: Path) -> None:
    path = tmp_path / "none.toml"
    path.write_text('extends = "default"\n[status]\nunsupported_media_type = []\n', "utf-8")
    with pytest.raises(
        ProfileError, match=r"status\.unsupported_media_type: \[\] should be non-empty"
    ):
        load_profile(path)
