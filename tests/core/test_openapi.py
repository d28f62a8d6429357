"""Reading the OpenAPI document: ``$ref`` pointers, inlining, and the walk over its operations."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.contract import effective_contract, load_document
from conformance.core.openapi import (
    HTTP_METHODS,
    ContractError,
    find,
    follow,
    inline,
    operation_at,
    operations,
    resolve,
)
from conformance.core.profile import load_profile

DOC = load_document()


def _refs(node: Any) -> list[str]:
    if isinstance(node, list):
        return [ref for item in node for ref in _refs(item)]
    if isinstance(node, dict):
        own = [node["$ref"]] if "$ref" in node else []
        return own + [ref for value in node.values() for ref in _refs(value)]
    return []


# ------------------------------------------------------------------------------- the walk
def test_the_walk_finds_the_twenty_operations_in_document_order() -> None:
    found = list(operations(DOC))
    assert len(found) == 20
    assert len({entry.operation_id for entry in found}) == 20
    written = [
        (method.upper(), path)
        for path, item in DOC["paths"].items()
        for method in item
        if method in HTTP_METHODS
    ]
    assert [(entry.method, entry.path) for entry in found] == written
    first = found[0]
    assert first.operation is DOC["paths"][first.path][first.method.lower()]
    assert first.path_item is DOC["paths"][first.path]


def test_the_walk_is_the_same_on_the_effective_contract() -> None:
    effective = effective_contract(load_profile())
    assert [e.label for e in operations(effective)] == [e.label for e in operations(DOC)]


def test_the_walk_skips_what_is_not_an_operation() -> None:
    doc = {
        "paths": {
            "/a": {
                "parameters": [{"name": "x", "in": "query"}],
                "summary": "a path item's own keys",
                "get": {"operationId": "getA"},
                "post": {"summary": "no operationId"},
                "x-extension": {"operationId": "notAnOperation"},
            },
            "/b": None,
        }
    }
    assert [(e.method, e.path, e.operation_id) for e in operations(doc)] == [("GET", "/a", "getA")]
    assert list(operations({})) == []


def test_find_looks_an_operation_up_by_its_id() -> None:
    found = find(DOC, "reportX402Usage")
    assert (found.method, found.path) == ("POST", "/v1/x402/{payment_id}/usage")
    assert found.label == "POST /v1/x402/{payment_id}/usage"
    with pytest.raises(KeyError, match="no operation 'nope'"):
        find(DOC, "nope")


def test_operation_at_looks_an_operation_up_by_method_and_path_template() -> None:
    found = operation_at(DOC, "post", "/v1/payments")
    assert found is not None and found.operation_id == "createPayment"
    assert found.method == "POST"
    assert operation_at(DOC, "PATCH", "/v1/payments") is None
    assert operation_at(DOC, "GET", "/v1/nowhere") is None
    assert operation_at(DOC, "PARAMETERS", "/v1/payments") is None


def test_parameter_nodes_put_the_path_items_first() -> None:
    doc = {
        "paths": {
            "/a/{id}": {
                "parameters": [{"name": "id", "in": "path"}],
                "get": {"operationId": "getA", "parameters": [{"name": "q", "in": "query"}]},
            }
        }
    }
    assert [p["name"] for p in find(doc, "getA").parameter_nodes()] == ["id", "q"]


# ------------------------------------------------------------------------------- references
def test_every_ref_of_the_document_follows_to_its_target() -> None:
    refs = _refs(DOC)
    assert len(refs) > 50
    for ref in refs:
        name = ref.rsplit("/", 1)[-1]
        section = ref.split("/")[2]
        assert follow(DOC, ref) is DOC["components"][section][name]


def test_follow_decodes_pointer_escapes() -> None:
    doc = {"a/b": {"c~d": 1}}
    assert follow(doc, "#/a~1b/c~0d") == 1


def test_resolve_follows_a_chain_one_level_deep() -> None:
    doc: dict[str, Any] = {
        "components": {
            "parameters": {
                "Key": {"$ref": "#/components/parameters/RealKey"},
                "RealKey": {"name": "K", "in": "header", "schema": {"$ref": "#/x"}},
            }
        }
    }
    param = resolve(doc, {"$ref": "#/components/parameters/Key"})
    assert param["name"] == "K"
    assert param["schema"] == {"$ref": "#/x"}  # nested references stay
    assert resolve(doc, {"name": "plain"}) == {"name": "plain"}
    assert resolve(doc, None) is None


def test_an_unknown_ref_raises_a_contract_error_naming_it() -> None:
    with pytest.raises(ContractError, match=r"'#/components/schemas/Nope' does not resolve"):
        resolve(DOC, {"$ref": "#/components/schemas/Nope"})
    with pytest.raises(ContractError, match=r"unresolvable \$ref 'other.yaml#/x'"):
        follow(DOC, "other.yaml#/x")
    with pytest.raises(ContractError, match="unresolvable"):
        inline(DOC, {"items": {"$ref": 3}})


def test_inline_leaves_no_ref_and_never_changes_the_document() -> None:
    before = load_document()
    for entry in operations(DOC):
        inlined = inline(DOC, entry.operation)
        assert _refs(inlined) == []
    assert before == DOC
    body = inline(DOC, find(DOC, "createPayment").operation["requestBody"])
    schema = body["content"]["application/json"]["schema"]
    assert schema["type"] == "object" and "quotes" in schema["properties"]


def test_inline_builds_a_fresh_copy_of_each_target() -> None:
    doc = {"components": {"schemas": {"A": {"type": "string"}}}}
    ref = {"$ref": "#/components/schemas/A"}
    inlined = inline(doc, {"properties": {"x": ref, "y": ref}})
    assert inlined == {"properties": {"x": {"type": "string"}, "y": {"type": "string"}}}
    inlined["properties"]["x"]["type"] = "integer"
    assert inlined["properties"]["y"] == {"type": "string"}
    assert doc["components"]["schemas"]["A"] == {"type": "string"}


def test_inline_keeps_the_keywords_beside_a_ref() -> None:
    doc = {"components": {"schemas": {"A": {"type": "string", "description": "an A"}}}}
    described = inline(doc, {"$ref": "#/components/schemas/A", "description": "here"})
    assert described == {"type": "string", "description": "here"}
    narrowed = inline(doc, {"$ref": "#/components/schemas/A", "maxLength": 3})
    assert narrowed == {"allOf": [{"type": "string", "description": "an A"}], "maxLength": 3}


# ---------------------------------------------------------------------------------- cycles
CYCLIC = {
    "components": {
        "schemas": {
            "Node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/components/schemas/Node"}},
            },
            "Loop": {"$ref": "#/components/schemas/Back"},
            "Back": {"$ref": "#/components/schemas/Loop"},
        }
    }
}


def test_a_recursive_schema_cannot_be_inlined() -> None:
    with pytest.raises(ContractError, match=r"recursive \$ref '#/components/schemas/Node'"):
        inline(CYCLIC, {"$ref": "#/components/schemas/Node"})


def test_resolve_stops_at_a_chain_that_comes_back() -> None:
    with pytest.raises(ContractError, match="refers to itself"):
        resolve(CYCLIC, {"$ref": "#/components/schemas/Loop"})
    node = resolve(CYCLIC, {"$ref": "#/components/schemas/Node"})
    assert node["properties"]["next"] == {"$ref": "#/components/schemas/Node"}


def test_a_target_used_twice_side_by_side_is_not_a_cycle() -> None:
    doc = {"components": {"schemas": {"A": {"type": "string"}}}}
    pair = {"$ref": "#/components/schemas/A"}
    assert inline(doc, {"allOf": [pair, {"items": pair}]}) == {
        "allOf": [{"type": "string"}, {"items": {"type": "string"}}]
    }
