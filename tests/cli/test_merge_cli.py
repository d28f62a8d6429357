"""``payment-conformance merge DIR...``: one run's reports from its shards' report directories,
signed as ``run`` signs them; anything but every shard of one run is exit 2 with one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.reporting import REPORT_FILES
from tests.reporting.shard_runs import FAILING_TEST, SELECTED, shards

MERGED_FILES = {*REPORT_FILES, "manifest.json"}
FAILING_ID = SELECTED[int(FAILING_TEST.rsplit("case", 1)[1].rstrip("]"))].id


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


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


def test_merge_signs_the_manifest_with_sign_key(tmp_path: Path) -> None:
    private, public = tmp_path / "key.pem", tmp_path / "key.pub.pem"
    assert cli("keygen", str(private), str(public)).exit_code == 0
    out = tmp_path / "merged"
    given = map(str, shards(tmp_path))
    assert cli("merge", *given, "--report-dir", str(out), "--sign-key", str(private)).exit_code == 1
    assert (out / "manifest.sig").is_file()
    verified = cli("verify", str(out), "--public-key", str(public))
    assert verified.exit_code == 0, verified.output


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
