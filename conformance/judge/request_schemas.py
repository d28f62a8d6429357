"""A request against the contract's request schemas (spec 5, the effective contract): what its
path parameters, query and body break, as ``Problem``s whose fields and coverage tags pin the
requirement ids (``constraint_ids``, ``schema_requirements``).

``RequestSchemas(contract)`` reads every operation's parameters and body once;
``problems(shape, path_params, raw_query, body, document)`` lists what one request breaks. Each
schema is compiled lazily, twice: ``fastschema``'s yes/no check answers the common case, and
only a value it says no to goes through jsonschema for the errors (``CompiledSchema``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl

from jsonschema import FormatChecker, ValidationError

from conformance.core import openapi
from conformance.core.contract import IDEMPOTENCY_HEADER
from conformance.core.formats import format_checker
from conformance.core.openapi import inline, resolve
from conformance.core.redaction import MASKED_VALUES
from conformance.judge.fastschema import Check, compile_schema
from conformance.judge.findings import NOT_JSON
from conformance.judge.response_schemas import Problem, SchemaValidator, problem_of

# JSON Schema keywords as the coverage tags the schema family pins requirement ids with.
KEYWORD_TAGS = {
    "type": "incorrect_type",
    "required": "object_missing_required_property",
    "pattern": "invalid_pattern",
    "maxLength": "string_above_max_length",
    "minLength": "string_below_min_length",
    "maximum": "value_above_maximum",
    "minimum": "value_below_minimum",
    "enum": "invalid_enum_value",
    "uniqueItems": "non_unique_items",
}
_INTEGER_TEXT = re.compile(r"^-?[0-9]{1,30}(\.0*)?$")


@dataclass(frozen=True)
class CompiledSchema:
    """A schema's jsonschema validator (the errors) and its fast yes/no check (``fastschema``;
    None where it cannot compile the schema)."""

    validator: Any  # a SchemaValidator
    valid: Check | None

    @classmethod
    def of(cls, schema: Any, checker: FormatChecker) -> CompiledSchema:
        return cls(SchemaValidator(schema, format_checker=checker), compile_schema(schema, checker))

    def problems(self, instance: Any) -> list[Problem]:
        """What ``instance`` breaks; a value a recorder masked (a signature, a secret) is
        present but not checkable."""
        if self.valid is not None and self.valid(instance):
            return []  # the common case, without building jsonschema's validators
        errors: list[ValidationError] = sorted(
            self.validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path]
        )
        problems = []
        for error in errors:
            if isinstance(error.instance, str) and error.instance in MASKED_VALUES:
                continue
            problem = problem_of(error)
            tag = KEYWORD_TAGS.get(str(error.validator))
            if tag is not None:
                problem = Problem(
                    problem.where, problem.message, problem.fields, problem.tags | {tag}
                )
            problems.append(problem)
        return problems


@dataclass(frozen=True)
class Parameter:
    name: str
    required: bool
    integer: bool
    schema: Any


@dataclass
class RequestShape:
    """What one operation's request may hold, read once from the effective contract."""

    operation_id: str
    path_params: dict[str, Parameter] = field(default_factory=dict)
    query_params: dict[str, Parameter] = field(default_factory=dict)
    body_schema: Any = None
    body_required: bool = False
    accepts_key: bool = False  # it documents the Idempotency-Key header
    compiled: dict[Any, CompiledSchema] = field(default_factory=dict, repr=False)

    @cached_property
    def query_names(self) -> frozenset[str]:
        return frozenset(self.query_params)


def _parameter(doc: Mapping[str, Any], raw: Any) -> tuple[str, Parameter]:
    param = resolve(doc, raw)
    schema = inline(doc, param.get("schema", {}))
    integer = isinstance(schema, Mapping) and schema.get("type") == "integer"
    return param["in"], Parameter(param["name"], bool(param.get("required")), integer, schema)


