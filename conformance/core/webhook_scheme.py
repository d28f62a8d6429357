"""How webhook deliveries are signed: ``webhooks.signature`` and ``[webhooks.signing]``.

``signature = "standard-webhooks"`` (the default profile) is Standard Webhooks: headers
``webhook-id``, ``webhook-timestamp`` and ``webhook-signature`` = space-separated ``v1,<base64
HMAC-SHA256>`` entries over ``"{id}.{timestamp}.{body}"``, keyed with the base64-decoded part of
the secret after its prefix. ``signature = "hmac"`` reads the same parameters from
``[webhooks.signing]``, each key left out keeping its Standard Webhooks value (for
``format = "key-value"`` the one header carries ``t=<timestamp>,v1=<signature>`` items).

``scheme_problems`` says what the suite cannot verify (``profile check`` refuses it); the suite
(``suite.webhooks.signatures``) and the reference server (``reference.webhook_dispatch``) read the
``WebhookScheme`` it describes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

STANDARD = "standard-webhooks"
HMAC = "hmac"
SEPARATE, KEY_VALUE = "separate", "key-value"
KEY_AFTER_PREFIX, KEY_UTF8 = "base64-after-prefix", "utf8"
PLACEHOLDERS = ("id", "timestamp", "body")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")

# Standard Webhooks, and what a key of [webhooks.signing] left out means.
DEFAULTS: dict[str, str] = {
    "format": SEPARATE,
    "id_header": "webhook-id",
    "timestamp_header": "webhook-timestamp",
    "signature_header": "webhook-signature",
    "signature_prefix": "v1,",
    "timestamp_key": "t",
    "signature_key": "v1",
    "signed": "{id}.{timestamp}.{body}",
    "algorithm": "sha256",
    "encoding": "base64",
    "key": KEY_AFTER_PREFIX,
}
# Between the entries of the signature header: Standard Webhooks' space, Stripe's comma.
DEFAULT_SEPARATOR = {SEPARATE: " ", KEY_VALUE: ","}


@dataclass(frozen=True)
class WebhookScheme:
    """Where a delivery carries its id, timestamp and signatures, and what is signed how."""

    format: str
    id_header: str
    timestamp_header: str  # SEPARATE only: KEY_VALUE carries it in the signature header
    signature_header: str
    signature_prefix: str  # SEPARATE: before each signature ("v1,")
    timestamp_key: str  # KEY_VALUE: the item holding the timestamp ("t")
    signature_key: str  # KEY_VALUE: the item(s) holding a signature ("v1")
    separator: str
    signed: str  # a template over {id}, {timestamp} and {body}
    algorithm: str
    encoding: str
    key: str

    @classmethod
    def of(cls, signature: str, raw: Mapping[str, Any] | None) -> WebhookScheme:
        values = dict(DEFAULTS)
        if signature == HMAC:
            values.update({k: str(v) for k, v in (raw or {}).items() if k != "separator"})
        separator = (raw or {}).get("separator") if signature == HMAC else None
        fmt = values["format"]
        return cls(
            separator=str(separator) if separator is not None else DEFAULT_SEPARATOR[fmt],
            **values,
        )

    def content(self, message_id: str, timestamp: str, body: bytes) -> bytes:
        """The bytes signed: the template with its placeholders filled."""
        before, _, after = self.signed.partition("{body}")
        fill = {"id": message_id, "timestamp": timestamp}
        text = [_PLACEHOLDER.sub(lambda m: fill[m.group(1)], part) for part in (before, after)]
        return text[0].encode() + body + text[1].encode()

    def header_value(self, timestamp: str, signatures: list[str]) -> str:
        """The signature header carrying ``signatures`` (and, for KEY_VALUE, the timestamp)."""
        if self.format == KEY_VALUE:
            items = [f"{self.timestamp_key}={timestamp}"]
            items += [f"{self.signature_key}={s}" for s in signatures]
            return self.separator.join(items)
        return self.separator.join(f"{self.signature_prefix}{s}" for s in signatures)

    def read(self, headers: Mapping[str, str]) -> tuple[str | None, str | None, list[str]]:
        """(id, timestamp, signatures) of a delivery's headers (lower-case names)."""
        message_id = headers.get(self.id_header.lower())
        value = headers.get(self.signature_header.lower()) or ""
        if self.format == KEY_VALUE:
            stamps = self._items(value, self.timestamp_key)
            stamp = stamps[0] if len(stamps) == 1 else None
        else:
            stamp = headers.get(self.timestamp_header.lower())
        return message_id, stamp, self.signatures(value)

    def signatures(self, value: str) -> list[str]:
        """The signatures a signature header carries (none empty)."""
        if self.format == KEY_VALUE:
            return [v for v in self._items(value, self.signature_key) if v]
        prefix = self.signature_prefix
        entries = [e.strip() for e in value.split(self.separator)]
        return [e[len(prefix) :] for e in entries if e.startswith(prefix) and e[len(prefix) :]]

    def _items(self, value: str, key: str) -> list[str]:
        items = [e.strip().partition("=") for e in value.split(self.separator)]
        return [v.strip() for k, sep, v in items if sep and k.strip() == key]

    @property
    def timestamp_where(self) -> str:
        if self.format == KEY_VALUE:
            return f"the {self.timestamp_key}= item of {self.signature_header}"
        return f"the {self.timestamp_header} header"

    def describe(self) -> str:
        """What the suite expects, for a failure message (never a secret)."""
        keyed = (
            "the base64-decoded secret after its prefix"
            if self.key == KEY_AFTER_PREFIX
            else "the secret's UTF-8 bytes"
        )
        return (
            f"a {self.encoding} HMAC-{self.algorithm.upper()} of {self.signed!r} keyed with {keyed}"
        )


