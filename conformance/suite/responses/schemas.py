"""A success response checked against the effective contract's schema for its status.

``ResponseSchemas(contract).problems(operation_id, status, body)`` validates with jsonschema
(draft 2020-12) with the contract's semantics: ``pattern`` is ECMA-262 (``core.patterns``) and
``format`` checks ``date-time`` (RFC 3339), ``uri`` (absolute), ``int32`` and ``int64``. Each
problem names the fields it points at and its tags (``format:date-time``), the same clues the
schema family pins requirement ids with (``schema.requirements.pin``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from conformance.core.openapi import find
from conformance.core.patterns import ecma_search

CONTRACT_URI = "urn:payment-conformance:effective-contract"
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Problem:
    """One way the body breaks its schema: where, what, and the clues for requirement ids."""

    where: str
    message: str
    fields: frozenset[str]
    tags: frozenset[str]

    def __str__(self) -> str:
        return f"{self.where or 'body'}: {self.message}"


def _date_time(value: object) -> bool:
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        return not isinstance(value, str)
    text = value.upper().replace("Z", "+00:00")
    if text[17:19] == "60":  # a leap second: valid RFC 3339, unknown to datetime
        text = text[:17] + "59" + text[19:]
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    scheme, sep, rest = value.partition(":")
    return bool(sep and rest and _SCHEME.fullmatch(scheme)) and " " not in value


def _integer_format(name: str) -> Any:
    low, high = _INT_RANGES[name]

    def check(value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, int):
            return True
        return low <= value <= high

    return check


def _format_checker() -> FormatChecker:
    checker = FormatChecker(formats=())
    checker.checks("date-time")(_date_time)
    checker.checks("uri")(_uri)
    for name in _INT_RANGES:
        checker.checks(name)(_integer_format(name))
    return checker


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not ecma_search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator = jsonschema.validators.extend(Draft202012Validator, {"pattern": _ecma_pattern})


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def _problem(error: ValidationError) -> Problem:
    path = [p for p in error.absolute_path]
    fields = {p for p in path if isinstance(p, str) and _IDENTIFIER.fullmatch(p)}
    tags: set[str] = set()
    if error.validator == "required":
        match = re.match(r"'([^']+)' is a required property", error.message)
        if match:
            fields.add(match.group(1))
    if error.validator == "format":
        tags.add(f"format:{error.validator_value}")
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    return Problem(where, error.message[:200], frozenset(fields), frozenset(tags))


class ResponseSchemas:
    """Validators of the success responses of one effective contract."""

    def __init__(self, contract: Mapping[str, Any]) -> None:
        self.contract = contract
        resource = DRAFT202012.create_resource(dict(contract))
        self._registry: Registry[Any] = Registry().with_resource(CONTRACT_URI, resource)
        self._checker = _format_checker()

    def pointer(self, operation_id: str, status: int) -> str | None:
        """JSON pointer of the operation's response schema for ``status`` (None: not documented)."""
        try:
            found = find(self.contract, operation_id)
        except KeyError:
            return None
        response = (found.operation.get("responses") or {}).get(str(status))
        media = ((response or {}).get("content") or {}).get("application/json")
        if not isinstance(media, Mapping) or "schema" not in media:
            return None
        return _pointer(
            "paths", found.path, found.method.lower(), "responses", str(status), "content",
            "application/json", "schema",
        )  # fmt: skip

    def problems(self, operation_id: str, status: int, body: Any) -> list[Problem]:
        """How ``body`` breaks the documented schema (empty: it matches)."""
        pointer = self.pointer(operation_id, status)
        if pointer is None:
            return [
                Problem(
                    "", f"the contract documents no {status} response", frozenset(), frozenset()
                )
            ]
        validator = _Validator(
            {"$ref": f"{CONTRACT_URI}#/{pointer}"},
            registry=self._registry,
            format_checker=self._checker,
        )
        errors = sorted(validator.iter_errors(body), key=lambda e: [str(p) for p in e.path])
        return [_problem(e) for e in errors]
