"""Proof that the checks read the choices the specification leaves open from the profile.

A profile that makes another choice than the default (contract violations answered 422
``invalid_request``, as business rules are; no replay header; every idempotency and error status
moved) gives no failure against the reference server that follows that same profile, and fails
against the one that made the default choice: the expectation came from the profile, not from
a value written into a check.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome, RunResult
from conformance.engine.options import RunOptions
from conformance.engine.runner import run_suite
from conformance.reference.server import ReferenceServer

pytestmark = pytest.mark.slow

# Contract violations share the business rules' status: only the code tells them apart.
VALIDATION_422 = """
[status]
validation = { status = 422, code = "invalid_request" }
"""
NO_REPLAY_HEADER = """
[idempotency]
replay_header = ""
"""
# Every open status and code these families judge, moved off its default value.
MOVED = """
[idempotency]
replay_header = "X-Replayed"
missing = { status = 428, code = "key_required" }
invalid = { status = 422, code = "key_malformed" }
reused = { status = 409, code = "key_conflict" }
in_use = { status = 423, code = "key_locked" }

[status]
validation = { status = 422, code = "invalid_request" }
not_found = { status = 410, code = "no_such_resource" }
invalid_state = { status = 423, code = "wrong_state" }
"""
# The boundaries (STATUS-016 only they check), the idempotency family and the schema phases'
# negative cases (IDEM-005: a missing key; IDEM-010: a reused key).
SELECT = ("STATUS-016", "IDEM-005", "IDEM-010")


def write_profile(directory: Path, name: str, body: str) -> str:
    path = directory / f"{name}.toml"
    path.write_text(f'extends = "default"\n\n[profile]\nname = "{name}"\n{body}', "utf-8")
    return str(path)


def run_against(
    suite_profile: str,
    server_profile: str,
    only: tuple[str, ...],
    report_dir: Path,
    families: tuple[str, ...] = (),
) -> RunResult:
    """The suite under ``suite_profile`` against a reference server under ``server_profile``
    (with ``families``: those check families alone)."""
    with ReferenceServer(profile=load_profile(server_profile)) as server:
        options = RunOptions(
            base_url=server.base_url,
            profile=suite_profile,
            seed=7,
            only=only,
            quick=True,
            report_dir=report_dir,
            families=families,
        )
        return run_suite(options)


def failed(result: RunResult, only: tuple[str, ...] = ("",)) -> dict[str, set[str]]:
    """Requirement id (starting with one of ``only``) -> the families whose checks failed it,
    among every check the run recorded, in the selection or not."""
    found: dict[str, set[str]] = {}
    for check in result.checks:
        if check.outcome is Outcome.FAILED:
            for rid in check.requirement_ids:
                if rid.startswith(only):
                    found.setdefault(rid, set()).add(check.family)
    return found


def test_a_server_that_made_the_profiles_choices_passes(tmp_path: Path) -> None:
    """Every status and code these families judge moved (validation 422 among them, sharing
    the business rules' status): the reference server under that profile passes."""
    profile = write_profile(tmp_path, "moved", MOVED)
    result = run_against(profile, profile, SELECT, tmp_path / "reports")
    assert failed(result) == {}
    passed = {
        rid for c in result.checks if c.outcome is Outcome.PASSED for rid in c.requirement_ids
    }
    assert set(SELECT) <= passed


def test_validation_422_fails_a_server_that_answers_400(tmp_path: Path) -> None:
    """The default server answers contract violations 400 ``validation_error``: a 422 profile
    fails it, in the boundaries and in the schema phases alike."""
    profile = write_profile(tmp_path, "validation_422", VALIDATION_422)
    result = run_against(profile, "default", SELECT, tmp_path / "reports")
    found = failed(result, ("STATUS", "ERR"))
    assert {"boundaries", "schema"} <= {
        family for families in found.values() for family in families
    }


def test_without_a_replay_header_a_replay_is_judged_by_what_remains(tmp_path: Path) -> None:
    """No replay header declared: the reference server sends none, no check fails, and IDEM-008
    is not exercised, with the reason; the default profile fails that server on IDEM-008."""
    profile = write_profile(tmp_path, "no_replay_header", NO_REPLAY_HEADER)
    only = ("IDEM-007", "IDEM-008", "IDEM-009", "IDEM-015")
    result = run_against(profile, profile, only, tmp_path / "own")
    assert failed(result) == {}
    idem_008 = [c for c in result.checks if c.requirement_ids == ("IDEM-008",)]
    assert idem_008
    assert {c.outcome for c in idem_008} == {Outcome.NOT_EXERCISED}
    assert all("replay_header" in c.message for c in idem_008)
    passed = {
        rid for c in result.checks if c.outcome is Outcome.PASSED for rid in c.requirement_ids
    }
    assert {"IDEM-007", "IDEM-009", "IDEM-015"} <= passed

    # the idempotency family's replays are enough to show it (the schema phases judge IDEM-008 too)
    defaults = run_against(
        "default", profile, ("IDEM-008",), tmp_path / "default", families=("idempotency",)
    )
    assert "IDEM-008" in failed(defaults, ("IDEM-008",))
