"""Runs built by hand, as the engine would hand them to the reports (fixtures in conftest).

- ``passing_run``: every exercised requirement passed, one not exercised (CONFORMANT);
- ``failing_run``: spec and profile failures with evidence, some of it hostile (HTML, a huge
  body, non-UTF-8 bytes), and secrets planted where a careless engine could leave them;
- ``untested_run``: nothing exercised (NOT TESTED).
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.core.catalogue import Layer, Requirement, Section
from conformance.core.results import (
    CheckResult,
    Evidence,
    Outcome,
    RunResult,
    Target,
    fold,
)

SPEC_4 = Section("spec", "4", "Endpoints")
SPEC_5 = Section("spec", "5", "Authentication")
SPEC_7 = Section("spec", "7", "Errors")
PROFILE_2 = Section("profile", "2", "Idempotency")
PROFILE_6 = Section("profile", "6", "Test helpers")

# Secrets planted in the failing run; none may appear in any written file.
API_SECRET = "sk_test_alpha_0123456789abcdef"
SIGNATURE = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwKQ8Rq1Yx3aE="
WEBHOOK_SIGNATURE = "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="
NESTED_SECRET = "nested-field-secret-4f1c9a"
PLANTED_SECRETS = (API_SECRET, SIGNATURE, WEBHOOK_SECRET, WEBHOOK_SIGNATURE, NESTED_SECRET)

HOSTILE_BODY = '<script>alert("owned")</script><img src=x onerror=alert(1)>'
HUGE_BODY_CHARS = 200_000


def requirement(
    rid: str, section: Section, text: str, layer: Layer = Layer.CONTRACT, level: str = "MUST"
) -> Requirement:
    return Requirement(rid, section, layer, level, text, ("createPayment",))


REQUIREMENTS = [
    requirement("OPS-001", SPEC_4, "The service MUST expose the 20 operations of the spec."),
    requirement("OPS-002", SPEC_4, "A response body MUST be JSON."),
    requirement("AUTH-001", SPEC_5, "A request without X-Api-Key MUST be rejected."),
    requirement("AUTH-002", SPEC_5, "A request with a bad signature MUST be rejected."),
    requirement("ERR-001", SPEC_7, "An error body MUST be {code, message, details?}."),
    requirement(
        "IDEM-004",
        PROFILE_2,
        "A replay with the same key and body MUST return the stored response.",
        Layer.PROFILE,
    ),
    requirement(
        "HELP-001",
        PROFILE_6,
        "The deposit test helper MUST move a payment to settled.",
        Layer.PROFILE,
    ),
]

MakeRun = Callable[..., RunResult]


def evidence(
    *,
    method: str = "POST",
    url: str = "http://127.0.0.1:53117/v1/payments",
    request_headers: dict[str, str] | None = None,
    request_body: str | None = '{"merchant_order_no":"o-1"}',
    status: int | None = 201,
    response_headers: dict[str, str] | None = None,
    response_body: str | None = '{"id":"pay_1"}',
    curl: str = "curl -X POST http://127.0.0.1:53117/v1/payments",
) -> Evidence:
    return Evidence(
        method=method,
        url=url,
        request_headers=request_headers
        if request_headers is not None
        else {"Content-Type": "application/json", "X-Api-Key": "mk_test_alpha"},
        request_body=request_body,
        status=status,
        response_headers=response_headers
        if response_headers is not None
        else {"content-type": "application/json"},
        response_body=response_body,
        curl=curl,
    )


def check(
    check_id: str,
    outcome: Outcome,
    *requirement_ids: str,
    message: str = "",
    family: str = "schema",
    evidence_: Evidence | None = None,
    reason: str | None = None,
) -> CheckResult:
    return CheckResult(
        check_id=check_id,
        family=family,
        requirement_ids=requirement_ids,
        outcome=outcome,
        message=message,
        operation_id="createPayment",
        duration_s=0.25,
        evidence=evidence_,
        reason_not_exercised=reason,
    )


def make_run(
    checks: list[CheckResult],
    *,
    requirements: list[Requirement] | None = None,
    target: Target | None = None,
    options: dict[str, str] | None = None,
    profile_name: str = "default",
) -> RunResult:
    reqs = REQUIREMENTS if requirements is None else requirements
    return RunResult(
        suite_version="0.1.0",
        contract_sha256="3f2a" + "0" * 60,
        profile_name=profile_name,
        profile_sha256="a1b2" + "f" * 60,
        seed=42,
        target=target or Target("http://127.0.0.1:53117", embedded=True),
        started_at="2026-11-22T10:04:11Z",
        duration_s=74.25,
        requests_sent=1912,
        requirements=fold(reqs, checks),
        checks=tuple(checks),
        options=options if options is not None else {"quick": "true", "workers": "1"},
    )


PASSED = Outcome.PASSED
FAILED = Outcome.FAILED
SKIPPED = Outcome.NOT_EXERCISED

HELPERS_OFF = "the profile declares test_helpers = false"


def secret_laden_evidence() -> Evidence:
    """An exchange a careless engine forgot to redact: every kind of secret is in it."""
    return evidence(
        method="POST",
        url="http://127.0.0.1:53117/v1/webhook-endpoints/we_1/rotate-secret",
        request_headers={
            "X-Api-Key": "mk_test_alpha",
            "X-Timestamp": "1763802000",
            "X-Nonce": "0f3c1a9e5b7d4c2a8e6f1b3d5a7c9e0f",
            "X-Signature": SIGNATURE,
            "Idempotency-Key": "k-1",
        },
        request_body=(
            f'{{"api_secret": "{API_SECRET}", "endpoint": {{"secret": "{NESTED_SECRET}"}}}}'
        ),
        status=200,
        response_headers={
            "content-type": "application/json",
            "webhook-signature": WEBHOOK_SIGNATURE,
        },
        response_body=f'{{"id": "we_1", "secret": "{WEBHOOK_SECRET}"}}',
        curl=(
            "curl -X POST http://127.0.0.1:53117/v1/webhook-endpoints/we_1/rotate-secret "
            f"-H 'X-Api-Key: mk_test_alpha' -H 'X-Signature: {SIGNATURE}' "
            f'--data-binary \'{{"api_secret": "{API_SECRET}"}}\''
        ),
    )


def large_run(requirement_count: int = 300, checks_per_requirement: int = 10) -> RunResult:
    """A run the size of the real suite: ~300 requirements, ~3000 checks, some failing."""
    sections = [Section("spec", str(n), f"Section {n}") for n in range(1, 10)]
    sections += [Section("profile", str(n), f"Profile section {n}") for n in range(1, 7)]
    reqs = [
        requirement(
            f"REQ-{i:03d}",
            sections[i % len(sections)],
            f"Requirement number {i} MUST hold.",
            Layer.PROFILE if i % 3 == 0 else Layer.CONTRACT,
        )
        for i in range(requirement_count)
    ]
    checks = []
    for i, req in enumerate(reqs):
        for j in range(checks_per_requirement):
            failed = i % 25 == 0 and j < 3
            checks.append(
                check(
                    f"{req.id}/case-{j}",
                    FAILED if failed else PASSED,
                    req.id,
                    message="expected 400, got 201" if failed else "",
                    evidence_=evidence(status=201) if failed else None,
                )
            )
    return make_run(checks, requirements=reqs)
