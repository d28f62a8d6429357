"""Request validation against the OpenAPI document (the contract).

Validators are compiled once per document: for every operation its path parameters, query
parameters and JSON body. ``pattern`` has ECMA semantics (``patterns.ecma_regex``); ``format``
has the contract's meaning (``core.formats``). Errors become the profile's 400
``validation_error`` with ``details`` ``[{field, message}]``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

import jsonschema
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from conformance.core import contract
from conformance.core.formats import format_checker, has_malformed_escape, unreadable
from conformance.core.openapi import PathOperation, follow, operations
from conformance.core.patterns import ecma_regex, ecma_search
from conformance.core.yamldata import load_yaml
from conformance.reference.amounts import DECIMAL_PATTERN, RAW_PATTERN, is_decimal_by_isdecimal

TEST_HELPERS_DOCUMENT = Path(__file__).resolve().parent / "test_helpers.yaml"
MAX_DETAILS = 20
MAX_MESSAGE = 200


class RequestInvalid(Exception):
    """The request breaks the contract; ``details`` is the list of ``{field, message}``."""

    def __init__(self, details: list[dict[str, str]]) -> None:
        super().__init__(details[0]["message"] if details else "invalid request")
        self.details = details[:MAX_DETAILS]


class MediaTypeInvalid(RequestInvalid):
    """A body sent with another Content-Type than application/json."""


def _unreadable_query(raw: str, literal: bool) -> list[dict[str, str]]:
    """A detail for each query parameter whose name or value, as sent, is no text (``literal``:
    a malformed escape is read as the text it is)."""
    details = []
    for pair in raw.split("&"):
        name, _, value = pair.partition("=")
        if (problem := unreadable(name, literal=literal)) is not None:
            details.append(_detail("query", f"a parameter name {problem}"))
        elif (problem := unreadable(value, literal=literal)) is not None:
            details.append(_detail(f"query.{unquote(name)}", problem))
    return details


def _without_malformed(raw: str) -> str:
    return "&".join(p for p in raw.split("&") if not has_malformed_escape(p.partition("=")[2]))


def _detail(where: str, message: str) -> dict[str, str]:
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 3] + "..."
    return {"field": where, "message": message}


# ------------------------------------------------------------------------- pattern
# The faults of the validation category live in the keyword functions below. Validators are
# compiled once and shared by every server in the process, so the switched-on faults of the
# request being validated travel in a context variable (set by the pipeline).
ACTIVE_FAULTS: ContextVar[frozenset[str]] = ContextVar("active_faults", default=frozenset())
_BASE = Draft202012Validator.VALIDATORS
_LAX_DECIMAL = r"^[0-9]+(\.[0-9]+)?$"


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    faults = ACTIVE_FAULTS.get()
    if "validation-amount-leading-zero" in faults and pattern == DECIMAL_PATTERN:
        pattern = _LAX_DECIMAL
    if "validation-amount-unicode-digits" in faults and pattern == DECIMAL_PATTERN:
        matched = is_decimal_by_isdecimal(instance)
    elif "validation-pattern-trailing-newline" in faults:
        matched = re.search(pattern, instance) is not None  # Python's $ semantics: the bug
    else:
        matched = ecma_regex(pattern).search(instance) is not None
    if not matched and _dot_without_fraction(faults, pattern, instance):
        matched = True  # the bug: "10." read as 10, as a hand-written amount parser may
    if not matched:
        yield ValidationError(f"does not match the pattern {pattern}")


_TRAILING_DOT_FAULTS = {
    DECIMAL_PATTERN: "validation-decimal-amount-trailing-dot",
    RAW_PATTERN: "validation-raw-amount-trailing-dot",
}


def _dot_without_fraction(faults: frozenset[str], pattern: str, instance: str) -> bool:
    """An amount whose integer part is followed by a dot and nothing else (``10.``), under the
    fault of its pattern; ``10.5.`` and ``.5`` stay refused."""
    if _TRAILING_DOT_FAULTS.get(pattern) not in faults or not instance.endswith("."):
        return False
    integer = instance[:-1]
    return "." not in integer and ecma_regex(pattern).search(integer) is not None


def _is_bps(schema: Any) -> bool:
    return isinstance(schema, dict) and (schema.get("minimum"), schema.get("maximum")) == (1, 10000)


def _minimum(validator: Any, minimum: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if "validation-bps-range-as-business-rule" in ACTIVE_FAULTS.get() and _is_bps(schema):
        return  # the bug: left to splits.validate_splits
    yield from _BASE["minimum"](validator, minimum, instance, schema)


def _maximum(validator: Any, maximum: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    faults = ACTIVE_FAULTS.get()
    if "validation-bps-range-as-business-rule" in faults and _is_bps(schema):
        return  # the bug: left to splits.validate_splits
    if "validation-interval-max-off-by-one" in faults and maximum == 31536000:
        maximum += 1
    yield from _BASE["maximum"](validator, maximum, instance, schema)


def _max_length(
    validator: Any, limit: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    faults = ACTIVE_FAULTS.get()
    if "validation-url-max-length-ignored" in faults and limit == 2048:
        return
    # Identifier: 1 to 128 characters, no pattern (DecimalAmount, also 128, has one).
    if (
        "validation-identifier-length-off-by-one" in faults
        and limit == 128
        and "pattern" not in schema
    ):
        limit -= 1  # the bug: len(v) < 128
    yield from _BASE["maxLength"](validator, limit, instance, schema)


def _unique_items(
    validator: Any, unique: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if "validation-unique-items-ignored" in ACTIVE_FAULTS.get():
        return
    yield from _BASE["uniqueItems"](validator, unique, instance, schema)


def _type(validator: Any, types: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if (
        "validation-boolean-as-integer" in ACTIVE_FAULTS.get()
        and types == "integer"
        and isinstance(instance, bool)
    ):
        return  # the bug: isinstance(True, int) holds in Python
    if (
        "validation-object-field-accepts-array" in ACTIVE_FAULTS.get()
        and types == "object"
        and isinstance(instance, list)
        and schema.get("additionalProperties") is True
    ):
        return  # the bug: a free-form object (x402 usage evidence) checked as "any container"
    if (
        "validation-integer-float-rejected" in ACTIVE_FAULTS.get()
        and types == "integer"
        and isinstance(instance, float)
    ):
        yield ValidationError(f"{instance!r} is not of type 'integer'")
        return
    yield from _BASE["type"](validator, types, instance, schema)


def _format(validator: Any, name: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if (
        "validation-date-time-fromisoformat" in ACTIVE_FAULTS.get()
        and name == "date-time"
        and isinstance(instance, str)
    ):
        try:
            datetime.fromisoformat(instance)  # the bug: a date alone, no offset, " " for "T"
        except ValueError:
            pass
        else:
            return
    yield from _BASE["format"](validator, name, instance, schema)


ContractValidator = jsonschema.validators.extend(
    Draft202012Validator,
    validators={
        "format": _format,
        "pattern": _ecma_pattern,
        "minimum": _minimum,
        "maximum": _maximum,
        "maxLength": _max_length,
        "uniqueItems": _unique_items,
        "type": _type,
    },
)


# ------------------------------------------------------------------------- error mapping
def _path_text(parts: Iterable[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _join(prefix: str, sub: str) -> str:
    if not prefix:
        return sub
    if not sub:
        return prefix
    return prefix + (sub if sub.startswith("[") else "." + sub)


def _messages(error: ValidationError, prefix: str) -> dict[str, str]:
    where = _join(prefix, _path_text(error.absolute_path))
    if error.validator == "required":
        missing = [
            name
            for name in error.validator_value
            if isinstance(error.instance, dict)
            and name not in error.instance
            and error.message.startswith(repr(name))
        ]
        name = missing[0] if missing else ""
        return _detail(_join(where, name), "is required")
    if error.validator == "format":
        return _detail(where, f"is not a valid {error.validator_value}")
    if error.validator == "type":
        return _detail(where, f"must be of type {error.validator_value}")
    if error.validator in ("minLength", "maxLength", "minimum", "maximum", "enum", "uniqueItems"):
        label = {
            "minLength": "length must be at least",
            "maxLength": "length must be at most",
            "minimum": "must be at least",
            "maximum": "must be at most",
            "enum": "must be one of",
            "uniqueItems": "items must be unique",
        }[str(error.validator)]
        value = "" if error.validator == "uniqueItems" else f" {error.validator_value}"
        return _detail(where, f"{label}{value}")
    return _detail(where, error.message)


def _errors(validator: Any, instance: Any, prefix: str) -> list[dict[str, str]]:
    errors = sorted(
        validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path]
    )
    return [_messages(e, prefix) for e in errors[:MAX_DETAILS]]


@cache
def _value_validator(schema_json: str) -> Any:
    return ContractValidator(json.loads(schema_json), format_checker=format_checker())


def check_value(schema: dict[str, Any], instance: Any, where: str) -> None:
    """RequestInvalid when ``instance`` (the part of a request at ``where``) breaks ``schema``,
    a self-contained JSON Schema, checked like the contract (ECMA patterns, its formats)."""
    validator = _value_validator(json.dumps(schema, sort_keys=True))
    details = _errors(validator, instance, where)
    if details:
        raise RequestInvalid(details)


# ------------------------------------------------------------------------- per operation
@dataclass(frozen=True)
class Parameter:
    name: str
    required: bool
    integer: bool
    validator: Any


@dataclass(frozen=True)
class OperationValidator:
    operation_id: str
    path_params: dict[str, Parameter] = field(default_factory=dict)
    query_params: dict[str, Parameter] = field(default_factory=dict)
    body: Any = None  # a compiled validator, or None when the operation takes no body
    body_required: bool = False

    def path(
        self, values: dict[str, str], raw: dict[str, str] | None = None, *, literal: bool = False
    ) -> dict[str, str]:
        """``values`` checked against the contract; ``raw`` (the same parameters as sent, still
        percent-encoded) checked to be text first (``literal``: a malformed escape is text)."""
        details: list[dict[str, str]] = []
        for name, text in (raw or {}).items():
            problem = unreadable(text, literal=literal)
            if problem is not None:
                details.append(_detail(f"path.{name}", problem))
        if details:
            raise RequestInvalid(details)
        for name, value in values.items():
            param = self.path_params.get(name)
            if param is not None:
                details += _errors(param.validator, value, f"path.{name}")
        if details:
            raise RequestInvalid(details)
        return values

    def query(self, raw: bytes, *, literal: bool = False) -> dict[str, Any]:
        """The query's values checked against the contract (``literal``: a malformed escape is
        read as the text it is)."""
        try:
            text = raw.decode("ascii")
            if "validation-malformed-escape-dropped" in ACTIVE_FAULTS.get():
                text = _without_malformed(text)  # the bug: such a parameter is dropped
            malformed = _unreadable_query(text, literal) if text else []
            if malformed:
                raise RequestInvalid(malformed)
            pairs = parse_qsl(text, keep_blank_values=True, encoding="utf-8", errors="strict")
        except (UnicodeDecodeError, ValueError):
            raise RequestInvalid([_detail("query", "is not a valid query string")]) from None
        values: dict[str, Any] = {}
        details: list[dict[str, str]] = []
        for name, text in pairs:
            where = f"query.{name}"
            param = self.query_params.get(name)
            if param is None:
                details.append(_detail(where, "is not a parameter of this operation"))
                continue
            if name in values:
                details.append(_detail(where, "is given more than once"))
                continue
            value: Any = text
            if param.integer:
                value = _query_integer(text)
                if value is None:
                    details.append(_detail(where, "must be an integer"))
                    continue
            details += _errors(param.validator, value, where)
            values[name] = value
        for name, param in self.query_params.items():
            if param.required and name not in values:
                details.append(_detail(f"query.{name}", "is required"))
        if details:
            raise RequestInvalid(details)
        return values

    def json_body(self, raw: bytes, content_type: str | None) -> Any:
        if self.body is None:
            return None
        if not raw:
            if self.body_required:
                raise RequestInvalid([_detail("body", "a JSON body is required")])
            return None
        media = (content_type or "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            raise MediaTypeInvalid(
                [_detail("Content-Type", "must be application/json for a JSON body")]
            )
        document = _lenient_body(self.operation_id, parse_json(raw), ACTIVE_FAULTS.get())
        details = _errors(self.body, document, "")
        if details:
            for d in details:
                d["field"] = d["field"] or "body"
            raise RequestInvalid(details)
        return normalise_integers(document)


def _query_integer(text: str) -> int | None:
    if not ecma_search(r"^-?[0-9]{1,30}(\.0*)?$", text):
        return None
    return int(text.split(".", 1)[0])


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


MAX_JSON_DEPTH = 100
# A string token ends at its closing quote or, unterminated, at the end of the body: each byte is
# read once. (Requiring the closing quote made every later ``\"`` of an unterminated string
# start a new scan to the end: quadratic, seconds for a 48 KB body.) Possessive quantifiers: no
# backtracking either.
_JSON_TOKENS = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"?|[\[\]{}]', re.DOTALL)
# json.loads pairs \ud83d\ude00 into one character but keeps a lone \ud800 as a surrogate,
# which is not Unicode text: sqlite3 and UTF-8 encoding refuse it (a 500 deep in a handler).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_depth_exceeds(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` (strings are skipped).

    Checked before parsing: a library of the process (py_ecc, through eth-account) raises the
    recursion limit to 100000, and the C parser would then overflow a thread's stack on a body
    like ``[[[[...`` instead of raising RecursionError.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    for token in _JSON_TOKENS.finditer(raw):
        char = token.group()[:1]
        if char in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif char in (b"]", b"}"):
            depth -= 1
    return False


def parse_json(raw: bytes) -> Any:
    """The JSON document, or RequestInvalid for anything that is not strict UTF-8 JSON."""
    if json_depth_exceeds(raw):
        raise RequestInvalid(
            [_detail("body", f"nests arrays and objects deeper than {MAX_JSON_DEPTH} levels")]
        )
    try:
        document = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise RequestInvalid([_detail("body", "is not valid JSON")]) from None
    if _SURROGATE_ESCAPE.search(raw):
        where = _lone_surrogate(document, "")
        if where is not None:
            message = "contains a lone UTF-16 surrogate escape (\\ud800-\\udfff): not Unicode text"
            raise RequestInvalid([_detail(where or "body", message)])
    return document


def _lone_surrogate(value: Any, where: str) -> str | None:
    """Where the first string (or object key) holding a lone surrogate is, or None."""
    if isinstance(value, str):
        return where if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if _SURROGATE.search(key):
                return where  # the key itself is not echoed: it cannot be encoded
            found = _lone_surrogate(item, _join(where, key))
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, f"{where}[{index}]")
            if found is not None:
                return found
    return None


def normalise_integers(value: Any) -> Any:
    """``60.0`` and ``60`` are the same JSON Schema integer: hand handlers an ``int``."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: normalise_integers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise_integers(v) for v in value]
    return value


