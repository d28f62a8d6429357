"""Profiles: an implementer's declared choices for what the specification leaves open.

A profile is a TOML file validated against ``profiles/profile.schema.json``. ``load_profile``
accepts a shipped profile name (``"default"``) or a path, and raises ``ProfileError`` naming
every problem once, each with its key, when the file is not a valid profile. A file with
``extends = "default"`` holds only what differs from the default profile
(``profile_extends``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import jsonschema

from conformance.core import signing, tomlsafe, untrusted_files
from conformance.core.catalogue import CatalogueError, load_catalogue
from conformance.core.patterns import ecma_search
from conformance.core.profile_extends import extended
from conformance.core.resources import package_data
from conformance.core.signer_hook import LoadedHook, SignerHookLoadError, load_hook
from conformance.core.test_helpers import HELPER_NAMES, HelperRoute, helper_problems, helper_routes
from conformance.core.webhook_scheme import STANDARD, WebhookScheme, scheme_problems
from conformance.core.webhook_verifier import Verifier, VerifierError, load_verifier

SHIPPED_PROFILES_DIR = package_data("profiles")
# Environment variables that replace the first credential's key and secret (run, validate).
API_KEY_ENV = "PAYMENT_CONFORMANCE_API_KEY"
API_SECRET_ENV = "PAYMENT_CONFORMANCE_API_SECRET"


MAX_BYTES = 1024 * 1024  # of a profile file; the default profile is a few KB
MAX_CLOCK_WINDOW_SECS = 10 * 365 * 24 * 3600
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

    def matches(self, status: int | None, code: object) -> bool:
        """An answer with ``status`` and body ``code`` is this outcome: the same status, and the
        same code where the profile pins one."""
        return status == self.status and (self.code is None or code == self.code)


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


def _error_spec(raw: Mapping[str, Any]) -> ErrorSpec:
    return ErrorSpec(status=int(raw["status"]), code=raw.get("code"))


def _names(raw: Any) -> tuple[str, ...]:
    return tuple(str(name) for name in raw)


# The kinds of authentication failure a profile may answer differently (``auth.errors``);
# each falls back to ``auth.error``.
AUTH_ERROR_KINDS = ("missing", "malformed", "unknown_key", "bad_signature", "expired", "replayed")


@dataclass(frozen=True)
class AuthSection:
    """Section 1: how requests are signed, and the answer to one that is not."""

    scheme: str
    timestamp_format: str
    nonce_pattern: str
    string_to_sign: str
    clock_window_secs: int
    nonce_single_use: bool
    error: ErrorSpec
    errors: Mapping[str, ErrorSpec] = field(default_factory=dict)  # by kind; may be partial
    signer: str = ""  # "package.module:function", or "" for the built-in scheme

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> AuthSection:
        return cls(
            scheme=str(raw["scheme"]),
            timestamp_format=str(raw["timestamp_format"]),
            nonce_pattern=str(raw["nonce_pattern"]),
            string_to_sign=str(raw["string_to_sign"]),
            clock_window_secs=int(raw["clock_window_secs"]),
            nonce_single_use=bool(raw["nonce_single_use"]),
            error=_error_spec(raw["error"]),
            errors={str(k): _error_spec(v) for k, v in (raw.get("errors") or {}).items()},
            signer=str(raw.get("signer", "")),
        )

    def error_for(self, kind: str) -> ErrorSpec:
        """The answer to an authentication failure of ``kind`` (``AUTH_ERROR_KINDS``)."""
        if kind not in AUTH_ERROR_KINDS:
            raise KeyError(f"unknown auth error kind {kind!r}")
        return self.errors.get(kind, self.error)

    def errors_for(self, *kinds: str) -> tuple[ErrorSpec, ...]:
        """The answers to failures that may be read as any of ``kinds``, each once."""
        return tuple(dict.fromkeys(self.error_for(k) for k in kinds))

    @property
    def statuses(self) -> frozenset[int]:
        """Every status an authentication failure may be answered with."""
        return frozenset(self.error_for(k).status for k in AUTH_ERROR_KINDS)


@dataclass(frozen=True)
class IdempotencySection:
    """Section 2: which requests need a key, its length, the replay header and the errors."""

    required_methods: tuple[str, ...]
    optional_operations: tuple[str, ...]
    min_length: int
    max_length: int
    replay_header: str
    retention_secs: int
    missing: ErrorSpec
    invalid: ErrorSpec
    reused: ErrorSpec
    in_use: ErrorSpec

    @property
    def replay_marked(self) -> bool:
        """A replay carries ``replay_header: true``; ``replay_header = ""`` declares no marker."""
        return bool(self.replay_header)

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> IdempotencySection:
        return cls(
            required_methods=_names(raw["required_methods"]),
            optional_operations=_names(raw["optional_operations"]),
            min_length=int(raw["min_length"]),
            max_length=int(raw["max_length"]),
            replay_header=str(raw["replay_header"]),
            retention_secs=int(raw["retention_secs"]),
            missing=_error_spec(raw["missing"]),
            invalid=_error_spec(raw["invalid"]),
            reused=_error_spec(raw["reused"]),
            in_use=_error_spec(raw["in_use"]),
        )


@dataclass(frozen=True)
class MethodNotAllowed:
    status: int
    allow_header: bool


@dataclass(frozen=True)
class StatusSection:
    """Section 3: the answers that hold for every path, and the body limit.

    The error answers of single cases (``validation``, ``not_found``, ...) are read with
    ``Profile.error("status", case)``.
    """

    success: int
    created: int
    create_operations: tuple[str, ...]
    method_not_allowed: MethodNotAllowed
    payload_too_large: ErrorSpec
    max_body_bytes: int
    auth_before_routing: bool
    integer_accepts_float_form: bool
    validation_details: str
    unsupported_media_type: tuple[ErrorSpec, ...]  # empty: the profile declares no answer
    # A "%" not followed by two hex digits in a query or path parameter: "refuse" (the
    # validation error), "literal" (read as the text "%zz"), or "either" of the two.
    malformed_percent_escape: str = "either"

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> StatusSection:
        not_allowed = raw["method_not_allowed"]
        return cls(
            success=int(raw["success"]),
            created=int(raw["created"]),
            create_operations=_names(raw["create_operations"]),
            method_not_allowed=MethodNotAllowed(
                int(not_allowed["status"]), bool(not_allowed["allow_header"])
            ),
            payload_too_large=_error_spec(raw["payload_too_large"]),
            max_body_bytes=int(raw["max_body_bytes"]),
            auth_before_routing=bool(raw["auth_before_routing"]),
            integer_accepts_float_form=bool(raw["integer_accepts_float_form"]),
            validation_details=str(raw["validation_details"]),
            unsupported_media_type=tuple(
                _error_spec(a) for a in raw.get("unsupported_media_type") or ()
            ),
            malformed_percent_escape=str(raw.get("malformed_percent_escape", "either")),
        )

    @property
    def field_message_details(self) -> bool:
        """A validation error's ``details`` lists ``{field, message}`` entries."""
        return self.validation_details == "field-message-list"


