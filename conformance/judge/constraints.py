"""The constraints of the contract's requests: every keyword a boundary case can sit on.

``iter_constraints`` walks an operation of the effective contract (request body, query, path and
header parameters) and yields one ``Constraint`` per declared JSON type, required field, length,
range, integer type, enum, pattern, format (``uri``, ``date-time``), item-count and unique-items
keyword it finds; for every query and path parameter its encoding; and the profile's pins that
``constraint_pins.yaml`` names (decimal places per currency, cursors only their issuer may use);
the boundaries family sends cases on them, the validator judges recorded requests by them.
``satisfies`` tells whether a value meets a schema's keywords but some: it decides which
generated values are kept (``near_misses``), checked with the pattern's ECMA-262 semantics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal

from conformance.core.formats import STRING_FORMATS, conforms
from conformance.core.openapi import ContractError, find, follow
from conformance.core.patterns import ecma_search as pattern_matches
from conformance.core.yamldata import load_yaml

Location = Literal["body", "query", "path", "header"]
ARRAY_ITEM: Final = "[]"  # a pointer step into the first item of an array
MAP_VALUE: Final = "{}"  # a pointer step into the first value of a map (additionalProperties)

# Keywords the family derives cases for, in the order reports list them.
KINDS: Final = (
    "type",
    "required",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "integer",
    "enum",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "decimals",
    "encoding",
    "cursor",
)
LENGTH_KINDS: Final = frozenset({"minLength", "maxLength"})
RANGE_KINDS: Final = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
# Kinds whose cases are whole requests (a parameter's raw bytes, another merchant's cursor):
# ``test_parameters.py`` sends them, not ``cases_for``.
PARAMETER_KINDS: Final = frozenset({"encoding", "cursor"})
_PINS_FILE: Final = Path(__file__).with_name("constraint_pins.yaml")


@dataclass(frozen=True)
class FieldRef:
    """Where a value sits in a request: ``FieldRef("body", ("quotes", "{}", "amount"))``."""

    location: Location
    pointer: tuple[str, ...]

    def __str__(self) -> str:
        return ".".join((self.location, *self.pointer))

    @property
    def name(self) -> str:
        """The field's own name (the last named step), e.g. ``amount``."""
        named = [p for p in self.pointer if p not in (ARRAY_ITEM, MAP_VALUE)]
        return named[-1] if named else self.location


@dataclass(frozen=True)
class Constraint:
    """One keyword of one field's schema in one operation's request."""

    operation_id: str
    field: FieldRef
    kind: str
    value: Any
    schema: Mapping[str, Any] = dataclass_field(repr=False, compare=False, hash=False)
    layer: str = "contract"  # "profile" when the effective contract marks it as a profile choice

    @property
    def id(self) -> str:
        """Stable, readable: ``createPayoutSchedule body.interval_secs maximum=31536000``."""
        shown = self.value if self.kind not in ("enum", "pattern") else _short(self.value)
        return f"{self.operation_id} {self.field} {self.kind}={shown}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# Not ``openapi.inline``: constraints are read from one flat schema per field, so ``allOf`` is
# merged and ``X or null`` narrowed to X, one level at a time as the walk goes down.
def _resolve(contract: Mapping[str, Any], schema: Any, depth: int = 0) -> dict[str, Any]:
    """``schema`` with ``$ref`` followed and ``allOf`` merged (enough for request schemas)."""
    if not isinstance(schema, Mapping):
        return {}
    if depth > 32:
        raise ContractError("the contract's schemas refer to each other without end")
    resolved = dict(schema)
    ref = resolved.pop("$ref", None)
    if isinstance(ref, str):
        target = follow(contract, ref)
        resolved = {**_resolve(contract, target, depth + 1), **resolved}
    parts = resolved.pop("allOf", None)
    if isinstance(parts, list):
        merged: dict[str, Any] = {}
        for part in parts:
            sub = _resolve(contract, part, depth + 1)
            props = {**merged.get("properties", {}), **sub.get("properties", {})}
            required = [*merged.get("required", []), *sub.get("required", [])]
            merged.update(sub)
            if props:
                merged["properties"] = props
            if required:
                merged["required"] = required
        resolved = {**merged, **resolved}
    for keyword in ("oneOf", "anyOf"):
        branches = resolved.get(keyword)
        if isinstance(branches, list):
            concrete = [
                b
                for b in (_resolve(contract, x, depth + 1) for x in branches)
                if b.get("type") != "null"
            ]
            if len(concrete) == 1:  # ``X or null``: the request side is X, null allowed
                del resolved[keyword]
                resolved = {**concrete[0], **resolved, "nullable": True}
    return resolved


