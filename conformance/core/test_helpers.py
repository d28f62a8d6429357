"""The profile's test helpers (section 6): each mapped to the server's own endpoint, or absent.

A helper under ``[test_helpers]`` is one of:

- ``"POST /v1/test-helpers/payments/{id}/deposit"``: a method and a path, the request body
  the default one (``CANONICAL_BODIES``);
- a table ``{method, path, body, status}``: the server's own endpoint, a body template whose
  strings may hold placeholders (``PLACEHOLDERS``), and the status of its success answer;
- ``false``: the server has no such helper.

``profile.test_helpers = false`` makes every helper absent. The suite renders a helper's body
from its template (``HelperRoute.render``); the reference server reads the values back
(``extract``) to serve a mapped helper.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

HELPER_OPERATIONS = {"deposit": "testDepositPayment", "expire": "testExpirePayment"}
HELPER_NAMES = {operation_id: name for name, operation_id in HELPER_OPERATIONS.items()}
# What the suite can put in a helper's body: the payment's id, and for a deposit the currency,
# the chain, the amount as a decimal string or in the currency's smallest unit, and a
# transaction hash (0x and 64 hex digits) derived from the payment, currency, chain and amount.
PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "deposit": ("id", "currency_id", "chain_id", "amount", "raw_amount", "tx_hash"),
    "expire": ("id",),
}
CANONICAL_BODIES: dict[str, Any] = {
    "deposit": {"currency_id": "{currency_id}", "chain_id": "{chain_id}", "amount": "{amount}"},
    "expire": None,
}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class HelperRoute:
    """A test helper the server has: where it is, what body it takes, what it answers."""

    name: str
    method: str
    path: str  # with {id} for the payment id
    body: Any  # the body template; None: no body
    status: int | None  # the success status; None: the profile's success status

    @property
    def operation_id(self) -> str:
        return HELPER_OPERATIONS[self.name]

    @property
    def route(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def mapped_body(self) -> bool:
        """The body differs from the default helper's (the reference server translates it)."""
        return bool(self.body != CANONICAL_BODIES[self.name])

    def url_path(self, payment_id: str) -> str:
        return self.path.replace("{id}", quote(payment_id, safe=""))

    def render(self, values: Mapping[str, str]) -> Any:
        """The body template with every placeholder replaced by ``values``."""
        return _render(self.body, values)

    def request_body(self, payment_id: str, body: Any, decimals: Mapping[str, int]) -> Any:
        """What to send for the default helper's ``body`` (``CANONICAL_BODIES``): the same
        values in this helper's shape. A body not of the default shape (a deliberately broken
        one) goes as it is; ``decimals`` gives each currency's, for ``{raw_amount}``."""
        if not self.mapped_body:
            return body
        values = {"id": payment_id}
        if self.name == "deposit":
            fields = ("currency_id", "chain_id", "amount")
            if not isinstance(body, Mapping) or not all(
                isinstance(body.get(f), str) for f in fields
            ):
                return body
            values.update({f: str(body[f]) for f in fields})
            places = decimals.get(values["currency_id"])
            amount = values["amount"]
            values["raw_amount"] = amount if places is None else raw_amount(amount, places)
            # derived, not random: a replayed deposit (same Idempotency-Key) must be the same
            # request
            seed = "\n".join((payment_id, values["currency_id"], values["chain_id"], amount))
            values["tx_hash"] = "0x" + hashlib.sha256(seed.encode()).hexdigest()
        elif body is not None:
            return body
        return self.render(values)


