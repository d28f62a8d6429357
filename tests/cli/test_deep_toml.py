"""TOML nested 200,000 deep, or with a key of 100,000 parts, in a waivers or profile file: exit 2
with the reason, not a ``RecursionError`` traceback (exit 1) or a process killed for memory.

Each command runs in a child process: once eth-account is imported, such recursion can overflow
the C stack and kill the process it runs in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.processes import bounded_command

HOSTILE = {
    "nested": ("x = " + "[" * 200_000 + "]" * 200_000, "nested deeper than 32 levels"),
    "long key": ("a" + ".a" * 100_000 + " = 1", "a dotted key of more than 32 parts"),
}
COMMANDS = {
    "run --waivers": lambda f: ["run", "--base-url", "http://127.0.0.1:9", "--waivers", f],
    "run --profile": lambda f: ["run", "--base-url", "http://127.0.0.1:9", "--profile", f],
    "profile check": lambda f: ["profile", "check", f],
}


@pytest.mark.parametrize("hostile", list(HOSTILE))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_hostile_toml_is_refused_with_exit_2_and_the_reason(
    command: str, hostile: str, tmp_path: Path
) -> None:
    text, reason = HOSTILE[hostile]
    path = tmp_path / "hostile.toml"
    path.write_text(text, encoding="utf-8")
    result = bounded_command(*COMMANDS[command](str(path)))
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert f"{path}" in result.stderr and "refused unparsed" in result.stderr
    assert reason in result.stderr
