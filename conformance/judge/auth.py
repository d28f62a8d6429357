"""Authentication refused and accepted (spec 5, profile 1): which requests break which rule, the
answer the profile demands for each, and the verdict on the answer.

A request breaks a rule (a ``Breach``) when one of its four headers is missing or empty
(AUTH-001..004, answered as missing: AUTH-006), its ``X-Timestamp`` or ``X-Nonce`` does not
have the profile's form (AUTH-007, AUTH-008), its ``X-Signature`` does not have the scheme's
form or does not verify (what it signs instead, ``judge.signatures.Signed``: AUTH-013..015),
its API key is unknown (AUTH-009), its timestamp is more than the clock window in the past or
future of when it was sent (AUTH-010, AUTH-011), or it reuses a nonce already accepted with its
API key (AUTH-016). ``AuthRules.refusal`` judges the answer to it: the profile's answer to that
kind of failure (``auth.errors``, else ``auth.error``) passes, any other fails. The ids the
spec's header rules name (AUTH-001..004) need only a refusal.

AUTH-020 (authentication before validation): a request the caller knows to be otherwise invalid
names it in every verdict; a caller that cannot know (``known_valid=False``) blames it when a
request the server cannot have taken as authentic is answered by another check.

``AuthRules.accepted`` judges a request that breaks none of them: accepted is AUTH-005's pass
(and AUTH-012's, its timestamp well inside the window), refused by authentication a failure.
The verification of a signature needs the secrets: the caller gives its ``Signed`` verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Hashable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from conformance.core import signing
from conformance.core.patterns import ecma_search
from conformance.core.profile import ErrorSpec, Profile
from conformance.core.redaction import MASKED_VALUES
from conformance.core.results import Outcome
from conformance.core.signing import (
    API_KEY_HEADER,
    AUTH_HEADERS,
    NONCE_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    parse_timestamp,
)
from conformance.judge.findings import Finding
from conformance.judge.signatures import Signed

CHECK = "auth"
HEADER_IDS = {
    API_KEY_HEADER: "AUTH-001",
    SIGNATURE_HEADER: "AUTH-002",
    TIMESTAMP_HEADER: "AUTH-003",
    NONCE_HEADER: "AUTH-004",
}
ACCEPTED, HEADER_MISSING, MALFORMED_TIMESTAMP, MALFORMED_NONCE = (
    "AUTH-005",
    "AUTH-006",
    "AUTH-007",
    "AUTH-008",
)
UNKNOWN_KEY, STALE, FUTURE, INSIDE_WINDOW = "AUTH-009", "AUTH-010", "AUTH-011", "AUTH-012"
BAD_SIGNATURE, REPLAYED, BEFORE_VALIDATION = "AUTH-013", "AUTH-016", "AUTH-020"
HELPER_AUTH = "HELP-007"  # the test helpers authenticate like every operation (profile 6)
CLOCK_MARGIN_S = 2.0
"""Seconds by which the sender's clock may differ from the server's: a timestamp that close to
the window's edge is judged neither way."""
TIMESTAMP_FORMS = {
    "unix-seconds": r"^[0-9]+$",
    "unix-millis": r"^[0-9]+$",
    "rfc3339": signing.timestamp_pattern("rfc3339"),
}
SIGNATURE_FORMS = {scheme: signing.signature_pattern(scheme) for scheme in signing.SCHEMES}
# Signatures that verify over no variant of their request: the server cannot have taken them
# for good ones.
UNTOLD = frozenset({Signed.OTHER_SECRET, Signed.UNKNOWN})
_SECONDS = re.compile(r"^[0-9]{1,19}$")


@dataclass(frozen=True, slots=True)
class Breach:
    """What is wrong with a request's authentication, and the answers the profile allows."""

    what: str
    ids: tuple[str, ...]  # answered with one of ``answers``
    answers: tuple[ErrorSpec, ...]
    contract_ids: tuple[str, ...] = ()  # refused, with any 4xx
    untold: bool = True  # the server cannot have taken the request as authentic


