"""Authentication judged on what the server accepted: signatures and the clock window.

``AuthChecks(profile)`` verifies each recorded request's ``X-Signature`` under the profile's
scheme, timestamp format and string to sign, with the API secret of its ``X-Api-Key`` when
the profile holds it (the default profile's test credentials, or the secret
``validate --api-secret`` gives), and compares its ``X-Timestamp`` with the time the
recording says the request was sent. Then, by the answer:

- a signature that does not verify: refused with the profile's answer to a bad signature
  (``auth.errors.bad_signature``, else ``auth.error``) is a pass, accepted a failure, under
  what it was signed over (``judge.signatures``: another secret AUTH-013, another body
  AUTH-014, another method or target AUTH-015); answered with another status a failure too;
  when that status is one the profile gives a check other than authentication (a 400, 404,
  409, 422) and the signature verifies over no variant of the request, that check ran first
  (AUTH-020);
- a timestamp more than the clock window in the past (AUTH-010) or future (AUTH-011):
  accepted is a failure, refused with the answer to an expired timestamp a pass;
- a correctly signed request (AUTH-005) with a fresh timestamp (AUTH-012) and a nonce not seen
  before: accepted is a pass, refused with the auth error a failure.

A secret the profile does not hold, a profile that signs with a hook (``auth.signer``), a
signature masked by the recorder, a request body whose
exact bytes the recording lost (``Exchange.request_body_inexact``: replacement characters, a cut
body, binary data held as text) or a request without a recorded start time leaves the check
"not exercised" with that reason. Malformed or missing
headers are the per-exchange checks' (``checks.ExchangeValidator``); a reused nonce is
``cross``'s (AUTH-016).
"""

from __future__ import annotations

import re

from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.core.signing import parse_timestamp
from conformance.judge.signatures import Signed
from conformance.validator.checks import FAMILY, HELPER_AUTH
from conformance.validator.exchange import Exchange
from conformance.validator.signatures import SignatureVerifier
from conformance.validator.tables import Finding

AUTH_SIGNATURE = f"{FAMILY}.auth_signature"
AUTH_TIMESTAMP = f"{FAMILY}.auth_timestamp"
CLOCK_MARGIN_S = 2.0
"""Seconds by which the recorder's clock may differ from the server's: a timestamp that close
to the window's edge is not judged."""
# Answers that say nothing about authentication: a rate limit, a body too large to read.
NOT_JUDGED = frozenset({413, 429})
# Signatures that verify over no variant of their request: the server cannot have taken them
# for good ones (so another check's answer to them says it did not authenticate first).
UNTOLD = frozenset({Signed.OTHER_SECRET, Signed.UNKNOWN})
_DIGITS = re.compile(r"^[0-9]{1,19}$")


