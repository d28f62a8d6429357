"""Malformed variants of a valid request: one broken part each, as data.

``VARIANTS`` lists, for every way of breaking a request the robustness family tries, which part
it breaks (``body``, ``query``, ``path`` or ``prefix``), the requirement ids a refusal verifies
(any 4xx: the contract says "reject"), the ids the profile's exact answer verifies (or, for the
routing and transport rules, the judge's verdict: ``judge.routing``), and how the raw request is
built from the operation's known-valid ``RequestSpec``. Everything else of the
request stays valid (signature, Idempotency-Key, the other fields), so the answer is caused by
the broken part alone.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from conformance.core.openapi import operation_at, resolve
from conformance.core.profile import ErrorSpec, Profile
from conformance.judge.findings import Finding
from conformance.judge.outcomes import json_object
from conformance.judge.routing import RoutingRules
from conformance.suite.factories import RequestSpec
from conformance.suite.tool_errors import CaseError
from conformance.suite.wire.client import SuiteClient

VERSION_PREFIX = "/v1"
# Contract ids: the body is not JSON (SHAPE-030) or not an object / a field of another type
# (SHAPE-031). Profile ids: the 400 validation_error of each case (profile 3).
NOT_JSON = ("SHAPE-030",)
WRONG_TYPE = ("SHAPE-031",)
MALFORMED_JSON_400 = ("STATUS-003",)
WRONG_TYPE_400 = ("STATUS-004",)
BAD_PARAMETER_400 = ("STATUS-011",)
UNKNOWN_ID_404 = ("STATUS-013",)
VERSIONED = ("VER-001",)
BAD_ESCAPE = "%zz"
INVALID_UTF8 = b"\xff\xfe"


@dataclass(frozen=True)
class Raw:
    """One request exactly as sent: ``target`` is the path and query, byte for byte."""

    method: str
    target: str
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Expected:
    """What the profile says the answer is (any of ``answers``) and which ids it verifies."""

    answers: tuple[ErrorSpec, ...]
    ids: tuple[str, ...]


Builder = Callable[[RequestSpec, Mapping[str, Any], Profile], Raw | None]
# The judge's verdict on the answer to a variant it has a rule for (``judge.routing``).
Judged = Callable[[RoutingRules, httpx.Response], list[Finding]]


@dataclass(frozen=True)
class Variant:
    name: str
    part: str
    refusal_ids: tuple[str, ...]
    expected: Callable[[Profile], Expected] | None
    build: Builder
    # A server may answer before reading the whole request and close the connection.
    may_drop_connection: bool = False
    judged: Judged | None = None


# ------------------------------------------------------------------------------ building
def body_bytes(spec: RequestSpec) -> bytes:
    """The bytes a SuiteClient sends for ``spec``'s JSON body."""
    return json.dumps(spec.body, ensure_ascii=False, separators=(",", ":")).encode()


def query_string(query: Mapping[str, Any]) -> str:
    return str(httpx.QueryParams({k: str(v) for k, v in query.items()}))


def target_of(spec: RequestSpec, path: str | None = None, query: str | None = None) -> str:
    """``path`` (default: the spec's) and ``query`` (default: the spec's query, encoded)."""
    text = query_string(spec.query) if query is None else query
    return (spec.path if path is None else path) + (f"?{text}" if text else "")


def _with_body(spec: RequestSpec, content: bytes, **headers: str) -> Raw:
    return Raw(spec.method, target_of(spec), content, dict(headers))


