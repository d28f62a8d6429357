"""``payment-conformance profile init|check``: start an own profile, and validate one."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.profile import SHIPPED_PROFILES_DIR, load_profile

DEFAULT_TEXT = (SHIPPED_PROFILES_DIR / "default.toml").read_text(encoding="utf-8")


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["profile", *args])


def test_init_writes_a_copy_that_check_accepts(tmp_path: Path) -> None:
    target = tmp_path / "acme.toml"
    result = _run("init", str(target))
    assert result.exit_code == 0, result.output
    assert f"wrote {target}" in result.stdout
    checked = _run("check", str(target))
    assert checked.exit_code == 0, checked.output
    assert "profile 'acme' is valid" in checked.stdout


def test_init_names_the_copy_after_its_file_and_keeps_every_choice(tmp_path: Path) -> None:
    target = tmp_path / "acme.toml"
    assert _run("init", str(target)).exit_code == 0
    copy = tomllib.loads(target.read_text(encoding="utf-8"))
    default = tomllib.loads(DEFAULT_TEXT)
    assert copy["profile"]["name"] == "acme"
    copy["profile"]["name"] = "default"
    assert copy == default
    assert load_profile(target).name == "acme"


def test_init_writes_my_profile_toml_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = _run("init")
    assert result.exit_code == 0, result.output
    assert load_profile(tmp_path / "my-profile.toml").name == "my-profile"


def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    target = tmp_path / "mine.toml"
    target.write_text("keep me", encoding="utf-8")
    result = _run("init", str(target))
    assert result.exit_code == 2
    assert "exists; pass --force to overwrite it" in result.stderr
    assert target.read_text(encoding="utf-8") == "keep me"
    assert _run("init", "--force", str(target)).exit_code == 0
    assert load_profile(target).name == "mine"


def test_init_into_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    result = _run("init", str(tmp_path / "no" / "such" / "dir.toml"))
    assert result.exit_code == 2
    assert "error: cannot write" in result.stderr
    assert "Traceback" not in result.output


def test_check_accepts_the_shipped_default_by_name() -> None:
    result = _run("check", "default")
    assert result.exit_code == 0, result.output
    assert "profile 'default' is valid" in result.stdout


def test_check_of_a_bad_file_exits_2_with_the_message_and_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(DEFAULT_TEXT.replace('to = "canceled"', 'to = "cancelled"', 1), "utf-8")
    result = _run("check", str(bad))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "payments.transitions[0].to names unknown state 'cancelled'" in result.stderr
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_check_of_invalid_toml_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "broken.toml"
    bad.write_text("[auth\n", encoding="utf-8")
    result = _run("check", str(bad))
    assert result.exit_code == 2
    assert "is not valid TOML" in result.stderr


def test_check_of_a_missing_file_or_unknown_name_exits_2(tmp_path: Path) -> None:
    missing = _run("check", str(tmp_path / "absent.toml"))
    assert missing.exit_code == 2
    assert "does not exist" in missing.stderr
    unknown = _run("check", "strict")
    assert unknown.exit_code == 2
    assert "no profile named 'strict'" in unknown.stderr


def test_check_accepts_a_partial_profile_that_extends_the_default(tmp_path: Path) -> None:
    partial = tmp_path / "acme.toml"
    partial.write_text('extends = "default"\n[auth]\nclock_window_secs = 600\n', "utf-8")
    result = _run("check", str(partial))
    assert result.exit_code == 0, result.output
    assert "profile 'acme' is valid (extends 'default'; sha256 " in result.stdout


def test_check_lists_every_problem_once_on_a_line_of_its_own(tmp_path: Path) -> None:
    partial = tmp_path / "partial.toml"
    partial.write_text(
        '[profile]\nname = "acme"\ntest_helpers = true\n[auth]\nclock_window_secs = "600"\n'
        "[status]\nsuccess = 200\n",
        "utf-8",
    )
    result = _run("check", str(partial))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == f"error: profile file '{partial}' is not a valid profile (4 problems):"
    assert "  auth.clock_window_secs: '600' is not of type 'integer'" in lines
    assert len([line for line in lines if "missing key status.created" in line]) == 1
    assert len(lines) == len(set(lines))
    assert "Traceback" not in result.output


def test_check_of_a_bad_extends_exits_2_with_one_line(tmp_path: Path) -> None:
    partial = tmp_path / "partial.toml"
    partial.write_text('extends = "strict"\n', "utf-8")
    result = _run("check", str(partial))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "extends: no shipped profile named 'strict'" in result.stderr


def test_init_extends_writes_a_partial_profile_to_fill_in(tmp_path: Path) -> None:
    target = tmp_path / "acme.toml"
    result = _run("init", "--extends", "default", str(target))
    assert result.exit_code == 0, result.output
    written = tomllib.loads(target.read_text(encoding="utf-8"))
    assert written == {"extends": "default", "profile": {"name": "acme"}}
    loaded = load_profile(target)
    assert (loaded.name, loaded.extends) == ("acme", "default")
    assert loaded.data["auth"] == load_profile().data["auth"]


def test_init_extends_only_a_shipped_profile(tmp_path: Path) -> None:
    result = _run("init", "--extends", "strict", str(tmp_path / "acme.toml"))
    assert result.exit_code == 2
    assert "Invalid value for '--extends'" in result.stderr
    assert not (tmp_path / "acme.toml").exists()
