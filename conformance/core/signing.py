"""Request signing under a profile's authentication scheme.

The default profile signs ``"{timestamp}\\n{nonce}\\n{METHOD}\\n{target}\\n"`` followed by the raw
body bytes with HMAC-SHA256 keyed by the API secret, hex encoded. ``target`` is the path as sent,
plus ``?`` and the raw query string when there is one.

A profile varies the HMAC's hash (``sha256``, ``sha512``) and the signature's encoding (``hex``,
``base64``, ``base64url``) through ``auth.scheme`` (``"hmac-<hash>-<encoding>"``), the form of
``X-Timestamp`` through ``auth.timestamp_format`` and what is signed through
``auth.string_to_sign`` (``PLACEHOLDERS``). The raw body bytes follow the filled template unless
the template names the body itself (``{body}``) or one of its hashes. Any other scheme is a
Python hook, ``auth.signer`` (``signer_hook``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import string
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from conformance.core import hook_calls

API_KEY_HEADER = "X-Api-Key"
SIGNATURE_HEADER = "X-Signature"
TIMESTAMP_HEADER = "X-Timestamp"
NONCE_HEADER = "X-Nonce"
AUTH_HEADERS = (API_KEY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, NONCE_HEADER)

DEFAULT_STRING_TO_SIGN = "{timestamp}\n{nonce}\n{method}\n{target}\n"
DEFAULT_SCHEME = "hmac-sha256-hex"

ALGORITHMS = {"sha256": hashlib.sha256, "sha512": hashlib.sha512}
ENCODINGS = ("hex", "base64", "base64url")
SCHEMES = tuple(f"hmac-{a}-{e}" for a in ALGORITHMS for e in ENCODINGS)
TIMESTAMP_FORMATS = ("unix-seconds", "unix-millis", "rfc3339")

# What each placeholder of ``string_to_sign`` stands for (docs/profile.md#auth).
PLACEHOLDERS = {
    "method": "the HTTP method in upper case",
    "path": "the path exactly as sent, without the query",
    "query": "the raw query string as sent, without '?' (empty when there is none)",
    "target": "the path as sent, plus '?' and the raw query string when there is one",
    "host": "the Host header as sent (host, and ':port' when not the scheme's default)",
    "timestamp": "the X-Timestamp header",
    "nonce": "the X-Nonce header",
    "api_key": "the X-Api-Key header",
    "body": "the raw body bytes (nothing for an empty body)",
    "body_sha256": "the SHA-256 of the raw body bytes, lowercase hex",
    "body_sha256_base64": "the SHA-256 of the raw body bytes, base64 with padding",
}
BODY_PLACEHOLDERS = frozenset({"body", "body_sha256", "body_sha256_base64"})

_DIGITS_SECONDS = re.compile(r"^[0-9]{1,12}$")
_DIGITS_MILLIS = re.compile(r"^[0-9]{1,15}$")
_RFC3339 = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)


class TemplateError(ValueError):
    """A ``string_to_sign`` the suite cannot fill; the message says why."""


def template_fields(template: str) -> tuple[str, ...]:
    """The placeholders ``template`` names, in order; raises ``TemplateError`` for one the suite
    cannot fill (unknown, positional, with a conversion or format spec, or unbalanced braces)."""
    names: list[str] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise TemplateError(
            f"is not a valid template ({exc}; write a literal brace as {{{{ or }}}})"
        ) from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in PLACEHOLDERS:
            known = ", ".join(f"{{{k}}}" for k in PLACEHOLDERS)
            shown = f"{{{name}}}" if name else "{}"
            raise TemplateError(f"names unknown placeholder {shown} (known: {known})")
        if spec or conversion:
            raise TemplateError(f"placeholder {{{name}}} takes no conversion or format spec")
        names.append(name)
    return tuple(names)


def appends_body(template: str) -> bool:
    """Whether the raw body bytes follow the filled template (it names no body placeholder)."""
    return not BODY_PLACEHOLDERS.intersection(template_fields(template))


@dataclass(frozen=True)
class SigningInput:
    """What one request's signature may cover, as it is sent.

    ``target`` is the path plus ``?`` and the raw query when there is one; ``host`` the Host
    header ("" when unknown). A ``signer`` hook receives this and the credential.
    """

    method: str
    target: str
    body: bytes
    timestamp: str
    nonce: str
    api_key: str
    host: str = ""

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def query(self) -> str:
        return self.target.split("?", 1)[1] if "?" in self.target else ""


def string_to_sign(
    template: str,
    timestamp: str,
    nonce: str,
    method: str,
    target: str,
    body: bytes,
    *,
    host: str = "",
    api_key: str = "",
) -> bytes:
    """The bytes signed for one request: ``template`` filled in, then the raw body unless the
    template names the body or a hash of it."""
    inp = SigningInput(method, target, body, timestamp, nonce, api_key, host)
    return message_of(template, inp)


def message_of(template: str, inp: SigningInput) -> bytes:
    parts: list[bytes] = []
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(literal.encode("utf-8"))
        if name is not None:
            parts.append(_value(name, inp))
    if appends_body(template):
        parts.append(inp.body)
    return b"".join(parts)


def _value(name: str, inp: SigningInput) -> bytes:
    if name == "body":
        return inp.body
    if name == "body_sha256":
        return hashlib.sha256(inp.body).hexdigest().encode("ascii")
    if name == "body_sha256_base64":
        return base64.b64encode(hashlib.sha256(inp.body).digest())
    values = {
        "method": inp.method.upper(),
        "path": inp.path,
        "query": inp.query,
        "target": inp.target,
        "host": inp.host,
        "timestamp": inp.timestamp,
        "nonce": inp.nonce,
        "api_key": inp.api_key,
    }
    return values[name].encode("utf-8")


def signature(secret: str, message: bytes, scheme: str = DEFAULT_SCHEME) -> str:
    """The ``X-Signature`` of ``message`` under ``scheme`` (``"hmac-<hash>-<encoding>"``)."""
    algorithm, encoding = _split_scheme(scheme)
    digest = hmac.new(secret.encode("utf-8"), message, ALGORITHMS[algorithm]).digest()
    if encoding == "hex":
        return digest.hex()
    if encoding == "base64":
        return base64.b64encode(digest).decode("ascii")
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def _split_scheme(scheme: str) -> tuple[str, str]:
    _, algorithm, encoding = scheme.split("-", 2)
    return algorithm, encoding


def signature_pattern(scheme: str) -> str:
    """A regex of a well-formed ``X-Signature`` under ``scheme`` (length and alphabet)."""
    algorithm, encoding = _split_scheme(scheme)
    size = ALGORITHMS[algorithm]().digest_size
    if encoding == "hex":
        return f"^[0-9a-f]{{{size * 2}}}$"
    if encoding == "base64":
        chars, pad = divmod(size, 3)
        tail = {0: "", 1: "[A-Za-z0-9+/]{2}==", 2: "[A-Za-z0-9+/]{3}="}[pad]
        return f"^[A-Za-z0-9+/]{{{chars * 4}}}{tail}$"
    return f"^[A-Za-z0-9_-]{{{len(base64.urlsafe_b64encode(bytes(size)).rstrip(b'='))}}}$"


def timestamp_pattern(timestamp_format: str) -> str:
    """A regex of a well-formed ``X-Timestamp`` under ``timestamp_format``."""
    if timestamp_format == "unix-millis":
        return _DIGITS_MILLIS.pattern
    if timestamp_format == "rfc3339":
        return _RFC3339.pattern
    return _DIGITS_SECONDS.pattern


def format_timestamp(unix_seconds: int, timestamp_format: str = "unix-seconds") -> str:
    """``unix_seconds`` written as ``X-Timestamp`` under ``timestamp_format``."""
    if timestamp_format == "unix-millis":
        return str(unix_seconds * 1000)
    if timestamp_format == "rfc3339":
        return datetime.fromtimestamp(unix_seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(unix_seconds)


def parse_timestamp(text: str, timestamp_format: str = "unix-seconds") -> float | None:
    """The Unix time (seconds) an ``X-Timestamp`` states, or None when it is malformed."""
    if timestamp_format == "unix-millis":
        return int(text) / 1000 if _DIGITS_MILLIS.match(text) else None
    if timestamp_format == "rfc3339":
        if not _RFC3339.match(text):
            return None
        try:
            moment = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
        except ValueError:
            return None
        return moment.timestamp()
    return int(text) if _DIGITS_SECONDS.match(text) else None


def new_nonce() -> str:
    return uuid.uuid4().hex


class CredentialLike(Protocol):
    """What signing needs of a credential (``core.profile.Credential`` fits)."""

    @property
    def api_key(self) -> str: ...

    @property
    def api_secret(self) -> str: ...


# A hook: called with the request and its credential, returns the authentication headers.
SignerHook = Callable[[SigningInput, CredentialLike], Mapping[str, str]]


class SignerHookError(RuntimeError):
    """The profile's ``auth.signer`` hook failed or returned something other than headers."""


