"""A signed HTTP client for the reference server tests: the profile's four auth headers on
every request, and a fresh Idempotency-Key on every POST, PUT and DELETE unless told otherwise."""

from __future__ import annotations

import functools
import json as jsonlib
import ssl
import uuid
from typing import Any

import httpx

from conformance.core.profile import Credential
from conformance.core.signing import Signer

AUTO = "auto"  # the default idempotency_key: a fresh UUID for POST, PUT and DELETE
NO_KEY = None


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # httpx builds a TLS context (the system's CA store, ~40 ms) for every client, even one that
    # only speaks plain http; the fault probes alone make hundreds of clients.
    return httpx.create_ssl_context()


class SignedClient:
    def __init__(self, base_url: str, credential: Credential, timeout: float = 10.0) -> None:
        self.base_url = base_url
        self.credential = credential
        self.signer = Signer(credential.api_key, credential.api_secret)
        self.http = httpx.Client(base_url=base_url, timeout=timeout, verify=_tls_context())

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> SignedClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def signed_headers(
        self, method: str, target: str, body: bytes = b"", **overrides: Any
    ) -> dict[str, str]:
        return self.signer.headers(method, target, body, **overrides)

    def request(
        self,
        method: str,
        target: str,
        json: Any = None,
        *,
        content: bytes | None = None,
        idempotency_key: str | None = AUTO,
        headers: dict[str, str] | None = None,
        content_type: str | None = "application/json",
        timestamp: int | None = None,
        nonce: str | None = None,
    ) -> httpx.Response:
        """``target`` is the path plus the query string; the signature covers it as sent."""
        method = method.upper()
        body = content if content is not None else b""
        if json is not None:
            body = jsonlib.dumps(json).encode("utf-8")
        url = httpx.URL(self.base_url + target)
        as_sent = url.raw_path.decode("ascii")  # httpx percent-encodes what needs it
        sent = self.signed_headers(method, as_sent, body, timestamp=timestamp, nonce=nonce)
        if body and content_type is not None:
            sent["Content-Type"] = content_type
        if idempotency_key == AUTO:
            if method in ("POST", "PUT", "DELETE"):
                sent["Idempotency-Key"] = uuid.uuid4().hex
        elif idempotency_key is not None:
            sent["Idempotency-Key"] = idempotency_key
        sent.update(headers or {})
        return self.http.request(method, url, content=body, headers=sent)

    def get(self, target: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", target, **kwargs)

    def post(self, target: str, json: Any = None, **kwargs: Any) -> httpx.Response:
        return self.request("POST", target, json, **kwargs)

    def put(self, target: str, json: Any = None, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", target, json, **kwargs)

    def delete(self, target: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", target, **kwargs)