_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def scheme_problems(signature: str, raw: Mapping[str, Any] | None) -> Iterator[str]:
    """What in ``webhooks.signature`` / ``[webhooks.signing]`` the suite cannot verify."""
    if signature != HMAC:
        if raw is not None:
            yield (
                f'webhooks.signing: read only with webhooks.signature = "{HMAC}" '
                f"(it is {signature!r}, whose parameters are fixed)"
            )
        return
    if raw is None:
        yield f'webhooks.signing: webhooks.signature = "{HMAC}" needs the [webhooks.signing] table'
        return
    scheme = WebhookScheme.of(signature, raw)
    headers = [("id_header", scheme.id_header), ("signature_header", scheme.signature_header)]
    if scheme.format == SEPARATE:
        headers.append(("timestamp_header", scheme.timestamp_header))
    for key, name in headers:
        if not _TOKEN.match(name):
            yield f"webhooks.signing.{key}: {name!r} is not an HTTP header name"
    lowered = [name.lower() for _, name in headers]
    if len(set(lowered)) != len(lowered):
        yield "webhooks.signing: the id, timestamp and signature headers must differ"
    names = set(_PLACEHOLDER.findall(scheme.signed))
    unknown = sorted(names - set(PLACEHOLDERS))
    if unknown:
        yield (
            f"webhooks.signing.signed: unknown placeholder {{{unknown[0]}}} "
            f"(the suite fills {', '.join('{' + p + '}' for p in PLACEHOLDERS)})"
        )
    elif set("{}") & set(_PLACEHOLDER.sub("", scheme.signed)):
        yield "webhooks.signing.signed: a brace that is not part of a placeholder"
    if scheme.signed.count("{body}") != 1:
        yield "webhooks.signing.signed: must contain {body} exactly once (the body is signed)"
    if scheme.format == KEY_VALUE:
        for key in ("timestamp_key", "signature_key"):
            value = getattr(scheme, key)
            if "=" in value or scheme.separator in value or value != value.strip():
                yield (
                    f"webhooks.signing.{key}: {value!r} cannot be read back from "
                    f"'key=value' items separated by {scheme.separator!r}"
                )
        if scheme.timestamp_key == scheme.signature_key:
            yield "webhooks.signing: timestamp_key and signature_key must differ"
    elif scheme.separator in scheme.signature_prefix:
        yield (
            f"webhooks.signing.signature_prefix: {scheme.signature_prefix!r} contains the "
            f"separator {scheme.separator!r}, so the entries cannot be told apart"
        )
