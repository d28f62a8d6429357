"""Authentication in recorded traffic: signatures and the clock window, judged by the answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.core.profile import Profile, load_profile, with_credential
from conformance.core.redaction import REDACTED, SIGNATURE_DOES_NOT_VERIFY, SIGNATURE_VERIFIES
from conformance.core.results import Outcome
from conformance.core.signing import Signer
from conformance.validator.auth import AuthChecks
from conformance.validator.exchange import Exchange
from conformance.validator.readers import iter_exchanges
from conformance.validator.tables import Finding, request_headers
from tests.validator.samples import exchange, har_entry, write_jsonl

SENT_AT = 1_767_225_600  # the samples' start time, 2026-01-01T00:00:00Z
UNAUTHORIZED = {"code": "unauthorized", "message": "bad signature"}


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile("default")


def request(
    *,
    status: int = 200,
    secret: str = "sk_test_alpha_0123456789abcdef",
    api_key: str = "mk_test_alpha",
    timestamp: int = SENT_AT,
    nonce: str = "n0nce-0123456789abcdef",
    tamper: bytes | None = None,
    started_at: str | None = "2026-01-01T00:00:00.000Z",
    body: bytes = b'{"merchant_order_no":"o-1"}',
) -> Exchange:
    """A payment creation signed with ``secret``; ``tamper`` replaces the body after signing."""
    headers = Signer(api_key, secret).headers(
        "POST", "/v1/payments?expand=quotes", body, timestamp=timestamp, nonce=nonce
    )
    answer: Any = {"id": "pay_1", "status": "pending"} if status < 300 else UNAUTHORIZED
    return exchange(
        "POST",
        "/v1/payments?expand=quotes",
        request_headers=list(headers.items()),
        request_body=tamper if tamper is not None else body,
        status=status,
        response_body=answer,
        started_at=started_at,
    )


def judge(
    checks: AuthChecks, ex: Exchange, *, nonce_seen: bool = False, sent_at: float | None = SENT_AT
) -> list[Finding]:
    return checks.observe(ex, request_headers(ex), "createPayment", sent_at, nonce_seen)


def outcomes(findings: list[Finding], rid: str) -> list[Outcome]:
    return [outcome for _, ids, outcome, _ in findings if rid in ids]


def test_a_request_signed_as_the_profile_states_and_accepted_passes(profile: Profile) -> None:
    findings = judge(AuthChecks(profile), request())
    assert outcomes(findings, "AUTH-005") == [Outcome.PASSED]
    assert outcomes(findings, "AUTH-012") == [Outcome.PASSED]


def test_a_correctly_signed_fresh_request_refused_fails(profile: Profile) -> None:
    findings = judge(AuthChecks(profile), request(status=401))
    assert outcomes(findings, "AUTH-005") == [Outcome.FAILED]
    # unless its nonce was sent before: then the refusal may be for the nonce (AUTH-016)
    assert judge(AuthChecks(profile), request(status=401), nonce_seen=True) == []


@pytest.mark.parametrize(
    "changes",
    [{"secret": "sk_test_beta_0123456789abcdef"}, {"tamper": b'{"merchant_order_no":"o-2"}'}],
    ids=["another secret", "body changed after signing"],
)
def test_a_signature_that_does_not_verify_must_be_refused(
    profile: Profile, changes: dict[str, Any]
) -> None:
    accepted = judge(AuthChecks(profile), request(**changes))
    assert outcomes(accepted, "AUTH-013") == [Outcome.FAILED]
    assert outcomes(accepted, "AUTH-005") == []
    refused = judge(AuthChecks(profile), request(status=401, **changes))
    assert outcomes(refused, "AUTH-013") == [Outcome.PASSED]
    validation = judge(AuthChecks(profile), request(status=400, **changes))
    assert outcomes(validation, "AUTH-020") == [Outcome.FAILED]
    # a 403 is the answer of no other check of the profile: a wrong auth answer, not a check
    # run before authentication
    forbidden = judge(AuthChecks(profile), request(status=403, **changes))
    assert outcomes(forbidden, "AUTH-013") == [Outcome.FAILED]
    assert outcomes(forbidden, "AUTH-020") == []


@pytest.mark.parametrize("offset, rid", [(-400, "AUTH-010"), (400, "AUTH-011")])
def test_a_timestamp_outside_the_clock_window_must_be_refused(
    profile: Profile, offset: int, rid: str
) -> None:
    accepted = judge(AuthChecks(profile), request(timestamp=SENT_AT + offset))
    assert outcomes(accepted, rid) == [Outcome.FAILED]
    refused = judge(AuthChecks(profile), request(status=401, timestamp=SENT_AT + offset))
    assert outcomes(refused, rid) == [Outcome.PASSED]
    assert outcomes(refused, "AUTH-005") == []  # refused for its timestamp, rightly


def test_a_timestamp_at_the_edge_of_the_window_is_not_judged(profile: Profile) -> None:
    """The recorder's clock is not the server's: 300 s give or take 2 is not decided."""
    for offset in (-301, 299):
        findings = judge(AuthChecks(profile), request(status=401, timestamp=SENT_AT + offset))
        assert outcomes(findings, "AUTH-010") == outcomes(findings, "AUTH-005") == []


def test_what_the_recording_cannot_show_is_not_exercised_with_the_reason(
    profile: Profile,
) -> None:
    checks = AuthChecks(profile)
    unknown = judge(checks, request(api_key="mk_live_other"))
    [(_, ids, outcome, reason)] = unknown
    assert outcome is Outcome.NOT_EXERCISED and "AUTH-013" in ids
    assert "--api-key and --api-secret" in reason
    assert judge(checks, request(api_key="mk_live_other")) == []  # the reason is given once
    masked = request()
    masked = replace(
        masked,
        request_headers=tuple(
            (k, REDACTED if k == "X-Signature" else v) for k, v in masked.request_headers
        ),
    )
    [(_, _, outcome, reason)] = judge(AuthChecks(profile), masked)
    assert outcome is Outcome.NOT_EXERCISED and "masked" in reason
    untimed = judge(AuthChecks(profile), request(started_at=None), sent_at=None)
    assert outcomes(untimed, "AUTH-010") == [Outcome.NOT_EXERCISED]
    assert outcomes(untimed, "AUTH-013") == []


def _masked(ex: Exchange, mark: str) -> Exchange:
    headers = tuple((k, mark if k == "X-Signature" else v) for k, v in ex.request_headers)
    return replace(ex, request_headers=headers)


def test_a_signature_the_recorder_marked_is_judged_by_its_mark(profile: Profile) -> None:
    # run --record checks each signature with the secret before masking it
    verified = judge(AuthChecks(profile), _masked(request(), SIGNATURE_VERIFIES))
    assert outcomes(verified, "AUTH-005") == [Outcome.PASSED]
    forged = _masked(request(status=403), SIGNATURE_DOES_NOT_VERIFY)
    assert outcomes(judge(AuthChecks(profile), forged), "AUTH-013") == [Outcome.FAILED]


def test_a_secret_given_on_the_command_line_verifies_signatures(profile: Profile) -> None:
    """validate --api-key/--api-secret replace the first credential, as run's do."""
    live = with_credential(profile, "mk_live_1", "sk_live_s3cret_value_0123")
    checks = AuthChecks(live)
    good = request(api_key="mk_live_1", secret="sk_live_s3cret_value_0123")
    assert outcomes(judge(checks, good), "AUTH-005") == [Outcome.PASSED]
    bad = request(api_key="mk_live_1", secret="sk_live_other_value_01234")
    [(_, _, outcome, message)] = judge(checks, bad)
    assert outcome is Outcome.FAILED and "s3cret" not in message


