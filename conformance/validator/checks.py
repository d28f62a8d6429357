"""Checks of one recorded exchange against the effective contract and the profile.

``ExchangeValidator(profile)`` builds the effective contract once, a path matcher over its
operations (and the profile's test helpers) and, lazily, one compiled JSON Schema validator per
schema it meets (a response for one status, a request body, a parameter); ``validate(exchange)``
then judges one exchange:

- the response: its status is documented for the operation (2xx: the profile's success status),
  its body matches the schema documented for that status, a success is JSON served as
  ``application/json``, an error has the error shape (``code``, ``message``);
- the request: a body or parameter that breaks the contract, an authentication header missing or
  malformed, an Idempotency-Key missing or invalid. A client may send such a request; the server
  must refuse it, so these are judged by what the server answered (accepted: a failure; refused
  with the profile's status: a pass);
- then the answer against its own request (``answers``) and the request against what the
  profile refuses or allows (``admission``), from the exchange's ``findings.Call``.

Requirement ids are the ones the suite's checks of the same rule name
(``judge.schema_requirements``, ``judge.outcomes`` for the error shape). Schemas have the
contract's semantics: ECMA-262 ``pattern`` and the contract's formats, as the suite checks
responses (``judge.response_schemas``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import unquote

from conformance.core import contract as contract_module
from conformance.core import openapi
from conformance.core.contract import effective_contract
from conformance.core.evidence import evidence_from_parts
from conformance.core.openapi import inline, resolve
from conformance.core.profile import Profile
from conformance.core.results import CheckResult, Evidence, Outcome
from conformance.core.signing import AUTH_HEADERS
from conformance.core.test_helpers import HelperRoute
from conformance.judge.admission import AdmissionChecks
from conformance.judge.answers import AnswerChecks
from conformance.judge.auth import NOT_READ, AuthRules, header_reader
from conformance.judge.constraint_ids import ConstraintIds, pinned
from conformance.judge.idempotency import KeyAdmission
from conformance.judge.outcomes import (
    ERROR_SHAPE_IDS,
    MEDIA_TYPE,
    NO_SERVER_ERROR,
    SUCCESS_MEDIA,
    error_shape_problems,
    malformed_refusal,
    media_type,
    success_media_problem,
)
from conformance.judge.outcomes import PROFILE_SHAPE as ERROR_SHAPE_ALL
from conformance.judge.rate_limits import is_rate_limited
from conformance.judge.request_schemas import (
    CompiledSchema,
    RequestSchemas,
    RequestShape,
    summary,
)
from conformance.judge.response_schemas import ERROR_CODE_CHECK, broken_ids, code_only
from conformance.judge.routing import VERSION_PREFIX, RoutingRules
from conformance.judge.schema_requirements import ANY_4XX, requirement_ids
from conformance.judge.server_errors import ServerErrors
from conformance.validator.exchange import Exchange
from conformance.validator.findings import NOT_JSON, Call
from conformance.validator.findings import Finding as _Finding
from conformance.validator.signatures import SignatureVerifier
from conformance.validator.tables import parsed_json, request_headers

FAMILY = "validate"
IDEMPOTENCY_HEADER = contract_module.IDEMPOTENCY_HEADER
_PARAM = re.compile(r"^\{([^}]+)\}$")
_NOT_JSON = NOT_JSON  # a body that is not JSON (or too deep or large to parse safely)
_MISSING: Any = object()  # a body the recording does not hold (Exchange.response_body_missing)


# ----------------------------------------------------------------------------- evidence
def exchange_evidence(exchange: Exchange, secrets: tuple[str, ...] = ()) -> Evidence:
    """The exchange as report evidence, built as the suite builds its own (``core.evidence``)."""
    return evidence_from_parts(
        method=exchange.method,
        url=exchange.url,
        request_headers=exchange.request_headers,
        request_body=exchange.request_body,
        status=exchange.status,
        response_headers=exchange.response_headers,
        response_body=exchange.response_body,
        secrets=secrets,
    )


# ------------------------------------------------------------------------ the contract
@dataclass
class _Operation:
    """What the checks need of one operation, read once from the effective contract."""

    operation_id: str
    method: str
    template: str
    helper: bool  # a profile test helper: not in the contract, only its request headers count
    success_status: int
    response_schemas: dict[int, Any]  # documented status -> inlined schema (None: no JSON body)
    request: RequestShape  # its parameters and body (none for a helper)
    accepts_key: bool = False
    requires_key: bool = False
    validators: dict[int, CompiledSchema] = field(default_factory=dict)  # lazily, by status

    @property
    def label(self) -> str:
        return f"{self.method} {self.template}"


def _read_operation(
    doc: Mapping[str, Any], entry: openapi.PathOperation, profile: Profile, shape: RequestShape
) -> _Operation:
    op, operation_id, method = entry.operation, entry.operation_id, entry.method
    responses: dict[int, Any] = {}
    for status, response in (op.get("responses") or {}).items():
        if not str(status).isdigit():
            continue
        media = (resolve(doc, response).get("content") or {}).get("application/json")
        schema = media.get("schema") if isinstance(media, Mapping) else None
        responses[int(status)] = None if schema is None else inline(doc, schema)
    operation = _Operation(
        operation_id=operation_id,
        method=method,
        template=entry.path,
        helper=False,
        success_status=profile.success_status(operation_id),
        response_schemas=responses,
        request=shape,
        accepts_key=shape.accepts_key,
        requires_key=shape.accepts_key and profile.idempotency_required(method, operation_id),
    )
    return operation


def _helper(route: HelperRoute, profile: Profile) -> _Operation:
    """A test helper the profile gives the server (profile section 6), where it maps it: signed
    like every request, an Idempotency-Key accepted but not required; not in the contract."""
    return _Operation(
        operation_id=route.operation_id,
        method=route.method,
        template=route.path,
        helper=True,
        success_status=route.status or profile.success_status(route.operation_id),
        response_schemas={},
        request=RequestShape(route.operation_id),
        accepts_key=True,
    )


class _PathMatcher:
    """Operations by path below ``/v1``: literal paths by dict, templates by segment count."""

    def __init__(self, operations: Iterable[_Operation]) -> None:
        self.literal: dict[str, dict[str, _Operation]] = {}
        self.templates: dict[int, list[tuple[tuple[str | None, ...], dict[str, _Operation]]]] = {}
        by_template: dict[str, dict[str, _Operation]] = {}
        for op in operations:
            by_template.setdefault(op.template, {})[op.method] = op
        for template, methods in by_template.items():
            segments = template.strip("/").split("/")
            if not any(_PARAM.match(s) for s in segments):
                self.literal[template] = methods
                continue
            shape = tuple(None if _PARAM.match(s) else s for s in segments)
            self.templates.setdefault(len(segments), []).append((shape, methods))
        self._names = {
            template: [m.group(1) for s in template.split("/") if (m := _PARAM.match(s))]
            for template in by_template
        }

    def match(self, path: str) -> tuple[dict[str, _Operation], dict[str, str]] | None:
        """The operations of the path's template by method, and the decoded path parameters."""
        methods = self.literal.get(path)
        if methods is not None:
            return methods, {}
        segments = path.strip("/").split("/")
        for shape, methods in self.templates.get(len(segments), ()):
            if all(s is None or s == seg for s, seg in zip(shape, segments, strict=True)):
                template = next(iter(methods.values())).template
                values = [unquote(seg) for s, seg in zip(shape, segments, strict=True) if s is None]
                return methods, dict(zip(self._names[template], values, strict=True))
        return None