class Clock(Enum):
    """An ``X-Timestamp`` against when its request was sent."""

    INSIDE = "well inside the window"
    EDGE = "too close to the window's edge to tell"
    PAST = "past"
    FUTURE = "future"


class AuthRules:
    """The authentication rules under one profile (module docstring)."""

    def __init__(self, profile: Profile) -> None:
        auth = profile.auth
        self._auth = auth
        self.window = auth.clock_window_secs
        self.statuses = auth.statuses
        self._timestamp_format = auth.timestamp_format
        self._timestamp_form = TIMESTAMP_FORMS.get(auth.timestamp_format, r"^.+$")
        self._nonce_form = auth.nonce_pattern
        # a hook's signatures may have any form
        self._signature_form = r"^.+$" if auth.signer else SIGNATURE_FORMS.get(auth.scheme, r"^.+$")
        # the answers of the checks that must come after authentication
        self._other_checks = frozenset(e.status for e in profile.error_specs) - auth.statuses

    # -- which rule a request breaks -------------------------------------------------------
    def headers(self, header: Callable[[str], str | None]) -> Breach | None:
        """The headers missing, empty or malformed (``header``: a request header's value by
        its canonical name); a masked value is present, its form unknown."""
        broken: list[str] = []
        contract: list[str] = []
        ids: list[str] = []
        kinds: list[str] = []  # the server may answer for any one of the faults
        for name in AUTH_HEADERS:
            value = header(name)
            if value is None or value == "":
                broken.append(f"no {name} header" if value is None else f"{name} empty")
                contract.append(HEADER_IDS[name])
                ids.append(HEADER_MISSING)
                kinds += ["missing"] if value is None else ["missing", "malformed"]
            elif value in MASKED_VALUES:
                continue
            elif name == TIMESTAMP_HEADER and not ecma_search(self._timestamp_form, value):
                broken.append(f"{name} {value[:40]!r} is not {self._timestamp_form}")
                ids.append(MALFORMED_TIMESTAMP)
                kinds.append("malformed")
            elif name == NONCE_HEADER and not ecma_search(self._nonce_form, value):
                broken.append(f"{name} {value[:40]!r} does not match {self._nonce_form}")
                ids.append(MALFORMED_NONCE)
                kinds.append("malformed")
            elif name == SIGNATURE_HEADER and not ecma_search(self._signature_form, value):
                # cut short or padded: the server may read it as malformed or as wrong
                broken.append(f"{name} is not of the form {self._signature_form}")
                ids.append(BAD_SIGNATURE)
                kinds += ["malformed", "bad_signature"]
        if not broken:
            return None
        return Breach(
            "; ".join(broken),
            tuple(dict.fromkeys(ids)),
            self._auth.errors_for(*kinds),
            tuple(dict.fromkeys(contract)),
        )

    def timestamp(self, text: str) -> float | None:
        """The Unix seconds a well-formed ``X-Timestamp`` states (None: malformed)."""
        if self._timestamp_format == "unix-seconds":
            return int(text) if _SECONDS.match(text) else None
        return parse_timestamp(text, self._timestamp_format)

    def clock(self, stated: float, sent_at: float) -> Clock:
        """Where a timestamp stating ``stated`` lies from the moment ``sent_at`` it was sent."""
        drift = stated - sent_at
        if abs(drift) <= self.window - CLOCK_MARGIN_S:
            return Clock.INSIDE
        if abs(drift) <= self.window + CLOCK_MARGIN_S:
            return Clock.EDGE
        return Clock.PAST if drift < 0 else Clock.FUTURE

    def outside_window(self, stated: float, sent_at: float) -> Breach | None:
        """AUTH-010 or AUTH-011: the timestamp is past the window's edge (by a margin)."""
        where = self.clock(stated, sent_at)
        if where not in (Clock.PAST, Clock.FUTURE):
            return None
        rid = STALE if where is Clock.PAST else FUTURE
        return Breach(
            f"X-Timestamp {abs(stated - sent_at):.0f} s in the {where.value} of when the "
            f"request was sent (window {self.window} s)",
            (rid,),
            (self._auth.error_for("expired"),),
            untold=False,
        )

    def signature(self, signed: Signed, *, form_known: bool = True) -> Breach | None:
        """What a signature that does not verify breaks (None: it verifies). ``form_known``:
        whether the signature's form was seen (a recorder masks it): one of another form than
        the scheme's may be answered as malformed too."""
        if signed is Signed.AS_SENT:
            return None
        kinds = ("bad_signature",) if form_known else ("malformed", "bad_signature")
        return Breach(
            f"the signature {signed.value}",
            signed.ids,
            self._auth.errors_for(*kinds),
            untold=signed in UNTOLD,
        )

    def unknown_key(self, api_key: str, known: Collection[str]) -> Breach | None:
        """AUTH-009: an API key none of ``known`` (every key the server knows) is."""
        if api_key in known:
            return None
        return Breach(
            "an X-Api-Key the server does not know",
            (UNKNOWN_KEY,),
            (self._auth.error_for("unknown_key"),),
        )

    def breach(
        self,
        header: Callable[[str], str | None],
        *,
        sent_at: float,
        signed: Signed,
        known_keys: Collection[str],
    ) -> Breach | None:
        """The first rule a request breaks, for a sender that knows when it sent it, what its
        signature signs and every key the server knows."""
        found = self.headers(header)
        if found is not None:
            return found
        found = self.unknown_key(header(API_KEY_HEADER) or "", known_keys)
        stated = self.timestamp(header(TIMESTAMP_HEADER) or "")
        if found is None and stated is not None:
            found = self.outside_window(stated, sent_at)
        return found or self.signature(signed)

    def replayed(self, where: str) -> Breach:
        """AUTH-016: a nonce accepted with the same API key before (in ``where``)."""
        return Breach(
            f"a nonce already accepted with this API key in {where}",
            (REPLAYED,),
            (self._auth.error_for("replayed"),),
            untold=False,
        )

    # -- the verdict on the answer ---------------------------------------------------------
    def authenticated(self, status: int) -> bool:
        """Neither an authentication error nor a server error."""
        return status not in self.statuses and status < 500

    def refusal(
        self,
        breach: Breach,
        status: int,
        answer: Any,
        *,
        known_valid: bool,
        also_invalid: bool = False,
        helper: bool = False,
    ) -> list[Finding]:
        """The answer ``status`` (its JSON document ``answer``; ``NOT_READ`` when the body is
        unknown, then the code is not compared) to a request that breaks ``breach``'s rule.
        ``also_invalid``: the request breaks the contract too (AUTH-020 is then judged);
        ``helper``: a test helper's request (HELP-007)."""
        findings: list[Finding] = []
        if breach.contract_ids:
            refused = 400 <= status < 500
            findings.append(
                Finding(
                    CHECK,
                    breach.contract_ids,
                    Outcome.PASSED if refused else Outcome.FAILED,
                    f"{breach.what}: "
                    + (f"refused ({status})" if refused else f"answered {status}"),
                )
            )
        ids = breach.ids
        if also_invalid or (not known_valid and breach.untold and status in self._other_checks):
            ids = (*ids, BEFORE_VALIDATION)
        if helper:
            ids = (*ids, HELPER_AUTH)
        wanted = " or ".join(
            f"{e.status} {e.code}" if e.code else str(e.status) for e in breach.answers
        )
        if _answers(status, answer, breach.answers):
            findings.append(
                Finding(CHECK, ids, Outcome.PASSED, f"{breach.what}: refused with {wanted}")
            )
        else:
            how = "accepted" if 200 <= status < 300 else "answered"
            findings.append(
                Finding(
                    CHECK,
                    ids,
                    Outcome.FAILED,
                    f"{breach.what}: {how} {status}{_code(answer)}, the profile's answer is "
                    + wanted,
                )
            )
        return findings

    def accepted(
        self, status: int, where: Clock | None, *, known_valid: bool, nonce_fresh: bool = True
    ) -> list[Finding]:
        """The answer to a request signed as the profile states, its timestamp ``where`` (None:
        unknown). ``known_valid``: nothing else is wrong with it (then any answer but an
        authentication or server error is an acceptance); ``nonce_fresh``: its nonce was not
        used before (else a refusal may be for that)."""
        inside = where is Clock.INSIDE
        ids = (ACCEPTED, INSIDE_WINDOW) if inside else (ACCEPTED,)
        what = "signed as the profile states" + (
            ", timestamp inside the clock window" if inside else ""
        )
        if 200 <= status < 300 or (known_valid and self.authenticated(status)):
            return [Finding(CHECK, ids, Outcome.PASSED, f"{what}: accepted ({status})")]
        if known_valid or (status in self.statuses and inside and nonce_fresh):
            nonce = ", nonce not seen before" if not known_valid else ""
            return [Finding(CHECK, ids, Outcome.FAILED, f"{what}{nonce}: not accepted ({status})")]
        return []


