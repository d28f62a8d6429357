"""Settle requests that must be refused, as data: one broken part each.

``TAMPERINGS``: well-formed payloads that must not verify (the profile's 422, X402-014..021),
each signed by the suite's wallet so that only the named part is wrong (which the judge, given
the requirements issued, sees: ``judge.x402_settlements``; but for a forged signature).
``MALFORMED``: payloads that miss a field of the x402 exact-EVM shape or break one of the
profile's formats (400, X402-PAYLOAD-001); a case whose value would still satisfy the profile's
pattern is left out, so a profile with other formats is never failed for a value it allows.
"""

from __future__ import annotations

import copy
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.core.patterns import ecma_search
from conformance.core.profile import X402PayloadShape
from conformance.suite.x402.api import X402Api
from conformance.suite.x402.model import EXACT, UPTO, Issued

AUTHORIZATION_FIELDS = ("from", "to", "value", "valid_after", "valid_before", "nonce")
INT_LIMITS = {"int32": 2**31, "int64": 2**63}
# How far in the future a "not valid yet" authorization starts, and how long ago an "expired"
# one ended: well beyond any clock difference the profile's auth window tolerates.
NOT_YET_SECS = 120
EXPIRED_SECS = 60


def other_address(address: str) -> str:
    """Another address of the same form (its last hex digit changed)."""
    last = address[-1:].lower()
    return address[:-1] + ("1" if last != "1" else "2")


def other_nonce(nonce: str) -> str:
    fresh = "0x" + secrets.token_hex(32)
    return fresh if fresh.lower() != nonce.lower() else "0x" + "0" * 64


Build = Callable[[X402Api, Issued], dict[str, Any]]


@dataclass(frozen=True)
class Tampering:
    """A settle request with one part that does not verify."""

    name: str
    requirement_id: str
    build: Build
    schemes: tuple[str, ...] = (EXACT, UPTO)
    forged: bool = False  # a signature that is not the payer's: the judge verifies none

    def applies(self, issued: Issued, schemes: list[str]) -> bool:
        return issued.scheme in self.schemes and (
            self.name != "requirements: another scheme" or len(schemes) > 1
        )


def _now() -> int:
    return int(time.time())


def _altered(issued: Issued, changes: dict[str, Any]) -> Issued:
    entry = {**copy.deepcopy(issued.entry), **changes}
    return Issued(issued.payment_id, issued.deployment, issued.scheme, issued.max_raw, entry)


def _signed_by_other_wallet(api: X402Api, issued: Issued) -> dict[str, Any]:
    honest = api.factories.signed_payload(issued.entry)
    forged = api.factories.signed_payload(issued.entry, other_wallet=True)
    payload = {**honest, "signature": forged["signature"]}  # from still names the suite wallet
    return api.settle_body(issued.payment_id, issued.entry, payload)


def _changed_after_signing(api: X402Api, issued: Issued) -> dict[str, Any]:
    payload = api.factories.signed_payload(issued.entry)
    payload["authorization"]["valid_after"] -= 1
    return api.settle_body(issued.payment_id, issued.entry, payload)


def _other_scheme(issued: Issued) -> dict[str, Any]:
    return {"scheme": UPTO if issued.scheme == EXACT else EXACT}


