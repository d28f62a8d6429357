"""``payment-conformance validate FILE``: recorded traffic judged without calling a server."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from benchmarks.validate import reference_traffic
from conformance.cli import main
from conformance.core.profile import load_profile, with_credential
from conformance.reference.server import ReferenceServer
from tests.validator.samples import write_har, write_jsonl


def validate(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["validate", *args], env=env)


def _record(path: Path, faults: tuple[str, ...] = ()) -> Path:
    profile = load_profile("default")
    with ReferenceServer(profile=profile, faults=faults) as server:
        traffic = reference_traffic(server.base_url, profile)
    return write_har(path, traffic) if path.suffix == ".har" else write_jsonl(path, traffic)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("recordings")
    return {
        "good": _record(where / "good.har"),
        "faulted": _record(where / "faulted.jsonl", ("idem-replay-missing-header",)),
    }


def test_traffic_of_the_reference_server_is_conformant(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    result = validate(str(recordings["good"]), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 0, result.output
    assert "verdict: CONFORMANT, " in result.output
    assert "requirements exercised" in result.output
    written = {p.name for p in (tmp_path / "r").iterdir()}
    assert {"results.json", "report.html", "manifest.json"} <= written
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert "sk_test_alpha" not in json.dumps(results)


def test_validate_appends_its_summary_to_the_github_step_summary(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    step = tmp_path / "step-summary.md"
    step.write_text("earlier step\n", "utf-8")
    out = tmp_path / "r"
    given = (str(recordings["good"]), "--report-dir", str(out), "--no-progress")
    result = validate(*given, env={"GITHUB_STEP_SUMMARY": str(step)})
    assert result.exit_code == 0, result.output
    written = (out / "summary.md").read_text("utf-8")
    assert step.read_text("utf-8") == "earlier step\n" + written


def test_a_validation_report_shows_the_recording_not_a_seed_or_a_server(
    recordings: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A validation has no seed and calls no server: its reports say what it validated, and
    its replay command repeats the path (and --format) the user gave."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "traffic.txt").write_bytes(recordings["good"].read_bytes())
    monkeypatch.chdir(tmp_path)
    result = validate("in/traffic.txt", "--format", "har", "--report-dir", "r", "--no-progress")
    assert result.exit_code == 0, result.output
    summary = (tmp_path / "r" / "summary.md").read_text("utf-8")
    assert "validated: traffic recorded in in/traffic.txt (" in summary
    assert "repeat this validation: `payment-conformance validate in/traffic.txt --format har`" in (
        summary
    )
    html = (tmp_path / "r" / "report.html").read_text("utf-8")
    for text in (summary, html):
        assert "seed" not in text.lower() and "server at" not in text
    assert "<th>Validated</th><td>traffic recorded in in/traffic.txt (" in html


def test_a_faulted_server_is_not_conformant_and_named(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    result = validate(
        str(recordings["faulted"]), "--report-dir", str(tmp_path / "r"), "--profile", "default"
    )
    assert result.exit_code == 1, result.output
    assert "verdict: NOT CONFORMANT, " in result.output
    assert "IDEM-008" in result.output
    assert "faulted.jsonl line " in result.output


def test_an_unreadable_recording_is_an_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"request": \n', encoding="utf-8")
    result = validate(str(broken), "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 2
    assert result.output.startswith("error: ")
    assert "Traceback" not in result.output


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    result = validate(str(tmp_path / "nothing.har"), "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 2 and result.output.startswith("error: ")


def test_the_format_option_overrides_the_suffix(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    copy = tmp_path / "traffic.txt"
    copy.write_bytes(recordings["good"].read_bytes())
    result = validate(str(copy), "--format", "har", "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output


def test_an_unknown_profile_is_an_error(recordings: dict[str, Path], tmp_path: Path) -> None:
    result = validate(
        str(recordings["good"]), "--profile", "nope", "--report-dir", str(tmp_path / "r")
    )
    assert result.exit_code == 2 and result.output.startswith("error: --profile")


def test_an_empty_recording_tests_nothing(tmp_path: Path) -> None:
    result = validate(
        str(write_jsonl(tmp_path / "empty.jsonl", [])), "--report-dir", str(tmp_path / "r")
    )
    assert result.exit_code == 2
    assert "NOT TESTED" in result.output


# -- traffic recorded by `run --record` --------------------------------------------------------
def _run_recorded(
    where: Path,
    only: tuple[str, ...],
    fault: str | None = None,
    profile: str = "default",
    families: tuple[str, ...] = (),
) -> Path:
    from conformance.engine.options import RunOptions
    from conformance.engine.progress import NullDisplay
    from conformance.engine.runner import execute

    har = where / "run.har"
    execute(
        RunOptions(
            quick=True,
            only=only,
            seed=1,
            workers=1,
            embedded_fault=fault,
            profile=profile,
            record=har,
            report_dir=where / "run-reports",
            families=families,
        ),
        NullDisplay(),
    )
    return har


def _outcomes(reports: Path) -> dict[str, str]:
    document = json.loads((reports / "results.json").read_text("utf-8"))
    return {r["id"]: r["outcome"] for r in document["requirements"]}


def failed(outcomes: dict[str, str]) -> set[str]:
    return {rid for rid, outcome in outcomes.items() if outcome == "failed"}


def disagreements(where: Path, validate_reports: Path) -> dict[str, tuple[str, str]]:
    """Requirement id -> (the run's outcome, validate's) where both judged it and differ: the
    two judges read the same exchanges (issue 30's agreement test)."""
    judged = {"passed", "failed"}
    run = _outcomes(where / "run-reports")
    recorded = _outcomes(validate_reports)
    return {
        rid: (run[rid], outcome)
        for rid, outcome in recorded.items()
        if outcome in judged and run.get(rid) in judged and run[rid] != outcome
    }


@pytest.mark.slow
def test_a_run_recorded_from_a_faulted_server_is_not_conformant(tmp_path: Path) -> None:
    # the idempotency family's replays (the schema phases judge IDEM-008 too, at ten times the cost)
    har = _run_recorded(
        tmp_path, ("IDEM-008",), "idem-replay-missing-header", families=("idempotency",)
    )
    result = validate(str(har), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 1, result.output
    assert "✗ IDEM-008 " in result.output
    assert "header Idempotent-Replayed missing" in result.output
    assert disagreements(tmp_path, tmp_path / "r") == {}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fault", "breaks", "family", "also"),
    [
        # a refused 60.0: STATUS-016 and the success status, as the boundary case names it
        ("validation-integer-float-rejected", ("STATUS-016", "STATUS-001"), "boundaries",
         {"STATUS-002"}),
        # a 500 for a bad escape is not the refusal STATUS-011 asks for
        ("robust-query-escape-500", ("STATUS-011",), "robustness", {"ERR-006"}),
        # a replace's first_run_at is the next run
        ("payout-next-run-at-ignores-first-run-at", ("PAYOUT-010",), "schedules",
         {"PAYOUT-004"}),
        # a replace, like a create, refuses interval_secs above 31536000 (spec 8's limits table);
        # before LIMIT-005 named replacePayoutSchedule, validate blamed 17 other ids for it, and
        # OPS-022 (a missing field) until it judged by the boundaries family's ids
        ("validation-interval-max-off-by-one", ("LIMIT-005", "STATUS-008"), "boundaries", set()),
        # "01.5" accepted: the pattern's rules, not every rule naming min_send_amount, and not
        # the answer echoing it
        ("validation-amount-leading-zero", ("SHAPE-040", "STATUS-006"), "boundaries", set()),
        # a bad signature answered 403: the recorder marks the signatures it masks with what
        # they were made over, so validate judges AUTH-013 (and the body and target cases the
        # family sent, AUTH-014 and AUTH-015, as a whole run fails them) and takes no nonce for
        # a forged request
        ("auth-bad-signature-403", ("AUTH-013",), "auth", {"AUTH-014", "AUTH-015"}),
    ],
)  # fmt: skip
def test_the_run_and_validate_fail_a_faulted_server_on_the_same_requirements(
    tmp_path: Path, fault: str, breaks: tuple[str, ...], family: str, also: set[str]
) -> None:
    har = _run_recorded(tmp_path, breaks, fault, families=(family,))
    run = _outcomes(tmp_path / "run-reports")
    assert {run[rid] for rid in breaks} == {"failed"}
    result = validate(str(har), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 1, result.output
    recorded = _outcomes(tmp_path / "r")
    assert {recorded[rid] for rid in breaks} == {"failed"}
    assert disagreements(tmp_path, tmp_path / "r") == {}
    # Outside the run's selection validate blames only what a whole run with this fault fails
    # too (``also``, measured with run --quick --record, then validate, seed 5).
    assert failed(recorded) == failed(run) | also


@pytest.mark.slow
def test_a_run_recorded_from_the_reference_server_is_conformant(tmp_path: Path) -> None:
    har = _run_recorded(tmp_path, ("PAY-STATE-003", "AUTH-016"))
    result = validate(str(har), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 0, result.output
    assert "verdict: CONFORMANT, " in result.output
    assert disagreements(tmp_path, tmp_path / "r") == {}


@pytest.mark.slow
def test_test_helpers_mapped_by_the_profile_are_judged_where_it_maps_them(tmp_path: Path) -> None:
    # The divergent profile's deposit helper is PUT /v1/sandbox/payments/{id}/funds with its own
    # body (units in the smallest unit) answering 202: no unknown path, and HELP-001/002 judged.
    har = _run_recorded(tmp_path, ("HELP",), profile="divergent")
    assert "/v1/sandbox/payments/" in har.read_text()
    reports = tmp_path / "r"
    args = ("--profile", "divergent", "--report-dir", str(reports), "--no-progress")
    result = validate(str(har), *args)
    assert result.exit_code == 0, result.output
    document = json.loads((reports / "results.json").read_text("utf-8"))
    outcomes = {r["id"]: r["outcome"] for r in document["requirements"]}
    judged = {"HELP-001", "HELP-002", "HELP-005", "HELP-006", "HELP-007", "HELP-008"}
    assert {outcomes[i] for i in judged} == {"passed"}
    assert disagreements(tmp_path, reports) == {}


@pytest.mark.slow
def test_the_suites_own_recording_of_malformed_path_ids_is_conformant(tmp_path: Path) -> None:
    # STATUS-011 and STATUS-013 send ids with "%zz" and "%FF%FE", which a conformant server
    # refuses with 400: validate must not take those refusals for a refused valid request.
    har = _run_recorded(tmp_path, ("STATUS-011", "STATUS-013"))
    assert "%zz" in har.read_text() and "%FF%FE" in har.read_text()
    result = validate(str(har), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 0, result.output
    assert " 0 failed" in result.output
    assert "verdict: CONFORMANT, " in result.output
    assert disagreements(tmp_path, tmp_path / "r") == {}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.symlink_to(p), "traffic.har: a symbolic link loop"),
        (lambda p: p.mkdir(), "traffic.har' is a directory"),
        (lambda p: p.symlink_to("/dev/zero"), "traffic.har is a character device, not a file"),
    ],
    ids=["symbolic link loop", "directory", "device"],
)
def test_a_recording_that_is_not_a_file_is_named_for_what_it_is(
    tmp_path: Path, make: Callable[[Path], None], message: str
) -> None:
    path = tmp_path / "traffic.har"
    make(path)
    result = validate(str(path), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and message in result.output
    assert "Traceback" not in result.output


def test_a_har_without_response_bodies_raises_no_false_alarm(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    """Browsers often export responses without content.text (issue 18: OPS-008, ERR-002..005
    and IDEM-007/010/011 failed): the body checks are not exercised, with the reason."""
    document = json.loads(recordings["good"].read_text())
    for entry in document["log"]["entries"]:
        entry["response"]["content"].pop("text", None)
        entry["response"]["content"]["size"] = 1
    bare = tmp_path / "bare.har"
    bare.write_text(json.dumps(document))
    result = validate(str(bare), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert "response.content.text absent" in json.dumps(results)


def test_a_gzip_recording_is_read_and_a_gzip_bomb_refused(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    packed = tmp_path / "good.har.gz"
    packed.write_bytes(gzip.compress(recordings["good"].read_bytes()))
    result = validate(str(packed), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 0, result.output
    bomb = tmp_path / "bomb.jsonl.gz"
    with gzip.open(bomb, "wb") as out:
        for _ in range(1600):  # 100 MiB of lines of blanks: some 200 KiB compressed
            out.write(b" " * 65535 + b"\n")
    result = validate(str(bomb), "--report-dir", str(tmp_path / "b"), "--no-progress")
    assert result.exit_code == 2
    assert "error: " in result.output and "decompresses to more than" in result.output
    assert "Traceback" not in result.output


def test_the_api_secret_option_checks_signatures_and_is_never_shown(tmp_path: Path) -> None:
    secret = "sk_live_validate_option_0123456789"
    profile = with_credential(load_profile("default"), "mk_live_validate", secret)
    with ReferenceServer(profile=profile) as server:
        traffic = reference_traffic(server.base_url, profile)
    recording = write_jsonl(tmp_path / "live.jsonl", traffic)
    without = validate(str(recording), "--report-dir", str(tmp_path / "a"), "--no-progress")
    assert without.exit_code == 0, without.output
    assert "--api-key and --api-secret" in (tmp_path / "a" / "results.json").read_text()
    with_secret = validate(
        str(recording),
        "--api-key",
        "mk_live_validate",
        "--api-secret",
        secret,
        "--report-dir",
        str(tmp_path / "b"),
        "--no-progress",
    )
    assert with_secret.exit_code == 0, with_secret.output
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    auth_005 = next(r for r in results["requirements"] if r["id"] == "AUTH-005")
    assert auth_005["outcome"] == "passed"
    assert secret not in with_secret.output
    for written in (tmp_path / "b").iterdir():
        assert secret not in written.read_text(errors="replace")
