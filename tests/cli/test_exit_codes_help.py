"""Every command whose exit codes mean more than "0 done, 2 could not" says them in its
``--help``, as the README does: a CI job can be written from ``--help`` alone."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from conformance.cli import main


def _help(command: str) -> str:
    result = CliRunner().invoke(main, [command, "--help"], prog_name="payment-conformance")
    assert result.exit_code == 0, result.output
    return result.output


def _codes(text: str) -> dict[str, str]:
    """The lines of the ``Exit codes:`` block, by code: ``{"0": "every exercised ..."}``."""
    block = text.split("Exit codes:", 1)[1]
    return dict(re.findall(r"^ +([0-9]+) +(.+)$", block, re.MULTILINE))


@pytest.mark.parametrize(
    ("command", "codes"),
    [
        ("run", {"0": "every exercised requirement passed", "1": "at least one requirement"}),
        ("validate", {"0": "every exercised requirement passed", "1": "at least one"}),
        ("verify", {"0": "verified", "1": "not verified"}),
        ("report", {"0": "written"}),
        ("merge", {"0": "every exercised requirement", "1": "at least one requirement"}),
        ("selftest", {"0": "every fault caught", "1": "a fault", "130": "interrupted"}),
    ],
)
def test_help_lists_the_exit_codes(command: str, codes: dict[str, str]) -> None:
    listed = _codes(_help(command))
    assert set(listed) == {*codes, "2"}
    for code, words in codes.items():
        assert listed[code].startswith(words), (code, listed[code])
    assert listed["2"]


def test_run_help_names_what_ends_a_run_with_2() -> None:
    two = _codes(_help("run"))["2"]
    for reason in ("could not start", "tested nothing", "did not finish"):
        assert reason in two
