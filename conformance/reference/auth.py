"""Request authentication (profile section 1): the four-header HMAC scheme.

Checked before anything else, routing included, under the profile's scheme, timestamp format
and string to sign. A request that fails gets the profile's error of its kind (``auth.errors``,
else ``auth.error``) and leaves no trace; the nonce of a request that passes is recorded and
refused for the clock window (unless the profile lets nonces be used again,
``auth.nonce_single_use = false``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from conformance.core.patterns import ecma_search
from conformance.core.profile import AUTH_ERROR_KINDS, Credential
from conformance.core.signing import (
    API_KEY_HEADER,
    AUTH_HEADERS,
    NONCE_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    parse_timestamp,
    signature_pattern,
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
        auth = profile.auth
        self.window = profile.clock_window_secs
        self.template = profile.string_to_sign
        self.scheme = auth.scheme
        self.timestamp_format = auth.timestamp_format
        self.nonce_pattern = auth.nonce_pattern
        self.nonce_single_use = auth.nonce_single_use
        self.signature_pattern = signature_pattern(auth.scheme)
        self.errors = {kind: auth.error_for(kind) for kind in AUTH_ERROR_KINDS}
        self.credentials: dict[str, Credential] = {c.api_key: c for c in profile.credentials}
        self._last_prune = 0

    def _reject(self, kind: str, message: str) -> ApiError:
        error = self.errors[kind]
        return ApiError(error.status, str(error.code), message)

    def check_headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """The four headers, present and well formed, or the profile's error of that kind."""
        found: dict[str, str] = {}
        for name in AUTH_HEADERS:
            value = headers.get(name)
            if value is None or value == "":
                if name == NONCE_HEADER and self.config.fault("auth-nonce-optional"):
                    found[name] = ""
                    continue
                raise self._reject("missing", f"missing {name} header")
            found[name] = value
        if parse_timestamp(found[TIMESTAMP_HEADER], self.timestamp_format) is None:
            raise self._reject(
                "malformed", f"{TIMESTAMP_HEADER} must be a {self.timestamp_format} timestamp"
            )
        nonce = found[NONCE_HEADER]
        if nonce and not ecma_search(self.nonce_pattern, nonce):
            raise self._reject("malformed", f"{NONCE_HEADER} must match {self.nonce_pattern}")
        if not ecma_search(self.signature_pattern, found[SIGNATURE_HEADER]):
            raise self._reject("malformed", f"{SIGNATURE_HEADER} is not a {self.scheme} signature")
        return found

    def _verify(
        self,
        secret: str,
        found: Mapping[str, str],
        method: str,
        target: str,
        body: bytes,
        host: str,
    ) -> bool:
        return verify(
            secret, self.template, found, method, target, body, scheme=self.scheme, host=host
        )

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
            raise self._reject("unknown_key", "unknown API key")
        stated = parse_timestamp(found[TIMESTAMP_HEADER], self.timestamp_format)
        assert stated is not None  # check_headers refused a malformed one
        timestamp = int(stated)
        skew_ok = abs(now - stated) <= self.window
        if not skew_ok and not self.config.fault("auth-accepts-stale-timestamp"):
            raise self._reject(
                "expired", f"{TIMESTAMP_HEADER} is outside the {self.window} s window"
            )
        nonce = found[NONCE_HEADER]
        if self.config.fault("auth-nonce-recorded-before-signature"):
            # The bug: the nonce is spent even when the signature turns out to be wrong.
            if not self._record_nonce(conn, credential.api_key, nonce, max(now, timestamp)):
                raise self._reject("replayed", f"{NONCE_HEADER} was already used")
            nonce = ""
        host = headers.get("Host") or ""
        secret = credential.api_secret
        valid = self._verify(secret, found, method, target, body, host)
        if not valid and self.config.fault("auth-signature-ignores-body"):
            # The bug: a "legacy" fallback that also accepts a signature made without the body.
            valid = self._verify(secret, found, method, target, b"", host)
        if not valid and self.config.fault("auth-signature-ignores-query"):
            path = target.split("?", 1)[0]
            valid = self._verify(secret, found, method, path, body, host)
        if not valid:
            if self.config.fault("auth-bad-signature-403"):
                # the bug: another status than the profile's (403, or 401 where that is 403)
                other = 401 if self.errors["bad_signature"].status == 403 else 403
                code = "unauthorized" if other == 401 else "forbidden"
                raise ApiError(other, code, "signature does not match")
            raise self._reject("bad_signature", "signature does not match")
        if (
            nonce
            and self.nonce_single_use
            and not self.config.fault("auth-nonce-not-checked")
            and not self._record_nonce(conn, credential.api_key, nonce, max(now, timestamp))
        ):
            raise self._reject("replayed", f"{NONCE_HEADER} was already used")
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
