"""The generation contract: the effective contract narrowed so positive cases pass business rules.

A request can satisfy the contract and still be refused by a conformant server with 422 (a
currency the server does not know, a chain the currency is not deployed on). Positive cases are
therefore generated from a *generation contract*: the effective contract whose request schemas
carry extra keywords taken from the profile's fixtures (``rules.yaml``, section
``generation``). Keywords are only ever added (``allOf`` when a keyword is already there), so
every value valid under the generation contract is valid under the contract: the narrowing can
hide nothing from the checks, it only steers generation. Responses are left untouched, except
that the stateful phase follows no link into a list (``_drop_links_into_lists``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from conformance.core.openapi import inline, operations
from conformance.core.profile import Profile
from conformance.core.resources import package_data
from conformance.core.yamldata import load_yaml
from conformance.suite.factories import rare_event_types

JsonSchema = dict[str, Any]
# A webhook url the server can reach without leaving the machine, and that nothing listens on.
LOOPBACK_WEBHOOK_PATTERN = "^http://127\\.0\\.0\\.1:9/[a-z0-9]{1,16}$"
# Ids that survive every router unchanged (no "/", ".", "%" or spaces to decode).
PATH_ID_PATTERN = "^[A-Za-z0-9_-]{1,64}$"
HTTPS_URL_PATTERN = "^https://[a-z]{1,12}\\.example\\.com(/[a-z0-9]{1,12}){0,3}$"


class GenerationRuleError(ValueError):
    """``rules.yaml`` names a source or a profile key that does not exist."""


@cache
def schema_rules() -> dict[str, Any]:
    """The schema family's rules (``conformance/suite/schema/rules.yaml``)."""
    loaded: dict[str, Any] = load_yaml(
        package_data("suite", "schema", "rules.yaml").read_text(encoding="utf-8")
    )
    return loaded


@dataclass(frozen=True)
class FieldRule:
    name: str
    source: str
    operations: tuple[str, ...] | None  # None: every operation
    location: str | None  # "body", "query" or "path"; None: anywhere

    def applies(self, name: str, operation_id: str, location: str) -> bool:
        return (
            self.name == name
            and (self.operations is None or operation_id in self.operations)
            and (self.location is None or self.location == location)
        )


def field_rules() -> tuple[FieldRule, ...]:
    return tuple(
        FieldRule(
            name=raw["name"],
            source=raw["source"],
            operations=tuple(raw["operations"]) if "operations" in raw else None,
            location=raw.get("location"),
        )
        for raw in schema_rules()["generation"]["fields"]
    )


# ---------------------------------------------------------------------------------- sources
def _decimal_pattern(profile: Profile) -> str:
    decimals = min(c.decimals for c in profile.currencies.values())
    digits = int(schema_rules()["generation"]["amount_integer_digits"])
    fraction = f"(\\.[0-9]{{1,{decimals}}})?" if decimals > 0 else ""
    # Positive amounts only: whether a zero amount is a business error is not the schema
    # family's question.
    return f"^[1-9][0-9]{{0,{digits - 1}}}{fraction}$"


def _quotes_map(profile: Profile, schema: JsonSchema) -> JsonSchema:
    """Keys: known currency ids; each entry's chain_ids: chains that currency is deployed on."""
    entry = schema.get("additionalProperties")
    if not isinstance(entry, dict):
        return conjoin(schema, {"propertyNames": {"enum": sorted(profile.currencies)}})
    properties = {}
    for cid, currency in sorted(profile.currencies.items()):
        chains = {"type": "array", "uniqueItems": True, "items": {"enum": list(currency.chains)}}
        entry_properties = dict(entry.get("properties", {}))
        entry_properties["chain_ids"] = conjoin(entry_properties.get("chain_ids", {}), chains)
        properties[cid] = {**entry, "properties": entry_properties}
    narrowed = {k: v for k, v in schema.items() if k != "additionalProperties"}
    if "properties" in narrowed or "propertyNames" in narrowed or "minProperties" in narrowed:
        return conjoin(schema, {"propertyNames": {"enum": sorted(profile.currencies)}})
    return {
        **narrowed,
        "minProperties": 1,
        "propertyNames": {"enum": sorted(profile.currencies)},
        "properties": properties,
        "additionalProperties": False,
    }