class AuthChecks:
    """Signature and clock window of each recorded request (module docstring)."""

    def __init__(self, profile: Profile) -> None:
        auth = profile.auth
        self._window = auth.clock_window_secs
        self._bad_signature = auth.error_for("bad_signature").status
        self._expired = auth.error_for("expired").status
        self._statuses = auth.statuses
        # the answers of the checks that must come after authentication
        self._other_checks = frozenset(e.status for e in profile.error_specs) - auth.statuses
        self._nonce = re.compile(auth.nonce_pattern)
        self._timestamp_format = auth.timestamp_format
        self._signatures = SignatureVerifier(profile)
        self._helpers = frozenset(route.operation_id for route in profile.helpers.values())
        self._reasons_given: set[str] = set()

    def observe(
        self,
        exchange: Exchange,
        headers: dict[str, str],
        operation_id: str | None,
        sent_at: float | None,
        nonce_seen: bool,
    ) -> list[Finding]:
        """The verdicts on ``exchange``'s authentication; ``sent_at``: when the recording says it
        was sent (Unix seconds); ``nonce_seen``: its nonce was sent before with its API key."""
        status = exchange.status
        if status is None or operation_id is None:
            return []  # no answer, or not an operation (unknown paths are routed first)
        accepted = 200 <= status < 300
        refused = status == self._bad_signature
        if status >= 500 or status in NOT_JUDGED:
            return []  # a server error, a rate limit, a body too large: not about authentication
        api_key = headers.get("x-api-key")
        sent = headers.get("x-signature")
        timestamp = headers.get("x-timestamp")
        nonce = headers.get("x-nonce")
        if not api_key or not sent or not timestamp or not nonce:
            return []  # missing headers: the per-exchange checks judge them
        stated = self._parse(timestamp)
        if stated is None or not self._nonce.search(nonce):
            return []  # malformed: the per-exchange checks judge them
        findings: list[Finding] = []
        fresh = self._window_findings(stated, sent_at, status, findings)
        signed = self._verify(exchange, headers, findings)
        verified = None if signed is None else signed is Signed.AS_SENT
        if signed is not None and not verified:
            ids = signed.ids
            if status in self._other_checks and signed in UNTOLD:
                # another check's answer, as if the server had not authenticated first; a
                # signature over a changed request may have been taken for a good one instead
                ids = (*ids, "AUTH-020")
            if operation_id in self._helpers:  # they authenticate like every operation
                ids = (*ids, HELPER_AUTH)
            findings.append(
                (
                    AUTH_SIGNATURE,
                    ids,
                    Outcome.PASSED if refused else Outcome.FAILED,
                    f"the signature {signed.value}: "
                    + _answer(status, accepted, refused, self._bad_signature),
                )
            )
        elif verified is True and accepted:
            ids = ("AUTH-005", "AUTH-012") if fresh else ("AUTH-005",)
            message = "signed as the profile states" + (
                ", timestamp inside the clock window" if fresh else ""
            )
            findings.append((AUTH_SIGNATURE, ids, Outcome.PASSED, f"{message}: accepted"))
        elif verified is True and status in self._statuses and fresh and not nonce_seen:
            findings.append(
                (
                    AUTH_SIGNATURE,
                    ("AUTH-005", "AUTH-012"),
                    Outcome.FAILED,
                    "signed as the profile states, timestamp inside the clock window, nonce not "
                    f"seen before: refused ({status})",
                )
            )
        return findings

    def forged(self, exchange: Exchange, headers: dict[str, str]) -> bool:
        """Every auth header is there and the signature does not verify."""
        return self._signatures.forged(exchange, headers)

    def _parse(self, timestamp: str) -> float | None:
        if self._timestamp_format == "unix-seconds":
            return int(timestamp) if _DIGITS.match(timestamp) else None
        return parse_timestamp(timestamp, self._timestamp_format)

    def _window_findings(
        self,
        timestamp: float,
        sent_at: float | None,
        status: int,
        findings: list[Finding],
    ) -> bool:
        """Judge a timestamp outside the window; True when it is well inside it."""
        if sent_at is None:
            self._not_exercised(
                AUTH_TIMESTAMP,
                ("AUTH-010", "AUTH-011", "AUTH-012"),
                "the recording gives no time the request was sent (HAR startedDateTime, "
                "JSON Lines started_at): its timestamp cannot be compared",
                findings,
            )
            return False
        drift = timestamp - sent_at
        if abs(drift) <= self._window - CLOCK_MARGIN_S:
            return True
        if abs(drift) <= self._window + CLOCK_MARGIN_S:
            return False  # too close to the edge to tell
        rid, where = ("AUTH-010", "past") if drift < 0 else ("AUTH-011", "future")
        findings.append(
            (
                AUTH_TIMESTAMP,
                (rid,),
                Outcome.PASSED if status == self._expired else Outcome.FAILED,
                f"X-Timestamp {abs(drift):.0f} s in the {where} of when the request was sent "
                f"(window {self._window} s): "
                + _answer(status, 200 <= status < 300, status == self._expired, self._expired),
            )
        )
        return False

    def _verify(
        self, exchange: Exchange, headers: dict[str, str], findings: list[Finding]
    ) -> Signed | None:
        """What the signature signs; None when that cannot be known (with the reason)."""
        verified = self._signatures.verify(exchange, headers)
        if isinstance(verified, str):
            self._not_exercised(AUTH_SIGNATURE, ("AUTH-005", "AUTH-013"), verified, findings)
            return None
        return verified

    def _not_exercised(
        self, check: str, ids: tuple[str, ...], reason: str, findings: list[Finding]
    ) -> None:
        # once per reason: the report keeps one reason per check, not one per exchange
        if reason not in self._reasons_given:
            self._reasons_given.add(reason)
            findings.append((check, ids, Outcome.NOT_EXERCISED, reason))


def _answer(status: int, accepted: bool, refused: bool, error: int) -> str:
    if accepted:
        return f"accepted ({status})"
    if refused:
        return f"refused ({status})"
    return f"answered {status}, not the profile's auth error {error}"
