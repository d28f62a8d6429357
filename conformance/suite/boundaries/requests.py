"""Request editing: read, replace or leave out one field of a known-valid request.

``get_value``, ``with_value`` and ``without`` read, replace and remove one field of a
``RequestSpec`` (a known-valid request from ``conformance.suite.factories``), so a case varies
exactly one field.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from conformance.judge.constraints import ARRAY_ITEM, MAP_VALUE, FieldRef, Location
from conformance.suite.factories import ABSENT, RequestSpec


def _step_into(node: Any, step: str) -> Any:
    if step == ARRAY_ITEM:
        return node[0] if isinstance(node, list) and node else ABSENT
    if step == MAP_VALUE:
        return next(iter(node.values())) if isinstance(node, dict) and node else ABSENT
    return node.get(step, ABSENT) if isinstance(node, dict) else ABSENT


def _container(request: RequestSpec, location: Location) -> Any:
    return {
        "body": request.body,
        "query": request.query,
        "path": request.path_params,
        "header": request.headers,
    }[location]


def get_value(request: RequestSpec, ref: FieldRef) -> Any:
    """The request's value at ``ref``, or ``ABSENT``."""
    if ref.location == "header":
        wanted = ref.pointer[0].lower()
        return next((v for k, v in request.headers.items() if k.lower() == wanted), ABSENT)
    node = _container(request, ref.location)
    if not ref.pointer:
        return node
    for step in ref.pointer:
        node = _step_into(node, step)
        if node is ABSENT:
            return ABSENT
    return node


def can_set(request: RequestSpec, ref: FieldRef) -> bool:
    """Whether ``with_value`` can place a value at ``ref`` (every enclosing object exists)."""
    if not ref.pointer or ref.location != "body":
        return ref.location != "body" or request.body is not ABSENT
    parent = get_value(request, FieldRef(ref.location, ref.pointer[:-1]))
    last = ref.pointer[-1]
    if last == ARRAY_ITEM:
        return isinstance(parent, list) and bool(parent)
    if last == MAP_VALUE:
        return isinstance(parent, dict) and bool(parent)
    return isinstance(parent, dict)


def with_value(request: RequestSpec, ref: FieldRef, value: Any) -> RequestSpec:
    """A copy of ``request`` whose field at ``ref`` holds ``value`` (everything else unchanged)."""
    if not can_set(request, ref):
        raise KeyError(f"the request has no place for {ref}")
    if ref.location == "body":
        if not ref.pointer:
            return replace(request, body=copy.deepcopy(value))
        body = copy.deepcopy(request.body)
        parent = body
        for step in ref.pointer[:-1]:
            parent = _step_into(parent, step)
        last = ref.pointer[-1]
        if last == ARRAY_ITEM:
            parent[0] = copy.deepcopy(value)
        elif last == MAP_VALUE:
            parent[next(iter(parent))] = copy.deepcopy(value)
        else:
            parent[last] = copy.deepcopy(value)
        return replace(request, body=body)
    name = ref.pointer[0]
    if ref.location == "query":
        return replace(request, query={**request.query, name: value})
    if ref.location == "path":
        return replace(request, path_params={**request.path_params, name: str(value)})
    headers = {k: v for k, v in request.headers.items() if k.lower() != name.lower()}
    return replace(request, headers={**headers, name: str(value)})


def without(request: RequestSpec, ref: FieldRef) -> RequestSpec:
    """A copy of ``request`` without the field at ``ref`` (an object's member or a parameter)."""
    if not ref.pointer or ref.pointer[-1] in (ARRAY_ITEM, MAP_VALUE) or not can_set(request, ref):
        raise KeyError(f"the request has no member to leave out at {ref}")
    name = ref.pointer[-1]
    if ref.location == "body":
        body = copy.deepcopy(request.body)
        parent = body
        for step in ref.pointer[:-1]:
            parent = _step_into(parent, step)
        parent.pop(name, None)
        return replace(request, body=body)
    if ref.location == "query":
        return replace(request, query={k: v for k, v in request.query.items() if k != name})
    if ref.location == "header":
        kept = {k: v for k, v in request.headers.items() if k.lower() != name.lower()}
        return replace(request, headers=kept)
    raise KeyError(f"a path parameter cannot be left out: {ref}")