@dataclass(frozen=True)
class Lifecycle:
    """The states of one stateful resource (section 5), where it starts and how it moves."""

    states: tuple[str, ...]
    initial_state: str
    transitions: tuple[Transition, ...]

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Lifecycle:
        return cls(
            states=_names(raw["states"]),
            initial_state=str(raw["initial_state"]),
            transitions=tuple(
                Transition(str(t["operation"]), _names(t["from"]), str(t["to"]))
                for t in raw["transitions"]
            ),
        )


@dataclass(frozen=True)
class PaymentsSection:
    """Section 5, payments: limits, list order and the refusal of a payment without quotes."""

    expires_in_secs: Range
    list_limit: Range
    list_order: str
    raw_amount_max_digits: int
    empty_quotes: ErrorSpec
    unique_merchant_order_no: bool

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> PaymentsSection:
        return cls(
            expires_in_secs=_range(raw["expires_in_secs"]),
            list_limit=_range(raw["list_limit"]),
            list_order=str(raw["list_order"]),
            raw_amount_max_digits=int(raw["raw_amount_max_digits"]),
            empty_quotes=_error_spec(raw["empty_quotes"]),
            unique_merchant_order_no=bool(raw["unique_merchant_order_no"]),
        )


@dataclass(frozen=True)
class SplitsSection:
    """Section 5, splits: the business rules a payment's splits follow."""

    max_total_bps: int
    allow_self: bool
    allow_repeated_merchant: bool

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> SplitsSection:
        return cls(
            max_total_bps=int(raw["max_total_bps"]),
            allow_self=bool(raw["allow_self"]),
            allow_repeated_merchant=bool(raw["allow_repeated_merchant"]),
        )