def _render(node: Any, values: Mapping[str, str]) -> Any:
    if isinstance(node, str):
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), node)
    if isinstance(node, Mapping):
        return {k: _render(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_render(v, values) for v in node]
    return node


def helper_routes(data: Mapping[str, Any]) -> dict[str, HelperRoute]:
    """The helpers a profile document gives the server, by name; absent ones left out."""
    if not data["profile"]["test_helpers"]:
        return {}
    found = {}
    for name, raw in data.get("test_helpers", {}).items():
        if raw is False or name not in HELPER_OPERATIONS:
            continue
        if isinstance(raw, str):
            method, _, path = raw.partition(" ")
            found[name] = HelperRoute(name, method.upper(), path, CANONICAL_BODIES[name], None)
        else:
            body = raw.get("body", CANONICAL_BODIES[name])
            status = raw.get("status")
            found[name] = HelperRoute(
                name, str(raw["method"]).upper(), str(raw["path"]), body, status
            )
    return found


def helper_problems(data: Mapping[str, Any]) -> Iterator[str]:
    """What a profile's helper mappings ask that the suite cannot fill, each naming its key."""
    for name, raw in data.get("test_helpers", {}).items():
        if raw is False or name not in HELPER_OPERATIONS:
            continue
        key = f"test_helpers.{name}"
        path = raw.partition(" ")[2] if isinstance(raw, str) else str(raw["path"])
        if "{id}" not in path:
            yield f"{key}: the path must hold {{id}}, the payment id"
        for other in _PLACEHOLDER.findall(path):
            if other != "id":
                yield f"{key}: the path may hold only {{id}}, not {{{other}}}"
        if isinstance(raw, str) or "body" not in raw:
            continue
        known = PLACEHOLDERS[name]
        named = set(_placeholders(raw["body"]))
        for unknown in sorted(named - set(known)):
            yield (
                f"{key}.body: unknown placeholder {{{unknown}}}; the suite fills "
                + ", ".join(f"{{{k}}}" for k in known)
            )
        if name == "deposit" and not named & {"amount", "raw_amount"}:
            yield f"{key}.body: names neither {{amount}} nor {{raw_amount}}: no amount to deposit"


def _placeholders(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield from _PLACEHOLDER.findall(node)
    elif isinstance(node, Mapping):
        for value in node.values():
            yield from _placeholders(value)
    elif isinstance(node, list):
        for value in node:
            yield from _placeholders(value)


def extract(template: Any, body: Any) -> dict[str, str] | None:
    """The placeholder values that render ``template`` into ``body``, or None when ``body``
    does not have the template's shape (the reference server's reading of a mapped helper)."""
    found: dict[str, str] = {}
    return found if _extract(template, body, found) else None


def _extract(template: Any, body: Any, found: dict[str, str]) -> bool:
    if isinstance(template, str):
        names = _PLACEHOLDER.findall(template)
        if not names:
            return bool(template == body)
        if not isinstance(body, str):
            return False
        literal = _PLACEHOLDER.split(template)[::2]
        pattern = "(.*?)".join(re.escape(part) for part in literal)
        match = re.fullmatch(pattern, body, re.S)
        if match is None:
            return False
        for name, value in zip(names, match.groups(), strict=True):
            if found.setdefault(name, value) != value:
                return False
        return True
    if isinstance(template, Mapping):
        return (
            isinstance(body, Mapping)
            and set(template) == set(body)
            and all(_extract(template[k], body[k], found) for k in template)
        )
    if isinstance(template, list):
        return (
            isinstance(body, list)
            and len(template) == len(body)
            and all(_extract(t, b, found) for t, b in zip(template, body, strict=True))
        )
    return bool(template == body)


def raw_amount(amount: str, decimals: int) -> str:
    """A decimal amount in the currency's smallest unit (``"1.5"``, 6 -> ``"1500000"``)."""
    whole, _, fraction = amount.partition(".")
    digits = (whole + fraction[:decimals].ljust(decimals, "0")).lstrip("0")
    return digits or "0"


def decimal_amount(raw: str, decimals: int) -> str:
    """The inverse of ``raw_amount`` (``"1500000"``, 6 -> ``"1.5"``)."""
    digits = raw.lstrip("0").rjust(decimals + 1, "0")
    whole, fraction = digits[: len(digits) - decimals], digits[len(digits) - decimals :]
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def canonical_body(helper: HelperRoute, raw: bytes, decimals: Mapping[str, int]) -> bytes:
    """The default helper's body (``CANONICAL_BODIES``) for ``raw``, a body sent to a helper
    mapped with its own body template: what the reference server reads. Malformed JSON is
    returned as it is; a deposit body of another shape as ``{}``: validation refuses both."""
    if not helper.mapped_body:
        return raw
    try:
        document = json.loads(raw) if raw else None
    except ValueError:
        return raw
    values = extract(helper.body, document)
    if helper.name != "deposit":
        return raw if values is None else b""
    if values is None:
        return b"{}"
    body = {k: values[k] for k in ("currency_id", "chain_id", "amount") if k in values}
    places = decimals.get(values.get("currency_id", ""))
    units = values.get("raw_amount", "")
    if "amount" not in body and units.isdigit() and units.isascii() and places is not None:
        body["amount"] = decimal_amount(units, places)
    return json.dumps(body).encode()