def types_of(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def allows_null(schema: Mapping[str, Any]) -> bool:
    return schema.get("nullable") is True or "null" in types_of(schema)


def _layer(schema: Mapping[str, Any], keyword: str) -> str:
    """``profile`` for a keyword the effective contract pinned from the profile (``x-profile``)."""
    if keyword in ("integer", "type", "required") or not schema.get("x-profile"):
        return "contract"
    return "profile"


@cache
def pins() -> Mapping[str, Any]:
    """``constraint_pins.yaml``: the profile's pins that are not JSON Schema keywords."""
    data: Mapping[str, Any] = load_yaml(_PINS_FILE.read_text(encoding="utf-8"))
    return data


def _decimals_pinned(operation_id: str, pointer: tuple[str, ...]) -> bool:
    field = ".".join(pointer)
    return any(
        operation_id in pin["operations"] and field in pin["fields"]
        for pin in pins()["decimal_places"]
    )


def profile_key(constraint: Constraint) -> str | None:
    """The profile key a profile-layer constraint comes from (``payments.list_limit``)."""
    marked = constraint.schema.get("x-profile")
    return str(marked) if constraint.layer == "profile" and marked else None


def _walk(
    contract: Mapping[str, Any],
    operation_id: str,
    location: Location,
    pointer: tuple[str, ...],
    raw: Any,
    *,
    required: bool = False,
) -> Iterator[Constraint]:
    schema = _resolve(contract, raw)
    types = types_of(schema)

    def make(kind: str, value: Any) -> Constraint:
        return Constraint(
            operation_id, FieldRef(location, pointer), kind, value, schema, _layer(schema, kind)
        )

    if types:
        yield make("type", tuple(sorted(types)))
    if pointer and required:
        yield make("required", True)
    for kind in ("minLength", "maxLength", "pattern", "minItems", "maxItems"):
        if kind in schema:
            yield make(kind, schema[kind])
    if schema.get("format") in STRING_FORMATS and "string" in types:
        yield make("format", schema["format"])
    for kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bound = schema.get(kind)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            yield make(kind, bound)
    if "integer" in types and "number" not in types:
        yield make("integer", True)
    if isinstance(schema.get("enum"), list):
        yield make("enum", tuple(schema["enum"]))
    if schema.get("uniqueItems") is True:
        yield make("uniqueItems", True)
    if location == "body" and _decimals_pinned(operation_id, pointer):
        yield Constraint(
            operation_id, FieldRef(location, pointer), "decimals", "currency", schema, "profile"
        )
    needed = {str(n) for n in schema.get("required", []) if isinstance(n, str)}
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, Mapping) and sub.get("readOnly") is True:
            continue
        yield from _walk(
            contract, operation_id, location, (*pointer, name), sub, required=name in needed
        )
    if isinstance(schema.get("items"), Mapping):
        yield from _walk(contract, operation_id, location, (*pointer, ARRAY_ITEM), schema["items"])
    if isinstance(schema.get("additionalProperties"), Mapping):
        yield from _walk(
            contract, operation_id, location, (*pointer, MAP_VALUE), schema["additionalProperties"]
        )


