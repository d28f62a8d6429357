"""A ``payment-conformance`` command in a child process, for tests that signal it.

The tests wait on what the command prints, never on the clock: each wait has a ceiling
(``CEILING_SECS``) that a healthy machine never reaches, however busy it is.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

CEILING_SECS = 300.0
REPOSITORY = Path(__file__).resolve().parents[2]


class CommandProcess:
    """``with CommandProcess(["serve", "--port", "0"]) as proc:`` runs the command; leaving the
    block kills it if it still runs."""

    def __init__(
        self, args: list[str], *, tmpdir: Path | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        environment = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
        if tmpdir is not None:
            environment["TMPDIR"] = str(tmpdir)
        self._lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._changed = threading.Condition()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "conformance", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        assert self._process.stdout is not None and self._process.stderr is not None
        self._readers = [
            threading.Thread(target=self._read, args=(name, stream), daemon=True)
            for name, stream in (("stdout", self._process.stdout), ("stderr", self._process.stderr))
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, name: str, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self._lines[name].append(line)
                self._changed.notify_all()
        with self._changed:
            self._lines[name].append("")  # end of stream
            self._changed.notify_all()

    @property
    def stdout(self) -> str:
        with self._changed:
            return "".join(self._lines["stdout"])

    @property
    def stderr(self) -> str:
        with self._changed:
            return "".join(self._lines["stderr"])

    def wait_for_line(self, wanted: Callable[[str], bool], stream: str = "stdout") -> str:
        """The first line of ``stream`` for which ``wanted`` holds; AssertionError if the stream
        ends (or the ceiling passes) without one."""
        with self._changed:
            seen = 0
            while True:
                lines = self._lines[stream]
                for line in lines[seen:]:
                    if wanted(line):
                        return line
                    if line == "":
                        raise AssertionError(f"not printed:\n{self.describe()}")
                seen = len(lines)
                if not self._changed.wait(CEILING_SECS):
                    raise AssertionError(f"not printed in {CEILING_SECS} s:\n{self.describe()}")

    def send_signal(self, signum: signal.Signals) -> None:
        self._process.send_signal(signum)

    def wait(self) -> int:
        """The exit status once the command has ended and its output is read."""
        code = self._process.wait(CEILING_SECS)
        for reader in self._readers:
            reader.join(CEILING_SECS)
        return code

    def describe(self) -> str:
        return f"--- stdout\n{self.stdout}--- stderr\n{self.stderr}"

    def __enter__(self) -> CommandProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        for reader in self._readers:  # the pipes end with the process (and its children)
            reader.join(CEILING_SECS)
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()


def leftovers(directory: Path) -> list[str]:
    """What is left in ``directory`` (relative paths), for a readable assertion."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


# Far above what a command that refuses its input needs, far below what a runaway one takes.
MEMORY_CEILING = 2 * 1024**3
BOUNDED_TIMEOUT_S = 60
ENDED_LINE = '{"exit_code"'  # how tests.cli.command_batch begins the line of an ended command


def _limited_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))


@dataclass(frozen=True)
class Ended:
    """How one command of ``bounded_commands`` ended."""

    args: tuple[str, ...]
    exit_code: int
    stderr: str
    exception: str | None  # what it raised instead of exiting (a traceback, in a real process)


def bounded_commands(commands: Sequence[Sequence[str]]) -> list[Ended]:
    """The commands one after the other in one child process with a memory ceiling and a
    timeout (``tests.cli.command_batch``): one interpreter start for all. AssertionError naming
    the command that hung, or that left the process, if one did."""
    batch = [list(args) for args in commands]
    timeout = BOUNDED_TIMEOUT_S + 5 * len(batch)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.cli.command_batch"],
            cwd=REPOSITORY,
            input=json.dumps(batch),
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=_limited_memory,
        )
        lines, stderr = done.stdout.splitlines(), done.stderr
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout or ""
        lines = (out.decode() if isinstance(out, bytes) else out).splitlines()
        stderr = f"timed out after {timeout} s"
    lines = [line for line in lines if line.startswith(ENDED_LINE)]
    ended = [Ended(tuple(a), **json.loads(line)) for a, line in zip(batch, lines, strict=False)]
    if len(ended) < len(batch):
        raise AssertionError(f"{' '.join(batch[len(ended)])}: did not end ({stderr[-2000:]})")
    return ended