_Lookup = tuple[_Operation | None, dict[str, _Operation] | None, dict[str, str]]
"""An exchange's operation, the operations of its path by method, and its path parameters."""


def api_path(path: str) -> str | None:
    """The part of a URL path from ``/v1`` on (the base URL may add a prefix before it), or None
    when the path has no ``/v1`` segment."""
    if path.startswith("/v1/") or path == "/v1":
        return path
    at = path.find("/v1/")
    if at < 0:
        return path[-3:] if path.endswith("/v1") else None
    return path[at:]


# ----------------------------------------------------------------------------- checking
# The checks that read a body: a body the recorder cut or left out does not judge them.
_BODY_CHECKS = frozenset(
    {
        "media_type",
        "response_schema",
        "error_shape",
        "request_schema",
        "idempotency",
        "answer",
        "admission",
    }
)
CUT_BODY_REASON = (
    "not exercised: the recording cut this exchange's body (_truncated), so the checks that "
    "read it are not judged"
)


def _unjudged_if_cut(finding: _Finding, status: int | None, too_large: int) -> _Finding:
    # The profile's payload-too-large answer is judged by the size of the request body, which
    # may be the part left out.
    if finding.check not in _BODY_CHECKS and not (
        finding.check == "status" and status == too_large
    ):
        return finding
    return _Finding(finding.check, finding.ids, Outcome.NOT_EXERCISED, CUT_BODY_REASON)


