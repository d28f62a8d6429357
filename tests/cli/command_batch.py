"""Several ``payment-conformance`` commands in one child process, one after the other.

``python -m tests.cli.command_batch`` reads a JSON list of argument lists on standard input and
prints one JSON line per command once it has ended: its exit code, its standard error and, when
it raised instead of exiting, the exception. A command that hangs leaves the commands after it
without a line; ``processes.bounded_commands`` reports which one it was.
"""

from __future__ import annotations

import json
import sys

from click.testing import CliRunner

from conformance.cli import main


def run_all(commands: list[list[str]]) -> None:
    runner = CliRunner()
    for args in commands:
        result = runner.invoke(main, args)
        raised = result.exception
        line = {
            "exit_code": result.exit_code,
            "stderr": result.stderr,
            "exception": None if raised is None or isinstance(raised, SystemExit) else repr(raised),
        }
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    run_all(json.load(sys.stdin))
