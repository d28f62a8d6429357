"""Profiles: an implementer's declared choices for what the specification leaves open.

A profile is a TOML file validated against ``profiles/profile.schema.json``. ``load_profile``
accepts a shipped profile name (``"default"``) or a path, and raises ``ProfileError`` naming
every problem once, each with its key, when the file is not a valid profile. A file with
``extends = "default"`` holds only what differs from the default profile
(``profile_extends``).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from conformance.core.catalogue import CatalogueError, load_catalogue
from conformance.core.profile_extends import extended
from conformance.core.resources import package_data

SHIPPED_PROFILES_DIR = package_data("profiles")


MAX_PROBLEMS = 100  # listed by ``profile check``; a hostile file cannot flood the console
EXTENDS_HINT = (
    'a profile states every choice, or begins with extends = "default" and gives only what differs'
)


class ProfileError(ValueError):
    """A profile file that cannot be used; the message names the key and the problem.

    ``problems`` lists each problem once (at most ``MAX_PROBLEMS``), ``context`` says which
    file; the message joins them on one line.
    """

    def __init__(self, message: str, problems: tuple[str, ...] = (), context: str = "") -> None:
        super().__init__(message)
        self.problems = problems
        self.context = context


@dataclass(frozen=True)
class Credential:
    name: str
    api_key: str
    api_secret: str = field(repr=False)
    merchant_id: str

    def __str__(self) -> str:  # never let a secret reach a log line by accident
        return f"{self.name} ({self.api_key})"


@dataclass(frozen=True)
class ErrorSpec:
    """An expected error outcome: its HTTP status and, when the profile pins it, its code."""

    status: int
    code: str | None = None


@dataclass(frozen=True)
class Range:
    min: int
    max: int
    default: int | None = None


@dataclass(frozen=True)
class Transition:
    operation: str
    sources: tuple[str, ...]
    target: str


@dataclass(frozen=True)
class Currency:
    currency_id: str
    code: str
    symbol: str
    name: str
    decimals: int
    chains: tuple[str, ...]
    asset_kinds: dict[str, str]


@dataclass(frozen=True)
class X402PayloadShape:
    """The formats of a settle request's ``payment_payload`` (every field required)."""

    signature_pattern: str
    address_pattern: str
    value_pattern: str
    time_format: str
    nonce_pattern: str


@dataclass(frozen=True)
class RateLimitRule:
    """How the server answers a rate-limited request (the profile's optional ``[rate_limit]``)."""

    status: int = 429
    retry_after_required: bool = False
    error_code: str | None = None