def _range(profile: Profile, key: str) -> JsonSchema:
    section, name = key.split(".", 1)
    try:
        bounds = profile.range(section, name)
    except KeyError:
        raise GenerationRuleError(f"schema/rules.yaml: the profile has no range {key}") from None
    return {"minimum": bounds.min, "maximum": bounds.max}


def _states(profile: Profile, resource: str) -> JsonSchema:
    try:
        return {"enum": list(profile.lifecycle(resource).states)}
    except KeyError:
        raise GenerationRuleError(
            f"schema/rules.yaml: the profile has no {resource}.states"
        ) from None


def _webhook_url(profile: Profile) -> JsonSchema:
    if profile.webhooks.loopback_http:
        return {"pattern": LOOPBACK_WEBHOOK_PATTERN}
    return {"pattern": HTTPS_URL_PATTERN}


# Each source gives the keywords it adds to a field's schema.
SOURCES: dict[str, Callable[[Profile], JsonSchema]] = {
    "currency_ids": lambda p: {"enum": sorted(p.currencies)},
    "chain_ids": lambda p: {"enum": list(p.chains)},
    "own_withdraw_addresses": lambda p: {"enum": list(p.withdraw_addresses(p.primary.merchant_id))},
    "split_merchants": lambda p: {"enum": list(p.split_merchants)},
    "single_share": lambda p: {"maxItems": 1},
    "decimal_amount": lambda p: {"pattern": _decimal_pattern(p)},
    "webhook_url": _webhook_url,
    "https_url": lambda p: {"pattern": HTTPS_URL_PATTERN},
    "path_id": lambda p: {"pattern": PATH_ID_PATTERN},
    "event_types": lambda p: {"items": {"enum": rare_event_types(p.webhooks)}},
    "absent": lambda p: ABSENT,
}
# Sources that rebuild the field's schema rather than add keywords to it.
BUILDERS: dict[str, Callable[[Profile, JsonSchema], JsonSchema]] = {"quotes_map": _quotes_map}
ABSENT: JsonSchema = {"not": {}}


def narrow_field(profile: Profile, source: str, schema: JsonSchema) -> JsonSchema:
    """``schema`` narrowed by a rule's ``source`` (e.g. ``currency_ids``: an enum of the
    profile's currency ids)."""
    kind, _, argument = source.partition(" ")
    if kind == "range":
        return conjoin(schema, _range(profile, argument))
    if kind == "states":
        return conjoin(schema, _states(profile, argument))
    if source in BUILDERS:
        return BUILDERS[source](profile, schema)
    if source not in SOURCES:
        raise GenerationRuleError(f"schema/rules.yaml: unknown source {source!r}")
    return conjoin(schema, SOURCES[source](profile))


# ------------------------------------------------------------------------------- narrowing
def conjoin(schema: JsonSchema, extra: JsonSchema) -> JsonSchema:
    """``schema`` AND ``extra``: a merge when no keyword clashes, else an ``allOf``."""
    if not extra:
        return schema
    if extra == ABSENT:
        return ABSENT
    clash = set(schema) & set(extra)
    # Keywords that read each other (additionalProperties depends on properties...) are only
    # safe to combine inside an allOf.
    coupled = {"properties", "patternProperties", "additionalProperties", "items", "prefixItems"}
    if clash or (set(extra) & coupled and set(schema) & coupled):
        return {"allOf": [schema, extra]}
    return {**schema, **extra}


def _pair_constraint(profile: Profile, chain_field: str) -> JsonSchema:
    currency_field = schema_rules()["generation"]["deployment_pairs"]["currency"]
    return {
        "anyOf": [
            {
                "properties": {
                    currency_field: {"const": cid},
                    chain_field: {"enum": list(currency.chains)},
                }
            }
            for cid, currency in sorted(profile.currencies.items())
        ]
    }