# -- a signature is judged only on the exact bytes sent ----------------------------------------
# A body that is not UTF-8, signed over its bytes and accepted by a correct server.
LATIN1_BODY = '{"merchant_order_no":"caf\xe9"}'.encode("latin-1")


def _through_har(tmp_path: Path, ex: Exchange, edit: Callable[[dict[str, Any]], None]) -> Exchange:
    """``ex`` written as a proxy's HAR entry changed by ``edit``, then read back."""
    entry = har_entry(ex)
    edit(entry)
    path = tmp_path / "proxy.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}), "utf-8")
    [read] = iter_exchanges(path)
    return read


def _as_replaced_text(entry: dict[str, Any]) -> None:
    # what a proxy that decodes every body as UTF-8 writes: U+FFFD for the byte 0xE9
    entry["request"]["postData"] = {
        "mimeType": "application/json",
        "text": LATIN1_BODY.decode("utf-8", "replace"),
    }


def _as_cut(entry: dict[str, Any]) -> None:
    entry["request"]["postData"]["text"] = entry["request"]["postData"]["text"][:10]
    entry["request"]["postData"]["_truncated"] = True


def _as_binary_text(entry: dict[str, Any]) -> None:
    entry["request"]["postData"] = {"mimeType": "application/octet-stream", "text": "\x00\x01"}


def _cut_without_a_mark(entry: dict[str, Any]) -> None:
    # a recorder that cuts and says nothing: the Content-Length still tells
    entry["request"]["headers"].append({"name": "Content-Length", "value": "27"})
    entry["request"]["postData"]["text"] = entry["request"]["postData"]["text"][:10]