@dataclass(frozen=True)
class Profile:
    """A validated profile. ``data`` keeps the whole document for less common keys."""

    name: str
    source: str
    sha256: str
    data: dict[str, Any] = field(repr=False)
    extends: str | None = None  # the shipped profile a partial profile was merged over

    # -- the parts most checks need, typed -------------------------------------------------
    @property
    def test_helpers(self) -> bool:
        return bool(self.data["profile"]["test_helpers"])

    @property
    def credentials(self) -> tuple[Credential, ...]:
        return tuple(Credential(**c) for c in self.data["credentials"])

    @property
    def primary(self) -> Credential:
        return self.credentials[0]

    @property
    def secondary(self) -> Credential:
        return self.credentials[1]

    @property
    def clock_window_secs(self) -> int:
        return int(self.data["auth"]["clock_window_secs"])

    @property
    def string_to_sign(self) -> str:
        return str(self.data["auth"]["string_to_sign"])

    def error(self, section: str, key: str) -> ErrorSpec:
        """``profile.error("status", "validation")`` -> ``ErrorSpec(400, "validation_error")``."""
        raw = self.data[section][key]
        return ErrorSpec(status=int(raw["status"]), code=raw.get("code"))

    def range(self, section: str, key: str) -> Range:
        raw = self.data[section][key]
        return Range(min=int(raw["min"]), max=int(raw["max"]), default=raw.get("default"))

    def success_status(self, operation_id: str) -> int:
        status = self.data["status"]
        if operation_id in status["create_operations"]:
            return int(status["created"])
        return int(status["success"])

    def transitions(self, resource: str) -> tuple[Transition, ...]:
        return tuple(
            Transition(t["operation"], tuple(t["from"]), t["to"])
            for t in self.data[resource]["transitions"]
        )

    @property
    def currencies(self) -> dict[str, Currency]:
        result = {}
        for currency_id, raw in self.data["fixtures"]["currencies"].items():
            result[currency_id] = Currency(
                currency_id=currency_id,
                code=raw["code"],
                symbol=raw["symbol"],
                name=raw["name"],
                decimals=int(raw["decimals"]),
                chains=tuple(d["chain_id"] for d in raw["deployments"]),
                asset_kinds={d["chain_id"]: d["asset_kind"] for d in raw["deployments"]},
            )
        return result

    @property
    def chains(self) -> tuple[str, ...]:
        return tuple(self.data["fixtures"]["chains"])

    def withdraw_addresses(self, merchant_id: str) -> tuple[str, ...]:
        return tuple(self.data["fixtures"]["withdraw_addresses"].get(merchant_id, ()))

    @property
    def split_merchants(self) -> tuple[str, ...]:
        return tuple(self.data["fixtures"]["split_merchants"])

    @property
    def x402_payload(self) -> X402PayloadShape | None:
        """The pinned shape of x402 payment payloads, or None when the profile leaves it open."""
        raw = self.data["x402"].get("payment_payload")
        return None if raw is None else X402PayloadShape(**raw)

    @property
    def rate_limit(self) -> RateLimitRule | None:
        """The declared rate-limit answer, or None when the profile declares none."""
        raw = self.data.get("rate_limit")
        if raw is None:
            return None
        return RateLimitRule(
            status=int(raw.get("status", 429)),
            retry_after_required=bool(raw.get("retry_after_required", False)),
            error_code=raw.get("error_code"),
        )

    def idempotency_required(self, method: str, operation_id: str) -> bool:
        idem = self.data["idempotency"]
        return method.upper() in idem["required_methods"] and (
            operation_id not in idem["optional_operations"]
        )


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        (SHIPPED_PROFILES_DIR / "profile.schema.json").read_text(encoding="utf-8")
    )
    return loaded


def shipped_profiles() -> list[str]:
    return sorted(p.stem for p in SHIPPED_PROFILES_DIR.glob("*.toml"))


def resolve_profile_path(name_or_path: str | Path) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix == "" and not candidate.exists():
        shipped = SHIPPED_PROFILES_DIR / f"{candidate.name}.toml"
        if shipped.is_file():
            return shipped
        raise ProfileError(
            f"no profile named {str(name_or_path)!r}: shipped profiles are "
            f"{', '.join(shipped_profiles())}; or give the path of a .toml file"
        )
    if candidate.is_dir():
        raise ProfileError(f"profile {str(candidate)!r} is a directory, not a .toml file")
    if not candidate.is_file():
        raise ProfileError(f"profile file {str(candidate)!r} does not exist")
    return candidate


def _location(error: jsonschema.ValidationError) -> str:
    parts = [str(p) if not isinstance(p, int) else f"[{p}]" for p in error.absolute_path]
    return ".".join(parts).replace(".[", "[") or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    where = _location(error)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        keys = ", ".join(f"{where}.{k}" if where != "(top level)" else k for k in extra)
        return f"unknown key {keys}"
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        keys = ", ".join(f"{where}.{k}" if where != "(top level)" else k for k in missing)
        return f"missing key {keys}"
    path = list(error.absolute_path)
    if path[:1] == ["credentials"] and (len(path) <= 2 or path[-1] == "api_secret"):
        # jsonschema's message quotes the value: a secret, or a credential holding one
        return f"{where}: {_rule(error)}"
    return f"{where}: {error.message}"


def _rule(error: jsonschema.ValidationError) -> str:
    """What ``error`` requires, without the value that broke it."""
    wanted = error.validator_value
    if error.validator == "type":
        return f"must be of type {wanted}"
    if error.validator == "minItems":
        return f"must have at least {wanted} entries"
    if error.validator == "minLength":
        return "must not be empty"
    return f"breaks {error.validator} {wanted!r}"


