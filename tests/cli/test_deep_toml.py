"""TOML nested 200,000 deep, or with a key of 100,000 parts, in a waivers or profile file: exit 2
with the reason, not a ``RecursionError`` traceback (exit 1) or a process killed for memory.

The commands run in a child process: once eth-account is imported, such recursion can overflow
the C stack and kill the process it runs in (the test then names the command that did).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.processes import bounded_commands

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
def test_hostile_toml_is_refused_with_exit_2_and_the_reason(hostile: str, tmp_path: Path) -> None:
    text, reason = HOSTILE[hostile]
    path = tmp_path / "hostile.toml"
    path.write_text(text, encoding="utf-8")
    ended = bounded_commands([make(str(path)) for make in COMMANDS.values()])
    wrong = {
        command: f"exit {end.exit_code}, raised {end.exception}, said: {end.stderr[-2000:]}"
        for command, end in zip(COMMANDS, ended, strict=True)
        if end.exit_code != 2
        or end.exception
        or f"{path}" not in end.stderr
        or "refused unparsed" not in end.stderr
        or reason not in end.stderr
    }
    assert wrong == {}
