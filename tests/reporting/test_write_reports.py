"""write_reports: every format into one directory, no secret anywhere, the same bytes each time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.core.redaction import REDACTED
from conformance.core.results import CheckResult, RunResult
from conformance.reporting import (
    ALL_FILES,
    REPORT_FILES,
    ReportError,
    manifest,
    signing,
    write_reports,
)
from tests.reporting.runs import (
    FAILED,
    PASSED,
    PLANTED_SECRETS,
    WEBHOOK_SECRET,
    check,
    evidence,
    large_run,
    make_run,
)


def written_bytes(paths: list[Path]) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in paths}


def test_it_writes_every_report_and_the_manifest(failing_run: RunResult, report_dir: Path) -> None:
    paths = write_reports(failing_run, report_dir)
    assert [p.name for p in paths] == [*REPORT_FILES, manifest.FILENAME]
    assert all(p.parent == report_dir and p.stat().st_size > 0 for p in paths)
    assert sorted(p.name for p in report_dir.iterdir()) == sorted(p.name for p in paths)


def test_no_planted_secret_reaches_any_file(failing_run: RunResult, report_dir: Path) -> None:
    files = written_bytes(write_reports(failing_run, report_dir))
    for name, data in files.items():
        text = data.decode("utf-8")
        for secret in PLANTED_SECRETS:
            # the middle of each secret too, in case a format escaped its edges
            for fragment in (secret, secret[4:20]):
                assert fragment not in text, f"{fragment!r} in {name}"
        assert "whsec_" not in text, name
    # ...while the evidence around them is still there, with the secret values replaced
    results = json.loads(files["results.json"])
    (evidence,) = [
        c["evidence"] for c in results["checks"] if c["check_id"] == "auth/bad-signature"
    ]
    assert evidence["request_headers"]["X-Signature"] == REDACTED
    assert evidence["request_headers"]["X-Api-Key"] == "mk_test_alpha"
    assert json.loads(evidence["response_body"]) == {"id": "we_1", "secret": REDACTED}
    assert results["options"]["api-secret"] == REDACTED


def test_secrets_named_by_the_caller_are_redacted_too(report_dir: Path) -> None:
    credential_secret = "caller-known-secret-7e21"
    run = make_run(
        [check("auth/x", PASSED, "AUTH-001", message=f"signed with {credential_secret}")]
    )
    files = written_bytes(write_reports(run, report_dir, secrets=[credential_secret]))
    assert all(credential_secret.encode() not in data for data in files.values())


def test_the_same_run_gives_the_same_bytes(failing_run: RunResult, report_dir: Path) -> None:
    first = written_bytes(write_reports(failing_run, report_dir))
    second = written_bytes(write_reports(failing_run, report_dir))
    assert first == second


def test_nested_directories_are_created(passing_run: RunResult, tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "reports"
    write_reports(passing_run, target)
    assert (target / "report.html").is_file()


def test_an_unwritable_place_gives_a_clear_error(passing_run: RunResult, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file", encoding="utf-8")
    with pytest.raises(ReportError, match=r"cannot write the reports to .*not-a-directory"):
        write_reports(passing_run, blocker)


def test_a_run_the_size_of_the_real_suite_stays_small(report_dir: Path) -> None:
    files = written_bytes(write_reports(large_run(), report_dir))
    assert manifest.verify(report_dir) == []
    assert len(files["report.html"]) < 5_000_000
    assert WEBHOOK_SECRET.encode() not in b"".join(files.values())


LEAKY = "leaky-value-9c4e2b7f"


@pytest.mark.parametrize(
    "leaky_check",
    [
        pytest.param(
            check("c", FAILED, "OPS-001", message=f"got whsec_ab-{LEAKY}_x"),
            id="base64url webhook secret in a message",
        ),
        pytest.param(
            check(
                "c",
                FAILED,
                "OPS-001",
                evidence_=evidence(response_body=f'{{"secret":"x","note":"whsec_{LEAKY}"}}'),
            ),
            id="base64url webhook secret beside a secret field",
        ),
        pytest.param(
            check(
                "c",
                FAILED,
                "OPS-001",
                evidence_=evidence(response_body=f'{{"id":"we_1","secret":"{LEAKY}","pad":"xx'),
            ),
            id="secret field in a body cut short",
        ),
        pytest.param(
            check(
                "c",
                FAILED,
                "OPS-001",
                message=f"the server echoed it: {LEAKY}",
                evidence_=evidence(url=f"http://127.0.0.1:1/v1/payments?api_secret={LEAKY}"),
            ),
            id="secret in a query string, echoed in the message",
        ),
        pytest.param(
            check(
                "c",
                FAILED,
                "OPS-001",
                evidence_=evidence(request_body=f"merchant=m1&api_secret={LEAKY}&x=1"),
            ),
            id="secret in a form body",
        ),
    ],
)
def test_secrets_in_unusual_places_are_redacted(leaky_check: CheckResult, report_dir: Path) -> None:
    files = written_bytes(write_reports(make_run([leaky_check]), report_dir))
    for name, data in files.items():
        assert LEAKY.encode() not in data, name
        assert b"9c4e2b7f" not in data, name


@pytest.mark.parametrize("name", ALL_FILES)
def test_a_link_planted_where_a_report_goes_is_refused_and_its_target_untouched(
    passing_run: RunResult, tmp_path: Path, name: str
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    directory = tmp_path / "reports"
    directory.mkdir()
    (directory / name).symlink_to("../victim.txt")
    signer = signing.generate(tmp_path / "key.pem", tmp_path / "key.pub.pem")
    with pytest.raises(ReportError, match=f"{directory / name}: a symbolic link where a report"):
        write_reports(passing_run, directory, signer=signer)
    assert victim.read_text(encoding="utf-8") == "precious"
    assert [p.name for p in directory.iterdir()] == [name]  # nothing written beside it
