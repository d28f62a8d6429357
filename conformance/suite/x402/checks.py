"""What the server's x402 answers must be, as problems per requirement id (empty: it held).

Issued requirements (X402-001..010, X402-029, OPS-030), a settlement that verifies (X402-012,
OPS-033), a failed settlement's code (X402-022) and a usage result (X402-027, OPS-034,
SHAPE-024). Response schemas are the effective contract's, so the profile's pinned formats
(``tx_hash``) are part of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from conformance.core.patterns import ecma_search
from conformance.judge.outcomes import json_object, summary
from conformance.suite.x402.api import IssueOutcome, Requested
from conformance.suite.x402.model import X402Profile, raw_of

Problems = dict[str, list[str]]
# Times the server computes are compared with the suite's clock with this much slack (s).
CLOCK_TOLERANCE = 5
DOMAIN_FIELDS = ("name", "version", "chain_id", "verifying_contract")


def _matches(pattern: str, value: object) -> bool:
    return isinstance(value, str) and ecma_search(pattern, value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------------- requirements
def requirements_problems(
    rules: X402Profile, requested: Requested, outcome: IssueOutcome
) -> Problems:
    """Every rule of the profile on the issued accepts entries, by requirement id."""
    found: Problems = {
        rid: []
        for rid in (
            "X402-001",
            "X402-002",
            "X402-003",
            "X402-004",
            "X402-005",
            "X402-006",
            "X402-008",
            "X402-009",
            "X402-010",
            "X402-029",
        )
    }
    if requested.scheme is None:
        found["OPS-030"] = []
    body = json_object(outcome.response) or {}
    accepts = body.get("accepts")
    entries = [e for e in accepts if isinstance(e, dict)] if isinstance(accepts, list) else []
    deployment = requested.deployment
    if not isinstance(accepts, list) or len(accepts) != deployment.entries:
        count = len(accepts) if isinstance(accepts, list) else "no"
        found["X402-001"].append(
            f"{count} accepts entries for {deployment.label}, expected {deployment.entries}"
        )
    expected_max = str(raw_of(requested.amount, deployment.decimals))
    issued_from = int(outcome.started) - CLOCK_TOLERANCE + rules.offset
    issued_until = int(outcome.ended) + 1 + CLOCK_TOLERANCE + rules.offset
    for index, entry in enumerate(entries):
        where = f"accepts[{index}]"
        if entry.get("network") != deployment.chain_id:
            found["X402-002"].append(
                f"{where}.network is {entry.get('network')!r}, expected {deployment.chain_id!r}"
            )
        asset = entry.get("asset")
        if deployment.native and asset != "native":
            found["X402-003"].append(f"{where}.asset of a native deployment is {asset!r}")
        if not deployment.native and not _matches(rules.address_pattern, asset):
            found["X402-003"].append(f"{where}.asset {asset!r} is not a token address")
        if not _matches(rules.address_pattern, entry.get("pay_to")):
            found["X402-004"].append(f"{where}.pay_to {entry.get('pay_to')!r} is not an address")
        if entry.get("max_amount_required") != expected_max:
            found["X402-005"].append(
                f"{where}.max_amount_required is {entry.get('max_amount_required')!r} for "
                f"{requested.amount} {deployment.currency.currency_id} "
                f"({deployment.decimals} decimals), expected {expected_max!r}"
            )
        if not _matches(rules.nonce_pattern, entry.get("nonce")):
            found["X402-006"].append(f"{where}.nonce {entry.get('nonce')!r} breaks the pattern")
        valid_before = entry.get("valid_before")
        if not isinstance(valid_before, int) or not issued_from <= valid_before <= issued_until:
            found["X402-008"].append(
                f"{where}.valid_before is {valid_before!r}, expected the issue time "
                f"(between {int(outcome.started)} and {int(outcome.ended) + 1}) plus "
                f"{rules.offset} s (tolerance {CLOCK_TOLERANCE} s)"
            )
        found["X402-009"] += _resource_problems(where, requested.resource, entry.get("resource"))
        wanted = requested.scheme if requested.scheme is not None else rules.default_scheme
        rid = "X402-010" if requested.scheme is not None else "OPS-030"
        if wanted is not None and entry.get("scheme") != wanted:
            found[rid].append(f"{where}.scheme is {entry.get('scheme')!r}, expected {wanted!r}")
        found["X402-029"] += _domain_problems(rules, where, entry.get("extra"))
    return found


def _resource_problems(where: str, requested: str | None, resource: object) -> list[str]:
    if requested is not None:
        if resource != requested:
            return [f"{where}.resource is {resource!r}, expected the requested {requested!r}"]
        return []
    parts = urlsplit(resource) if isinstance(resource, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        return [f"{where}.resource is {resource!r}, expected the server's own absolute URL"]
    return []


def _domain_problems(rules: X402Profile, where: str, extra: object) -> list[str]:
    if not isinstance(extra, dict):
        return [f"{where}.extra is {extra!r}, expected the EIP-712 domain"]
    missing = [name for name in DOMAIN_FIELDS if name not in extra]
    if missing:
        return [f"{where}.extra lacks {', '.join(missing)}"]
    problems = []
    if not isinstance(extra["name"], str) or not isinstance(extra["version"], str):
        problems.append(f"{where}.extra name and version must be strings")
    if not _is_int(extra["chain_id"]):
        problems.append(f"{where}.extra.chain_id {extra['chain_id']!r} is not an integer")
    if not _matches(rules.address_pattern, extra["verifying_contract"]):
        problems.append(f"{where}.extra.verifying_contract is not an address")
    return problems


# ---------------------------------------------------------------------------- settlement
def settled_problems(rules: X402Profile, payment_id: str, response: httpx.Response) -> list[str]:
    """X402-012, of an accepted settlement: success true, a tx_hash of the profile's pattern,
    the payment_id."""
    body = json_object(response) or {}
    problems = []
    if body.get("success") is not True:
        problems.append(f"success is {body.get('success')!r}, expected true")
    if not _matches(rules.tx_hash_pattern, body.get("tx_hash")):
        problems.append(f"tx_hash {body.get('tx_hash')!r} does not match {rules.tx_hash_pattern}")
    if body.get("payment_id") != payment_id:
        problems.append(f"payment_id is {body.get('payment_id')!r}, expected {payment_id!r}")
    return problems


def failure_code_problems(rules: X402Profile, response: httpx.Response) -> list[str]:
    """X402-022: a failed settlement names its reason as ``code`` (the profile's code, if it
    names one; any non-empty code otherwise)."""
    code = (json_object(response) or {}).get("code")
    wanted = rules.settle_failure.code
    if wanted is not None and code != wanted:
        return [f"code {code!r}, expected {wanted!r}"]
    if not isinstance(code, str) or not code.strip():
        return [f"a failed settlement has no reason as code: {summary(response)}"]
    return []


# ---------------------------------------------------------------------------- usage
def usage_problems(
    rules: X402Profile,
    payment_id: str,
    usage_id: str,
    authorised: int,
    actual_raw: int,
    response: httpx.Response,
) -> list[str]:
    """X402-027: 200, scheme upto, max_raw = the authorised value, actual_raw in raw units."""
    expected = rules.success("reportX402Usage")
    if response.status_code != expected:
        return [f"expected {expected}, got {summary(response)}"]
    body = json_object(response) or {}
    wanted = {
        "payment_id": payment_id,
        "scheme": rules.usage_scheme,
        "max_raw": str(authorised),
        "actual_raw": str(actual_raw),
        "usage_id": usage_id,
    }
    return [
        f"{name} is {body.get(name)!r}, expected {value!r}"
        for name, value in wanted.items()
        if body.get(name) != value
    ]


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
