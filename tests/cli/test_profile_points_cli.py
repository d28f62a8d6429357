"""``payment-conformance profile points``: the open points with a profile's own values."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.open_points import load_open_points

PARTIAL = """\
extends = "default"

[profile]
name = "acme"

[auth]
clock_window_secs = 60
"""


def _points(*args: str) -> Result:
    return CliRunner().invoke(main, ["profile", "points", *args])


def test_text_lists_every_point_with_the_default_values() -> None:
    result = _points()
    assert result.exit_code == 0, result.output
    for point in load_open_points().points:
        assert f"{point.id}  {point.point}" in result.stdout
    assert "auth.clock_window_secs = 300" in result.stdout
    assert "tested by: AUTH-010, AUTH-011, AUTH-012" in result.stdout


def test_json_gives_each_key_its_value_and_the_requirements() -> None:
    result = _points("--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    rows = {row["id"]: row for row in document["points"]}
    assert document["profile"] == "default"
    assert len(rows) == len(load_open_points().points)
    assert rows["OP-07"]["keys"] == {"auth.clock_window_secs": "300"}
    assert rows["OP-23"]["keys"]["webhooks.emits"].startswith('{"createPayment": "payment.created"')
    assert rows["OP-09"]["keys"] == {} and rows["OP-09"]["untested"]


def test_a_profile_with_a_changed_value_shows_it(tmp_path: Path) -> None:
    profile = tmp_path / "acme.toml"
    profile.write_text(PARTIAL, encoding="utf-8")
    text = _points("--profile", str(profile))
    assert text.exit_code == 0, text.output
    assert "with profile 'acme'" in text.stdout
    assert "auth.clock_window_secs = 60" in text.stdout
    rows = {
        r["id"]: r
        for r in json.loads(_points("--profile", str(profile), "--format", "json").stdout)["points"]
    }
    assert rows["OP-07"]["keys"] == {"auth.clock_window_secs": "60"}


def test_markdown_is_one_table_row_per_point() -> None:
    result = _points("--format", "markdown")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if line.startswith("| OP-")]
    assert len(rows) == len(load_open_points().points)


def test_no_secret_is_printed() -> None:
    for output_format in ("text", "markdown", "json"):
        result = _points("--format", output_format)
        assert "sk_test_" not in result.stdout and "api_secret" not in result.stdout


def test_an_invalid_profile_is_refused_naming_the_problem(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text('extends = "default"\n[auth]\nclock_window_secs = "soon"\n', "utf-8")
    result = _points("--profile", str(broken))
    assert result.exit_code == 2
    assert "auth.clock_window_secs" in result.stderr
    assert "Traceback" not in result.output
