"""A fast yes/no answer to "is this instance valid under this schema?", for the common case.

``jsonschema`` builds a validator object for every subschema it descends into; on a payment
body that is most of the validator's time. Nearly every recorded exchange is valid, so
``compile_schema`` turns a self-contained schema (no ``$ref``) into nested closures that only say
valid or not, with ``jsonschema``'s semantics for the keywords the contract uses, the contract's
formats (a ``FormatChecker``) and ECMA-262 ``pattern`` (``core.patterns``). The checks ask
``jsonschema`` for the errors only when the answer is no. A schema with a keyword not handled
here compiles to None: it is always left to ``jsonschema``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema._utils import equal, uniq

from conformance.core.patterns import ecma_regex

Check = Callable[[Any], bool]

_HANDLED = frozenset(
    {
        "type",
        "properties",
        "required",
        "enum",
        "const",
        "allOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "format",
        "minLength",
        "maxLength",
        "pattern",
        "items",
        "minimum",
        "maximum",
        "additionalProperties",
        "uniqueItems",
    }
)
# Keywords jsonschema acts on (annotations such as description or x-... it ignores).
_ASSERTING = frozenset(Draft202012Validator.VALIDATORS) | {"then", "else"}


class Unsupported(Exception):
    """The schema uses a keyword this module does not handle."""


def _is_type(instance: Any, name: str) -> bool:
    if name == "string":
        return isinstance(instance, str)
    if name == "object":
        return isinstance(instance, dict)
    if name == "array":
        return isinstance(instance, list)
    if name == "boolean":
        return isinstance(instance, bool)
    if name == "null":
        return instance is None
    if isinstance(instance, bool):
        return False
    if name == "integer":
        return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())
    if name == "number":
        return isinstance(instance, int | float)
    raise Unsupported(f"type {name!r}")


def _number(instance: Any) -> bool:
    return isinstance(instance, int | float) and not isinstance(instance, bool)


# The two combinators every object schema goes through, as loops: a generator inside all()
# costs more than the checks themselves.
def _all_of(checks: tuple[Check, ...]) -> Check:
    def check(instance: Any) -> bool:
        for one in checks:  # noqa: SIM110 (a loop: all() over a generator is slower)
            if not one(instance):
                return False
        return True

    return check


def _any_of(checks: tuple[Check, ...]) -> Check:
    def check(instance: Any) -> bool:
        for one in checks:  # noqa: SIM110 (as above)
            if one(instance):
                return True
        return False

    return check


def _items(item: Check) -> Check:
    def check(instance: Any) -> bool:
        if not isinstance(instance, list):
            return True
        for one in instance:  # noqa: SIM110 (as above)
            if not item(one):
                return False
        return True

    return check


def _properties(props: dict[str, Check]) -> Check:
    items = tuple(props.items())

    def check(instance: Any) -> bool:
        if not isinstance(instance, dict):
            return True
        for name, one in items:  # noqa: SIM110 (as above)
            if name in instance and not one(instance[name]):
                return False
        return True

    return check


def _format(formats: FormatChecker, name: str) -> Check:
    """``formats.conforms(i, name)`` without its dispatch: the format's own function."""
    found = formats.checkers.get(name)
    if found is None:
        return lambda instance: True  # a format the checker does not know: an annotation
    func, raises = found

    def check(instance: Any) -> bool:
        try:
            return bool(func(instance))
        except raises:
            return False

    return check


def _type_check(name: str) -> Check:
    """``_is_type(i, name)`` as one closure for the name."""
    if name == "string":
        return lambda i: isinstance(i, str)
    if name == "object":
        return lambda i: isinstance(i, dict)
    if name == "array":
        return lambda i: isinstance(i, list)
    if name == "boolean":
        return lambda i: isinstance(i, bool)
    if name == "null":
        return lambda i: i is None
    if name == "integer":
        return lambda i: (
            not isinstance(i, bool)
            and (isinstance(i, int) or (isinstance(i, float) and i.is_integer()))
        )
    if name == "number":
        return lambda i: not isinstance(i, bool) and isinstance(i, int | float)
    raise Unsupported(f"type {name!r}")


# The leaves and nodes of nearly every schema, each one closure instead of one per keyword.
_STRING_LEAF = frozenset({"type", "minLength", "maxLength", "pattern", "format", "enum"})
_NUMBER_LEAF = frozenset({"type", "minimum", "maximum", "format"})
_ARRAY_NODE = frozenset({"type", "items", "uniqueItems"})
_OBJECT_NODE = frozenset({"type", "required", "properties", "additionalProperties"})


def _number_leaf(schema: Mapping[str, Any], formats: FormatChecker) -> Check:
    is_type = _type_check(schema["type"])
    minimum, maximum = schema.get("minimum"), schema.get("maximum")
    conforms = _format(formats, schema["format"]) if "format" in schema else None

    def check(instance: Any) -> bool:
        if not is_type(instance):
            return False
        if minimum is not None and instance < minimum:
            return False
        if maximum is not None and instance > maximum:
            return False
        return conforms is None or conforms(instance)

    return check


def _array_node(schema: Mapping[str, Any], formats: FormatChecker) -> Check:
    item = _compile(schema["items"], formats) if "items" in schema else None
    unique = schema.get("uniqueItems") is True

    def check(instance: Any) -> bool:
        if not isinstance(instance, list):
            return False
        if item is not None:
            for one in instance:
                if not item(one):
                    return False
        return not unique or bool(uniq(instance))

    return check


