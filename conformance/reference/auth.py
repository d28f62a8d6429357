"""Request authentication (profile section 1): the four-header HMAC scheme.

Checked before anything else, routing included. A request that fails gets 401 and leaves no
trace; the nonce of a request that passes is recorded and refused for the clock window.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from conformance.core.patterns import ecma_search
from conformance.core.profile import Credential
from conformance.core.signing import (
    API_KEY_HEADER,
    AUTH_HEADERS,
    NONCE_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    verify,
)
from conformance.reference.config import ServerConfig
from conformance.reference.errors import ApiError

SCHEMA = """
CREATE TABLE IF NOT EXISTS nonces (
    api_key TEXT NOT NULL,
    nonce TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (api_key, nonce)
);
CREATE INDEX IF NOT EXISTS nonces_expiry ON nonces (expires_at);
"""
PRUNE_EVERY_SECS = 30


class Authenticator:
    """``authenticate`` runs inside a transaction that is committed even when it raises: a
    correct server writes nothing before the signature has been verified."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        profile = config.profile
        self.window = profile.clock_window_secs
        self.template = profile.string_to_sign
        self.nonce_pattern = profile.auth.nonce_pattern
        error = profile.auth.error
        self.error_status = error.status
        self.error_code = str(error.code)
        self.credentials: dict[str, Credential] = {c.api_key: c for c in profile.credentials}
        self._last_prune = 0

    def _reject(self, message: str) -> ApiError:
        return ApiError(self.error_status, self.error_code, message)

    def check_headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """The four headers, present and well formed, or 401."""
        found: dict[str, str] = {}
        for name in AUTH_HEADERS:
            value = headers.get(name)
            if value is None or value == "":
                if name == NONCE_HEADER and self.config.fault("auth-nonce-optional"):
                    found[name] = ""
                    continue
                raise self._reject(f"missing {name} header")
            found[name] = value
        if not ecma_search(r"^[0-9]{1,12}$", found[TIMESTAMP_HEADER]):
            raise self._reject(f"{TIMESTAMP_HEADER} must be Unix epoch seconds")
        nonce = found[NONCE_HEADER]
        if nonce and not ecma_search(self.nonce_pattern, nonce):
            raise self._reject(f"{NONCE_HEADER} must match {self.nonce_pattern}")
        if not ecma_search(r"^[0-9a-f]{64}$", found[SIGNATURE_HEADER]):
            raise self._reject(f"{SIGNATURE_HEADER} must be 64 lowercase hex digits")
        return found

    def authenticate(
        self,
        conn: sqlite3.Connection,
        headers: Mapping[str, str],
        method: str,
        target: str,
        body: bytes,
        now: int,
    ) -> Credential:
        found = self.check_headers(headers)
        credential = self.credentials.get(found[API_KEY_HEADER])
        if credential is None:
            raise self._reject("unknown API key")
        timestamp = int(found[TIMESTAMP_HEADER])
        skew_ok = abs(now - timestamp) <= self.window
        if not skew_ok and not self.config.fault("auth-accepts-stale-timestamp"):
            raise self._reject(f"{TIMESTAMP_HEADER} is outside the {self.window} s window")
        nonce = found[NONCE_HEADER]
        if self.config.fault("auth-nonce-recorded-before-signature"):
            # The bug: the nonce is spent even when the signature turns out to be wrong.
            if not self._record_nonce(conn, credential.api_key, nonce, max(now, timestamp)):
                raise self._reject(f"{NONCE_HEADER} was already used")
            nonce = ""
        valid = verify(credential.api_secret, self.template, found, method, target, body)
        if not valid and self.config.fault("auth-signature-ignores-body"):
            # The bug: a "legacy" fallback that also accepts a signature made without the body.
            valid = verify(credential.api_secret, self.template, found, method, target, b"")
        if not valid and self.config.fault("auth-signature-ignores-query"):
            path = target.split("?", 1)[0]
            valid = verify(credential.api_secret, self.template, found, method, path, body)
        if not valid:
            if self.config.fault("auth-bad-signature-403"):
                raise ApiError(403, "forbidden", "signature does not match")
            raise self._reject("signature does not match")
        if (
            nonce
            and not self.config.fault("auth-nonce-not-checked")
            and not self._record_nonce(conn, credential.api_key, nonce, max(now, timestamp))
        ):
            raise self._reject(f"{NONCE_HEADER} was already used")
        self._prune(conn, now)
        return credential

    def _record_nonce(
        self, conn: sqlite3.Connection, api_key: str, nonce: str, seen_at: int
    ) -> bool:
        cursor = conn.execute(
            "INSERT INTO nonces (api_key, nonce, expires_at) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (api_key, nonce, seen_at + self.window + 1),
        )
        return cursor.rowcount == 1

    def _prune(self, conn: sqlite3.Connection, now: int) -> None:
        if now - self._last_prune >= PRUNE_EVERY_SECS:
            self._last_prune = now
            conn.execute("DELETE FROM nonces WHERE expires_at < ?", (now,))
