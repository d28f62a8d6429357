"""scrub: the secrets the reports hide are learnt from what the suite sent, never from the server.

A server controls its response bodies and headers. Were their "secret" or "signature" values
learnt as secrets, a server answering ``{"signature": "Idempotency-Key"}`` would make every
report hide the words "Idempotency-Key", requirement texts included.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.core.catalogue import Section
from conformance.core.redaction import REDACTED
from conformance.core.results import Evidence, RunResult, Target
from conformance.reporting import write_reports
from conformance.reporting.scrub import Scrubber, learn_secrets
from conformance.reporting.view import build_view
from tests.reporting.runs import (
    API_SECRET,
    FAILED,
    PASSED,
    SIGNATURE,
    check,
    evidence,
    make_run,
    requirement,
)

WORDS = "Idempotency-Key"
IDEM = Section("profile", "2", f"{WORDS} handling")
REQUIREMENT = requirement("IDEM-001", IDEM, f"A repeated {WORDS} MUST return the stored response.")
ROTATED = "rotated-secret-without-prefix-51c7"


def hostile_evidence(**changes: object) -> Evidence:
    """An exchange whose response tries to make the reports hide the words ``WORDS``."""
    fields: dict[str, object] = {
        "request_headers": {
            "X-Api-Key": "mk_test_alpha",
            "X-Signature": SIGNATURE,
            WORDS: f"{WORDS} k-1",
        },
        "request_body": '{"merchant_order_no": "o-1"}',
        "status": 201,
        "response_headers": {"content-type": "application/json", "x-signature": WORDS},
        "response_body": json.dumps({"id": "pay_1", "signature": WORDS, "secret": WORDS}),
    }
    fields.update(changes)
    return evidence(**fields)  # type: ignore[arg-type]


def hostile_run(**changes: object) -> RunResult:
    failed = check(
        f"idempotency/{WORDS}",
        FAILED,
        "IDEM-001",
        family=WORDS,
        message=f"the replay with the same {WORDS} created a second payment",
        evidence_=hostile_evidence(**changes),
    )
    return make_run(
        [failed],
        requirements=[REQUIREMENT],
        target=Target("http://127.0.0.1:53117", embedded=False),
        options={"quick": "true", "api-secret": API_SECRET},
    )


def test_values_from_a_response_are_not_learnt_as_secrets() -> None:
    learnt = learn_secrets(hostile_run())
    assert WORDS not in learnt
    assert all(WORDS not in secret for secret in learnt)


def test_what_the_suite_sent_is_learnt() -> None:
    run = hostile_run(
        request_body=json.dumps({"url": "http://127.0.0.1:9/hook", "secret": ROTATED}),
    )
    learnt = learn_secrets(run, [API_SECRET])
    assert SIGNATURE in learnt  # the signature header the suite sent
    assert ROTATED in learnt  # a secret field of a request body
    assert API_SECRET in learnt  # named by the caller and by a secret option


def test_the_secret_rotate_secret_returned_is_learnt() -> None:
    rotate = evidence(
        method="POST",
        url="http://127.0.0.1:53117/v1/webhook-endpoints/we_1/rotate-secret",
        request_body=None,
        status=200,
        response_body=json.dumps({"id": "we_1", "secret": ROTATED}),
    )
    later = check(
        "webhooks/signature",
        FAILED,
        "IDEM-001",
        message=f"the delivery was signed with {ROTATED}",
        evidence_=rotate,
    )
    run = make_run([later], requirements=[REQUIREMENT])
    assert ROTATED in learn_secrets(run)
    view = build_view(run)
    assert ROTATED not in view.checks[0].message


def test_the_same_body_from_another_operation_teaches_nothing() -> None:
    not_rotate = evidence(
        method="GET",
        url="http://127.0.0.1:53117/v1/webhook-endpoints/we_1/rotate-secret",
        response_body=json.dumps({"id": "we_1", "secret": ROTATED}),
    )
    run = make_run([check("c", FAILED, "IDEM-001", evidence_=not_rotate)])
    assert ROTATED not in learn_secrets(run)


def test_a_secret_field_of_a_response_is_still_redacted_in_that_body() -> None:
    view = build_view(hostile_run())
    (shown,) = view.checks
    assert shown.evidence is not None and shown.evidence.response_body is not None
    body = json.loads(shown.evidence.response_body.text)
    assert body == {"id": "pay_1", "signature": REDACTED, "secret": REDACTED}
    assert dict(shown.evidence.response_headers)["x-signature"] == REDACTED


def test_catalogue_text_is_never_scrubbed() -> None:
    # Even a secret the caller names cannot hide words of the catalogue.
    view = build_view(hostile_run(), secrets=[WORDS, "MUST return"])
    (requirement_view,) = view.requirements
    assert requirement_view.text == REQUIREMENT.text
    assert requirement_view.section.title == IDEM.title
    (shown,) = view.checks
    assert shown.check_id == f"idempotency/{WORDS}"
    assert shown.family == WORDS
    assert requirement_view.replay.endswith("--only IDEM-001 --seed 42 --quick")


def test_a_hostile_response_hides_no_word_of_any_report(tmp_path: Path) -> None:
    # the API secret is in what the suite sent, and in a message quoting it
    run = hostile_run(request_body=json.dumps({"api_secret": API_SECRET, "amount": "1"}))
    run = make_run(
        [
            *run.checks,
            check("auth/x", PASSED, "IDEM-001", message=f"signed with {API_SECRET}"),
        ],
        requirements=[REQUIREMENT],
        options=run.options,
    )
    paths = write_reports(run, tmp_path, secrets=[API_SECRET])
    files = {path.name: path.read_text(encoding="utf-8") for path in paths}
    for name in ("report.html", "junit.xml", "results.json", "summary.md"):
        assert REQUIREMENT.text in files[name], name
    for name, text in files.items():
        assert API_SECRET not in text, name
        assert SIGNATURE not in text, name
    for name in ("report.html", "junit.xml", "results.json"):
        assert f"{WORDS}: {WORDS} k-1" in files[name] or f'"{WORDS}": "{WORDS} k-1"' in files[name]
    results = json.loads(files["results.json"])
    headers = results["checks"][0]["evidence"]["request_headers"]
    assert headers == {"X-Api-Key": "mk_test_alpha", "X-Signature": REDACTED, WORDS: f"{WORDS} k-1"}
    assert results["checks"][0]["message"].endswith(f"same {WORDS} created a second payment")


def test_a_scrubber_without_secrets_changes_no_plain_text() -> None:
    assert Scrubber(()).text(f"{WORDS} k-1") == f"{WORDS} k-1"


def test_a_secret_field_of_a_body_no_parser_reads_goes_however_its_name_is_cased() -> None:
    # a body cut short, its field named with letters that fold onto "secret"
    for name in ("secret", "SECRET", "\u017fecret", "api_\u017fecret"):
        text, _ = Scrubber(()).body(f'{{"id": "we_1", "{name}": "whole-value-1234')
        assert "whole-value-1234" not in text and f'"{name}": "{REDACTED}' in text, text


def test_the_password_of_the_base_url_is_hidden_wherever_it_is_echoed(tmp_path: Path) -> None:
    password = "base-url-password-93d1"
    echoed = evidence(response_body=json.dumps({"note": f"hello user {password}"}))
    run = make_run(
        [check("c", FAILED, "IDEM-001", message=f"{password} echoed", evidence_=echoed)],
        requirements=[REQUIREMENT],
        target=Target(f"http://user:{password}@127.0.0.1:53117", embedded=False),
        options={"base_url": f"http://user:{password}@127.0.0.1:53117"},
    )
    for path in write_reports(run, tmp_path):
        assert password not in path.read_text(encoding="utf-8"), path.name
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert results["target"]["base_url"] == "http://user:[redacted]@127.0.0.1:53117"
    assert results["options"]["base_url"] == "http://user:[redacted]@127.0.0.1:53117"


def test_a_gateway_header_of_the_run_is_masked_in_curl_commands_and_headers() -> None:
    from conformance.suite.wire import gateway

    scrubber = Scrubber(())
    curl = "curl -X GET https://api.test/v1/payments -H 'X-Gateway-Key: gwk-123456789' -H 'X-A: 1'"
    with gateway.using([("X-Gateway-Key", "gwk-123456789")]):
        assert scrubber.curl(curl) == (
            "curl -X GET https://api.test/v1/payments -H 'X-Gateway-Key: [redacted]' -H 'X-A: 1'"
        )
        assert scrubber.headers({"x-gateway-key": "gwk-123456789"}) == (
            ("x-gateway-key", REDACTED),
        )
    assert scrubber.curl(curl) == curl  # outside the run that gave it, a header like any other
