"""``payment-conformance merge DIR...``: one run's reports from its shards' report directories,
signed as ``run`` signs them; anything but every shard of one run is exit 2 with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.reporting import REPORT_FILES
from conformance.reporting.manifest import sha256
from conformance.reporting.signing import SigningKey, load_private_key
from tests.reporting.shard_runs import FAILING_TEST, SELECTED, shard_result, shards, write_shard

MERGED_FILES = {*REPORT_FILES, "manifest.json"}
FAILING_ID = SELECTED[int(FAILING_TEST.rsplit("case", 1)[1].rstrip("]"))].id


def cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def test_merge_writes_every_report_and_exits_as_the_merged_verdict(tmp_path: Path) -> None:
    out = tmp_path / "merged"
    result = cli("merge", *map(str, shards(tmp_path)), "--report-dir", str(out))
    assert result.exit_code == 1, result.output  # one shard's check failed
    assert "merged 3 shards: NOT CONFORMANT" in result.output
    assert {p.name for p in out.iterdir()} == MERGED_FILES
    assert cli("verify", str(out), "--allow-unsigned").exit_code == 0


def test_merge_refuses_a_report_dir_holding_a_planted_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    out = tmp_path / "merged"
    out.mkdir()
    (out / "manifest.json").symlink_to("../victim.txt")
    result = cli("merge", *map(str, shards(tmp_path)), "--report-dir", str(out))
    assert result.exit_code == 2, result.output
    assert f"{out / 'manifest.json'}: a symbolic link where a report file goes" in result.output
    assert victim.read_text(encoding="utf-8") == "precious"


def _keys(tmp_path: Path, name: str = "key") -> tuple[Path, Path, SigningKey]:
    private, public = tmp_path / f"{name}.pem", tmp_path / f"{name}.pub.pem"
    assert cli("keygen", str(private), str(public)).exit_code == 0
    return private, public, load_private_key(private)


def test_merge_signs_the_manifest_with_sign_key(tmp_path: Path) -> None:
    private, public, key = _keys(tmp_path)
    out = tmp_path / "merged"
    given = map(str, shards(tmp_path, signer=key))
    assert cli("merge", *given, "--report-dir", str(out), "--sign-key", str(private)).exit_code == 1
    assert (out / "manifest.sig").is_file()
    verified = cli("verify", str(out), "--public-key", str(public))
    assert verified.exit_code == 0, verified.output


def _forge(directory: Path) -> None:
    """What a forger does to a signed shard: failed checks flipped to passed, the manifest
    re-hashed, the signature removed."""
    results = directory / "results.json"
    document = json.loads(results.read_text("utf-8"))
    for check in document["checks"]:
        check["outcome"] = "passed"
    results.write_text(json.dumps(document), "utf-8")
    manifest_path = directory / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    manifest.pop("signature")
    for name, entry in manifest["files"].items():
        data = (directory / name).read_bytes()
        entry.update(sha256=sha256(data), bytes=len(data))
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    (directory / "manifest.sig").unlink()


@pytest.mark.parametrize("key_option", ["--sign-key", "--public-key"])
def test_a_forged_unsigned_shard_is_refused_and_nothing_is_signed(
    tmp_path: Path, key_option: str
) -> None:
    private, public, key = _keys(tmp_path)
    given = shards(tmp_path, signer=key)
    failing = next(d for d in given if FAILING_TEST in (d / "results.json").read_text("utf-8"))
    _forge(failing)
    out = tmp_path / "merged"
    the_key = private if key_option == "--sign-key" else public
    result = cli("merge", *map(str, given), "--report-dir", str(out), key_option, str(the_key))
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {failing}: the shard is not signed")
    assert "CONFORMANT" not in result.output
    assert not out.exists()


def test_a_shard_signed_with_another_key_is_refused(tmp_path: Path) -> None:
    _, public, key = _keys(tmp_path)
    _, _, other = _keys(tmp_path, "other")
    given = shards(tmp_path, signer=key)
    intruder = write_shard(tmp_path, shard_result(2, 3), "intruder", signer=other)
    result = cli("merge", str(given[0]), str(intruder), str(given[2]), "--public-key", str(public))
    assert result.exit_code == 2, result.output
    assert "does not verify with the given public key" in result.output
    assert result.output.startswith(f"error: {intruder}: ")


def test_a_shard_whose_files_do_not_match_its_manifest_is_refused(tmp_path: Path) -> None:
    _, public, key = _keys(tmp_path)
    given = shards(tmp_path, signer=key)
    (given[1] / "summary.md").write_text("all passed", "utf-8")
    result = cli("merge", *map(str, given), "--public-key", str(public))
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {given[1]}: the reports are not those the shard")


def test_signed_shards_merge_and_the_manifest_names_their_key(tmp_path: Path) -> None:
    _, public, key = _keys(tmp_path)
    out = tmp_path / "merged"
    given = map(str, shards(tmp_path, signer=key))
    result = cli("merge", *given, "--report-dir", str(out), "--public-key", str(public))
    assert result.exit_code == 1, result.output  # one shard's check failed
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert manifest["shards"] == {"count": 3, "unsigned": [], "signed_by": key.fingerprint}
    assert "warnings" not in manifest


def test_unsigned_shards_merge_without_a_key_and_every_report_names_them(
    tmp_path: Path,
) -> None:
    """Without --public-key or --sign-key, merging unsigned shards is allowed, and said."""
    _, _, key = _keys(tmp_path)
    given = shards(tmp_path)
    write_shard(tmp_path, shard_result(2, 3), "shard-2", signer=key)  # only shard 2 signed
    out = tmp_path / "merged"
    assert cli("merge", *map(str, given), "--report-dir", str(out)).exit_code == 1
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert manifest["shards"] == {"count": 3, "unsigned": ["1/3", "3/3"], "signed_by": None}
    [warning] = manifest["warnings"]
    assert "unsigned shards 1/3, 3/3" in warning
    for name in ("summary.md", "report.html", "results.json", "junit.xml", "ctrf.json"):
        assert "unsigned shards 1/3, 3/3" in (out / name).read_text("utf-8"), name


def test_waiver_expiry_is_judged_by_the_merges_clock_not_a_shards(tmp_path: Path) -> None:
    """A shard's started_at is the shard's word: one from 2020 must not revive a waiver that
    expired in 2025."""
    given = [
        write_shard(tmp_path, shard_result(i, 3, started_at=f"2020-01-0{i}T00:00:00Z"))
        for i in (1, 2, 3)
    ]
    waivers = tmp_path / "waivers.toml"
    waivers.write_text(
        f'[[waiver]]\nrequirement = "{FAILING_ID}"\nreason = "known: ticket 42"\n'
        'expires = "2025-01-01"\n',
        encoding="utf-8",
    )
    out = tmp_path / "merged"
    result = cli("merge", *map(str, given), "--report-dir", str(out), "--waivers", str(waivers))
    assert result.exit_code == 1, result.output
    assert "merged 3 shards: NOT CONFORMANT" in result.output


@pytest.mark.parametrize(
    ("pick", "says"),
    [
        (lambda dirs: dirs[:2], "error: shard 3/3 is missing: merge needs all 3"),
        (lambda dirs: [*dirs, dirs[0]], "error: shard 1/3 is given 2 times"),
    ],
)
def test_a_missing_or_repeated_shard_is_exit_2_naming_it(
    tmp_path: Path, pick: object, says: str
) -> None:
    given = pick(shards(tmp_path))  # type: ignore[operator]
    result = cli("merge", *map(str, given), "--report-dir", str(tmp_path / "merged"))
    assert result.exit_code == 2
    assert result.output.startswith(says)
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "merged").exists()


def test_a_bad_sign_key_is_exit_2_before_anything_is_read(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_text("not a key", encoding="utf-8")
    result = cli("merge", str(tmp_path), "--sign-key", str(key))
    assert result.exit_code == 2
    assert result.output.startswith("error: ")
    assert "Traceback" not in result.output


def test_merge_needs_at_least_one_directory() -> None:
    result = cli("merge")
    assert result.exit_code == 2


def _waivers(tmp_path: Path, requirement: str) -> Path:
    path = tmp_path / "waivers.toml"
    path.write_text(
        f'[[waiver]]\nrequirement = "{requirement}"\nreason = "known: ticket 42"\n'
        'expires = "2099-12-31"\n',
        encoding="utf-8",
    )
    return path


def test_merge_applies_waivers_to_the_whole_run(tmp_path: Path) -> None:
    out = tmp_path / "merged"
    given = [*map(str, shards(tmp_path)), "--report-dir", str(out)]
    waived = cli("merge", *given, "--waivers", str(_waivers(tmp_path, FAILING_ID)))
    assert waived.exit_code == 0, waived.output
    assert "CONFORMANT WITH 1 WAIVER" in waived.output
    assert cli("verify", str(out), "--allow-unsigned").exit_code == 0


def test_merge_strict_waivers_fails_on_a_waiver_that_covered_nothing(tmp_path: Path) -> None:
    stale = next(r.id for r in SELECTED if r.id != FAILING_ID)
    given = [*map(str, shards(tmp_path)), "--report-dir", str(tmp_path / "merged")]
    result = cli("merge", *given, "--waivers", str(_waivers(tmp_path, stale)), "--strict-waivers")
    assert result.exit_code == 1
    assert "stale" in result.output


def test_merge_gates_on_a_baseline_of_the_same_failures(tmp_path: Path) -> None:
    first = tmp_path / "first"
    assert cli("merge", *map(str, shards(tmp_path)), "--report-dir", str(first)).exit_code == 1
    again = cli(
        "merge",
        *map(str, shards(tmp_path)),
        "--report-dir",
        str(tmp_path / "again"),
        "--baseline",
        str(first),
    )
    assert again.exit_code == 0, again.output
    assert "no new failures against the baseline" in again.output


def test_a_shard_run_refuses_waivers_and_baselines(tmp_path: Path) -> None:
    waivers = _waivers(tmp_path, FAILING_ID)
    for extra in (["--waivers", str(waivers)], ["--baseline", str(tmp_path)]):
        result = cli("run", "--shard", "1/2", *extra, "--report-dir", str(tmp_path / "r"))
        assert result.exit_code == 2
        assert "give them to 'payment-conformance merge' instead" in result.output


def test_merge_appends_its_summary_to_the_github_step_summary(tmp_path: Path) -> None:
    step = tmp_path / "step-summary.md"
    out = tmp_path / "merged"
    given = map(str, shards(tmp_path))
    result = cli("merge", *given, "--report-dir", str(out), env={"GITHUB_STEP_SUMMARY": str(step)})
    assert result.exit_code == 1, result.output
    assert step.read_text("utf-8") == (out / "summary.md").read_text("utf-8")
    assert step.read_text("utf-8").startswith("## payment-conformance: ❌ NOT CONFORMANT")


def test_a_shards_summary_says_it_is_one_shard_of_n(tmp_path: Path) -> None:
    summary = (shards(tmp_path)[1] / "summary.md").read_text("utf-8")
    assert summary.startswith("## payment-conformance shard 2 of 3: ")
    assert "This is shard 2 of 3 of one run: its verdict covers only its part" in summary
