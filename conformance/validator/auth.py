"""Authentication judged on what the server accepted: signatures and the clock window.

``AuthChecks(profile)`` verifies each recorded request's ``X-Signature`` under the profile's
scheme, timestamp format and string to sign, with the API secret of its ``X-Api-Key`` when
the profile holds it (the default profile's test credentials, or the secret
``validate --api-secret`` gives), and compares its ``X-Timestamp`` with the time the
recording says the request was sent. The judge's rules (``judge.auth``) give the verdict:
a signature that does not verify (AUTH-013..015) or a timestamp outside the clock window
(AUTH-010, AUTH-011) must be refused with the profile's answer to it, a request signed as the
profile states with a fresh timestamp and a nonce not seen before accepted (AUTH-005,
AUTH-012).

A secret the profile does not hold, a profile that signs with a hook (``auth.signer``), a
signature masked by the recorder, a request body whose
exact bytes the recording lost (``Exchange.request_body_inexact``: replacement characters, a cut
body, binary data held as text) or a request without a recorded start time leaves the check
"not exercised" with that reason. Malformed or missing
headers are the per-exchange checks' (``checks.ExchangeValidator``); a reused nonce is
``cross``'s (AUTH-016).
"""

from __future__ import annotations

from typing import Any

from conformance.core.profile import Profile
from conformance.core.redaction import MASKED_VALUES
from conformance.core.results import Outcome
from conformance.judge.auth import NOT_READ, AuthRules, Breach, Clock, header_reader
from conformance.judge.findings import Finding as JudgeFinding
from conformance.judge.signatures import Signed
from conformance.validator.checks import FAMILY
from conformance.validator.exchange import Exchange
from conformance.validator.signatures import SignatureVerifier
from conformance.validator.tables import Finding, json_body

AUTH_SIGNATURE = f"{FAMILY}.auth_signature"
AUTH_TIMESTAMP = f"{FAMILY}.auth_timestamp"
# Answers that say nothing about authentication: a rate limit, a body too large to read.
NOT_JUDGED = frozenset({413, 429})


class AuthChecks:
    """Signature and clock window of each recorded request (module docstring)."""

    def __init__(self, profile: Profile) -> None:
        self.rules = AuthRules(profile)
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
        if status >= 500 or status in NOT_JUDGED:
            return []  # a server error, a rate limit, a body too large: not about authentication
        if self.rules.headers(header_reader(headers)) is not None:
            return []  # missing or malformed: the per-exchange checks judge them
        stated = self.rules.timestamp(headers["x-timestamp"])
        if stated is None:
            return []  # a form the header pattern lets through but no moment (a 13th month)
        answer = answer_of(exchange)
        findings: list[Finding] = []
        where: Clock | None = None
        if sent_at is None:
            self._not_exercised(
                AUTH_TIMESTAMP,
                ("AUTH-010", "AUTH-011", "AUTH-012"),
                "the recording gives no time the request was sent (HAR startedDateTime, "
                "JSON Lines started_at): its timestamp cannot be compared",
                findings,
            )
        else:
            where = self.rules.clock(stated, sent_at)
            outside = self.rules.outside_window(stated, sent_at)
            if outside is not None:
                findings += _as(AUTH_TIMESTAMP, self._refusal(outside, status, answer))
        signed = self._verify(exchange, headers, findings)
        if signed is None:
            return findings
        masked = headers.get("x-signature") in MASKED_VALUES
        breach = self.rules.signature(signed, form_known=not masked)
        if breach is not None:
            findings += _as(
                AUTH_SIGNATURE,
                self._refusal(breach, status, answer, helper=operation_id in self._helpers),
            )
        else:
            verdicts = self.rules.accepted(
                status, where, known_valid=False, nonce_fresh=not nonce_seen
            )
            findings += _as(AUTH_SIGNATURE, verdicts)
        return findings

    def forged(self, exchange: Exchange, headers: dict[str, str]) -> bool:
        """Every auth header is there and the signature does not verify."""
        return self._signatures.forged(exchange, headers)

    def _refusal(
        self, breach: Breach, status: int, answer: Any, *, helper: bool = False
    ) -> list[JudgeFinding]:
        return self.rules.refusal(breach, status, answer, known_valid=False, helper=helper)

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


def answer_of(exchange: Exchange) -> Any:
    """The answer's JSON document as the judge's auth rules read it."""
    if exchange.response_body_missing:
        return NOT_READ
    return json_body(exchange.response_body)


def _as(check: str, findings: list[JudgeFinding]) -> list[Finding]:
    """The judge's findings under this module's check name."""
    return [(check, f.ids, f.outcome, f.message) for f in findings]