@dataclass(frozen=True)
class Scheme:
    """A profile's built-in signing choices (``[auth]``), or its ``signer`` hook."""

    name: str = DEFAULT_SCHEME
    timestamp_format: str = "unix-seconds"
    template: str = DEFAULT_STRING_TO_SIGN
    hook: SignerHook | None = field(default=None, compare=False)
    hook_name: str = ""

    def timestamp(self, unix_seconds: int) -> str:
        return format_timestamp(unix_seconds, self.timestamp_format)

    def parse_timestamp(self, text: str) -> float | None:
        return parse_timestamp(text, self.timestamp_format)

    def message(self, inp: SigningInput) -> bytes:
        return message_of(self.template, inp)

    def sign(self, secret: str, inp: SigningInput) -> str:
        """The built-in scheme's signature (the hook is not consulted)."""
        return signature(secret, self.message(inp), self.name)

    def covers(self) -> frozenset[str]:
        """What the built-in signature covers: placeholders, plus ``body`` when appended."""
        fields = set(template_fields(self.template))
        if fields & BODY_PLACEHOLDERS or appends_body(self.template):
            fields.add("body")
        if "target" in fields:
            fields.update({"path", "query"})
        return frozenset(fields)

    def headers(self, inp: SigningInput, credential: CredentialLike) -> dict[str, str]:
        """The authentication headers of ``inp`` for ``credential``: the hook's, when the
        profile names one, else the four headers of the built-in scheme."""
        if self.hook is not None:
            return _call_hook(self.hook, self.hook_name, inp, credential)
        return {
            API_KEY_HEADER: inp.api_key,
            SIGNATURE_HEADER: self.sign(credential.api_secret, inp),
            TIMESTAMP_HEADER: inp.timestamp,
            NONCE_HEADER: inp.nonce,
        }


