"""The profile's [auth] choices: what ``profile check`` accepts, refuses, and how they are read."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.core.profile import ErrorSpec, ProfileError, load_profile

PARTIAL = 'extends = "default"\n[profile]\nname = "variant"\n[auth]\n'


def write(tmp_path: Path, auth: str, name: str = "variant.toml") -> Path:
    path = tmp_path / name
    path.write_text(PARTIAL + auth, encoding="utf-8")
    return path


def check(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["profile", "check", str(path)])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "auth",
    [
        'scheme = "hmac-sha512-base64url"',
        'timestamp_format = "rfc3339"',
        'string_to_sign = "{method} {path}?{query}@{host}\\n{timestamp}{nonce}{body_sha256}"',
        'errors = { bad_signature = { status = 403, code = "forbidden" } }',
    ],
)
def test_check_accepts_each_built_in_choice(tmp_path: Path, auth: str) -> None:
    code, output = check(write(tmp_path, auth))
    assert code == 0, output


@pytest.mark.parametrize(
    ("auth", "says"),
    [
        ('string_to_sign = "{timestamp}{body_sha}"', "auth.string_to_sign names unknown"),
        ('string_to_sign = "{method!r}"', "auth.string_to_sign placeholder {method}"),
        ('string_to_sign = "{method"', "auth.string_to_sign is not a valid template"),
        ('scheme = "hmac-md5-hex"', "auth.scheme"),
        ('timestamp_format = "iso"', "auth.timestamp_format"),
        ('errors = { forbidden = { status = 403, code = "f" } }', "auth.errors.forbidden"),
        ('nonce_pattern = "^[0-9]{8}$"', "auth.nonce_pattern does not accept the suite's nonces"),
        ('signer = "not a hook"', "auth.signer"),
        ("clock_window_secs = 99999999999", "auth.clock_window_secs: at most 315360000"),
        ('signer = "no_such_module_29:sign"', "no module named 'no_such_module_29'"),
    ],
)
def test_check_refuses_what_the_suite_cannot_do_naming_the_key(
    tmp_path: Path, auth: str, says: str
) -> None:
    code, output = check(write(tmp_path, auth))
    assert code == 2
    assert says in output
    assert "Traceback" not in output


def test_a_hook_that_fails_to_import_or_is_missing_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "broken_signer_29.py").write_text("raise RuntimeError('no')\n", encoding="utf-8")
    (tmp_path / "empty_signer_29.py").write_text("x = 1\n", encoding="utf-8")
    code, output = check(write(tmp_path, 'signer = "broken_signer_29:sign"'))
    assert code == 2 and "importing 'broken_signer_29' raised RuntimeError" in output
    code, output = check(write(tmp_path, 'signer = "empty_signer_29:sign"'))
    assert code == 2 and "has no function 'sign'" in output
    with pytest.raises(ProfileError, match=r"auth\.signer"):
        load_profile(write(tmp_path, 'signer = "empty_signer_29:sign"'))


def test_each_auth_error_kind_falls_back_to_auth_error(tmp_path: Path) -> None:
    auth = 'errors = { expired = { status = 403, code = "expired" } }'
    section = load_profile(write(tmp_path, auth)).auth
    assert section.error_for("expired") == ErrorSpec(403, "expired")
    assert section.error_for("missing") == ErrorSpec(401, "unauthorized")
    assert section.errors_for("missing", "expired") == (
        ErrorSpec(401, "unauthorized"),
        ErrorSpec(403, "expired"),
    )
    assert section.statuses == {401, 403}
    assert load_profile().auth.statuses == {401}
