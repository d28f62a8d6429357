"""Usage errors of every subcommand read like our own errors: ``error: <message>``, exit 2.

Click's own form ("Usage: ...", "Try ...", "Error: ...") is replaced for the whole
``payment-conformance`` group; ``--help`` and a group called without a subcommand still show
the help.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="payment-conformance")


@pytest.mark.parametrize(
    ("args", "message", "command"),
    [
        (("run", "--no-such-option"), "No such option '--no-such-option'", "run"),
        (("run", "--seed", "abc"), "Invalid value for '--seed': 'abc'", "run"),
        (("run", "--workers", "0"), "Invalid value for '--workers'", "run"),
        (("run", "--rate-limit", "fast"), "Invalid value for '--rate-limit': requests", "run"),
        (("run", "--rate-limit", "0/s"), "Invalid value for '--rate-limit': a positive", "run"),
        (("nope",), "No such command 'nope'", None),
        (("--bogus",), "No such option '--bogus'", None),
        (("profile", "check"), "Missing argument 'PATH'", "profile check"),
        (("profile", "nope"), "No such command 'nope'", "profile"),
        (("serve", "--port", "many"), "Invalid value for '--port'", "serve"),
        (("requirements", "--format", "xml"), "Invalid value for '--format'", "requirements"),
        (("selftest", "--jobs", "x"), "Invalid value for '--jobs'", "selftest"),
        (("contract", "--format", "toml"), "Invalid value for '--format'", "contract"),
    ],
)
def test_usage_errors_print_one_error_line_and_a_hint(
    args: tuple[str, ...], message: str, command: str | None
) -> None:
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"error: {message}"), result.output
    path = "payment-conformance" + (f" {command}" if command else "")
    assert lines[1:] == [f"see '{path} --help'"]
    assert "Usage:" not in result.output and "Try " not in result.output
    assert "Error:" not in result.output


@pytest.mark.parametrize("seed", ["abc", "-1", "1.5"])
@pytest.mark.parametrize("command", ["run", "selftest"])
def test_a_seed_that_is_not_a_non_negative_integer_says_so(command: str, seed: str) -> None:
    result = invoke(command, "--seed", seed)
    assert result.exit_code == 2
    assert result.output.splitlines()[0] == (
        f"error: Invalid value for '--seed': '{seed}' is not a non-negative integer (0, 1, 2, ...)"
    )


def test_help_is_left_as_click_prints_it() -> None:
    result = invoke("run", "--help")
    assert result.exit_code == 0
    assert result.output.startswith("Usage: payment-conformance run [OPTIONS]")
    assert "--max-duration" in result.output


def test_a_group_without_a_subcommand_still_shows_its_help() -> None:
    result = invoke("profile")
    assert "Usage: payment-conformance profile" in result.output
    assert "error:" not in result.output
