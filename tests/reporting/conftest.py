"""Fixtures: the hand-built runs of ``runs`` and their report views."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core.results import RunResult, Target
from conformance.reporting.view import RunView, build_view
from tests.reporting.runs import (
    API_SECRET,
    FAILED,
    HELPERS_OFF,
    HOSTILE_BODY,
    HUGE_BODY_CHARS,
    PASSED,
    REQUIREMENTS,
    SKIPPED,
    WEBHOOK_SECRET,
    check,
    evidence,
    make_run,
    secret_laden_evidence,
)


@pytest.fixture
def passing_run() -> RunResult:
    return make_run(
        [
            check("schema/createPayment", PASSED, "OPS-001", "OPS-002"),
            check("auth/missing-key", PASSED, "AUTH-001", family="auth"),
            check("auth/bad-signature", PASSED, "AUTH-002", family="auth"),
            check("schema/errors", PASSED, "ERR-001"),
            check("idem/replay", PASSED, "IDEM-004", family="idempotency"),
            check("helpers/deposit", SKIPPED, "HELP-001", family="state", reason=HELPERS_OFF),
        ]
    )


@pytest.fixture
def failing_run() -> RunResult:
    hostile = evidence(
        status=400,
        response_headers={"content-type": "text/html"},
        response_body=HOSTILE_BODY,
    )
    huge = evidence(
        status=201,
        response_body='{"pad":"' + "x" * HUGE_BODY_CHARS + '"}',
    )
    binary = evidence(
        status=500,
        response_headers={"content-type": "application/octet-stream"},
        response_body=b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe".decode("utf-8", "surrogateescape"),
    )
    return make_run(
        [
            check("schema/createPayment", PASSED, "OPS-001"),
            check(
                "schema/createPayment/content-type",
                FAILED,
                "OPS-002",
                message="response is text/html, not JSON: <b>oops</b>",
                evidence_=hostile,
            ),
            check(
                "schema/createPayment/server-error",
                FAILED,
                "OPS-002",
                message="status 500 for a valid request",
                evidence_=binary,
            ),
            check("auth/missing-key", PASSED, "AUTH-001", family="auth"),
            check(
                "auth/bad-signature",
                FAILED,
                "AUTH-002",
                family="auth",
                message=f"server accepted a bad signature; secret used was {API_SECRET}, "
                f"webhook secret {WEBHOOK_SECRET}",
                evidence_=secret_laden_evidence(),
            ),
            check("schema/errors", PASSED, "ERR-001"),
            check(
                "idem/replay",
                FAILED,
                "IDEM-004",
                family="idempotency",
                message="replay created a second payment",
                evidence_=huge,
            ),
            check("helpers/deposit", SKIPPED, "HELP-001", family="state", reason=HELPERS_OFF),
        ],
        options={"quick": "true", "api-secret": API_SECRET},
    )


@pytest.fixture
def untested_run() -> RunResult:
    reason = "preflight failed: the server did not answer"
    return make_run(
        [check(f"c{i}", SKIPPED, r.id, reason=reason) for i, r in enumerate(REQUIREMENTS)],
        target=Target("https://sandbox.example.test", embedded=False),
    )


@pytest.fixture
def failing_view(failing_run: RunResult) -> RunView:
    return build_view(failing_run, reports_dir="out")


@pytest.fixture
def passing_view(passing_run: RunResult) -> RunView:
    return build_view(passing_run, reports_dir="out")


@pytest.fixture
def untested_view(untested_run: RunResult) -> RunView:
    return build_view(untested_run, reports_dir="out")


@pytest.fixture
def report_dir(tmp_path: Path) -> Path:
    return tmp_path / "reports"