def request_shape(doc: Mapping[str, Any], entry: openapi.PathOperation) -> RequestShape:
    op = entry.operation
    shape = RequestShape(entry.operation_id)
    for raw in op.get("parameters", []):
        where, param = _parameter(doc, raw)
        if where == "path":
            shape.path_params[param.name] = param
        elif where == "query":
            shape.query_params[param.name] = param
        elif where == "header" and param.name == IDEMPOTENCY_HEADER:
            shape.accepts_key = True
    if "requestBody" in op:
        body = resolve(doc, op["requestBody"])
        media = (body.get("content") or {}).get("application/json") or {}
        shape.body_schema = inline(doc, media.get("schema", {}))
        shape.body_required = bool(body.get("required"))
    return shape


def summary(problems: list[Problem], limit: int = 5) -> str:
    text = "; ".join(str(p) for p in problems[:limit])
    return text + (f" (and {len(problems) - limit} more)" if len(problems) > limit else "")


def issue(where: str, message: str, name: str, keyword: str) -> Problem:
    tags = frozenset({KEYWORD_TAGS[keyword]}) if keyword in KEYWORD_TAGS else frozenset()
    return Problem(where, message, frozenset({name} if name else ()), tags)


def _located(problems: list[Problem], where: str, name: str) -> list[Problem]:
    return [
        Problem(f"{where}{'.' + p.where if p.where else ''}", p.message, p.fields | {name}, p.tags)
        for p in problems
    ]


class RequestSchemas:
    """Every operation's request shape, and what one request breaks."""

    def __init__(self, contract: Mapping[str, Any]) -> None:
        self._shapes = {
            entry.operation_id: request_shape(contract, entry)
            for entry in openapi.operations(contract)
        }
        self.checker = format_checker()

    def shape(self, operation_id: str) -> RequestShape:
        """An operation's request shape; an empty one (nothing to break) for one the contract
        does not have, such as a test helper."""
        found = self._shapes.get(operation_id)
        if found is None:
            found = self._shapes[operation_id] = RequestShape(operation_id)
        return found

    def compiled(self, shape: RequestShape, key: Any, schema: Any) -> CompiledSchema:
        found = shape.compiled.get(key)
        if found is None:
            found = shape.compiled[key] = CompiledSchema.of(schema, self.checker)
        return found

    def problems(
        self,
        shape: RequestShape,
        path_params: Mapping[str, str],
        raw_query: str,
        body: bytes,
        document: Any = NOT_JSON,
    ) -> list[Problem]:
        """What the request breaks: ``path_params`` decoded, the query as sent, the body's bytes
        and its JSON ``document`` (``NOT_JSON``: none, or not JSON)."""
        problems: list[Problem] = []
        for name, value in path_params.items():
            param = shape.path_params.get(name)
            if param is not None:
                compiled = self.compiled(shape, ("path", name), param.schema)
                problems += _located(compiled.problems(value), f"path.{name}", name)
        if shape.query_params or raw_query:
            problems += self._query(shape, raw_query)
        if shape.body_schema is not None:
            problems += self._body(shape, body, document)
        return problems

    def _query(self, shape: RequestShape, raw_query: str) -> list[Problem]:
        problems: list[Problem] = []
        seen: set[str] = set()
        for name, text in parse_qsl(raw_query, keep_blank_values=True):
            param = shape.query_params.get(name)
            if param is None or name in seen:
                continue  # other parameters: the contract does not close the query
            seen.add(name)
            value: Any = text
            if param.integer:
                if not _INTEGER_TEXT.match(text):
                    problems.append(issue(f"query.{name}", "is not an integer", name, "type"))
                    continue
                value = int(text.split(".", 1)[0])
            compiled = self.compiled(shape, ("query", name), param.schema)
            problems += _located(compiled.problems(value), f"query.{name}", name)
        for name, param in shape.query_params.items():
            if param.required and name not in seen:
                problems.append(issue(f"query.{name}", "is required", name, "required"))
        return problems

    def _body(self, shape: RequestShape, body: bytes, document: Any) -> list[Problem]:
        if not body:
            if shape.body_required:
                return [issue("body", "a JSON body is required", "", "required")]
            return []
        if document is NOT_JSON:
            return [issue("body", "is not JSON", "", "type")]
        return self.compiled(shape, "body", shape.body_schema).problems(document)