def parameters(contract: Mapping[str, Any], operation_id: str) -> list[dict[str, Any]]:
    """The operation's parameters (path-level ones included, operation-level ones winning)."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in find(contract, operation_id).parameter_nodes():
        param = _resolve(contract, raw)
        if "name" in param and "in" in param:
            merged[(param["in"], str(param["name"]).lower())] = param
    return list(merged.values())


def request_body_schema(contract: Mapping[str, Any], operation_id: str) -> dict[str, Any] | None:
    body = _resolve(contract, find(contract, operation_id).operation.get("requestBody"))
    content = body.get("content") or {}
    media = content.get("application/json")
    if not isinstance(media, Mapping) or "schema" not in media:
        return None
    return _resolve(contract, media["schema"])


def iter_constraints(
    contract: Mapping[str, Any], operation_id: str, *, skip_headers: frozenset[str] = frozenset()
) -> Iterator[Constraint]:
    """Every constraint of the operation's request: parameters first, then the JSON body.

    ``skip_headers`` names header parameters (lower case) another family owns, such as the
    authentication headers and ``Idempotency-Key``.
    """
    for param in parameters(contract, operation_id):
        where = param["in"]
        if where not in ("query", "path", "header"):
            continue
        name = str(param["name"])
        if where == "header" and name.lower() in skip_headers:
            continue
        # a path parameter cannot be left out: the route would change
        needed = where == "query" and param.get("required") is True
        yield from _walk(
            contract, operation_id, where, (name,), param.get("schema"), required=needed
        )
        if where in ("query", "path"):
            schema = _resolve(contract, param.get("schema"))
            ref = FieldRef(where, (name,))
            yield Constraint(operation_id, ref, "encoding", True, schema)
            if where == "query" and name in pins()["cursor_parameters"]:
                yield Constraint(operation_id, ref, "cursor", True, schema, "profile")
    body = request_body_schema(contract, operation_id)
    if body is not None:
        yield from _walk(contract, operation_id, "body", (), body)


# ----------------------------------------------------------------------------- satisfying values
def satisfies(
    schema: Mapping[str, Any], value: Any, *, ignore: frozenset[str] = frozenset()
) -> bool:
    """Whether ``value`` meets the scalar keywords of ``schema`` other than those in ``ignore``.

    Only the keywords the family varies are checked (plus ``type`` and ``format``):
    it decides which generated values are kept, never whether a server is right.
    """
    types = types_of(schema)
    checks: dict[str, Callable[[], bool]] = {
        "type": lambda: not types or _has_type(value, types),
        "minLength": lambda: not isinstance(value, str) or len(value) >= schema["minLength"],
        "maxLength": lambda: not isinstance(value, str) or len(value) <= schema["maxLength"],
        "pattern": lambda: not isinstance(value, str) or pattern_matches(schema["pattern"], value),
        "format": lambda: conforms(schema["format"], value),
        "minimum": lambda: not is_number(value) or value >= schema["minimum"],
        "maximum": lambda: not is_number(value) or value <= schema["maximum"],
        "exclusiveMinimum": lambda: not is_number(value) or value > schema["exclusiveMinimum"],
        "exclusiveMaximum": lambda: not is_number(value) or value < schema["exclusiveMaximum"],
        "enum": lambda: value in schema["enum"],
        "minItems": lambda: not isinstance(value, list) or len(value) >= schema["minItems"],
        "maxItems": lambda: not isinstance(value, list) or len(value) <= schema["maxItems"],
        "uniqueItems": lambda: (
            not schema["uniqueItems"] or not isinstance(value, list) or all_distinct(value)
        ),
    }
    return all(check() for kw, check in checks.items() if kw not in ignore and kw in schema)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _has_type(value: Any, types: set[str]) -> bool:
    for name in types:
        if name == "string" and isinstance(value, str):
            return True
        if name == "integer" and is_number(value) and float(value).is_integer():
            return True
        if name == "number" and is_number(value):
            return True
        if name == "array" and isinstance(value, list):
            return True
        if name == "object" and isinstance(value, dict):
            return True
        if name == "boolean" and isinstance(value, bool):
            return True
        if name == "null" and value is None:
            return True
    return False


def all_distinct(items: list[Any]) -> bool:
    seen: list[Any] = []
    for item in items:
        if any(_json_equal(item, other) for other in seen):
            return False
        seen.append(item)
    return True


def _json_equal(a: Any, b: Any) -> bool:
    if is_number(a) and is_number(b):
        return bool(a == b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return bool(a == b)
