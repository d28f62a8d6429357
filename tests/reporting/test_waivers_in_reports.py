"""Waivers in the reports: every format lists each waiver with its reason, its expiry, its state
and what it covered; results.json stays valid and ``report`` re-renders it with the waivers;
the manifest records the waivers file's SHA-256 and ``verify`` holds results.json to it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import date
from pathlib import Path

import jsonschema
import pytest

from conformance.core.results import Outcome, RunResult, fold
from conformance.core.waivers import Waiver, WaiverFile, apply_waivers
from conformance.reporting import ctrf, html, json_report, junit, summary, write_reports
from conformance.reporting.load import LoadError, load_view, view_of
from conformance.reporting.verification import verify_directory
from conformance.reporting.view import build_view
from tests.reporting.runs import API_SECRET, FAILED, PASSED, REQUIREMENTS, check, make_run

WAIVERS = WaiverFile(
    "ci/waivers.toml",
    "ab" * 32,
    (
        Waiver("AUTH-002", "signature check ships in 2.4 (TICKET-7)", date(2026, 12, 31)),
        Waiver("ERR-001", "old error shape until 2.3", date(2026, 1, 31)),
        Waiver("IDEM-004", "replays fixed in 2.2", date(2027, 6, 30)),
    ),
)


def waived_run(*, strict: bool = False) -> RunResult:
    """AUTH-002 fails and is waived, ERR-001 fails and its waiver expired, IDEM-004 passed (its
    waiver is stale)."""
    run = make_run(
        [
            check("auth/missing-key", PASSED, "AUTH-001", family="auth"),
            check("auth/bad-signature", FAILED, "AUTH-002", message="accepted a bad signature"),
            check("schema/errors", FAILED, "ERR-001", message="no code field"),
            check("idem/replay", PASSED, "IDEM-004", family="idempotency"),
        ]
    )
    folded, report = apply_waivers(
        fold(REQUIREMENTS, list(run.checks)), WAIVERS, date(2026, 11, 25), strict=strict
    )
    return RunResult(**{**run.__dict__, "requirements": folded, "waivers": report})


def all_waived_run() -> RunResult:
    run = make_run([check("auth/bad-signature", FAILED, "AUTH-002", message="accepted")])
    folded, report = apply_waivers(fold(REQUIREMENTS, list(run.checks)), WAIVERS, date(2026, 11, 1))
    return RunResult(**{**run.__dict__, "requirements": folded, "waivers": report})


def test_results_json_lists_each_waiver_and_stays_valid() -> None:
    document = json_report.document(build_view(waived_run()))
    jsonschema.Draft202012Validator(json_report.schema()).validate(document)
    outcomes = {r["id"]: r["outcome"] for r in document["requirements"]}
    assert outcomes["AUTH-002"] == "waived" and outcomes["ERR-001"] == "failed"
    auth = next(r for r in document["requirements"] if r["id"] == "AUTH-002")
    assert auth["waived_by"] == [0]
    waivers = document["waivers"]
    assert (waivers["file"], waivers["sha256"], waivers["used"]) == (
        "ci/waivers.toml",
        "ab" * 32,
        1,
    )
    assert [(e["requirement"], e["state"], e["expires"]) for e in waivers["entries"]] == [
        ("AUTH-002", "applied", "2026-12-31"),
        ("ERR-001", "expired", "2026-01-31"),
        ("IDEM-004", "stale", "2027-06-30"),
    ]
    assert waivers["entries"][0]["reason"] == "signature check ships in 2.4 (TICKET-7)"
    assert waivers["entries"][0]["covered"] == [
        {"requirement": "AUTH-002", "check": "auth/bad-signature", "operation": "createPayment"}
    ]
    assert document["counts"]["requirements"]["waived"] == 1
    assert document["verdict"] == "NOT CONFORMANT"  # ERR-001's waiver had expired


def test_the_verdict_of_an_all_waived_run_is_valid_in_results_json() -> None:
    document = json_report.document(build_view(all_waived_run()))
    jsonschema.Draft202012Validator(json_report.schema()).validate(document)
    assert document["verdict"] == "CONFORMANT WITH 1 WAIVER"
    assert document["verdict_summary"].startswith("CONFORMANT WITH 1 WAIVER, 1 of 7 ")
    assert document["exit_code"] == 0


def test_a_run_without_waivers_has_no_waivers_in_results_json() -> None:
    document = json_report.document(build_view(make_run([check("a", PASSED, "AUTH-001")])))
    assert "waivers" not in document
    assert "waived" not in document["counts"]["requirements"]


def test_the_schema_refuses_a_verdict_that_is_almost_one_with_waivers() -> None:
    document = json_report.document(build_view(all_waived_run()))
    document["verdict"] = "CONFORMANT WITH 0 WAIVERS"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(json_report.schema()).validate(document)


def test_junit_skips_a_waived_requirement_with_its_waiver_and_keeps_its_failures() -> None:
    root = ET.fromstring(junit.render(build_view(waived_run())))
    cases = {c.get("name", "").split(":")[0]: c for c in root.iter("testcase")}
    auth = cases["AUTH-002"]
    assert auth.find("failure") is None
    skipped = auth.find("skipped")
    assert skipped is not None
    assert skipped.get("message") == (
        "waived by AUTH-002 (expires 2026-12-31): signature check ships in 2.4 (TICKET-7)"
    )
    assert "accepted a bad signature" in (skipped.text or "")
    assert cases["ERR-001"].find("failure") is not None  # expired: the failure counts
    properties = [p.get("value", "") for p in root.iter("property") if p.get("name") == "waiver"]
    assert len(properties) == 3 * len(list(root.iter("testsuite")))
    assert any("ERR-001 (expires 2026-01-31): expired" in p for p in properties)
    assert any("IDEM-004 (expires 2027-06-30): stale" in p for p in properties)
    assert root.get("failures") == "1"


def test_summary_md_lists_each_waiver_with_reason_expiry_and_what_it_covered() -> None:
    text = summary.render(build_view(all_waived_run()))
    assert text.startswith("## payment-conformance: ✅ CONFORMANT WITH 1 WAIVER, 1 of 7 ")
    assert "0 failed, 1 waived, 6 not exercised" in text
    assert "### Waivers (3: 1 used, 1 expired, 1 stale)" in text
    assert (
        "- **AUTH-002** applied, expires 2026-12-31: signature check ships in 2.4 (TICKET-7)"
        "  \n  covered: AUTH-002: auth/bad-signature on createPayment"
    ) in text
    assert "- **ERR-001** expired, expires 2026-01-31" in text
    assert "covered nothing: its requirement was not exercised" in text


def test_summary_md_says_when_strict_waivers_fails_the_run() -> None:
    text = summary.render(build_view(waived_run(strict=True)))
    assert "**The run fails**: --strict-waivers: 1 stale waiver (IDEM-004: covered nothing" in text


def test_report_html_has_a_waivers_section_and_marks_waived_requirements() -> None:
    page = html.render(build_view(all_waived_run()))
    assert '<div class="verdict pass">CONFORMANT WITH 1 WAIVER<' in page
    assert '<section id="waivers">' in page and '<a href="#waivers">Waivers (3)</a>' in page
    assert "signature check ships in 2.4 (TICKET-7)" in page
    assert 'covered: <span class="mono">AUTH-002: auth/bad-signature on createPayment' in page
    assert 'waived by <a href="#waivers">AUTH-002</a>' in page
    assert '<span class="outcome o-waived">waived</span>' in page
    assert "— 0 passed, 0 failed, 1 waived, 1 not exercised</span>" in page  # spec 5's heading


def test_a_reason_holding_a_secret_is_redacted_in_every_report(tmp_path: Path) -> None:
    run = make_run([check("auth/bad-signature", FAILED, "AUTH-002")])
    secret_waiver = WaiverFile(
        "w.toml", "cd" * 32, (Waiver("AUTH-002", f"key {API_SECRET} leaked", date(2030, 1, 1)),)
    )
    folded, report = apply_waivers(run.requirements, secret_waiver, date(2026, 1, 1))
    run = RunResult(**{**run.__dict__, "requirements": folded, "waivers": report})
    for path in write_reports(run, tmp_path, secrets=[API_SECRET]):
        assert API_SECRET not in path.read_text(encoding="utf-8"), path.name


def test_the_manifest_records_the_waivers_and_verify_holds_results_json_to_it(
    tmp_path: Path,
) -> None:
    write_reports(waived_run(), tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["waivers"]["sha256"] == "ab" * 32
    assert [e["state"] for e in manifest["waivers"]["entries"]] == ["applied", "expired", "stale"]
    assert verify_directory(tmp_path, allow_unsigned=True).problems == []
    # a results.json rewritten to drop a waiver, and its hash updated to match, still disagrees
    results = json.loads((tmp_path / "results.json").read_text())
    del results["waivers"]["entries"][1]
    data = (json.dumps(results, indent=2) + "\n").encode()
    (tmp_path / "results.json").write_bytes(data)
    import hashlib

    manifest["files"]["results.json"]["sha256"] = hashlib.sha256(data).hexdigest()
    manifest["files"]["results.json"]["bytes"] = len(data)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    problems = verify_directory(tmp_path, allow_unsigned=True).problems
    assert any(p.startswith("results.json: waivers ") for p in problems), problems


def test_report_rerenders_results_json_with_its_waivers(tmp_path: Path) -> None:
    paths = write_reports(waived_run(strict=True), tmp_path)
    written = {p.name: p.read_text(encoding="utf-8") for p in paths}
    view = load_view(tmp_path / "results.json")
    assert summary.render(view) == written["summary.md"]
    assert html.render(view) == written["report.html"]
    assert junit.render(view) == written["junit.xml"]


def test_a_results_json_naming_a_waiver_it_does_not_list_is_refused() -> None:
    document = json_report.document(build_view(all_waived_run()))
    next(r for r in document["requirements"] if r["id"] == "AUTH-002")["waived_by"] = [7]
    with pytest.raises(LoadError, match="AUTH-002 names a waiver beyond the 3"):
        view_of(document, reports_dir=".")


def test_a_waived_requirement_counts_as_exercised_not_failed() -> None:
    view = build_view(all_waived_run())
    assert (view.counts.failed, view.counts.waived, view.exercised) == (0, 1, 1)
    assert [r.id for r in view.waived] == ["AUTH-002"]
    assert all(r.outcome is not Outcome.FAILED for r in view.requirements)


def test_ctrf_reports_a_waived_requirement_as_other_with_its_reason() -> None:
    from tests.reporting.test_ctrf import validator

    document = json.loads(ctrf.render(build_view(waived_run())))
    assert [e.message for e in validator().iter_errors(document)] == []
    tests = {t["extra"]["requirement_id"]: t for t in document["results"]["tests"]}
    assert tests["AUTH-002"]["status"] == "other"
    assert tests["AUTH-002"]["message"] == "waived: signature check ships in 2.4 (TICKET-7)"
    assert tests["ERR-001"]["status"] == "failed"  # its waiver expired
    assert document["results"]["summary"]["other"] == 1