@dataclass(frozen=True)
class WebhooksSection:
    """Section 5, webhooks: event types, endpoint urls, secrets and delivery statuses."""

    event_types: tuple[str, ...]
    url_schemes: tuple[str, ...]
    loopback_http: bool
    secret_prefix: str
    secret_random_bytes: int
    signature: str
    delivery_statuses: tuple[str, ...]
    resend_status: str
    # how deliveries are signed (webhook_scheme), and the hook that verifies them instead
    scheme: WebhookScheme = field(default_factory=lambda: WebhookScheme.of(STANDARD, None))
    verifier: str | None = None
    # what emits which event: an EMIT_KEYS key -> an event type, "" for none (see ``emits_of``)
    emits: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> WebhooksSection:
        return cls(
            event_types=_names(raw["event_types"]),
            url_schemes=_names(raw["url_schemes"]),
            loopback_http=bool(raw["loopback_http"]),
            secret_prefix=str(raw["secret_prefix"]),
            secret_random_bytes=int(raw["secret_random_bytes"]),
            signature=str(raw["signature"]),
            delivery_statuses=_names(raw["delivery_statuses"]),
            resend_status=str(raw["resend_status"]),
            scheme=WebhookScheme.of(str(raw["signature"]), raw.get("signing")),
            verifier=str(raw["verifier"]) if raw.get("verifier") else None,
            emits=emits_of(raw),
        )

    def emitted(self, key: str) -> str | None:
        """The event type ``key`` (one of EMIT_KEYS) emits, None when it emits none."""
        return self.emits.get(key) or None

    @property
    def delivery_roles(self) -> tuple[str, str, str]:
        """The names of a delivery still being tried, succeeded and failed: the first three
        ``delivery_statuses`` in that order (the default's names when fewer are listed)."""
        listed = self.delivery_statuses
        if len(listed) < 3:
            return ("pending", "succeeded", "failed")
        return (listed[0], listed[1], listed[2])


# What may emit an event (``[webhooks.emits]``): operations and payment state changes.
EMIT_KEYS = (
    "createPayment",
    "payment_underpaid",
    "payment_settled",
    "payment_expired",
    "cancelPayment",
    "createSubscription",
    "cancelSubscription",
    "payout_schedule_changed",
    "settleX402Payment",
)


def emits_of(raw: Mapping[str, Any]) -> dict[str, str]:
    """Every EMIT_KEYS key's event type ("" for none): the profile's ``[webhooks.emits]``; a key
    it leaves out emits what the default profile names, when ``event_types`` lists that."""
    given = raw.get("emits") or {}
    listed = set(raw["event_types"])
    fallback = _shipped_document("default")["webhooks"]["emits"]
    return {
        key: str(given[key]) if key in given else (fallback[key] if fallback[key] in listed else "")
        for key in EMIT_KEYS
    }


@dataclass(frozen=True)
class X402Section:
    """Section 5, x402: schemes, issued formats and the answers of a settle request.

    The pinned ``payment_payload`` shape is ``Profile.x402_payload``.
    """

    schemes: tuple[str, ...]
    valid_before_offset_secs: int
    tx_hash_pattern: str
    address_pattern: str
    nonce_pattern: str
    settle_failure: ErrorSpec
    settled_conflict: ErrorSpec
    usage_requires: str

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> X402Section:
        return cls(
            schemes=_names(raw["schemes"]),
            valid_before_offset_secs=int(raw["valid_before_offset_secs"]),
            tx_hash_pattern=str(raw["tx_hash_pattern"]),
            address_pattern=str(raw["address_pattern"]),
            nonce_pattern=str(raw["nonce_pattern"]),
            settle_failure=_error_spec(raw["settle_failure"]),
            settled_conflict=_error_spec(raw["settled_conflict"]),
            usage_requires=str(raw["usage_requires"]),
        )


@dataclass(frozen=True)
class StatementsSection:
    """Section 5, statements: the page limit and the directions, credit first."""

    limit: Range
    directions: tuple[str, ...]

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> StatementsSection:
        return cls(limit=_range(raw["limit"]), directions=_names(raw["directions"]))


def _range(raw: Mapping[str, Any]) -> Range:
    return Range(min=int(raw["min"]), max=int(raw["max"]), default=raw.get("default"))


def _error_specs(node: Any) -> Iterator[ErrorSpec]:
    """Every ``{status, code?}`` entry with an error status below ``node``, in document order."""
    if isinstance(node, dict):
        if isinstance(node.get("status"), int) and 400 <= node["status"] < 600:
            yield ErrorSpec(int(node["status"]), node.get("code"))
        for value in node.values():
            yield from _error_specs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _error_specs(value)