def _call_hook(
    hook: SignerHook, name: str, inp: SigningInput, credential: CredentialLike
) -> dict[str, str]:
    call = hook_calls.call_hook(hook, inp, credential)
    if call.timed_out:
        raise SignerHookError(
            f"the auth.signer hook {name} did not answer within {hook_calls.HOOK_TIMEOUT_S:g} s"
        )
    if call.error is not None:  # any failure of user code is reported as the hook's
        raise SignerHookError(f"the auth.signer hook {name} raised {type(call.error).__name__}")
    found = call.value
    if not isinstance(found, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in found.items()
    ):
        raise SignerHookError(
            f"the auth.signer hook {name} must return a mapping of header names to strings"
        )
    return dict(found)


@dataclass(frozen=True)
class _Credential:
    name: str
    api_key: str
    api_secret: str = field(repr=False)
    merchant_id: str = ""


@dataclass(frozen=True)
class Signer:
    """Produces the authentication headers for one credential under one scheme.

    Without ``scheme``, the default scheme over ``template``; ``Profile.signer`` builds one
    under the profile's choices. ``credential`` is what a hook receives besides the key and
    secret (its name and merchant)."""

    api_key: str
    api_secret: str
    template: str = DEFAULT_STRING_TO_SIGN
    scheme: Scheme | None = None
    credential: CredentialLike | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        return f"Signer(api_key={self.api_key!r})"

    @property
    def effective_scheme(self) -> Scheme:
        if self.scheme is None:
            return Scheme(template=self.template)
        return self.scheme

    def headers(
        self,
        method: str,
        target: str,
        body: bytes = b"",
        *,
        timestamp: int | None = None,
        nonce: str | None = None,
        host: str = "",
    ) -> dict[str, str]:
        scheme = self.effective_scheme
        ts = scheme.timestamp(int(time.time()) if timestamp is None else timestamp)
        nc = new_nonce() if nonce is None else nonce
        inp = SigningInput(method.upper(), target, body, ts, nc, self.api_key, host)
        # the key and secret given win over the credential's (a refusal mode signs with others)
        known = self.credential
        credential = _Credential(
            str(getattr(known, "name", "")),
            self.api_key,
            self.api_secret,
            str(getattr(known, "merchant_id", "")),
        )
        return scheme.headers(inp, credential)


def verify(
    secret: str,
    template: str,
    headers: Mapping[str, str],
    method: str,
    target: str,
    body: bytes,
    *,
    scheme: str = DEFAULT_SCHEME,
    host: str = "",
) -> bool:
    """Constant-time check of ``X-Signature`` against the expected one."""
    inp = SigningInput(
        method,
        target,
        body,
        headers[TIMESTAMP_HEADER],
        headers[NONCE_HEADER],
        headers.get(API_KEY_HEADER, ""),
        host,
    )
    expected = signature(secret, message_of(template, inp), scheme)
    return hmac.compare_digest(expected.encode("ascii"), headers[SIGNATURE_HEADER].encode())
