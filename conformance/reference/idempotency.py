"""Idempotency (profile section 2).

Scope: (API key, Idempotency-Key). Fingerprint: method + path + SHA-256 of the raw body. A key is
first *reserved* (state ``in_flight``, committed at once) so that a concurrent request with the
same key sees it and gets 409; the handler's transaction then stores the 2xx response in the
same commit as its side effects (state ``done``), or the reservation is released after an error.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from conformance.core.profile import Profile
from conformance.reference.config import ServerConfig
from conformance.reference.errors import ApiError
from conformance.reference.operations import TEST_HELPER_OPERATIONS

HEADER = "Idempotency-Key"
PRUNE_EVERY_SECS = 60
SCHEMA = """
CREATE TABLE IF NOT EXISTS idempotency_keys (
    api_key TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state TEXT NOT NULL,
    status INTEGER,
    body BLOB,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (api_key, key)
);
"""


@dataclass(frozen=True)
class Stored:
    status: int
    body: bytes


def _error(profile: Profile, name: str, message: str) -> ApiError:
    spec = profile.error("idempotency", name)
    return ApiError(spec.status, str(spec.code), message)


def key_from_headers(
    config: ServerConfig, headers: Mapping[str, str], method: str, operation_id: str
) -> str | None:
    """The request's Idempotency-Key, after the profile's presence and length rules."""
    profile = config.profile
    value = headers.get(HEADER)
    required = (
        profile.idempotency_required(method, operation_id)
        and operation_id not in TEST_HELPER_OPERATIONS
    )
    if operation_id == "testDepositPayment" and config.fault("helper-deposit-ignores-key"):
        return None  # the helper takes the header but never looks it up: a replay pays again
    if value is None:
        if required and not config.fault("idem-key-not-required"):
            raise _error(profile, "missing", f"the {HEADER} header is required")
        return None
    low = profile.idempotency.min_length
    high = profile.idempotency.max_length
    if config.fault("idem-key-128-rejected"):
        high -= 1
    if not low <= len(value) <= high:
        raise _error(profile, "invalid", f"the {HEADER} must be {low} to {high} characters")
    return value


def fingerprint(method: str, path: str, body: bytes) -> str:
    return f"{method} {path} {hashlib.sha256(body).hexdigest()}"


class IdempotencyStore:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.retention = config.profile.idempotency.retention_secs
        self._last_prune = 0

    def scope(self, api_key: str) -> str:
        # The bug of "idem-scope-global": one namespace for every API key.
        return "*" if self.config.fault("idem-scope-global") else api_key

    def begin(
        self, conn: sqlite3.Connection, api_key: str, key: str, fp: str, now: int
    ) -> Stored | None:
        """A stored response to replay, or None after reserving the key for this request."""
        if now - self._last_prune >= PRUNE_EVERY_SECS:
            self._last_prune = now
            conn.execute(
                "DELETE FROM idempotency_keys WHERE state = 'done' AND created_at < ?",
                (now - self.retention,),
            )
        scope = self.scope(api_key)
        row = conn.execute(
            "SELECT fingerprint, state, status, body, created_at FROM idempotency_keys "
            "WHERE api_key = ? AND key = ?",
            (scope, key),
        ).fetchone()
        if row is not None and row["created_at"] + self.retention < now:
            conn.execute("DELETE FROM idempotency_keys WHERE api_key = ? AND key = ?", (scope, key))
            row = None
        if row is not None:
            same = row["fingerprint"] == fp or self.config.fault("idem-reuse-replays-first")
            if not same:
                raise _error(
                    self.config.profile,
                    "reused",
                    f"this {HEADER} was used with another request",
                )
            if row["state"] == "in_flight":
                raise _error(
                    self.config.profile,
                    "in_use",
                    f"a request with this {HEADER} is still being processed",
                )
            if not self.config.fault("idem-replay-reexecutes"):
                return Stored(int(row["status"]), bytes(row["body"]))
            conn.execute("DELETE FROM idempotency_keys WHERE api_key = ? AND key = ?", (scope, key))
        conn.execute(
            "INSERT INTO idempotency_keys (api_key, key, fingerprint, state, created_at) "
            "VALUES (?, ?, ?, 'in_flight', ?)",
            (scope, key, fp, now),
        )
        return None

    def complete(
        self, conn: sqlite3.Connection, api_key: str, key: str, status: int, body: bytes
    ) -> None:
        conn.execute(
            "UPDATE idempotency_keys SET state = 'done', status = ?, body = ? "
            "WHERE api_key = ? AND key = ?",
            (status, body, self.scope(api_key), key),
        )

    def release(self, conn: sqlite3.Connection, api_key: str, key: str) -> None:
        conn.execute(
            "DELETE FROM idempotency_keys WHERE api_key = ? AND key = ? AND state = 'in_flight'",
            (self.scope(api_key), key),
        )

    def recover(self, conn: sqlite3.Connection, now: int) -> None:
        """At startup nothing is in flight: drop stale reservations and expired responses."""
        conn.execute("DELETE FROM idempotency_keys WHERE state = 'in_flight'")
        conn.execute("DELETE FROM idempotency_keys WHERE created_at < ?", (now - self.retention,))
