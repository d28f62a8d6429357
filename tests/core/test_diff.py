"""Comparing a run with a baseline: which list each requirement lands in, what warns, and how a
baseline changes a run's verdict and exit code (only a new failure fails it)."""

from __future__ import annotations

from dataclasses import replace

from conformance.core.diff import (
    Change,
    Diff,
    RunOutcomes,
    compare,
    describe,
    outcomes_of,
    scrubbed,
    target_name,
    verdict_note,
)
from conformance.core.results import Outcome
from tests.reporting.runs import FAILED, PASSED, SKIPPED, check, make_run

P, F, N = Outcome.PASSED, Outcome.FAILED, Outcome.NOT_EXERCISED


def outcomes(source: str = "old", **by_id: Outcome) -> RunOutcomes:
    return RunOutcomes(
        source=source,
        suite_version="0.1.0",
        contract_sha256="3f2a" + "0" * 60,
        profile_name="default",
        profile_sha256="a1b2" + "f" * 60,
        started_at="2026-11-22T10:04:11Z",
        verdict="NOT CONFORMANT",
        outcomes={rid.replace("_", "-"): outcome for rid, outcome in by_id.items()},
    )


def ids(changes: tuple[Change, ...]) -> list[str]:
    return [c.id for c in changes]


def test_each_requirement_lands_in_the_list_its_two_outcomes_say() -> None:
    old = outcomes(A_1=P, A_2=F, A_3=N, A_4=F, A_5=P, A_6=F, A_7=N, A_8=P)
    new = outcomes(A_1=F, A_2=F, A_3=F, A_4=P, A_5=N, A_6=N, A_7=P, A_8=P, A_9=F, A_10=P)
    diff = compare(old, new)
    assert ids(diff.newly_failed) == ["A-1", "A-3", "A-9"]  # passed, not exercised, absent
    assert ids(diff.unchanged_failures) == ["A-2"]
    assert ids(diff.newly_passed) == ["A-4", "A-7", "A-10"]
    assert ids(diff.newly_not_exercised) == ["A-5", "A-6"]
    assert [c.was for c in diff.newly_failed] == [P, N, None]
    assert diff.warnings == ()


def test_only_a_new_failure_fails_the_gate() -> None:
    known = compare(outcomes(A_1=F, A_2=P), outcomes(A_1=F, A_2=N))
    assert (known.exit_code, known.gate) == (0, "no new failures against the baseline")
    one = compare(outcomes(A_1=F, A_2=P), outcomes(A_1=P, A_2=F))
    assert (one.exit_code, one.gate) == (1, "1 new failure against the baseline")
    two = compare(outcomes(), outcomes(A_1=F, A_2=F))
    assert two.gate == "2 new failures against the baseline"


def test_other_contracts_profiles_versions_and_selections_warn_but_compare() -> None:
    old = outcomes(A_1=P, A_2=P)
    new = replace(
        outcomes(A_1=F),
        contract_sha256="9b1c" + "0" * 60,
        profile_name="strict",
        suite_version="0.2.0",
    )
    diff = compare(old, new)
    assert diff.warnings == (
        "the runs checked different contracts (sha256 3f2a00000000 in the baseline, "
        "9b1c00000000 now)",
        "the runs used different profiles (default sha256 a1b2ffffffff in the baseline, "
        "strict sha256 a1b2ffffffff now)",
        "the runs used different suite versions (0.1.0 in the baseline, 0.2.0 now)",
        "1 requirement of the baseline is not in this run (another selection or catalogue): A-2",
    )
    assert ids(diff.newly_failed) == ["A-1"]


def test_another_target_or_seed_warns_but_compares() -> None:
    old = replace(outcomes(A_1=P), seed=3, target="https://sandbox.example")
    new = replace(outcomes(A_1=F), seed=4, target="the embedded reference server")
    diff = compare(old, new)
    assert diff.warnings == (
        "the runs tested different servers (https://sandbox.example in the baseline, "
        "the embedded reference server now)",
        "the runs used different seeds (3 in the baseline, 4 now): their generated cases differ",
    )
    assert ids(diff.newly_failed) == ["A-1"]
    # a validation has no seed and no server: nothing to compare
    assert compare(old, replace(new, seed=None, target=None)).warnings == ()


def test_the_embedded_server_on_another_port_is_the_same_target() -> None:
    assert target_name("http://127.0.0.1:9001", True, None) == target_name(
        "http://127.0.0.1:9002", True, None
    )
    assert target_name("http://127.0.0.1:9001", True, "a,b").endswith("with fault a,b")


def test_the_console_lines_list_every_requirement_and_end_with_the_gate() -> None:
    diff = compare(outcomes(A_1=P, A_2=F), outcomes("new", A_1=F, A_2=F, A_3=P))
    assert describe(diff, subject="new (NOT CONFORMANT, started x)") == [
        "new (NOT CONFORMANT, started x) against the baseline old (NOT CONFORMANT, "
        "started 2026-11-22T10:04:11Z):",
        "newly failed: 1",
        "  A-1 (was passed)",
        "newly passed: 1",
        "  A-3 (not in the baseline)",
        "newly not exercised: 0",
        "unchanged failures: 1",
        "  A-2",
        "gate: 1 new failure against the baseline",
    ]


def test_a_baseline_qualifies_only_a_not_conformant_verdict() -> None:
    clean = Diff("old", "t", "NOT CONFORMANT")
    assert verdict_note("NOT CONFORMANT", clean) == " (no new failures against the baseline)"
    assert verdict_note("NOT CONFORMANT", None) == ""
    assert verdict_note("CONFORMANT", clean) == ""
    assert verdict_note("INCOMPLETE", clean) == ""


def test_a_run_whose_failures_are_all_in_its_baseline_exits_0_and_says_so() -> None:
    run = make_run([check("a", FAILED, "OPS-001"), check("b", PASSED, "OPS-002")])
    assert run.exit_code == 1
    baseline = replace(outcomes_of(run, "old/results.json"), outcomes={"OPS-001": F})
    gated = replace(run, baseline=compare(baseline, outcomes_of(run)))
    assert gated.exit_code == 0
    assert gated.verdict_summary.startswith(
        "NOT CONFORMANT (no new failures against the baseline), "
    )


def test_a_run_with_a_failure_new_since_its_baseline_exits_1() -> None:
    run = make_run([check("a", FAILED, "OPS-001"), check("b", FAILED, "OPS-002")])
    baseline = replace(outcomes_of(run, "old"), outcomes={"OPS-001": F, "OPS-002": P})
    gated = replace(run, baseline=compare(baseline, outcomes_of(run)))
    assert gated.exit_code == 1
    assert "(1 new failure against the baseline)" in gated.verdict_summary


def test_a_baseline_changes_no_other_exit_code() -> None:
    clean = make_run([check("a", PASSED, "OPS-001")])
    untested = make_run([check("a", SKIPPED, "OPS-001", reason="off")])
    unfinished = replace(make_run([check("a", FAILED, "OPS-001")]), incomplete_reason="budget")
    for run in (clean, untested, unfinished):
        old = replace(outcomes_of(run), outcomes={"OPS-001": F})
        assert replace(run, baseline=compare(old, outcomes_of(run))).exit_code == run.exit_code


def test_scrubbing_passes_every_text_through() -> None:
    diff = compare(outcomes(A_1=P), replace(outcomes(A_1=F), profile_name="other"))
    loud = scrubbed(diff, str.upper)
    assert loud.baseline == "OLD"
    assert ids(loud.newly_failed) == ["A-1"]
    assert loud.warnings[0].startswith("THE RUNS USED DIFFERENT PROFILES")
