"""Every option that names a file reads only a regular file, bounded in size.

``run --cacert /dev/zero`` once grew to 2.7 GB and ended in a ``MemoryError`` traceback, and a
named pipe given as ``--cacert`` or ``--waivers`` hung the command. Each command runs in a child
process with a memory ceiling and a timeout (all the commands of one test in one process, one
after the other), so a hang or an endless read fails the test instead of stalling it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.reference.certificates import CertFiles, issue
from tests.cli.processes import bounded_commands

SAID = {"/dev/zero": "is a character device, not a regular file", "fifo": "is a named pipe"}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertFiles:
    return issue(tmp_path_factory.mktemp("certs"))


def bad_file(kind: str, tmp_path: Path) -> str:
    if kind == "/dev/zero":
        return kind
    fifo = tmp_path / "fifo.pem"
    os.mkfifo(fifo)
    return str(fifo)


NO_SERVER = ("--base-url", "https://127.0.0.1:9", "--no-progress")
Args = Callable[[str, CertFiles, Path], list[str]]
OPTIONS: dict[str, Args] = {
    "run --cacert": lambda f, c, d: ["run", *NO_SERVER, "--cacert", f],
    "run --client-cert": lambda f, c, d: ["run", *NO_SERVER, "--client-cert", f],
    "run --client-key": lambda f, c, d: [
        *("run", *NO_SERVER, "--client-cert", str(c.client_cert), "--client-key", f)
    ],
    "run --waivers": lambda f, c, d: ["run", *NO_SERVER, "--waivers", f],
    "run --profile": lambda f, c, d: ["run", *NO_SERVER, "--profile", f],
    "run --baseline": lambda f, c, d: ["run", *NO_SERVER, "--baseline", f],
    "run --sign-key": lambda f, c, d: ["run", *NO_SERVER, "--sign-key", f],
    "serve --tls-cert": lambda f, c, d: [
        *("serve", "--port", "0", "--tls-cert", f, "--tls-key", str(c.server_key))
    ],
    "serve --profile": lambda f, c, d: ["serve", "--port", "0", "--profile", f],
    "validate --profile": lambda f, c, d: ["validate", str(d / "x.har"), "--profile", f],
    "verify --public-key": lambda f, c, d: ["verify", str(d), "--public-key", f],
    "merge --waivers": lambda f, c, d: ["merge", str(d), "--waivers", f],
    "merge --baseline": lambda f, c, d: ["merge", str(d), "--baseline", f],
    "merge --sign-key": lambda f, c, d: ["merge", str(d), "--sign-key", f],
    "report RESULTS": lambda f, c, d: ["report", f, "--format", "html"],
    "profile check": lambda f, c, d: ["profile", "check", f],
    "contract --profile": lambda f, c, d: ["contract", "--profile", f],
    "diff OLD": lambda f, c, d: ["diff", f, str(d / "new.json")],
}


@pytest.mark.parametrize("kind", list(SAID))
def test_a_device_or_a_named_pipe_is_refused_with_exit_2_and_the_reason(
    kind: str, certs: CertFiles, tmp_path: Path
) -> None:
    path = bad_file(kind, tmp_path)
    ended = bounded_commands([make(path, certs, tmp_path) for make in OPTIONS.values()])
    wrong = {
        option: f"exit {end.exit_code}, raised {end.exception}, said: {end.stderr[-500:]}"
        for option, end in zip(OPTIONS, ended, strict=True)
        if end.exit_code != 2 or end.exception or f"{path} {SAID[kind]}" not in end.stderr
    }
    assert wrong == {}
