"""A success response checked against the effective contract's schema for its status.

``ResponseSchemas(contract).problems(operation_id, status, body)`` validates with jsonschema
(draft 2020-12) with the contract's semantics: ``pattern`` is ECMA-262 (``core.patterns``) and
``format`` has the meaning of ``core.formats``. Each problem names the fields it points at and
its tags (``format:date-time``), the same clues the schema family pins requirement ids with
(``judge.schema_requirements.pin``). The validator checks recorded exchanges with the same
``SchemaValidator`` and ``problem_of``, and fails a broken success body's ``broken_ids`` as the
responses family does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from conformance.core.formats import format_checker
from conformance.core.openapi import find
from conformance.core.patterns import ecma_search
from conformance.judge.schema_requirements import pin

CONTRACT_URI = "urn:payment-conformance:effective-contract"
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


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not ecma_search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


# Draft 2020-12 with the contract's ``pattern`` (ECMA-262); give it ``format_checker()``.
SchemaValidator = jsonschema.validators.extend(Draft202012Validator, {"pattern": _ecma_pattern})


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def problem_of(error: ValidationError) -> Problem:
    """The ``Problem`` a jsonschema error describes, with its fields and ``format:`` tags."""
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


def broken_ids(candidates: Sequence[str], problems: Sequence[Problem]) -> set[str]:
    """The ids a success body's schema problems break: those pinned by the fields and tags each
    names (every candidate when one names nothing), plus the operation's OPS ids (its "success
    response MUST be ..." requirements)."""
    if not problems:
        return set()
    broken = {rid for rid in candidates if rid.startswith("OPS-")}
    for problem in problems:
        pinned = pin(candidates, problem.fields, problem.tags)
        broken |= set(pinned or candidates)
    return broken


class ResponseSchemas:
    """Validators of the success responses of one effective contract."""

    def __init__(self, contract: Mapping[str, Any]) -> None:
        self.contract = contract
        resource = DRAFT202012.create_resource(dict(contract))
        self._registry: Registry[Any] = Registry().with_resource(CONTRACT_URI, resource)
        self._checker = format_checker()

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
        validator = SchemaValidator(
            {"$ref": f"{CONTRACT_URI}#/{pointer}"},
            registry=self._registry,
            format_checker=self._checker,
        )
        errors = sorted(validator.iter_errors(body), key=lambda e: [str(p) for p in e.path])
        return [problem_of(e) for e in errors]


ERROR_CODE_CHECK = "ErrorCodeMatchesProfile"


def code_only(status: int, problems: Sequence[Problem]) -> bool:
    """A refusal whose body breaks its schema in its ``code`` alone: a code the profile does not
    give that status, judged by the profile's status rule (``ERROR_CODE_CHECK``), not as the
    error's shape."""
    return status >= 400 and bool(problems) and all(p.where == "code" for p in problems)