def _first_values(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers by lower-case name, the first value of each (as ``Exchange.header`` reads)."""
    found: dict[str, str] = {}
    for name, value in pairs:
        found.setdefault(name.lower(), value)
    return found


def _header_ok(value: str | None) -> bool:
    return value is not None and value != ""


def _code_of(body: Any) -> object:
    return body.get("code") if isinstance(body, dict) else None


def _answer_code(body: Any) -> object:
    """The answer's code, ``NOT_READ`` when the recording does not hold its body."""
    return NOT_READ if body is _MISSING else _code_of(body)


@cache
@cache
def _mode_ids(check: str, operation_id: str, mode: str) -> tuple[str, ...]:
    return requirement_ids(check, operation_id, None, mode)


class ExchangeValidator:
    """Judges recorded exchanges against one profile's effective contract."""

    def __init__(self, profile: Profile, *, pass_evidence: bool = True) -> None:
        """``pass_evidence=False`` leaves the evidence off passed results (a third of the time
        of a passing exchange) for callers that keep only failures' evidence."""
        self.profile = profile
        self._ids_seen: dict[tuple[str, str, int | None], tuple[str, ...]] = {}
        self.pass_evidence = pass_evidence
        doc = effective_contract(profile)
        self._requests = RequestSchemas(doc)
        self.operations = [
            _read_operation(doc, entry, profile, self._requests.shape(entry.operation_id))
            for entry in openapi.operations(doc)
        ]
        self.operations += [_helper(route, profile) for route in profile.helpers.values()]
        self._matcher = _PathMatcher(self.operations)
        self._last_lookup: tuple[Exchange, _Lookup] | None = None
        self._checker = self._requests.checker
        auth = profile.auth
        self._auth_statuses = auth.statuses
        self._rate_limit = profile.rate_limit
        self._not_found = profile.error("status", "not_found")
        self._validation = profile.error("status", "validation")
        self._refusal = malformed_refusal(profile)  # with its code where a business rule shares it
        self._too_large = profile.status.payload_too_large.status
        self._keys = KeyAdmission(profile)
        self._routing = RoutingRules(profile)
        self._max_body = profile.status.max_body_bytes
        self._secrets = tuple(c.api_secret for c in profile.credentials)
        self._auth = AuthRules(profile)
        self._signatures = SignatureVerifier(profile)
        self._answers = AnswerChecks(profile)
        self._constraints = ConstraintIds(profile)
        self._admission = AdmissionChecks(profile)
        self._server_errors = ServerErrors(profile, self._requests)

    def _ids(self, check: str, operation_id: str, status: int | None = None) -> tuple[str, ...]:
        """The ids ``check`` verifies for a response with ``status``, read with the profile's
        statuses (which answer a status is); worked out once per combination."""
        key = (check, operation_id, status)
        found = self._ids_seen.get(key)
        if found is None:
            found = requirement_ids(check, operation_id, status, profile=self.profile)
            self._ids_seen[key] = found
        return found

    # -- identification --------------------------------------------------------------------
    def _lookup(self, exchange: Exchange) -> _Lookup:
        # The engine identifies an exchange, then validates it: one lookup for both (an
        # exchange is immutable, and the parameters are only read).
        last = self._last_lookup
        if last is not None and last[0] is exchange:
            return last[1]
        path = api_path(exchange.path)
        found = self._matcher.match(path) if path is not None else None
        if found is None:
            looked: _Lookup = None, None, {}
        else:
            methods, params = found
            looked = methods.get(exchange.method.upper()), methods, params
        self._last_lookup = (exchange, looked)
        return looked

    def identify(self, exchange: Exchange) -> str | None:
        """The operationId the exchange calls, or None when the contract has no such operation."""
        op, _, _ = self._lookup(exchange)
        return op.operation_id if op is not None else None

    # -- the whole exchange ----------------------------------------------------------------
    def validate(self, exchange: Exchange) -> list[CheckResult]:
        return self.results(exchange, *self.judge(exchange))

    def judge(self, exchange: Exchange) -> tuple[str | None, list[_Finding]]:
        """The operationId the exchange calls (None: none of the contract) and what the checks
        found: ``results`` makes them ``CheckResult``s; a caller that only counts passes
        (``engine.check_exchanges``) need not."""
        op, methods, params = self._lookup(exchange)
        if op is None:
            findings = self._unknown(exchange, methods)
            operation_id = None
            status = exchange.status
            if (
                any(f.ids for f in findings)
                and status is not None
                and 400 <= status < 500
                and exchange.response_body
            ):
                # Unknown paths and methods get the profile's error too: JSON, code, message
                # (an empty body may be one the recorder did not capture: not judged), judged
                # under the error-body ids, as the robustness family judges it; the status
                # under the routing ids.
                self._error_shape(exchange, _json_body(exchange), findings)
        else:
            findings = self._findings(exchange, op, params)
            operation_id = op.operation_id
        if exchange.truncated:
            findings = [_unjudged_if_cut(f, exchange.status, self._too_large) for f in findings]
        return operation_id, findings

    def results(
        self, exchange: Exchange, operation_id: str | None, findings: Sequence[_Finding]
    ) -> list[CheckResult]:
        """``findings`` of ``exchange`` (from ``judge``) as results named ``validate.<check>
        <source>``, failures with the exchange as evidence."""
        if not findings:
            return []
        evidence = None
        if self.pass_evidence or any(f.outcome is Outcome.FAILED for f in findings):
            evidence = exchange_evidence(exchange, self._secrets)
        where = f" {exchange.source}" if exchange.source else ""
        return [
            CheckResult(
                check_id=f"{FAMILY}.{f.check}{where}",
                family=FAMILY,
                requirement_ids=f.ids,
                outcome=f.outcome,
                message=f.message,
                operation_id=operation_id,
                evidence=evidence if f.outcome is Outcome.FAILED or self.pass_evidence else None,
                reason_not_exercised=f.message if f.outcome is Outcome.NOT_EXERCISED else None,
            )
            for f in findings
        ]

    def _findings(
        self, exchange: Exchange, op: _Operation, params: dict[str, str]
    ) -> list[_Finding]:
        status = exchange.status
        if status is None:
            return []  # no response recorded: nothing the server did to judge
        if status in (429, 503) and is_rate_limited(  # the only statuses it may say yes to
            status, _first_values(exchange.response_headers), self._rate_limit
        ):
            return []  # a rate limit is the server's right: the suite judged the resend
        findings: list[_Finding] = []
        headers = request_headers(exchange)
        body: Any = _NOT_JSON
        if exchange.response_body_missing:
            body = _MISSING
        elif exchange.response_body:
            try:
                body = parsed_json(exchange.response_body)
            except ValueError:
                body = _NOT_JSON
        # missing or malformed: the only right answer is the profile's auth error, whatever else
        # the request holds
        breach = self._auth.headers(header_reader(headers))
        auth_ok = breach is None
        if breach is not None:
            answer = NOT_READ if body is _MISSING else None if body is _NOT_JSON else body
            findings += self._auth.refusal(
                breach, status, answer, known_valid=False, helper=op.helper
            )
        if status >= 500:
            findings.append(
                _Finding(
                    "status", (NO_SERVER_ERROR,), Outcome.FAILED, f"{op.label} answered {status}"
                )
            )
            if auth_ok and not op.helper and not self._signatures.forged(exchange, headers):
                call = Call(exchange, op.operation_id, params, status, None)
                findings += self._server_errors.refusals(call, op.request)
            return findings
        if status >= 400:
            self._error_shape(exchange, body, findings)
        if not auth_ok:
            return findings  # refused (or wrongly accepted) for its authentication: judged above
        if status >= 400 and self._signatures.forged(exchange, headers):
            return findings  # refused, perhaps for its signature alone: the auth checks judge it
        if self._media_refusal(exchange, op, status, body, findings):
            return findings  # refused for its media type, which may be looked at first
        findings += self._keys.judge(
            op.operation_id,
            headers.get(IDEMPOTENCY_HEADER.lower()),
            requires=op.requires_key,
            accepts=op.accepts_key,
            status=status,
            code=_code_of(body),
        )
        answer = None if body is _NOT_JSON or body is _MISSING else body
        call = Call(exchange, op.operation_id, params, status, answer)
        broken, accepted = self._request(exchange, op, params, status, body, findings, call.request)
        admitted, echoed = self._admission.judge(
            call, contract_problems=broken, query_names=op.request.query_names
        )
        if not op.helper:
            self._response(exchange, op, status, body, findings, accepted | echoed)
        findings += self._answers.judge(call)
        findings += admitted
        return findings

    def _media_refusal(
        self, exchange: Exchange, op: _Operation, status: int, body: Any, out: list[_Finding]
    ) -> bool:
        """A body sent as a media type other than JSON gets one of the profile's answers
        (``judge.routing``); True when the exchange is judged by that rule alone."""
        if op.request.body_schema is None or not exchange.request_body:
            return False
        found = self._routing.media(
            exchange.header("content-type"), status=status, code=_answer_code(body)
        )
        if found is None or found.outcome is Outcome.NOT_EXERCISED:
            return False
        out.append(found)
        return True

    # -- the response ----------------------------------------------------------------------
    def _validator(self, op: _Operation, status: int, schema: Any) -> CompiledSchema:
        compiled = op.validators.get(status)
        if compiled is None:
            compiled = op.validators[status] = CompiledSchema.of(schema, self._checker)
        return compiled

    def _response(
        self,
        exchange: Exchange,
        op: _Operation,
        status: int,
        body: Any,
        out: list[_Finding],
        accepted: frozenset[str] = frozenset(),
    ) -> None:
        """``accepted``: the fields of a request that broke the contract and was accepted; the
        answer echoing them is that same fault, judged under the request's rules."""
        oid = op.operation_id
        success = 200 <= status < 300
        if success and status != op.success_status:
            ids = self._ids("status_code_conformance", oid, status)
            message = f"{op.label} answered {status}; the profile's success status is "
            out.append(_Finding("status", ids, Outcome.FAILED, message + str(op.success_status)))
            return
        if status not in op.response_schemas:
            if status == self._too_large and len(exchange.request_body) > self._max_body:
                return  # the profile's answer to any body above max_body_bytes
            ids = self._ids("status_code_conformance", oid, status) or _mode_ids(
                "status_code_conformance", oid, "positive"
            )
            documented = ", ".join(str(s) for s in sorted(op.response_schemas))
            message = f"{op.label} answered {status}, not a status it documents ({documented})"
            out.append(_Finding("status", ids, Outcome.FAILED, message))
            return
        if success:
            ids = self._ids("status_code_conformance", oid, status)
            out.append(_Finding("status", ids, Outcome.PASSED, f"{status} as the profile states"))
            media = media_type(exchange.header("content-type", response=True))
            if body is _MISSING and media == "application/json":
                reason = f"served as JSON; {exchange.response_body_missing}"
                out.append(_Finding("media_type", (SUCCESS_MEDIA,), Outcome.NOT_EXERCISED, reason))
            elif (problem := success_media_problem(media, body is not _NOT_JSON)) is not None:
                out.append(_Finding("media_type", (SUCCESS_MEDIA,), Outcome.FAILED, problem))
                return
            else:
                out.append(_Finding("media_type", (SUCCESS_MEDIA,), Outcome.PASSED, "JSON"))
        schema = op.response_schemas[status]
        if schema is None or body is _NOT_JSON:
            return  # no documented body, or an error body the error shape check judged
        candidates = self._ids("response_schema_conformance", oid, status)
        if body is _MISSING:
            reason = exchange.response_body_missing or ""
            out.append(_Finding("response_schema", candidates, Outcome.NOT_EXERCISED, reason))
            return
        problems = self._validator(op, status, schema).problems(body)
        own = [p for p in problems if not p.fields & accepted]
        if problems and not own:
            return  # only the accepted values echoed: the request's findings name the fault
        problems = own
        if problems:
            message = f"the {status} body breaks its schema: {summary(problems)}"
            if 200 <= status < 300:  # as the responses family judges a success body
                broken = broken_ids(candidates, problems)
                ids = tuple(rid for rid in candidates if rid in broken)
            else:
                ids = pinned(candidates, problems)
            if code_only(status, problems):
                ids = self._ids(ERROR_CODE_CHECK, oid, status) or ids
            out.append(_Finding("response_schema", ids, Outcome.FAILED, message))
        elif candidates:
            message = f"the {status} body matches its schema"
            out.append(_Finding("response_schema", candidates, Outcome.PASSED, message))

    def _error_shape(self, exchange: Exchange, body: Any, out: list[_Finding]) -> None:
        """Spec 7 and profile 3 (``judge.outcomes.error_shape_problems``)."""
        media = media_type(exchange.header("content-type", response=True))
        if body is _MISSING:
            # the media type is in the headers, which the recording holds
            wrong_media = error_shape_problems(media, None).get(MEDIA_TYPE)
            if wrong_media is not None:
                wrong = (MEDIA_TYPE, ERROR_SHAPE_ALL)
                out.append(_Finding("error_shape", wrong, Outcome.FAILED, wrong_media))
            reason = exchange.response_body_missing or ""
            out.append(_Finding("error_shape", ERROR_SHAPE_IDS, Outcome.NOT_EXERCISED, reason))
            return
        found = error_shape_problems(media, body)
        if found:
            message = "; ".join(found.values())
            ids = (*found, ERROR_SHAPE_ALL)
            out.append(_Finding("error_shape", ids, Outcome.FAILED, message))
        else:
            message = "application/json object with string code and message"
            out.append(_Finding("error_shape", ERROR_SHAPE_IDS, Outcome.PASSED, message))

    # -- the request -----------------------------------------------------------------------

    def _key_refusal(self, exchange: Exchange, op: _Operation, status: int, body: Any) -> bool:
        """The answer is the profile's refusal of the request's Idempotency-Key: missing where
        required, or outside the bounds."""
        key = exchange.header(IDEMPOTENCY_HEADER)
        answer = self._keys.refusal(key, requires=op.requires_key, accepts=op.accepts_key)
        return answer is not None and answer.matches(status, _code_of(body))

    def _request(
        self,
        exchange: Exchange,
        op: _Operation,
        params: dict[str, str],
        status: int,
        body: Any,
        out: list[_Finding],
        request: Any = NOT_JSON,
    ) -> tuple[bool, frozenset[str]]:
        """A request that breaks the contract must be refused with the validation error.
        ``request`` is its body's JSON document (``NOT_JSON``: none, or not JSON). Returns
        whether the request breaks the contract (or could not be judged against it), and the
        fields it broke when the server accepted it."""
        if op.helper:
            return True, frozenset()  # not part of the contract
        size = self._routing.too_large(
            len(exchange.request_body), status=status, code=_answer_code(body), known_valid=False
        )
        if size is not None:
            out.append(size)
            return True, frozenset()
        problems = self._requests.problems(
            op.request, params, exchange.query, exchange.request_body, request
        )
        if not problems:
            return False, frozenset()
        if status in self._auth_statuses or status in (self._not_found.status, self._too_large):
            return True, frozenset()  # refused for a reason checked before validation
        oid = op.operation_id
        what = f"the request breaks the contract: {summary(problems)}"
        if 200 <= status < 300:
            # Accepted: both the contract's "MUST reject" and the profile's "MUST answer with
            # 400 validation_error" are broken.
            candidates = self._ids("negative_data_rejection", oid, status)
            candidates += self._ids("negative_data_rejection", oid, ANY_4XX)
            ids = self._constraints.rejection_ids(oid, problems, tuple(dict.fromkeys(candidates)))
            message = f"{what}; the server accepted it ({status})"
            out.append(_Finding("request_schema", ids, Outcome.FAILED, message))
            return True, frozenset(f for p in problems for f in p.fields)
        if self._refusal.matches(status, _code_of(body)):
            candidates = self._ids("negative_data_rejection", oid, status)
            ids = self._constraints.rejection_ids(oid, problems, candidates)
            message = f"{what}; refused with {status}"
            out.append(_Finding("request_schema", ids, Outcome.PASSED, message))
        elif self._key_refusal(exchange, op, status, body):
            # refused for its Idempotency-Key, which may be looked at first
            return True, frozenset()
        else:
            # refused, with another answer than the profile's (a 5xx: ``ServerErrors``)
            candidates = self._ids("negative_data_rejection", oid, ANY_4XX)
            ids = self._constraints.misanswered_ids(oid, problems, candidates)
            message = (
                f"{what}; answered {status}, the profile's answer is {self._validation.status}"
            )
            out.append(_Finding("request_schema", ids, Outcome.FAILED, message))
        return True, frozenset()

    # -- unknown operations ----------------------------------------------------------------
    def _unknown(self, exchange: Exchange, methods: dict[str, _Operation] | None) -> list[_Finding]:
        status = exchange.status
        label = f"{exchange.method} {exchange.path}"
        authenticated = all(_header_ok(exchange.header(name)) for name in AUTH_HEADERS)
        # an empty body may be one the recorder did not capture: the status alone is compared
        missing = exchange.response_body_missing or not exchange.response_body
        code = _answer_code(_MISSING if missing else _json_body(exchange))
        if methods is None and api_path(exchange.path) is None:
            # a path without /v1 that would be an operation with it; only a request carrying the
            # API's authentication headers is judged: anything else (a page, an asset, a health
            # probe a proxy recorded) is not an API call at all
            found = self._matcher.match(VERSION_PREFIX + exchange.path)
            if found is None or exchange.method.upper() not in found[0] or not authenticated:
                message = f"{label}: not under /v1, not an operation of the contract: not checked"
                return [_Finding("operation", (), Outcome.NOT_EXERCISED, message)]
            if status is None:
                return []
            findings = self._routing.unversioned(
                label,
                exchange.path,
                status=status,
                code=code,
                known_valid=False,
            )
        else:
            # A repeated header is one list (RFC 9110 5.3): "Allow: GET" then "Allow: POST".
            values = [v for k, v in exchange.response_headers if k.lower() == "allow"]
            finding = self._routing.unknown(
                label,
                None if methods is None else list(methods),
                authenticated=authenticated,
                status=status,
                code=code,
                allow=", ".join(values) if values else None,
            )
            findings = [finding]
        if status is not None and status >= 500:
            message = f"{label} answered {status}"
            findings.append(_Finding("status", (NO_SERVER_ERROR,), Outcome.FAILED, message))
        return findings


def _json_body(exchange: Exchange) -> Any:
    if not exchange.response_body:
        return _NOT_JSON
    try:
        return parsed_json(exchange.response_body)
    except ValueError:
        return _NOT_JSON
