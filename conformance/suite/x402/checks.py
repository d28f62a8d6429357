"""What the server's x402 answers must be beyond the answer rules of the judge
(``conformance.judge.x402_rules``, recorded by ``flows``): the response schemas of the
effective contract (OPS-033, OPS-034, SHAPE-024), so the profile's pinned formats (``tx_hash``)
are part of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from conformance.judge.outcomes import json_object, summary


def shape_problems(contract: Mapping[str, Any], schema: str, response: httpx.Response) -> list[str]:
    """The body against a schema of the effective contract (``X402SettleResult``...)."""
    body = json_object(response)
    if body is None:
        return [f"the body is not a JSON object: {summary(response)}"]
    validator = _validator(contract, schema)
    return [
        f"{'.'.join(str(p) for p in error.absolute_path) or 'body'}: {error.message}"
        for error in sorted(validator.iter_errors(body), key=lambda e: list(map(str, e.path)))
    ][:4]


def string_field_problems(response: httpx.Response, names: tuple[str, ...]) -> list[str]:
    body = json_object(response) or {}
    return [
        f"{name} is {body.get(name)!r}, not a string"
        for name in names
        if not isinstance(body.get(name), str)
    ]


_VALIDATORS: dict[tuple[int, str], tuple[Mapping[str, Any], Draft202012Validator]] = {}


def _validator(contract: Mapping[str, Any], schema: str) -> Draft202012Validator:
    key = (id(contract), schema)
    known = _VALIDATORS.get(key)
    if known is not None and known[0] is contract:
        return known[1]
    uri = "urn:payment-conformance:effective-contract"
    resource: Resource[Any] = DRAFT202012.create_resource(dict(contract))
    registry: Registry[Any] = Registry().with_resource(uri=uri, resource=resource)
    validator = Draft202012Validator(
        {"$ref": f"{uri}#/components/schemas/{schema}"}, registry=registry
    )
    _VALIDATORS[key] = (contract, validator)
    return validator
