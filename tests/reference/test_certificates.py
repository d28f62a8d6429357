"""Throw-away certificates: a server certificate its own CA trusts and another CA does not."""

from __future__ import annotations

import contextlib
import ssl
from pathlib import Path

import pytest

from conformance.reference.certificates import issue, main


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> None:
    """A TLS handshake between the two contexts in memory (no socket)."""
    c_in, c_out, s_in, s_out = (ssl.MemoryBIO() for _ in range(4))
    client_side = client.wrap_bio(c_in, c_out, server_hostname="127.0.0.1")
    server_side = server.wrap_bio(s_in, s_out, server_side=True)
    for _ in range(10):
        for side in (client_side, server_side):
            with contextlib.suppress(ssl.SSLWantReadError):
                side.do_handshake()
        s_in.write(c_out.read())
        c_in.write(s_out.read())
        if client_side.version() and server_side.version():
            return
    raise AssertionError("the handshake did not finish")


def _server(files_dir: Path) -> tuple[ssl.SSLContext, Path]:
    files = issue(files_dir)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(files.server_cert, files.server_key)
    return context, files.ca


def test_the_server_certificate_is_trusted_by_its_own_ca_for_127_0_0_1(tmp_path: Path) -> None:
    server, ca = _server(tmp_path)
    _handshake(server, ssl.create_default_context(cafile=str(ca)))


def test_another_set_s_ca_does_not_trust_it(tmp_path: Path) -> None:
    server, _ = _server(tmp_path / "one")
    other = issue(tmp_path / "two")
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(server, ssl.create_default_context(cafile=str(other.ca)))


def test_run_as_a_module_it_writes_a_set_and_lists_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "certs")]) == 0
    listed = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert set(listed) == {"ca", "server_cert", "server_key", "client_cert", "client_key"}
    assert all(Path(path).is_file() for path in listed.values())


def test_a_directory_that_cannot_be_written_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert main([str(blocker / "certs")]) == 2
    assert "cannot write the certificates" in capsys.readouterr().err
    assert main([]) == 2