@dataclass(frozen=True, slots=True)
class NonceUse:
    timestamp: float | None  # what its X-Timestamp states
    where: str  # which exchange, for the message
    accepted: bool


class Table(Protocol):
    """Where ``NonceUses`` keeps what it saw (a dict, or a table that forgets the oldest)."""

    def get(self, key: Hashable) -> NonceUse | None: ...

    def put(self, key: Hashable, value: NonceUse) -> None: ...


class Memory(dict[Hashable, NonceUse]):
    """A ``Table`` that forgets nothing."""

    def put(self, key: Hashable, value: NonceUse) -> None:
        self[key] = value


class NonceUses:
    """The nonces used with each API key, fed requests in the order the server answered them:
    a nonce accepted before, within the clock window of the first use, is reused (AUTH-016)."""

    def __init__(self, rules: AuthRules, table: Table) -> None:
        self._rules = rules
        self._uses = table

    def observe(
        self, scope: Hashable, timestamp: float | None, where: str, *, accepted: bool
    ) -> tuple[Breach | None, bool]:
        """Record a use of the nonce ``scope`` names (its API key and value); ``accepted``: the
        server took the request as authentic (and its signature verifies). Returns the breach
        of a reuse, and whether the nonce was sent before (a refusal may then be for that)."""
        earlier = self._uses.get(scope)
        then = None if earlier is None else earlier.timestamp
        if (
            then is not None
            and timestamp is not None
            and abs(timestamp - then) > self._rules.window
        ):
            earlier = None  # outside the clock window: the server may have forgotten it
        if earlier is None or not earlier.accepted:
            if earlier is None or accepted:
                self._uses.put(scope, NonceUse(timestamp, where, accepted))
            return None, earlier is not None
        return self._rules.replayed(earlier.where), True


NOT_READ: Any = object()
"""The answer of a recording that lost the response body: its code cannot be compared."""


def _answers(status: int, answer: Any, allowed: tuple[ErrorSpec, ...]) -> bool:
    for spec in allowed:
        if status != spec.status:
            continue
        if spec.code is None or answer is NOT_READ:
            return True
        if isinstance(answer, dict) and answer.get("code") == spec.code:
            return True
    return False


def _code(answer: Any) -> str:
    code = answer.get("code") if isinstance(answer, dict) else None
    return f" {code!r}" if isinstance(code, str) else ""


def header_reader(headers: Mapping[str, str]) -> Callable[[str], str | None]:
    """``AuthRules.headers``' reader of request headers held by lower-case name."""
    return lambda name: headers.get(name.lower())