@dataclass(frozen=True)
class Profile:
    """A validated profile, read through typed sections built once (``auth``, ``status``, ...).

    ``data`` is the whole document the sections are built from; only this module reads it.
    """

    name: str
    source: str
    sha256: str
    data: dict[str, Any] = field(repr=False)
    extends: str | None = None  # the shipped profile a partial profile was merged over

    # -- sections ------------------------------------------------------------------------------
    @cached_property
    def webhook_verifier(self) -> Verifier | None:
        """The ``webhooks.verifier`` hook, imported (load_profile checked that it loads)."""
        reference = self.webhooks.verifier
        if reference is None:
            return None
        return load_verifier(reference, Path(self.source).parent)

    @cached_property
    def auth(self) -> AuthSection:
        return AuthSection.of(self.data["auth"])

    @cached_property
    def signer_hook(self) -> LoadedHook | None:
        """The ``auth.signer`` hook, loaded from the profile's folder or the Python path;
        raises ``ProfileError`` when it cannot be loaded."""
        if not self.auth.signer:
            return None
        try:
            return load_hook(self.auth.signer, Path(self.source).parent)
        except SignerHookLoadError as exc:
            raise ProfileError(str(exc), (str(exc),)) from None

    @cached_property
    def signing_scheme(self) -> signing.Scheme:
        """How the suite signs a request: the built-in scheme's choices, or the hook."""
        auth, hook = self.auth, self.signer_hook
        return signing.Scheme(
            name=auth.scheme,
            timestamp_format=auth.timestamp_format,
            template=auth.string_to_sign,
            hook=hook.function if hook else None,
            hook_name=hook.name if hook else "",
        )

    def signer(self, credential: Credential | None = None) -> signing.Signer:
        """Signs requests as ``credential`` (default: the first) under the profile's scheme."""
        c = credential or self.primary
        return signing.Signer(c.api_key, c.api_secret, self.string_to_sign, self.signing_scheme, c)

    @cached_property
    def idempotency(self) -> IdempotencySection:
        return IdempotencySection.of(self.data["idempotency"])

    @cached_property
    def status(self) -> StatusSection:
        return StatusSection.of(self.data["status"])

    @cached_property
    def payments(self) -> PaymentsSection:
        return PaymentsSection.of(self.data["payments"])

    @cached_property
    def splits(self) -> SplitsSection:
        return SplitsSection.of(self.data["splits"])

    @cached_property
    def webhooks(self) -> WebhooksSection:
        return WebhooksSection.of(self.data["webhooks"])

    @cached_property
    def x402(self) -> X402Section:
        return X402Section.of(self.data["x402"])

    @cached_property
    def statements(self) -> StatementsSection:
        return StatementsSection.of(self.data["statements"])

    def lifecycle(self, resource: str) -> Lifecycle:
        """``"payments"``, ``"subscriptions"`` or ``"payout_schedules"``: states and moves."""
        found = self._lifecycles.get(resource)
        if found is None:
            found = self._lifecycles[resource] = Lifecycle.of(self.data[resource])
        return found

    @cached_property
    def _lifecycles(self) -> dict[str, Lifecycle]:
        return {}

    # -- the parts most checks need ---------------------------------------------------------
    @property
    def test_helpers(self) -> bool:
        return bool(self.data["profile"]["test_helpers"])

    @cached_property
    def helpers(self) -> Mapping[str, HelperRoute]:
        """The test helpers the server has, by name (``core.test_helpers``); absent ones and
        all of them under ``test_helpers = false`` left out."""
        return helper_routes(self.data)

    def helper(self, name: str) -> HelperRoute | None:
        """Test helper ``name`` (``"deposit"``, ``"expire"``), or None when the server has none."""
        return self.helpers.get(name)

    @cached_property
    def helper_routes(self) -> Mapping[str, str]:
        """The present test helpers' routes by name (``"deposit"`` -> ``"POST /v1/..."``)."""
        return {name: helper.route for name, helper in self.helpers.items()}

    def helper_route(self, name: str) -> str:
        """The route of test helper ``name`` (``"POST /v1/..."``), or ``""`` when none."""
        return self.helper_routes.get(name, "")

    @cached_property
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
        return self.auth.clock_window_secs

    @property
    def string_to_sign(self) -> str:
        return self.auth.string_to_sign

    def error(self, section: str, key: str) -> ErrorSpec:
        """``profile.error("status", "validation")`` -> ``ErrorSpec(400, "validation_error")``;
        a dotted ``key`` reaches into a table (``profile.error("auth", "errors.expired")``)."""
        node = self.data[section]
        for part in key.split("."):
            node = node[part]
        return _error_spec(node)

    @cached_property
    def error_specs(self) -> tuple[ErrorSpec, ...]:
        """Every error answer the profile declares, wherever it sits, in document order."""
        return tuple(_error_specs(self.data))

    def range(self, section: str, key: str) -> Range:
        return _range(self.data[section][key])

    def success_status(self, operation_id: str) -> int:
        helper = self.helper(HELPER_NAMES.get(operation_id, ""))
        if helper is not None and helper.status is not None:
            return helper.status
        if operation_id in self.status.create_operations:
            return self.status.created
        return self.status.success

    def creates(self, operation_id: str) -> bool:
        """The operation answers with the ``created`` status (``status.create_operations``)."""
        return operation_id in self.status.create_operations

    def transitions(self, resource: str) -> tuple[Transition, ...]:
        return self.lifecycle(resource).transitions

    @cached_property
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

    @cached_property
    def withdraw_addresses_by_merchant(self) -> Mapping[str, tuple[str, ...]]:
        return {
            str(merchant): _names(addresses)
            for merchant, addresses in self.data["fixtures"]["withdraw_addresses"].items()
        }

    def withdraw_addresses(self, merchant_id: str) -> tuple[str, ...]:
        return self.withdraw_addresses_by_merchant.get(merchant_id, ())

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
        idem = self.idempotency
        return method.upper() in idem.required_methods and (
            operation_id not in idem.optional_operations
        )