def _lenient_body(operation_id: str, document: Any, faults: frozenset[str]) -> Any:
    """The body as a lenient server rewrites it before validation: the bugs of the faults of
    faults/near_misses.yaml that coerce a value of the wrong JSON type (or null) into one the
    contract accepts. Without those faults the body is returned unchanged."""
    if not faults or not isinstance(document, dict):
        return document
    document = dict(document)
    if operation_id == "replacePayoutSchedule":
        if (
            "validation-null-as-absent" in faults
            and "first_run_at" in document
            and document["first_run_at"] is None
        ):
            del document["first_run_at"]  # the bug: a PUT reads null as "clear this field"
        amount = document.get("min_send_amount")
        if (
            "validation-number-coerced-to-string" in faults
            and isinstance(amount, int | float)
            and not isinstance(amount, bool)
        ):
            document["min_send_amount"] = str(amount)  # the bug: amounts sent as JSON numbers
    interval = document.get("interval_secs")
    if (
        operation_id == "createSubscription"
        and "validation-numeric-string-coerced" in faults
        and isinstance(interval, str)
        and interval.isascii()
        and interval.isdigit()
    ):
        document["interval_secs"] = int(interval)  # the bug: int() "to be safe"
    usage_id = document.get("usage_id")
    if (
        operation_id == "reportX402Usage"
        and "validation-object-stored-as-json-text" in faults
        and isinstance(usage_id, dict)
    ):
        document["usage_id"] = json.dumps(usage_id, sort_keys=True)  # the bug: kept as text
    return document


