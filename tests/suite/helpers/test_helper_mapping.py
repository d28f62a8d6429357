"""Test helpers mapped to a server's own endpoints, or absent (profile section 6).

A profile that maps the helpers to other endpoints, with another body and status, gets no
failure from a reference server that serves them there; the same profile against a server
with the default helpers finds them missing. With a helper absent the run names every
requirement it could not reach, and why; the statements it can reach through a real flow
(x402 settlements) it still checks, and a server that breaks them fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core.results import Outcome, RunResult
from conformance.engine.options import RunOptions
from conformance.engine.runner import run_suite
from conformance.reference.server import ReferenceServer
from tests.profiles import fragment

pytestmark = pytest.mark.slow

MAPPED = (
    'extends = "default"\n[profile]\nname = "sandbox"\n[test_helpers]\n'
    'expire = { method = "POST", path = "/v1/sandbox/payments/{id}/expiry", status = 202 }\n'
    + fragment("sandbox_deposit")
)
NO_EXPIRE = 'extends = "default"\n[profile]\nname = "no-expire"\n[test_helpers]\nexpire = false\n'
NO_HELPERS = 'extends = "default"\n[profile]\nname = "no-helpers"\ntest_helpers = false\n'
# Payments and statements requirements that need deposits, and the helpers' own.
DEPOSIT_IDS = ("HELP", "STMT-007")
# Statement windows: reached through deposits, or through x402 settlements without them.
WINDOW_IDS = ("STMT-001", "STMT-006", "STMT-007", "STMT-008", "STMT-010", "STMT-011", "STMT-013")


def _profile(tmp_path: Path, text: str) -> str:
    path = tmp_path / "profile.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _run(profile: str, only: tuple[str, ...], **options: object) -> RunResult:
    return run_suite(RunOptions(seed=7, quick=True, only=only, profile=profile, **options))  # type: ignore[arg-type]


def _outcomes(result: RunResult) -> dict[str, tuple[Outcome, str]]:
    return {
        r.requirement.id: (r.outcome, r.reason_not_exercised or "") for r in result.requirements
    }


def test_mapped_helpers_pass_against_a_server_that_serves_them_there(tmp_path: Path) -> None:
    result = _run(_profile(tmp_path, MAPPED), DEPOSIT_IDS)
    outcomes = _outcomes(result)
    assert result.count(Outcome.FAILED) == 0
    assert {rid for rid, (outcome, _) in outcomes.items() if outcome is Outcome.PASSED} >= {
        *(f"HELP-{n:03d}" for n in range(1, 10)),
        "STMT-007",
    }


def test_mapped_helpers_fail_against_a_server_with_the_default_helpers(tmp_path: Path) -> None:
    with ReferenceServer() as server:  # the default profile: helpers at /v1/test-helpers/...
        result = _run(
            _profile(tmp_path, MAPPED), ("HELP-001", "HELP-005"), base_url=server.base_url
        )
    outcomes = _outcomes(result)
    assert outcomes["HELP-001"][0] in (Outcome.FAILED, Outcome.NOT_EXERCISED)
    assert outcomes["HELP-005"][0] is Outcome.FAILED
    assert result.count(Outcome.PASSED) == 0


def test_an_absent_helper_names_what_could_not_be_tested_and_why(tmp_path: Path) -> None:
    result = _run(_profile(tmp_path, NO_EXPIRE), ("HELP-005", "HELP-001", "EVT-004", "EVT-002"))
    outcomes = _outcomes(result)
    assert result.count(Outcome.FAILED) == 0
    for rid in ("HELP-005", "EVT-004"):
        outcome, reason = outcomes[rid]
        assert outcome is Outcome.NOT_EXERCISED, rid
        assert "expire" in reason, (rid, reason)
    # the deposit helper is still there, and what needs only it is tested
    assert outcomes["HELP-001"][0] is Outcome.PASSED
    assert outcomes["EVT-002"][0] is Outcome.PASSED


def test_without_helpers_statement_windows_are_reached_through_settlements(
    tmp_path: Path,
) -> None:
    outcomes = _outcomes(_run(_profile(tmp_path, NO_HELPERS), WINDOW_IDS))
    assert {rid: o for rid, (o, _) in outcomes.items() if rid in WINDOW_IDS} == {
        rid: Outcome.PASSED for rid in WINDOW_IDS
    }


def test_without_helpers_a_server_that_breaks_a_window_rule_fails(tmp_path: Path) -> None:
    result = _run(
        _profile(tmp_path, NO_HELPERS),
        ("STMT-008",),
        embedded_fault="statement-reconciles-page-only",
    )
    assert _outcomes(result)["STMT-008"][0] is Outcome.FAILED
