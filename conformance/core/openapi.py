"""Reading an OpenAPI document: local ``$ref`` pointers and the walk over its operations.

``follow`` takes a ``#/...`` pointer to its target, ``resolve`` follows the references of one
node until it is not a reference, ``inline`` returns a self-contained copy of a node (every
reference replaced by its target, at any depth). ``operations`` walks the document's
operations in document order; ``find`` and ``operation_at`` look one up by operation id or by
method and path template. Every other module reads the document through these.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
# Siblings of a Reference Object that override the target's (OpenAPI 3.1); any other sibling
# of a ``$ref`` is a schema keyword that applies alongside the target (JSON Schema 2020-12).
_REFERENCE_OVERRIDES = frozenset({"summary", "description"})


class ContractError(ValueError):
    """The OpenAPI document cannot be used (missing, not YAML, not an OpenAPI mapping, or a
    ``$ref`` that does not resolve)."""


class PathOperation(NamedTuple):
    """One operation of the document, where it sits and the path item holding it."""

    method: str  # upper case
    path: str
    operation_id: str
    operation: dict[str, Any]
    path_item: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    def parameter_nodes(self) -> list[Any]:
        """The path item's parameters, then the operation's (unresolved, as written)."""
        path_level = self.path_item.get("parameters") or []
        return [*path_level, *(self.operation.get("parameters") or [])]


def follow(document: Mapping[str, Any], ref: Any) -> Any:
    """The node a local ``$ref`` pointer (``#/components/schemas/Payment``) names."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        raise ContractError(f"unresolvable $ref {ref!r}: only local references (#/...) are read")
    node: Any = document
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            raise ContractError(f"$ref {ref!r} does not resolve: the document has no {part!r}")
        node = node[part]
    return node


def resolve(document: Mapping[str, Any], node: Any) -> Any:
    """``node``, or the target of its ``$ref`` chain: one level (nested references stay)."""
    seen: list[str] = []
    while isinstance(node, Mapping) and "$ref" in node:
        ref = node["$ref"]
        if ref in seen:
            raise ContractError(f"$ref {ref!r} refers to itself: {' -> '.join([*seen, ref])}")
        seen.append(ref)
        node = follow(document, ref)
    return node


def inline(document: Mapping[str, Any], node: Any) -> Any:
    """A copy of ``node`` with every ``$ref`` replaced by its target, at any depth: a
    self-contained schema or object. A recursive schema cannot be inlined: ContractError."""
    return _inline(document, node, ())


def _inline(document: Mapping[str, Any], node: Any, stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(document, item, stack) for item in node]
    if not isinstance(node, Mapping):
        return node
    if "$ref" not in node:
        return {key: _inline(document, value, stack) for key, value in node.items()}
    ref = node["$ref"]
    if ref in stack:
        chain = " -> ".join([*stack, ref])
        raise ContractError(f"recursive $ref {ref!r} cannot be inlined: {chain}")
    target = _inline(document, follow(document, ref), (*stack, ref))
    siblings = {k: _inline(document, v, stack) for k, v in node.items() if k != "$ref"}
    if not siblings:
        return target
    if set(siblings) <= _REFERENCE_OVERRIDES and isinstance(target, dict):
        return {**target, **siblings}
    return {"allOf": [target], **siblings}


def operations(document: Mapping[str, Any]) -> Iterator[PathOperation]:
    """Every operation of ``document`` (an object under an HTTP method of a path item, with an
    ``operationId``), in document order."""
    for path, item in (document.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        for method, operation in item.items():
            if method in HTTP_METHODS and isinstance(operation, dict):
                operation_id = operation.get("operationId")
                if isinstance(operation_id, str):
                    yield PathOperation(method.upper(), str(path), operation_id, operation, item)


def find(document: Mapping[str, Any], operation_id: str) -> PathOperation:
    """The operation named ``operation_id`` (KeyError: the document has none)."""
    for found in operations(document):
        if found.operation_id == operation_id:
            return found
    raise KeyError(f"the contract has no operation {operation_id!r}")


def operation_at(document: Mapping[str, Any], method: str, path: str) -> PathOperation | None:
    """The operation at ``method`` (any case) and path template ``path``, or None (as
    ``operations`` would not walk it)."""
    item = (document.get("paths") or {}).get(path)
    if method.lower() not in HTTP_METHODS or not isinstance(item, dict):
        return None
    operation = item.get(method.lower())
    if not isinstance(operation, dict) or not isinstance(operation.get("operationId"), str):
        return None
    return PathOperation(method.upper(), path, operation["operationId"], operation, item)
