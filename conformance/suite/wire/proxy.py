"""The run's proxy: none, unless ``run --proxy URL`` names one; never one from the environment.

``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` are not read by any HTTP stack of
the run: a variable set for a shell's other tools must not route signed requests through a host
the run was never told about. With ``--proxy http://[user:password@]host:port`` (or
``https://``) every request of the run goes through that proxy: ``SuiteClient`` (httpx), the
``requests`` session schemathesis sends through, and preflight (whose connection check then
reaches the proxy, not the server). A plain-http target is asked for in absolute form, an https
one through a ``CONNECT`` tunnel; an https proxy is verified with the run's TLS settings.

A password in the URL is a secret: it reaches the test processes through ``PROXY_ENV`` (never
argv), and while ``using`` is active it is masked as text (``core.redaction``), besides every
``user:password@`` being masked wherever a URL is shown.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from conformance.core.environment import environ
from conformance.core.redaction import secret_headers
from conformance.core.run_inputs import parse_proxy
from conformance.core.untrusted import split_url, url_password

PROXY_ENV = "PAYMENT_CONFORMANCE_PROXY"
"""The run's ``--proxy`` URL, for its test processes."""

PROXY_AUTHORIZATION = "Proxy-Authorization"


def address(url: str) -> tuple[str, int]:
    """The host and port a connection to the proxy ``url`` goes to."""
    parts = split_url(url)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


# -- the process's active proxy ----------------------------------------------------------------
_ACTIVE: list[str | None] = []


def active() -> str | None:
    """The proxy every request of this process goes through now (``None``: none)."""
    return _ACTIVE[-1] if _ACTIVE else None


@contextlib.contextmanager
def using(url: str | None) -> Iterator[None]:
    """Every request through the proxy ``url`` within the block (``None``: straight to the
    server), its password masked as a secret. ``ProxyError`` when ``url`` is no proxy URL."""
    if url is not None:
        url = parse_proxy(url)
    password = None if url is None else url_password(url)
    _ACTIVE.append(url)
    try:
        with secret_headers([(PROXY_AUTHORIZATION, password)] if password else []):
            yield
    finally:
        _ACTIVE.pop()


@contextlib.contextmanager
def in_env(url: str | None) -> Iterator[None]:
    """``PROXY_ENV`` set to ``url`` for the processes started within the block."""
    with environ({PROXY_ENV: url}):
        yield


def from_env() -> str | None:
    """The proxy ``PROXY_ENV`` names (``None``: none)."""
    return os.environ.get(PROXY_ENV) or None
