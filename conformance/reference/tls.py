"""TLS of the reference server: its certificate files, checked before uvicorn loads them.

uvicorn loads them in the server's thread, where a bad file only shows as a server that did not
start; checked here first, the error names the file and what is wrong with it.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from conformance.core import untrusted_files

MAX_PEM_BYTES = 8 * 1024 * 1024  # as run's --cacert: a bundle of every public CA is ~300 KB


class TlsFileError(ValueError):
    """A certificate, key or CA file that cannot be used; the message names it."""


@dataclass(frozen=True)
class TlsFiles:
    """The server's certificate chain and key (PEM), and the CA that client certificates must be
    signed by when mutual TLS is asked for."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def check(self) -> None:
        """TlsFileError unless the files load as uvicorn will load them."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        for path in (self.cert, self.key, self.client_ca):
            if path is not None:
                _readable(path)
        try:
            # A key under a passphrase is refused: without this callback OpenSSL would ask for
            # it on the terminal.
            context.load_cert_chain(self.cert, self.key, password=_no_passphrase)
        except (ssl.SSLError, ValueError, TypeError) as exc:
            raise TlsFileError(
                f"the TLS certificate {self.cert} and key {self.key} cannot be used (PEM files of "
                f"a certificate and its unencrypted private key are needed): {_reason(exc)}"
            ) from None
        if self.client_ca is not None:
            try:
                context.load_verify_locations(cafile=self.client_ca)
            except (ssl.SSLError, ValueError) as exc:
                raise TlsFileError(
                    f"the client CA file {self.client_ca} holds no PEM certificate: {_reason(exc)}"
                ) from None


def _readable(path: Path) -> None:
    """A regular file of a PEM's size: OpenSSL would block on a named pipe, and read
    ``/dev/zero`` until memory ran out."""
    try:
        untrusted_files.read_bytes(path, max_bytes=MAX_PEM_BYTES)
    except untrusted_files.UntrustedFileError as exc:
        raise TlsFileError(f"cannot read {exc}") from None


def _no_passphrase() -> bytes:
    raise ValueError("the private key is encrypted with a passphrase")


def _reason(exc: Exception) -> str:
    if not isinstance(exc, ssl.SSLError):
        return str(exc)
    if exc.reason:  # e.g. KEY_VALUES_MISMATCH
        return str(exc.reason).lower().replace("_", " ")
    return "not PEM, or not a certificate and a key"  # OpenSSL's "PEM lib" says no more
