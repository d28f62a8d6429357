"""The Starlette application: the request pipeline of the reference server.

Order (SERVER.md): body size (413), authentication before routing (401), routing (404, 405 with
Allow), Idempotency-Key rules, contract validation of path, query and body (400), idempotent
replay or reservation, the handler in one transaction, the 2xx response stored for replay.
Every response is JSON; an unexpected exception is a bug and still gets a JSON 500.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from conformance.core.profile import Credential
from conformance.core.test_helpers import HELPER_NAMES, canonical_body
from conformance.reference import auth, idempotency, payments
from conformance.reference.config import ServerConfig
from conformance.reference.context import RequestContext
from conformance.reference.errors import ApiError, media_type_failure, validation_failure
from conformance.reference.idempotency import IdempotencyStore
from conformance.reference.operations import Match, NoRoute, handler_for, resolve, routes_for
from conformance.reference.store import Store
from conformance.reference.timestamps import utcnow
from conformance.reference.validation import (
    ACTIVE_FAULTS,
    MediaTypeInvalid,
    RequestInvalid,
    operation_validators,
)

log = logging.getLogger("conformance.reference")

# Modules holding handlers and tables. Each has SCHEMA (CREATE TABLE IF NOT EXISTS ...); one may
# also define ``start_background(store, config) -> Callable[[], None]`` (returns its stop).
DOMAIN_MODULES: tuple[str, ...] = (
    "payments",
    "subscriptions",
    "payouts",
    "splits",
    "helpers",
    "events",
    "ledger",
    "statements",
    "webhooks",
    "webhook_dispatch",
    "x402",
)
JSON = "application/json"


def domain_modules() -> list[ModuleType]:
    return [importlib.import_module(f"conformance.reference.{name}") for name in DOMAIN_MODULES]


@dataclass
class Outcome:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = JSON


def encode(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass
class IncomingRequest:
    method: str
    path: str  # percent-decoded, for routing
    raw_path: str  # as sent, for the signature and the idempotency fingerprint
    query: bytes
    headers: Mapping[str, str]  # case-insensitive (Starlette's Headers)
    body: bytes


class Pipeline:
    def __init__(self, config: ServerConfig, store: Store) -> None:
        self.config = config
        self.store = store
        self.auth = auth.Authenticator(config)
        self.idempotency = IdempotencyStore(config)
        self.validators = operation_validators()
        self.routes = routes_for(config.profile.helpers)
        self.max_body = config.profile.status.max_body_bytes

    # -- responses ---------------------------------------------------------------------------
    def error(self, exc: ApiError) -> Outcome:
        content_type = "text/plain" if self.config.fault("error-body-text-plain") else JSON
        body = exc.body()
        if self.config.fault("error-body-without-message"):
            del body["message"]
        return Outcome(exc.status, encode(body), dict(exc.headers), content_type)

    def too_large(self) -> Outcome:
        if self.config.fault("robust-huge-body-500"):
            return self.internal_error()
        spec = self.config.profile.status.payload_too_large
        message = f"the body is over {self.max_body} bytes"
        return self.error(ApiError(spec.status, spec.code or "payload_too_large", message))

    def internal_error(self) -> Outcome:
        return Outcome(500, encode({"code": "internal_error", "message": "internal error"}))

    # -- the pipeline --------------------------------------------------------------------------
    def handle(self, request: IncomingRequest) -> Outcome:
        try:
            return self._handle(request)
        except ApiError as exc:
            return self.error(exc)
        except Exception:
            log.exception("unexpected error on %s %s", request.method, request.path)
            return self.internal_error()

    def _handle(self, request: IncomingRequest) -> Outcome:
        now = utcnow()
        epoch = int(now.timestamp())
        if self.config.fault("auth-after-routing"):
            self._route(request)
        credential = self._authenticate(request, epoch)
        match = self._route(request)
        operation_id = match.route.operation_id
        key = idempotency.key_from_headers(
            self.config, request.headers, request.method, operation_id
        )
        path, query, body = self._validate(request, match)
        handler = handler_for(operation_id)
        if handler is None:
            raise LookupError(f"no handler registered for {operation_id}")
        if key is not None:
            fingerprint = idempotency.fingerprint(request.method, request.raw_path, request.body)
            with self.store.transaction() as conn:
                stored = self.idempotency.begin(conn, credential.api_key, key, fingerprint, epoch)
            if stored is not None:
                if operation_id == "createPayment" and self.config.fault(
                    "payment-replay-inserts-second-row"
                ):
                    with self.store.transaction() as conn:
                        payments.insert_replayed_copy(conn, credential.merchant_id, stored.body)
                headers = {}
                marker = self.config.profile.idempotency.replay_header  # "": none declared
                if marker and not self.config.fault("idem-replay-missing-header"):
                    headers[marker] = "true"
                return Outcome(stored.status, stored.body, headers)
        try:
            with self.store.transaction() as conn:
                ctx = RequestContext(
                    operation_id=operation_id,
                    merchant_id=self.config.profile.primary.merchant_id
                    if self.config.fault("isolation-keys-share-a-merchant")
                    else credential.merchant_id,
                    api_key=credential.api_key,
                    body=body,
                    path=path,
                    query=query,
                    conn=conn,
                    config=self.config,
                    now=now,
                )
                reply = handler(ctx)
                encoded = encode(reply.body)
                headers = dict(reply.headers)
                if key is not None and 200 <= reply.status < 300:
                    self.idempotency.complete(conn, credential.api_key, key, reply.status, encoded)
                    marker = self.config.profile.idempotency.replay_header
                    if marker and self.config.fault("replay-header-on-first-response"):
                        headers[marker] = "true"
            return Outcome(reply.status, encoded, headers)
        except BaseException as exc:
            if key is not None:
                with self.store.transaction() as conn:
                    if isinstance(exc, ApiError) and self.config.fault("idem-errors-stored"):
                        encoded = encode(exc.body())
                        self.idempotency.complete(
                            conn, credential.api_key, key, exc.status, encoded
                        )
                    else:
                        self.idempotency.release(conn, credential.api_key, key)
            raise

    def _authenticate(self, request: IncomingRequest, epoch: int) -> Credential:
        target = request.raw_path + ("?" + request.query.decode("latin-1") if request.query else "")
        rejection: ApiError | None = None
        # Committed even on rejection: a correct Authenticator writes nothing before the
        # signature verifies, and the fault that spends nonces early must be observable.
        with self.store.transaction() as conn:
            try:
                return self.auth.authenticate(
                    conn, request.headers, request.method, target, request.body, epoch
                )
            except ApiError as exc:
                rejection = exc
        assert rejection is not None
        raise rejection

    def _route(self, request: IncomingRequest) -> Match:
        path = request.path
        if self.config.fault("robust-unversioned-paths-served") and not path.startswith("/v1/"):
            path = "/v1" + path  # the bug: an alias for clients that leave the prefix out
        try:
            return resolve(request.method, path, self.routes)
        except NoRoute as exc:
            if not exc.allowed:
                spec = self.config.profile.error("status", "not_found")
                raise ApiError(
                    spec.status, spec.code or "not_found", f"no operation at {request.path}"
                ) from None
            headers = {}
            answer = self.config.profile.status.method_not_allowed
            if answer.allow_header and not self.config.fault("method-not-allowed-without-allow"):
                headers["Allow"] = ", ".join(exc.allowed)
            status = answer.status
            raise ApiError(
                status,
                "method_not_allowed",
                f"{request.method} is not allowed on this path",
                headers=headers,
            ) from None

    def _robustness_faults(self, request: IncomingRequest) -> None:
        """Bugs of code that reads the raw request before validation (faults/robustness.yaml)."""
        fault = self.config.fault
        if fault("robust-invalid-utf8-500") and request.body:
            request.body.decode("utf-8")  # the bug: decoded for the access log, unguarded
        if fault("robust-empty-put-body-500") and request.method == "PUT" and not request.body:
            json.loads(request.body)  # the bug: a PUT is assumed to carry a body
        if fault("robust-non-object-body-500") and request.body:
            document: Any
            try:
                document = json.loads(request.body)
            except ValueError:
                document = {}
            log.debug("body fields %s", list(document.keys()))  # the bug: assumes an object
        if fault("robust-query-escape-500") and b"%" in request.query:
            for escape in request.query.split(b"%")[1:]:
                bytes.fromhex(escape[:2].decode("latin-1"))  # the bug: hex digits assumed

    def _validate(
        self, request: IncomingRequest, match: Match
    ) -> tuple[dict[str, str], dict[str, Any], Any]:
        """Path parameters, query and body of the request, checked against the contract."""
        if self.config.fault("robust-non-ascii-id-500"):
            for value in match.path_params.values():
                value.encode("ascii")  # the bug: ids assumed to be ASCII
        if self.config.fault("robust-malformed-json-500") and request.body:
            json.loads(request.body)  # the bug: parsed before validation, unguarded
        self._robustness_faults(request)
        content_type = request.headers.get("content-type")
        if self.config.fault("validation-ignores-content-type") and request.body:
            content_type = JSON
        validator = self.validators[match.route.operation_id]
        body = self._helper_body(match, request.body)
        token = ACTIVE_FAULTS.set(self.config.faults)
        try:
            return (
                validator.path(
                    match.path_params,
                    _raw_path_params(request, match),
                    literal=self.config.literal_escapes,
                ),
                validator.query(request.query, literal=self.config.literal_escapes),
                validator.json_body(body, content_type),
            )
        except MediaTypeInvalid as exc:
            raise media_type_failure(self.config.profile, exc.details) from None
        except RequestInvalid as exc:
            raise validation_failure(self.config.profile, exc.details) from None
        finally:
            ACTIVE_FAULTS.reset(token)

    def _helper_body(self, match: Match, raw: bytes) -> bytes:
        """A mapped test helper's body in the default helper's shape, which the handlers read
        (``core.test_helpers.canonical_body``); any other body as it came."""
        name = HELPER_NAMES.get(match.route.operation_id)
        helper = self.config.profile.helper(name) if name else None
        if helper is None:
            return raw
        decimals = {k: c.decimals for k, c in self.config.profile.currencies.items()}
        return canonical_body(helper, raw, decimals)


def _raw_path_params(request: IncomingRequest, match: Match) -> dict[str, str]:
    """The path parameters as sent, still percent-encoded: the route is the end of the raw
    path (all of it, unless a gateway's base path comes first)."""
    found = match.route.regex.search(request.raw_path)
    if found is None or found.end() != len(request.raw_path):
        return {}
    return found.groupdict()


def _respond(outcome: Outcome) -> Response:
    return Response(
        outcome.body,
        status_code=outcome.status,
        headers=outcome.headers,
        media_type=outcome.content_type,
    )


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The body, or None as soon as it is known to be over ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass
class Runtime:
    """What ``create_app`` starts: the store and the background workers' stop functions."""

    config: ServerConfig
    store: Store
    stops: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        while self.stops:
            self.stops.pop()()
        self.store.close()


def create_app(config: ServerConfig) -> Starlette:
    """The application; ``app.state.runtime`` (a ``Runtime``) must be closed after serving."""
    modules = domain_modules()
    store = Store(config.db_path)
    store.apply_schema(auth.SCHEMA + idempotency.SCHEMA)
    for module in modules:
        store.apply_schema(getattr(module, "SCHEMA", ""))
    with store.transaction() as conn:
        IdempotencyStore(config).recover(conn, int(utcnow().timestamp()))
    runtime = Runtime(config, store)
    pipeline = Pipeline(config, store)

    async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if config.latency_ms:
            await asyncio.sleep(config.latency_ms / 1000)  # waits without holding a thread
        request = Request(scope, receive)
        try:
            body = await _read_body(request, pipeline.max_body)
        except ClientDisconnect:
            return  # nobody is left to answer
        if body is None:
            response = _respond(pipeline.too_large())
        else:
            incoming = IncomingRequest(
                method=request.method,
                path=scope["path"],  # not request.url.path: urlsplit drops tabs and newlines
                raw_path=scope.get("raw_path", b"").decode("utf-8", "replace") or scope["path"],
                query=scope.get("query_string", b""),
                headers=request.headers,
                body=body,
            )
            response = _respond(await run_in_threadpool(pipeline.handle, incoming))
        await response(scope, receive, send)

    async def unexpected(request: Request, exc: Exception) -> Response:
        return _respond(pipeline.internal_error())

    # No Starlette routes: every method and path reaches ``endpoint`` (the router's default),
    # which authenticates before it routes.
    app = Starlette(exception_handlers={Exception: unexpected})
    app.router.default = endpoint
    for module in modules:
        start = getattr(module, "start_background", None)
        if start is not None:
            runtime.stops.append(start(store, config))
    app.state.runtime = runtime
    return app