def with_credential(profile: Profile, api_key: str | None, api_secret: str | None) -> Profile:
    """``profile`` with its first credential's key and/or secret replaced (``None``: kept)."""
    if api_key is None and api_secret is None:
        return profile
    data = copy.deepcopy(profile.data)
    if api_key is not None:
        data["credentials"][0]["api_key"] = api_key
    if api_secret is not None:
        data["credentials"][0]["api_secret"] = api_secret
    return replace(profile, data=data)


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
    if not candidate.exists() and not candidate.is_symlink():
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
    if error.validator == "anyOf" and "description" in error.schema:
        return f"{where}: must be {error.schema['description']}"
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
    yield from _auth_inconsistencies(data["auth"])
    keys = [c["api_key"] for c in data["credentials"]]
    if len(set(keys)) != len(keys):
        yield "credentials: api_key values must differ"
    yield from helper_problems(data)
    yield from _webhook_inconsistencies(data["webhooks"])


def _webhook_inconsistencies(webhooks: dict[str, Any]) -> Iterator[str]:
    yield from scheme_problems(webhooks["signature"], webhooks.get("signing"))
    listed = webhooks["event_types"]
    for key, event_type in (webhooks.get("emits") or {}).items():
        if event_type and event_type not in listed:
            yield (
                f"webhooks.emits.{key}: {event_type!r} is not one of webhooks.event_types "
                '("" emits no event)'
            )


def _auth_inconsistencies(auth: Mapping[str, Any]) -> Iterator[str]:
    try:
        signing.template_fields(auth["string_to_sign"])
    except signing.TemplateError as exc:
        yield f"auth.string_to_sign {exc}"
    if auth["clock_window_secs"] > MAX_CLOCK_WINDOW_SECS:
        yield (
            f"auth.clock_window_secs: at most {MAX_CLOCK_WINDOW_SECS} (ten years): the suite "
            "sends timestamps just outside the window, which must still be a time it can write"
        )
    if not ecma_search(auth["nonce_pattern"], signing.new_nonce()):
        yield (
            "auth.nonce_pattern does not accept the suite's nonces (32 lowercase hex digits): "
            "the suite could not sign a request the server accepts"
        )


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
        raw = untrusted_files.read_bytes(path, max_bytes=MAX_BYTES)
    except untrusted_files.UntrustedFileError as exc:
        raise ProfileError(f"cannot read the profile file {exc}") from None
    try:
        data = tomlsafe.loads(raw.decode("utf-8"))
    except tomlsafe.TomlTooComplex as exc:
        raise ProfileError(f"profile file {str(path)!r} is refused unparsed: {exc}") from None
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
    verifier = data["webhooks"].get("verifier")
    if verifier:
        try:
            load_verifier(str(verifier), path.parent)
        except VerifierError as exc:
            raise ProfileError(f"{where}: {exc}", (str(exc),), where) from None
    profile = Profile(
        name=data["profile"]["name"],
        source=str(path),
        sha256=hashlib.sha256(raw).hexdigest(),
        data=data,
        extends=base,
    )
    try:
        profile.signer_hook  # noqa: B018 - loaded now, so a broken hook stops every command here
    except ProfileError as exc:
        raise ProfileError(f"{where}: {exc}", exc.problems, where) from None
    return profile


def _shipped_document(name: str) -> dict[str, Any]:
    text = (SHIPPED_PROFILES_DIR / f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)
