"""What a request's ``X-Signature`` signs (spec 2, profile 1): the request as sent, or, for a
signature that does not verify, which part of the request it was made over instead.

A signature made over the request with another profile secret breaks AUTH-013's rule; one made
over another body (no body, the body serialised otherwise, or without one of its members)
AUTH-014's; one over another method, or the target without its query, AUTH-015's. A signature
that verifies over none of these is AUTH-013's (another secret, as far as anyone can tell). The
suite's recorder (which holds the secrets) and the validator name a wrong signature the same way.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from conformance.core import jsonsafe
from conformance.core.signing import verify

MAX_BODY_VARIANTS = 64 * 1024  # bytes of a body whose variants are tried; past it, none are
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


class Signed(enum.Enum):
    AS_SENT = "verifies"
    OTHER_SECRET = "signed with another secret"
    BODY_CHANGED = "signed over another body"
    TARGET_CHANGED = "signed over another method or target"
    UNKNOWN = "does not verify"

    @property
    def ids(self) -> tuple[str, ...]:
        """The requirement a request signed so must be refused under (none: it verifies)."""
        return _IDS[self]

    @property
    def mark(self) -> str:
        """What a recording shows in place of such a signature (``core.redaction``)."""
        return f"[redacted: {self.value}]"

    @classmethod
    def of_mark(cls, text: str) -> Signed | None:
        """The verdict a recording's mark gives, None for any other value."""
        return _BY_MARK.get(text)


_IDS = {
    Signed.AS_SENT: (),
    Signed.OTHER_SECRET: ("AUTH-013",),
    Signed.BODY_CHANGED: ("AUTH-014",),
    Signed.TARGET_CHANGED: ("AUTH-015",),
    Signed.UNKNOWN: ("AUTH-013",),
}

_BY_MARK = {signed.mark: signed for signed in Signed}


@dataclass(frozen=True, slots=True)
class SignedRequest:
    headers: Mapping[str, str]  # the auth headers, by their canonical names
    method: str
    target: str  # path and query, as sent
    body: bytes
    host: str


@dataclass(frozen=True, slots=True)
class Scheme:
    template: str  # the profile's string to sign
    name: str  # the signature scheme


def diagnose(request: SignedRequest, secret: str, others: Sequence[str], scheme: Scheme) -> Signed:
    """How ``request``'s signature was made, tried with ``secret`` (its API key's) and then
    with ``others`` (the profile's other secrets)."""

    def signs(key: str, method: str, target: str, body: bytes) -> bool:
        return verify(
            key,
            scheme.template,
            request.headers,
            method,
            target,
            body,
            scheme=scheme.name,
            host=request.host,
        )

    method, target, body = request.method, request.target, request.body
    if signs(secret, method, target, body):
        return Signed.AS_SENT
    if any(signs(other, method, target, body) for other in others if other != secret):
        return Signed.OTHER_SECRET
    if any(signs(secret, method, target, variant) for variant in _bodies(body)):
        return Signed.BODY_CHANGED
    path, _, query = target.partition("?")
    targets = [(m, target) for m in METHODS if m != method.upper()]
    if query:
        targets.append((method, path))
    if any(signs(secret, m, t, body) for m, t in targets):
        return Signed.TARGET_CHANGED
    return Signed.UNKNOWN


def _bodies(body: bytes) -> Iterator[bytes]:
    """The bodies a request's signature may have been made over instead of ``body``: none, the
    same document serialised compactly, and (for an object) without one of its members."""
    if not body:
        return
    yield b""
    if len(body) > MAX_BODY_VARIANTS:
        return
    try:
        document = jsonsafe.loads(body)
    except ValueError:
        return
    yield _compact(document)
    if isinstance(document, dict):
        for name in document:
            yield _compact({k: v for k, v in document.items() if k != name})


def _compact(document: object) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