def _body_only(build: Builder) -> Builder:
    """Applies to operations that take a body; none for the others."""

    def built(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
        return build(spec, contract, profile) if spec.has_body else None

    return built


def path_with(spec: RequestSpec, raw_id: str, name: str | None = None) -> str | None:
    """The spec's path with its path parameter ``name`` (default: the first) replaced by
    ``raw_id``, sent as is; None when the spec has no such path parameter."""
    if not spec.path_params or (name is not None and name not in spec.path_params):
        return None
    name = next(iter(spec.path_params)) if name is None else name
    path = spec.path_template.replace("{" + name + "}", raw_id)
    for other, value in spec.path_params.items():
        path = path.replace("{" + other + "}", httpx.URL(f"/{value}").raw_path.decode()[1:])
    return path


def query_with(spec: RequestSpec, name: str, raw_value: str) -> str:
    """The spec's target with the query parameter ``name`` set to ``raw_value``, sent as is
    (the other parameters encoded as usual)."""
    others = query_string({k: v for k, v in spec.query.items() if k != name})
    query = f"{others}&{name}={raw_value}" if others else f"{name}={raw_value}"
    return target_of(spec, query=query)


def send_raw(client: SuiteClient, spec: RequestSpec, raw: Raw) -> httpx.Response:
    """Send ``raw`` byte for byte (signed, with a fresh Idempotency-Key where the operation
    takes one) as a request of ``spec``'s operation."""
    return client.request(
        raw.method,
        raw.target,
        content=raw.content,
        headers=raw.headers or None,
        operation_id=spec.operation_id,
    )


def creates_by_path(spec: RequestSpec) -> bool:
    # PUT on a path id creates the resource (putWebhookEndpoint): any id is a new one.
    return spec.method == "PUT" and bool(spec.path_params)


def _first_string(value: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    if isinstance(value, str):
        return path
    items: Iterator[tuple[Any, Any]]
    if isinstance(value, dict):
        items = iter(value.items())
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, inner in items:
        found = _first_string(inner, (*path, key))
        if found is not None:
            return found
    return None


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


def integer_fields(
    contract: Mapping[str, Any], schema: Any, value: Any, path: tuple[Any, ...] = ()
) -> Iterator[tuple[Any, ...]]:
    """Paths of the integers of ``value`` whose schema declares type integer."""
    schema = resolve(contract, schema)
    if not isinstance(schema, Mapping):
        return
    for part in schema.get("allOf", ()) or ():
        yield from integer_fields(contract, part, value, path)
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "integer" in kinds and isinstance(value, int) and not isinstance(value, bool):
        yield path
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, inner in value.items():
            sub = props.get(key, extra if isinstance(extra, Mapping) else None)
            if sub is not None:
                yield from integer_fields(contract, sub, inner, (*path, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, inner in enumerate(value):
            yield from integer_fields(contract, schema["items"], inner, (*path, index))


def request_schema(contract: Mapping[str, Any], spec: RequestSpec) -> Any:
    found = operation_at(contract, spec.method, spec.path_template)
    body = resolve(contract, (found.operation.get("requestBody") if found else None) or {})
    return ((body.get("content") or {}).get("application/json") or {}).get("schema")


# ------------------------------------------------------------------------------ builders
@_body_only
def _malformed(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    return _with_body(spec, body_bytes(spec)[:-1])  # the closing brace cut off


@_body_only
def _empty(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    return _with_body(spec, b"")


@_body_only
def _array(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    return _with_body(spec, b"[" + body_bytes(spec) + b"]")


@_body_only
def _string(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    return _with_body(spec, json.dumps(body_bytes(spec).decode()).encode())


@_body_only
def _invalid_utf8(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    where = _first_string(spec.body)
    if where is None:
        return None
    marker = f"conformance-{uuid.uuid4().hex}"
    text = json.dumps(
        _replace(spec.body, where, marker), ensure_ascii=False, separators=(",", ":")
    ).encode()
    return _with_body(spec, text.replace(marker.encode(), INVALID_UTF8 + b"conformance"))


@_body_only
def _text_plain(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    return _with_body(spec, body_bytes(spec), **{"Content-Type": "text/plain"})


@_body_only
def _boolean(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    where = next(integer_fields(contract, request_schema(contract, spec), spec.body), None)
    if where is None:
        return None
    changed = _replace(spec.body, where, True)
    return _with_body(spec, json.dumps(changed, ensure_ascii=False).encode())


@_body_only
def _too_large(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    limit = profile.status.max_body_bytes
    text = body_bytes(spec)
    return _with_body(spec, text + b" " * (limit + 1 - len(text)))  # valid JSON, too long


def _integer_query(spec: RequestSpec, contract: Mapping[str, Any]) -> str | None:
    found = operation_at(contract, spec.method, spec.path_template)
    for node in found.parameter_nodes() if found else []:
        param = resolve(contract, node)
        schema = resolve(contract, param.get("schema") or {})
        if param.get("in") == "query" and schema.get("type") == "integer":
            return str(param["name"])
    return None


def _query_escape(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    name = _integer_query(spec, contract)
    if name is None:
        return None
    return Raw(spec.method, query_with(spec, name, BAD_ESCAPE), content_of(spec))


def content_of(spec: RequestSpec) -> bytes | None:
    """The body bytes of ``spec`` as a SuiteClient sends them, None when it has no body."""
    return body_bytes(spec) if spec.has_body else None


def _path_escape(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    path = None if creates_by_path(spec) else path_with(spec, f"conformance{BAD_ESCAPE}")
    return None if path is None else Raw(spec.method, target_of(spec, path), content_of(spec))


def _non_ascii(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    if creates_by_path(spec):
        return None
    unknown = f"conformance-é-{uuid.uuid4().hex[:8]}"
    path = path_with(spec, httpx.URL("/" + unknown).raw_path.decode()[1:])
    return None if path is None else Raw(spec.method, target_of(spec, path), content_of(spec))


def _unversioned(spec: RequestSpec, contract: Mapping[str, Any], profile: Profile) -> Raw | None:
    path = spec.path
    if not path.startswith(VERSION_PREFIX + "/"):
        return None
    unversioned = path.removeprefix(VERSION_PREFIX)
    return Raw(spec.method, target_of(spec, unversioned), content_of(spec))


# ------------------------------------------------------------------------------ the table
def _validation(*ids: str) -> Callable[[Profile], Expected]:
    return lambda profile: Expected((profile.error("status", "validation"),), ids)


def _code(response: httpx.Response) -> object:
    return (json_object(response) or {}).get("code")


def _too_large_verdict(rules: RoutingRules, response: httpx.Response) -> list[Finding]:
    size = len(response.request.content)
    status, code = response.status_code, _code(response)
    found = rules.too_large(size, status=status, code=code, known_valid=True)
    if found is None:
        raise CaseError(f"a body of {size} bytes is within the profile's limit")
    return [found]


def _unversioned_verdict(rules: RoutingRules, response: httpx.Response) -> list[Finding]:
    request = response.request
    path = request.url.raw_path.decode("ascii", "replace").split("?", 1)[0]
    what = f"{request.method} {path}"
    status, code = response.status_code, _code(response)
    found = rules.unversioned(what, path, status=status, code=code, known_valid=True)
    if not found:
        raise CaseError(f"{path} has the /v1 prefix")
    return found


def _text_plain_verdict(rules: RoutingRules, response: httpx.Response) -> list[Finding]:
    # The body is valid JSON: the contract's "not valid JSON" (SHAPE-030) does not judge it,
    # the profile's answers for another media type do (none declared: not exercised).
    content_type = response.request.headers.get("content-type")
    found = rules.media(content_type, status=response.status_code, code=_code(response))
    if found is None:
        raise CaseError(f"a body sent as {content_type!r} is not of another media type")
    return [found]


def _not_found(*ids: str) -> Callable[[Profile], Expected]:
    return lambda profile: Expected((profile.error("status", "not_found"),), ids)


def _unreadable_id(profile: Profile) -> Expected:
    # A server may take "%zz" as a malformed path parameter (400) or as an unknown id (404):
    # the profile names both answers; neither alone is required.
    answers = (profile.error("status", "validation"), profile.error("status", "not_found"))
    return Expected(answers, ())


VARIANTS: tuple[Variant, ...] = (
    Variant("malformed JSON", "body", NOT_JSON, _validation(*MALFORMED_JSON_400), _malformed),
    Variant("empty body", "body", NOT_JSON, _validation(*MALFORMED_JSON_400), _empty),
    Variant("JSON array body", "body", WRONG_TYPE, _validation(*WRONG_TYPE_400), _array),
    Variant("JSON string body", "body", WRONG_TYPE, _validation(*WRONG_TYPE_400), _string),
    Variant("invalid UTF-8", "body", NOT_JSON, _validation(*MALFORMED_JSON_400), _invalid_utf8),
    Variant("text/plain body", "body", (), None, _text_plain, judged=_text_plain_verdict),
    Variant("boolean integer", "body", WRONG_TYPE, _validation(*WRONG_TYPE_400), _boolean),
    Variant(
        "body over the limit",
        "body",
        (),
        None,
        _too_large,
        may_drop_connection=True,
        judged=_too_large_verdict,
    ),
    Variant("bad escape in the query", "query", (), _validation(*BAD_PARAMETER_400), _query_escape),
    Variant("bad escape in the path id", "path", (), _unreadable_id, _path_escape),
    Variant("non-ASCII path id", "path", (), _not_found(*UNKNOWN_ID_404), _non_ascii),
    Variant("no /v1 prefix", "prefix", (), None, _unversioned, judged=_unversioned_verdict),
)