def profile_problems(data: dict[str, Any]) -> tuple[str, ...]:
    """Every problem of a whole profile document, each once, in key order: the schema's, then
    (for a document the schema accepts) the cross references it cannot express."""
    validator = jsonschema.Draft202012Validator(
        _schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    # jsonschema reports a missing key once per key, and _describe names all of them at once
    problems = tuple(dict.fromkeys(_describe(e) for e in errors))
    if not problems:
        problems = tuple(dict.fromkeys(_inconsistencies(data)))
    return problems


def validate_profile_data(data: dict[str, Any]) -> None:
    problems = profile_problems(data)
    if problems:
        shown = problems[:MAX_PROBLEMS]
        if len(problems) > MAX_PROBLEMS:
            shown += (f"and {len(problems) - MAX_PROBLEMS} more problems",)
        raise ProfileError(f"invalid profile: {'; '.join(shown)}", shown)


def _inconsistencies(data: dict[str, Any]) -> Iterator[str]:
    known_ops = _operation_ids()
    for resource in ("payments", "subscriptions", "payout_schedules"):
        states = data[resource]["states"]
        if data[resource]["initial_state"] not in states:
            yield (
                f"{resource}.initial_state {data[resource]['initial_state']!r} is not one of "
                f"{resource}.states ({', '.join(states)})"
            )
        for i, t in enumerate(data[resource]["transitions"]):
            where = f"{resource}.transitions[{i}]"
            for key, named in (("from", t["from"]), ("to", [t["to"]])):
                unknown = [s for s in named if s not in states]
                if unknown:
                    yield (
                        f"{where}.{key} names unknown state {unknown[0]!r} "
                        f"({resource}.states are {', '.join(states)})"
                    )
            if t["operation"] not in known_ops:
                yield f"{where}.operation: unknown operation id {t['operation']!r}"
    for key in ("status.create_operations", "idempotency.optional_operations"):
        table, name = key.split(".")
        unknown_ops = [o for o in data[table][name] if o not in known_ops]
        if unknown_ops:
            yield f"{key}: unknown operation id {unknown_ops[0]!r}"
    for key in (
        "payments.expires_in_secs",
        "payments.list_limit",
        "subscriptions.interval_secs",
        "statements.limit",
    ):
        table, name = key.split(".")
        r = data[table][name]
        if r["min"] > r["max"]:
            yield f"{key}: min is greater than max"
        elif "default" in r and not r["min"] <= r["default"] <= r["max"]:
            yield f"{key}: default {r['default']} is outside min..max"
    idem = data["idempotency"]
    if idem["min_length"] > idem["max_length"]:
        yield "idempotency: min_length is greater than max_length"
    chains = data["fixtures"]["chains"]
    for currency_id, currency in data["fixtures"]["currencies"].items():
        for i, deployment in enumerate(currency["deployments"]):
            if deployment["chain_id"] not in chains:
                yield (
                    f"fixtures.currencies.{currency_id}.deployments[{i}].chain_id "
                    f"{deployment['chain_id']!r} is not one of fixtures.chains"
                )
    keys = [c["api_key"] for c in data["credentials"]]
    if len(set(keys)) != len(keys):
        yield "credentials: api_key values must differ"


def _operation_ids() -> frozenset[str]:
    """The 20 operation ids and the test helpers, as the requirement catalogue lists them."""
    try:
        catalogue = load_catalogue()
    except CatalogueError as exc:
        raise ProfileError(f"cannot check operation ids: {exc}") from None
    return frozenset((*catalogue.operations, *catalogue.helper_operations))


def load_profile(name_or_path: str | Path = "default") -> Profile:
    path = resolve_profile_path(name_or_path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ProfileError(f"cannot read profile file {str(path)!r}: {exc.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ProfileError(f"profile file {str(path)!r} is not UTF-8 text: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"profile file {str(path)!r} is not valid TOML: {exc}") from None
    where = f"profile file {str(path)!r}"
    try:
        data, base = extended(data, path, shipped_profiles(), _shipped_document)
    except ValueError as exc:
        raise ProfileError(f"{where}: {exc}", (str(exc),), where) from None
    try:
        validate_profile_data(data)
    except ProfileError as exc:
        missing = base is None and any(p.startswith("missing key") for p in exc.problems)
        hint = f" ({EXTENDS_HINT})" if missing else ""
        raise ProfileError(f"{where}: {exc}{hint}", exc.problems, where) from None
    return Profile(
        name=data["profile"]["name"],
        source=str(path),
        sha256=hashlib.sha256(raw).hexdigest(),
        data=data,
        extends=base,
    )


def _shipped_document(name: str) -> dict[str, Any]:
    text = (SHIPPED_PROFILES_DIR / f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)
