"""The run's one TLS configuration, shared by every HTTP stack of the suite.

``run --cacert PATH`` (a PEM bundle to trust instead of the default ones), ``--insecure`` (no
verification at all), ``--client-cert PATH [--client-key PATH]`` (mutual TLS). Without
``--cacert`` the ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` variables are honoured, as OpenSSL
does; without them either, certifi's bundle is trusted (what httpx and requests trust).

``TlsSettings.context()`` builds one ``ssl.SSLContext`` per settings: ``SuiteClient`` (httpx)
and ``BoundedAdapter`` (the ``requests`` session schemathesis sends through) both take
``active_context()``, so no request of a run verifies differently from another. The files are
checked when the context is built (``TlsError``: missing, unreadable, not PEM, a key that does
not match its certificate), before any request. ``describe_failure`` turns a TLS handshake
error into a sentence naming the option that fixes it.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import certifi

from conformance.core import untrusted_files

CERT_FILE_ENV = "SSL_CERT_FILE"
CERT_DIR_ENV = "SSL_CERT_DIR"
PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"
# A CA bundle of every public CA is about 300 KB; a certificate or a key a few KB.
MAX_PEM_BYTES = 8 * 1024 * 1024
_PEM_KEY = re.compile(rb"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")


class TlsError(Exception):
    """A TLS option cannot be used; the message names the option and what is wrong."""


@dataclass(frozen=True)
class TlsSettings:
    """What the run was told about TLS (paths are not secrets: they go in argv and reports)."""

    cacert: Path | None = None
    insecure: bool = False
    client_cert: Path | None = None
    client_key: Path | None = None

    def check(self) -> None:
        """Raise ``TlsError`` when these settings cannot give a context (files included)."""
        build_context(self, _trust_env())

    def context(self) -> ssl.SSLContext:
        """The context of these settings; built once per process (loading a bundle costs)."""
        return build_context(self, _trust_env())

    @property
    def recorded(self) -> dict[str, str]:
        """The run's recorded options for these settings (``RunResult.options``)."""
        recorded: dict[str, str] = {}
        if self.cacert is not None:
            recorded["cacert"] = str(self.cacert)
        if self.insecure:
            recorded["insecure"] = "true"
        if self.client_cert is not None:
            recorded["client_cert"] = str(self.client_cert)
        if self.client_key is not None:
            recorded["client_key"] = str(self.client_key)
        return recorded

    def pytest_args(self) -> list[str]:
        """The plugin's options that give a test process these settings."""
        args: list[str] = []
        if self.cacert is not None:
            args += ["--cacert", str(self.cacert.absolute())]
        if self.insecure:
            args.append("--insecure")
        if self.client_cert is not None:
            args += ["--client-cert", str(self.client_cert.absolute())]
        if self.client_key is not None:
            args += ["--client-key", str(self.client_key.absolute())]
        return args


def _trust_env() -> tuple[str | None, str | None]:
    return os.environ.get(CERT_FILE_ENV) or None, os.environ.get(CERT_DIR_ENV) or None


def _read(path: Path, option: str) -> bytes:
    """The PEM file's bytes: a regular file, bounded (``/dev/zero`` never ends, a named pipe
    blocks)."""
    try:
        return untrusted_files.read_bytes(path, max_bytes=MAX_PEM_BYTES)
    except untrusted_files.UntrustedFileError as exc:
        raise TlsError(f"{option} {exc}") from None


def _load_trust(
    context: ssl.SSLContext, cafile: Path | None, cadir: Path | None, option: str
) -> None:
    if cafile is not None and PEM_CERTIFICATE not in _read(cafile, option):
        raise TlsError(f"{option} {cafile}: holds no PEM certificate (BEGIN CERTIFICATE)")
    if cadir is not None and not cadir.is_dir():
        raise TlsError(f"{option} {cadir}: not a directory")
    try:
        context.load_verify_locations(
            cafile=None if cafile is None else str(cafile),
            capath=None if cadir is None else str(cadir),
        )
    except (ssl.SSLError, OSError) as exc:
        raise TlsError(f"{option} {cafile or cadir}: not a usable CA bundle ({exc})") from None


def _load_client(context: ssl.SSLContext, cert: Path, key: Path | None) -> None:
    cert_bytes = _read(cert, "--client-cert")
    if PEM_CERTIFICATE not in cert_bytes:
        raise TlsError(f"--client-cert {cert}: holds no PEM certificate (BEGIN CERTIFICATE)")
    if key is None:
        if _PEM_KEY.search(cert_bytes) is None:
            raise TlsError(
                f"--client-cert {cert}: holds no private key; give it with --client-key PATH"
            )
    elif _PEM_KEY.search(_read(key, "--client-key")) is None:
        raise TlsError(f"--client-key {key}: holds no PEM private key (BEGIN PRIVATE KEY)")
    try:
        context.load_cert_chain(str(cert), None if key is None else str(key), password=_no_password)
    except ssl.SSLError as exc:
        if "KEY_VALUES_MISMATCH" in str(exc) or "key values mismatch" in str(exc):
            raise TlsError(
                f"--client-key {key or cert}: the private key does not match the certificate "
                f"of --client-cert {cert}"
            ) from None
        raise TlsError(f"--client-cert {cert}: cannot be used ({exc})") from None
    except (TlsError, OSError) as exc:
        raise TlsError(f"--client-cert {cert}: cannot be used ({exc})") from None