TAMPERINGS: tuple[Tampering, ...] = (
    Tampering(
        "authorization.to is not pay_to",
        "X402-015",
        lambda api, i: api.pay(i, to=other_address(str(i.entry["pay_to"]))),
    ),
    Tampering(
        "authorization.nonce is not the issued nonce",
        "X402-016",
        lambda api, i: api.pay(i, nonce=other_nonce(str(i.entry["nonce"]))),
    ),
    Tampering(
        "valid_after is in the future",
        "X402-017",
        lambda api, i: api.pay(i, valid_after=_now() + NOT_YET_SECS),
    ),
    Tampering(
        "valid_before has passed",
        "X402-018",
        lambda api, i: api.pay(
            i, valid_after=_now() - 10 * EXPIRED_SECS, valid_before=_now() - EXPIRED_SECS
        ),
    ),
    Tampering(
        "exact value below the maximum",
        "X402-019",
        lambda api, i: api.pay(i, value=i.max_raw - 1),
        schemes=(EXACT,),
    ),
    Tampering(
        "exact value above the maximum",
        "X402-019",
        lambda api, i: api.pay(i, value=i.max_raw + 1),
        schemes=(EXACT,),
    ),
    Tampering(
        "upto value above the maximum",
        "X402-020",
        lambda api, i: api.pay(i, value=i.max_raw + 1),
        schemes=(UPTO,),
    ),
    Tampering(
        "signed by another wallet than from", "X402-021", _signed_by_other_wallet, forged=True
    ),
    Tampering(
        "authorization changed after signing", "X402-021", _changed_after_signing, forged=True
    ),
    Tampering(
        "requirements: a lower max_amount_required",
        "X402-014",
        lambda api, i: api.pay(
            _altered(i, {"max_amount_required": str(i.max_raw // 2)}), value=i.max_raw // 2
        ),
    ),
    Tampering(
        "requirements: another pay_to",
        "X402-014",
        lambda api, i: api.pay(_altered(i, {"pay_to": other_address(str(i.entry["pay_to"]))})),
    ),
    Tampering(
        "requirements: a later valid_before",
        "X402-014",
        lambda api, i: api.pay(
            _altered(i, {"valid_before": int(i.entry["valid_before"]) + EXPIRED_SECS})
        ),
    ),
    Tampering(
        "requirements: another scheme",
        "X402-014",
        lambda api, i: api.pay(_altered(i, _other_scheme(i))),
    ),
)


# ------------------------------------------------------------------------------ malformed
Mutation = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Malformed:
    """A payload missing a field or breaking a format. ``pattern`` names the profile pattern
    the new value must break (the case is dropped when it does not)."""

    name: str
    mutate: Mutation
    field: str | None = None  # the authorization field (or "signature") it changes
    pattern: str | None = None  # X402PayloadShape attribute whose pattern the value breaks

    def apply(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload with this change (``payload`` itself is left as it is)."""
        return self.mutate(copy.deepcopy(payload))

    def value(self, payload: dict[str, Any]) -> Any:
        changed = self.apply(payload)
        if self.field == "signature":
            return changed.get("signature")
        return (changed.get("authorization") or {}).get(self.field)

    def applies(self, shape: X402PayloadShape, payload: dict[str, Any]) -> bool:
        if self.pattern is None:
            return True
        value = self.value(payload)
        return not (isinstance(value, str) and ecma_search(getattr(shape, self.pattern), value))


def _without(name: str) -> Mutation:
    def mutate(payload: dict[str, Any]) -> dict[str, Any]:
        payload.pop(name, None)
        return payload

    return mutate


def _authorization(name: str, change: Callable[[Any], Any] | None) -> Mutation:
    """Change (or, with None, drop) one authorization field."""

    def mutate(payload: dict[str, Any]) -> dict[str, Any]:
        authorization = dict(payload["authorization"])
        if change is None:
            authorization.pop(name, None)
        else:
            authorization[name] = change(authorization[name])
        payload["authorization"] = authorization
        return payload

    return mutate


def _signature(change: Callable[[str], str]) -> Mutation:
    def mutate(payload: dict[str, Any]) -> dict[str, Any]:
        payload["signature"] = change(str(payload["signature"]))
        return payload

    return mutate


def malformed_cases(shape: X402PayloadShape) -> tuple[Malformed, ...]:
    beyond = INT_LIMITS.get(shape.time_format, 2**63)
    return (
        Malformed("without signature", _without("signature")),
        Malformed("without authorization", _without("authorization")),
        *(
            Malformed(f"without authorization.{name}", _authorization(name, None))
            for name in AUTHORIZATION_FIELDS
        ),
        Malformed(
            "authorization not an object",
            lambda p: {**p, "authorization": [p["authorization"]]},
        ),
        Malformed(
            "signature one byte short",
            _signature(lambda s: s[:-2]),
            "signature",
            "signature_pattern",
        ),
        Malformed(
            "signature without 0x",
            _signature(lambda s: s[2:] + "00"),
            "signature",
            "signature_pattern",
        ),
        Malformed(
            "signature not hex",
            _signature(lambda s: "0x" + "zz" * 65),
            "signature",
            "signature_pattern",
        ),
        Malformed("signature as a number", lambda p: {**p, "signature": 1}),
        Malformed(
            "from without 0x",
            _authorization("from", lambda v: str(v)[2:] + "00"),
            "from",
            "address_pattern",
        ),
        Malformed(
            "to one digit short",
            _authorization("to", lambda v: str(v)[:-1]),
            "to",
            "address_pattern",
        ),
        Malformed(
            "value with a fraction",
            _authorization("value", lambda v: f"{v}.5"),
            "value",
            "value_pattern",
        ),
        Malformed(
            "value negative", _authorization("value", lambda v: f"-{v}"), "value", "value_pattern"
        ),
        Malformed("value as a JSON number", _authorization("value", int)),
        Malformed("valid_after as a string", _authorization("valid_after", str)),
        Malformed(
            "valid_before with a fraction", _authorization("valid_before", lambda v: v + 0.5)
        ),
        Malformed(
            f"valid_before beyond {shape.time_format}",
            _authorization("valid_before", lambda v: beyond),
        ),
        Malformed(
            "nonce one digit short",
            _authorization("nonce", lambda v: str(v)[:-1]),
            "nonce",
            "nonce_pattern",
        ),
        Malformed(
            "nonce not hex",
            _authorization("nonce", lambda v: "0x" + "g" * 64),
            "nonce",
            "nonce_pattern",
        ),
    )


# Kept by --quick: one missing field, one of each format, one type.
QUICK_MALFORMED = frozenset(
    {
        "without signature",
        "without authorization.nonce",
        "signature one byte short",
        "value with a fraction",
        "valid_after as a string",
        "nonce one digit short",
    }
)