class _Narrower:
    def __init__(self, profile: Profile, operation_id: str) -> None:
        self.profile = profile
        self.operation_id = operation_id
        self.rules = field_rules()
        pairs = schema_rules()["generation"]["deployment_pairs"]
        self.currency_field: str = pairs["currency"]
        self.chain_fields: tuple[str, ...] = tuple(pairs["chains"])

    def field(self, name: str, schema: JsonSchema, location: str = "body") -> JsonSchema:
        narrowed: JsonSchema = self.walk(schema)
        for rule in self.rules:
            if rule.applies(name, self.operation_id, location):
                return narrow_field(self.profile, rule.source, narrowed)
        return narrowed

    def walk(self, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return schema
        result = dict(schema)
        properties = schema.get("properties")
        if isinstance(properties, dict):
            result["properties"] = {name: self.field(name, sub) for name, sub in properties.items()}
            chain = next((c for c in self.chain_fields if c in properties), None)
            if chain is not None and self.currency_field in properties:
                result = conjoin(result, _pair_constraint(self.profile, chain))
        for key in ("items", "additionalProperties", "not"):
            if isinstance(schema.get(key), dict):
                result[key] = self.walk(schema[key])
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                result[key] = [self.walk(sub) for sub in schema[key]]
        return result


def generation_contract(contract: JsonSchema, profile: Profile) -> JsonSchema:
    """The effective contract with request schemas narrowed by the profile (see module doc)."""
    document = copy.deepcopy(contract)
    for entry in operations(document):
        operation, operation_id = entry.operation, entry.operation_id
        narrower = _Narrower(profile, operation_id)
        parameters = []
        for raw in entry.parameter_nodes():
            parameter = inline(contract, raw)
            location = parameter.get("in")
            if location in ("query", "path") and isinstance(parameter.get("schema"), dict):
                narrowed = narrower.field(parameter["name"], parameter["schema"], location)
                if narrowed == ABSENT:
                    if parameter.get("required"):
                        raise GenerationRuleError(
                            f"{operation_id}: the rules leave out the required parameter "
                            f"{parameter['name']}"
                        )
                    continue  # never sent in a positive case
                parameter["schema"] = narrowed
            parameters.append(parameter)
        operation["parameters"] = parameters
        body = operation.get("requestBody")
        if isinstance(body, dict):
            body = inline(contract, body)
            for media in body.get("content", {}).values():
                if isinstance(media.get("schema"), dict):
                    media["schema"] = narrower.walk(media["schema"])
            operation["requestBody"] = body
    for item in document.get("paths", {}).values():
        item.pop("parameters", None)  # merged into each operation above
    _drop_links_into_lists(document)
    return document


_ARRAY_ITEM = re.compile(r"/[0-9]+(/|$)")


def _drop_links_into_lists(document: JsonSchema) -> None:
    """Links that read an item of a list answer (``$response.body#/deliveries/0/id``) leave the
    stateful phase.

    A list holds whatever the server has: other checks' data, deliveries still in flight. A
    sequence that followed such a link would depend on them, and the same seed would send other
    sequences on another run. Without them every link starts from a resource the sequence
    created itself. The linked operations are still tested by the unit phases.
    """
    for entry in operations(document):
        for response in entry.operation.get("responses", {}).values():
            links = response.get("links") if isinstance(response, dict) else None
            if not isinstance(links, dict):
                continue
            for name in [n for n, link in links.items() if _reads_a_list_item(link)]:
                del links[name]
            if not links:
                response.pop("links")


def _reads_a_list_item(link: Any) -> bool:
    expressions = (
        [
            *(link.get("parameters") or {}).values(),
            *([link["requestBody"]] if "requestBody" in link else []),
        ]
        if isinstance(link, dict)
        else []
    )
    return any(
        isinstance(e, str) and "#" in e and _ARRAY_ITEM.search(e.split("#", 1)[1]) is not None
        for e in expressions
    )