def _no_password() -> str:
    raise TlsError("the private key is encrypted; give an unencrypted key")


@cache
def build_context(
    settings: TlsSettings, trust_env: tuple[str | None, str | None] = (None, None)
) -> ssl.SSLContext:
    """The context of ``settings``; ``trust_env`` is (``SSL_CERT_FILE``, ``SSL_CERT_DIR``).

    ``TlsError`` when an option cannot be used.
    """
    if settings.client_key is not None and settings.client_cert is None:
        raise TlsError("--client-key needs --client-cert (the certificate it belongs to)")
    if settings.insecure and settings.cacert is not None:
        raise TlsError("--insecure verifies nothing: it cannot be combined with --cacert")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # no CA yet, hostnames checked
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if settings.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif settings.cacert is not None:
        _load_trust(context, settings.cacert, None, "--cacert")
    elif trust_env != (None, None):
        file, directory = trust_env
        _load_trust(
            context,
            None if file is None else Path(file),
            None if directory is None else Path(directory),
            CERT_FILE_ENV if file is not None else CERT_DIR_ENV,
        )
    else:
        context.load_verify_locations(cafile=certifi.where())
    if settings.client_cert is not None:
        _load_client(context, settings.client_cert, settings.client_key)
    return context


# -- the process's active settings ------------------------------------------------------------
_ACTIVE: list[TlsSettings] = [TlsSettings()]


def active() -> TlsSettings:
    return _ACTIVE[-1]


def active_context() -> ssl.SSLContext:
    """The context every HTTP stack of this process uses now."""
    return _ACTIVE[-1].context()


@contextlib.contextmanager
def using(settings: TlsSettings) -> Iterator[TlsSettings]:
    """``settings`` active within the block (checked first: ``TlsError``)."""
    if settings != TlsSettings() or _trust_env() != (None, None):
        settings.check()  # the default context cannot fail: built when first used
    _ACTIVE.append(settings)
    try:
        yield settings
    finally:
        _ACTIVE.remove(settings)


# -- handshake failures -----------------------------------------------------------------------
_CACERT_HINT = "give its CA with --cacert PATH, or --insecure to skip verification"
CLIENT_CERT_HINT = (
    "the server asks for a client certificate (mutual TLS) and refused the connection: "
    "give one with --client-cert PATH [--client-key PATH]"
)
_HANDSHAKE = 22  # TLS content type
_CERTIFICATE_REQUEST = 13  # TLS handshake message type
_VERIFY_DETAIL = re.compile(r"certificate verify failed: ([^(\]]+)")


def describe_failure(error: BaseException | str) -> str | None:
    """A sentence for a TLS failure (``None``: ``error`` is not one), naming the fix."""
    text = str(error)
    if "CERTIFICATE_VERIFY_FAILED" in text:
        found = _VERIFY_DETAIL.search(text)
        detail = found.group(1).strip() if found else "certificate verify failed"
        lowered = detail.lower()
        if "mismatch" in lowered or "doesn't match" in lowered:
            return (
                f"the server's certificate is not valid for this host name ({detail}): use the "
                "host name the certificate names in --base-url, or --insecure to skip "
                "verification"
            )
        if "expired" in lowered:
            return (
                f"the server's certificate has expired (CERTIFICATE_VERIFY_FAILED: {detail}): "
                "renew it on the server, or --insecure to skip verification"
            )
        if "not yet valid" in lowered:
            return (
                f"the server's certificate is not valid yet (CERTIFICATE_VERIFY_FAILED: "
                f"{detail}): check the clocks, or --insecure to skip verification"
            )
        return (
            f"the server's certificate is not trusted (CERTIFICATE_VERIFY_FAILED: {detail}): "
            + _CACERT_HINT
        )
    lowered = text.lower()
    if "certificate required" in lowered or "certificate_required" in lowered:
        return CLIENT_CERT_HINT
    if "bad certificate" in lowered or "unknown ca" in lowered:
        return (
            "the server refused the client certificate of --client-cert (TLS alert: "
            f"{'bad certificate' if 'bad certificate' in lowered else 'unknown CA'}): give one "
            "the server trusts"
        )
    if "wrong version number" in lowered or "record layer failure" in lowered:
        return (
            "the server does not speak TLS on this port (is --base-url http:// rather than "
            "https://?)"
        )
    return None


def wants_client_certificate(host: str, port: int, timeout_s: float = 5.0) -> bool:
    """Whether the server at ``host:port`` asks for a client certificate in its handshake (a
    probe that verifies nothing and sends no request; False when it cannot tell).

    Under TLS 1.3 a server wanting mutual TLS may close the connection without telling why:
    only its CertificateRequest message shows it, seen through CPython's handshake message
    hook (``SSLContext._msg_callback``, undocumented: without it, the answer is False).
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if not hasattr(context, "_msg_callback"):
        return False
    asked: list[bool] = []

    def note(
        conn: object, direction: str, version: object, content_type: int, msg_type: int, data: bytes
    ) -> None:
        if direction == "read" and content_type == _HANDSHAKE and msg_type == _CERTIFICATE_REQUEST:
            asked.append(True)

    context._msg_callback = note
    try:
        with (
            socket.create_connection((host, port), timeout=timeout_s) as raw,
            context.wrap_socket(raw, server_hostname=host),
        ):
            pass
    except (OSError, ssl.SSLError):
        pass  # a refusal after the CertificateRequest is the case looked for
    return bool(asked)