def _string_leaf(schema: Mapping[str, Any], formats: FormatChecker) -> Check:
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    regex = ecma_regex(schema["pattern"]) if "pattern" in schema else None
    conforms = _format(formats, schema["format"]) if "format" in schema else None
    allowed: frozenset[Any] | None = None
    if "enum" in schema:
        allowed = frozenset(v for v in schema["enum"] if isinstance(v, str))

    def check(instance: Any) -> bool:
        if not isinstance(instance, str):
            return False
        if len(instance) < low or (high is not None and len(instance) > high):
            return False
        if allowed is not None and instance not in allowed:
            return False
        if regex is not None and regex.search(instance) is None:
            return False
        return conforms is None or conforms(instance)

    return check


def _object_node(schema: Mapping[str, Any], formats: FormatChecker) -> Check:
    """An object's keywords; without ``type: object`` anything but an object passes them."""
    typed = schema.get("type") == "object"
    required = tuple(schema.get("required", ()))
    items = tuple((k, _compile(v, formats)) for k, v in schema.get("properties", {}).items())
    known = frozenset(schema.get("properties", {}))
    extra = (
        _compile(schema["additionalProperties"], formats)
        if "additionalProperties" in schema
        else None
    )

    def check(instance: Any) -> bool:
        if not isinstance(instance, dict):
            return not typed
        for name in required:
            if name not in instance:
                return False
        for name, one in items:
            if name in instance and not one(instance[name]):
                return False
        if extra is not None:
            for name, value in instance.items():
                if name not in known and not extra(value):
                    return False
        return True

    return check


def _compile(schema: Any, formats: FormatChecker) -> Check:
    if schema is True or schema == {}:
        return lambda instance: True
    if schema is False:
        return lambda instance: False
    if not isinstance(schema, Mapping):
        raise Unsupported(f"schema {schema!r}")
    unknown = [k for k in schema if k in _ASSERTING and k not in _HANDLED]
    if unknown:
        raise Unsupported(f"keyword {unknown[0]!r}")
    asserting = {k for k in schema if k in _ASSERTING}
    kind = schema.get("type")
    if kind == "string" and asserting <= _STRING_LEAF:
        return _string_leaf(schema, formats)
    if kind in ("integer", "number") and asserting <= _NUMBER_LEAF:
        return _number_leaf(schema, formats)
    if kind == "array" and asserting <= _ARRAY_NODE:
        return _array_node(schema, formats)
    if kind in ("object", None) and asserting <= _OBJECT_NODE and asserting:
        return _object_node(schema, formats)
    checks: list[Check] = []
    if "type" in schema:
        raw = schema["type"]
        types: tuple[str, ...] = tuple(raw) if isinstance(raw, list) else (raw,)
        for type_name in types:
            _is_type(None, type_name)  # raises for a type name not handled
        if len(types) == 1:
            checks.append(_type_check(types[0]))
        else:
            checks.append(_any_of(tuple(_type_check(t) for t in types)))
    if "enum" in schema:
        values = list(schema["enum"])
        if all(isinstance(v, str) for v in values):
            allowed = frozenset(values)
            checks.append(lambda i: isinstance(i, str) and i in allowed)
        else:
            checks.append(lambda i: any(equal(i, v) for v in values))
    if "const" in schema:
        const = schema["const"]
        checks.append(lambda i: equal(i, const))
    if "format" in schema:
        checks.append(_format(formats, schema["format"]))
    if "minLength" in schema or "maxLength" in schema:
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        checks.append(
            lambda i: not isinstance(i, str) or (low <= len(i) and (high is None or len(i) <= high))
        )
    if "pattern" in schema:
        regex = ecma_regex(schema["pattern"])
        checks.append(lambda i: not isinstance(i, str) or regex.search(i) is not None)
    if "minimum" in schema:
        minimum = schema["minimum"]
        checks.append(lambda i: not _number(i) or i >= minimum)
    if "maximum" in schema:
        maximum = schema["maximum"]
        checks.append(lambda i: not _number(i) or i <= maximum)
    if "required" in schema:
        required = tuple(schema["required"])
        checks.append(lambda i: not isinstance(i, dict) or all(k in i for k in required))
    if "properties" in schema:
        checks.append(
            _properties({k: _compile(v, formats) for k, v in schema["properties"].items()})
        )
    if "additionalProperties" in schema:
        known = frozenset(schema.get("properties", {}))
        extra = _compile(schema["additionalProperties"], formats)
        checks.append(
            lambda i: (
                not isinstance(i, dict) or all(extra(v) for k, v in i.items() if k not in known)
            )
        )
    if "items" in schema:
        checks.append(_items(_compile(schema["items"], formats)))
    if schema.get("uniqueItems") is True:
        checks.append(lambda i: not isinstance(i, list) or uniq(i))
    if "allOf" in schema:
        checks.append(_all_of(tuple(_compile(s, formats) for s in schema["allOf"])))
    if "oneOf" in schema:
        options = [_compile(s, formats) for s in schema["oneOf"]]
        checks.append(lambda i: sum(1 for o in options if o(i)) == 1)
    if "not" in schema:
        negated = _compile(schema["not"], formats)
        checks.append(lambda i: not negated(i))
    if "if" in schema:
        condition = _compile(schema["if"], formats)
        then = _compile(schema.get("then", True), formats)
        otherwise = _compile(schema.get("else", True), formats)
        checks.append(lambda i: then(i) if condition(i) else otherwise(i))
    if len(checks) == 1:
        return checks[0]
    return _all_of(tuple(checks))


def compile_schema(schema: Any, formats: FormatChecker) -> Check | None:
    """A function saying whether an instance is valid under ``schema`` (draft 2020-12, no
    ``$ref``), or None when the schema uses a keyword this module leaves to ``jsonschema``."""
    try:
        return _compile(schema, formats)
    except Unsupported:
        return None