@pytest.mark.parametrize(
    ("body", "edit", "reason"),
    [
        (LATIN1_BODY, _as_replaced_text, "replacement characters (U+FFFD)"),
        (b'{"merchant_order_no":"o-1"}', _as_cut, "cut or left out the request body"),
        (b"\x00\x01", _as_binary_text, "binary data of the request body as text"),
        (b'{"merchant_order_no":"o-1"}', _cut_without_a_mark, "its Content-Length 27"),
    ],
    ids=["replacement characters", "cut body", "binary as text", "shorter than Content-Length"],
)
def test_a_signature_over_bytes_the_recording_lost_is_not_exercised_with_the_reason(
    profile: Profile,
    tmp_path: Path,
    body: bytes,
    edit: Callable[[dict[str, Any]], None],
    reason: str,
) -> None:
    """A correct server accepted the request: recomputing its signature over the recorded text
    would fail AUTH-013 (and AUTH-020) falsely."""
    read = _through_har(tmp_path, request(body=body), edit)
    findings = judge(AuthChecks(profile), read)
    assert outcomes(findings, "AUTH-013") == [Outcome.NOT_EXERCISED]
    assert outcomes(findings, "AUTH-020") == []
    [(_, _, _, message)] = [f for f in findings if "AUTH-013" in f[1]]
    assert reason in message


def test_a_body_recorded_exactly_is_judged_whatever_its_bytes(
    profile: Profile, tmp_path: Path
) -> None:
    """Base64 keeps the bytes: the signature over a non-UTF-8 body is checked, in HAR and in
    JSON Lines."""
    signed = request(body=LATIN1_BODY)
    [from_jsonl] = iter_exchanges(write_jsonl(tmp_path / "t.jsonl", [signed]))
    from_har = _through_har(tmp_path, signed, lambda entry: None)
    for read in (from_jsonl, from_har):
        assert read.request_body == LATIN1_BODY and read.request_body_inexact is None
        assert outcomes(judge(AuthChecks(profile), read), "AUTH-005") == [Outcome.PASSED]


def test_a_jsonl_body_with_replacement_characters_is_not_judged(
    profile: Profile, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    record = json.loads(write_jsonl(path, [request(body=LATIN1_BODY)]).read_text())
    record["request"].update(body=LATIN1_BODY.decode("utf-8", "replace"), body_encoding="utf-8")
    path.write_text(json.dumps(record) + "\n", "utf-8")
    [read] = iter_exchanges(path)
    assert outcomes(judge(AuthChecks(profile), read), "AUTH-013") == [Outcome.NOT_EXERCISED]


# -- what the other checks leave to these ----------------------------------------------------
def requirement_outcomes(profile: Profile, *exchanges: Exchange) -> dict[str, str]:
    from conformance.validator.recording_file import check_exchanges, to_run_result

    result = to_run_result([check_exchanges(exchanges, profile)], profile)
    return {r.requirement.id: r.outcome.value for r in result.requirements}


OTHER_SECRET = "sk_test_beta_0123456789abcdef"


def test_a_forged_request_refused_with_another_status_fails_authentication_not_the_operation(
    profile: Profile,
) -> None:
    # 403 is no status createPayment documents: still, the server refused a bad signature, and
    # only the rule on bad signatures (AUTH-013) says with what (as the suite's auth family).
    found = requirement_outcomes(profile, request(status=403, secret=OTHER_SECRET))
    assert found["AUTH-013"] == "failed"
    assert found["STATUS-001"] != "failed"
    assert found["STATUS-002"] != "failed"


def test_a_forged_request_reusing_an_accepted_nonce_is_judged_for_its_signature_not_the_nonce(
    profile: Profile,
) -> None:
    first = request()
    forged = request(status=403, secret=OTHER_SECRET)  # the same nonce and timestamp
    found = requirement_outcomes(profile, first, forged)
    assert found["AUTH-013"] == "failed"
    assert found["AUTH-016"] != "failed"
    # a forged request takes no nonce, whatever it was answered: the genuine one after it may
    # use the same nonce
    assert requirement_outcomes(profile, forged, first)["AUTH-016"] != "failed"
    # correctly signed, the same reuse answered 403 is the nonce's failure
    again = request(status=403, body=b'{"merchant_order_no":"o-9"}')
    assert requirement_outcomes(profile, first, again)["AUTH-016"] == "failed"


def test_a_test_helper_that_accepts_a_forged_request_fails_help_007(profile: Profile) -> None:
    path = "/v1/test-helpers/payments/pay_1/deposit"
    body = b'{"amount":"1.5","currency_id":"USDC"}'
    headers = Signer("mk_test_alpha", OTHER_SECRET).headers("POST", path, body, timestamp=SENT_AT)
    deposit = exchange(
        "POST",
        path,
        request_headers=list(headers.items()),
        request_body=body,
        status=200,
        response_body={"id": "pay_1", "status": "paid"},
        started_at="2026-01-01T00:00:00.000Z",
    )
    checks = AuthChecks(profile)
    findings = checks.observe(
        deposit, request_headers(deposit), "testDepositPayment", SENT_AT, False
    )
    assert outcomes(findings, "AUTH-013") == [Outcome.FAILED]
    assert outcomes(findings, "HELP-007") == [Outcome.FAILED]