# ------------------------------------------------------------------------- compilation
def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


class _Compiler:
    def __init__(self, uri: str, document: dict[str, Any], registry: Registry[Any]) -> None:
        self.uri = uri
        self.document = document
        self.registry = registry
        self.checker = format_checker()

    def validator(self, pointer: str) -> Any:
        return ContractValidator(
            {"$ref": f"{self.uri}#/{pointer}"},
            registry=self.registry,
            format_checker=self.checker,
        )

    # Not ``openapi.resolve``: a validator compiles the schema at its JSON pointer, so the
    # pointer of a referenced parameter is kept.
    def resolve(self, node: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """A parameter object and its pointer when it is a local ``$ref``."""
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: dict[str, Any] = follow(self.document, ref)
            return target, ref[2:]
        return node, None

    def schema_type(self, schema: dict[str, Any]) -> str | None:
        resolved, _ = self.resolve(schema)
        kind = resolved.get("type")
        return kind if isinstance(kind, str) else None

    def operation(self, entry: PathOperation) -> OperationValidator:
        path, method, op = entry.path, entry.method.lower(), entry.operation
        located = [
            (node, _pointer("paths", path, "parameters", str(i)))
            for i, node in enumerate(entry.path_item.get("parameters", []))
        ] + [
            (node, _pointer("paths", path, method, "parameters", str(i)))
            for i, node in enumerate(op.get("parameters", []))
        ]
        path_params: dict[str, Parameter] = {}
        query_params: dict[str, Parameter] = {}
        for node, own_pointer in located:
            param, pointer = self.resolve(node)
            pointer = pointer or own_pointer
            compiled = Parameter(
                name=param["name"],
                required=bool(param.get("required", False)),
                integer=self.schema_type(param.get("schema", {})) == "integer",
                validator=self.validator(pointer + "/schema"),
            )
            if param["in"] == "path":
                path_params[param["name"]] = compiled
            elif param["in"] == "query":
                query_params[param["name"]] = compiled
        body = None
        required = False
        request_body = op.get("requestBody")
        if request_body is not None and "application/json" in request_body.get("content", {}):
            required = bool(request_body.get("required", False))
            body = self.validator(
                _pointer(
                    "paths", path, method, "requestBody", "content", "application/json", "schema"
                )
            )
        return OperationValidator(entry.operation_id, path_params, query_params, body, required)


def compile_document(uri: str, document: dict[str, Any]) -> dict[str, OperationValidator]:
    resource: Resource[Any] = DRAFT202012.create_resource(document)
    registry: Registry[Any] = Registry().with_resource(uri=uri, resource=resource)
    compiler = _Compiler(uri, document, registry)
    result: dict[str, OperationValidator] = {}
    for entry in operations(document):
        result[entry.operation_id] = compiler.operation(entry)
    return result


@cache
def operation_validators() -> dict[str, OperationValidator]:
    """Validators for the 20 operations of the contract and the profile's test helpers."""
    validators = compile_document("urn:payment-service:contract", contract.load_document())
    helpers = load_yaml(TEST_HELPERS_DOCUMENT.read_text(encoding="utf-8"))
    validators.update(compile_document("urn:payment-service:test-helpers", helpers))
    return validators
