"""A settlement against the requirements issued for its payment (spec x402, profile 5): what
it contradicts of them, and the answer the profile demands then (X402-014 to X402-020).

The suite's x402 family sends settlements it tampered with and knows what it issued; the
validator remembers the requirements an earlier exchange issued (``IssuedEntry``: digests of
what a settlement must answer, few bytes for a recording's many payments).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.core.profile import ErrorSpec
from conformance.core.results import Outcome
from conformance.judge.answers import Call
from conformance.judge.findings import Finding
from conformance.judge.values import canonical, digits, integer

CHECK = "x402_settlement"
CLOCK_MARGIN_S = 30.0
"""Seconds by which the clock that says when a settle request was sent (the recorder's, the
suite's) may differ from the payer's and the server's: an authorization's valid_after or
valid_before that close to that time is not judged (the x402 family's tamperings are 60 s and
more away)."""


def _digest(text: str) -> int:
    return hash(text)


@dataclass(frozen=True, slots=True)
class IssuedEntry:
    """One ``accepts`` entry of issued requirements, as a settlement must answer it."""

    fingerprint: int  # digest of the whole entry
    scheme: str
    pay_to: int  # digest of the address in lower case
    max_raw: int | None
    nonce: int  # digest of the nonce in lower case

    @classmethod
    def of(cls, item: Any) -> IssuedEntry | None:
        if not isinstance(item, dict):
            return None
        maximum = item.get("max_amount_required")
        return cls(
            _digest(canonical(item)),
            str(item.get("scheme", "")),
            _digest(str(item.get("pay_to", "")).lower()),
            int(maximum) if digits(maximum) else None,
            _digest(str(item.get("nonce", "")).lower()),
        )

    def has_nonce(self, nonce: str) -> bool:
        return self.nonce == _digest(nonce.lower())


def contradictions(
    issued: Sequence[IssuedEntry],
    requirements: Any,
    authorization: Mapping[str, Any],
    now: float | None,
    margin: float = CLOCK_MARGIN_S,
) -> list[tuple[str, str]]:
    """What a settlement's requirements and authorization contradict of the ``issued`` ones, as
    (requirement id, what). ``now``: when the request was sent (None: the times are not
    judged), within ``margin`` seconds of the server's clock."""
    entry = None
    if isinstance(requirements, dict):
        sent = _digest(canonical(requirements))
        entry = next((e for e in issued if e.fingerprint == sent), None)
        if entry is None:
            # What the authorization contradicts then follows from the requirements it answers
            # (another pay_to, another maximum): one rule broken, named once.
            return [("X402-014", "payment_requirements differ from the ones issued")]
    if entry is None and len(issued) == 1:
        entry = issued[0]
    if entry is None:
        return []
    broken: list[tuple[str, str]] = []
    to, nonce = authorization.get("to"), authorization.get("nonce")
    if isinstance(to, str) and _digest(to.lower()) != entry.pay_to:
        broken.append(("X402-015", f"authorization.to {to} is not the issued pay_to"))
    if isinstance(nonce, str) and not entry.has_nonce(nonce):
        broken.append(("X402-016", "authorization.nonce is not the issued nonce"))
    after, before = authorization.get("valid_after"), authorization.get("valid_before")
    if now is not None and integer(after) and after > now + margin:
        broken.append(("X402-017", f"valid_after is {after - now:.0f} s after the request"))
    if now is not None and integer(before) and before < now - margin:
        broken.append(("X402-018", f"valid_before passed {now - before:.0f} s before the request"))
    value = authorization.get("value")
    amount = int(value) if digits(value) else None
    if amount is not None and entry.max_raw is not None:
        if entry.scheme == "exact" and amount != entry.max_raw:
            broken.append(("X402-019", f"exact value {amount} is not {entry.max_raw}"))
        elif entry.scheme == "upto" and amount > entry.max_raw:
            broken.append(("X402-020", f"upto value {amount} is above {entry.max_raw}"))
    return broken


def settlement_findings(
    broken: Sequence[tuple[str, str]],
    call: Call,
    failure: ErrorSpec,
    *,
    known_valid: bool,
    what: str,
) -> list[Finding]:
    """The answer to a settlement that breaks ``broken`` (``contradictions``): the profile's
    settlement failure. ``known_valid``: the request is valid but for what it breaks (the suite
    built it so), so another answer fails, and the failure's code is the profile's; otherwise
    (a recorded request) a refusal with another status is left unjudged (its form, an unknown
    or settled payment) and the code is X402-022's."""
    if not broken:
        return []
    ids = tuple(dict.fromkeys(rid for rid, _ in broken))
    what = f"{what}: {'; '.join(text for _, text in broken)}"
    if call.success:
        return [Finding(CHECK, ids, Outcome.FAILED, f"{what}: accepted ({call.status})")]
    if call.status == failure.status and (
        not known_valid or failure.code is None or call.code == failure.code
    ):
        return [Finding(CHECK, ids, Outcome.PASSED, f"{what}: refused ({call.status})")]
    if not known_valid:
        return []
    wanted = f"{failure.status}" + (f" {failure.code}" if failure.code else "")
    got = f"{call.status}" + (f" {call.code}" if call.code else "")
    return [Finding(CHECK, ids, Outcome.FAILED, f"{what}: expected {wanted}, got {got}")]
