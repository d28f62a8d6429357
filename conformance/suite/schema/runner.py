"""Driving schemathesis' phases and keeping one outcome per (check, operation).

The unit phases run per operation: **examples** (the contract's examples), **coverage**
(schemathesis' deterministic boundary and negation cases) and **fuzzing** (Hypothesis-drawn
cases); positive cases come from the generation contract, negative ones from the effective
contract. The **stateful** phase follows the contract's links (create a payment, then cancel
it...) so that operations on path ids meet real resources.

Every response goes through ``case.validate_response``; an ``after_validate`` hook hands each
check's result to the ``CheckLedger``, which keeps, per check and operation, the requirement ids
verified, those broken, and the evidence of the first failure. Nothing raises on a failed check:
every case of every phase runs, and the test records the ledger at the end.
"""

from __future__ import annotations

import contextlib
import time
import unittest
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import hypothesis
import requests
import schemathesis
import urllib3
from hypothesis.errors import HypothesisException
from schemathesis.checks import CheckResult as StCheckResult
from schemathesis.core.control import SkipTest
from schemathesis.core.failures import FailureGroup
from schemathesis.core.parameters import ParameterLocation
from schemathesis.engine import Status
from schemathesis.generation import GenerationMode
from schemathesis.generation.drivers import CoverageGenerator, ExamplesGenerator
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.generation.hypothesis.builder import (
    HypothesisTestConfig,
    HypothesisTestMode,
    create_test,
)
from schemathesis.generation.meta import (
    REQUEST_SHAPE_PROBES,
    CoverageScenario,
    coverage_scenario,
)
from schemathesis.generation.overrides import Override
from schemathesis.generation.stateful import run_state_machine_as_test

from conformance.core import jsonsafe
from conformance.core.openapi import HTTP_METHODS
from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.judge.auth import NOT_READ
from conformance.judge.constraint_ids import ConstraintIds
from conformance.judge.findings import Finding
from conformance.judge.idempotency import MISSING_KEY_IDS, KeyAdmission
from conformance.judge.request_schemas import RequestSchemas
from conformance.judge.response_schemas import (
    ERROR_CODE_CHECK,
    Problem,
    ResponseSchemas,
    broken_ids,
    code_only,
)
from conformance.judge.routing import RoutingRules
from conformance.judge.schema_requirements import is_pinned, pin, requirement_ids
from conformance.judge.server_errors import ServerErrors
from conformance.suite.schema.checks import refused_body
from conformance.suite.schema.evidence import (
    case_fields,
    case_mode,
    evidence_from,
    failure_fields,
    failure_tags,
    failure_text,
    request_evidence,
)
from conformance.suite.schema.fixups import CasePreparer
from conformance.suite.schema.ledger import CheckLedger, unexercisable_ids
from conformance.suite.schema.loading import (
    CONNECT_TIMEOUT_S,
    READ_TIMEOUT_S,
    LoadedSchemas,
    signed_session,
)
from conformance.suite.schema.resending import RateLimitedRequest
from conformance.suite.schema.schema_call import SchemaCall
from conformance.suite.tool_errors import ServerGone, describe, no_answer
from conformance.suite.wire.client import (
    IDEMPOTENCY_HEADER,
    ClientStats,
    RateLimitedStop,
    rate_limit_stop,
)
from conformance.suite.wire.ratelimit import rate_limited_reason
from conformance.suite.wire.tls import describe_failure

TRANSPORT_ERRORS_BEFORE_GIVING_UP = 3
READ_METHODS = frozenset({"get", "head", "options", "query"})  # not "use after free" otherwise
UNIT_GROUP = "unit"
STATEFUL_GROUP = "stateful"
NEGATIVE_CHECK = "negative_data_rejection"
POSITIVE_CHECK = "positive_data_acceptance"
RESPONSE_SCHEMA_CHECK = "response_schema_conformance"
SERVER_ERROR_CHECK = "no_server_error"
# Ours, in place of schemathesis' unsupported_method and allow_header_conformance, which demand
# 405 with an Allow header whatever the profile says: judge.routing decides, as for the validator.
METHOD_CHECK = "undocumented_method"


# ------------------------------------------------------------------ applicability
def applies(check: str, case: schemathesis.Case[Any], response: schemathesis.Response) -> bool:
    """Whether a built-in check had something to check (they return None either way)."""
    scenario = coverage_scenario(case)
    probe = scenario in REQUEST_SHAPE_PROBES
    mode = case_mode(case)
    if check == "positive_data_acceptance":
        return mode == "positive" and not probe
    if check == NEGATIVE_CHECK:
        return mode == "negative" and not probe
    if check == "missing_required_header":
        data = case.meta.phase.data if case.meta is not None else None
        return (
            scenario == CoverageScenario.MISSING_PARAMETER
            and getattr(data, "parameter_location", None) == ParameterLocation.HEADER
        )
    if check == METHOD_CHECK:
        return False  # judged apart, by judge.routing (SchemaPhaseRunner._undocumented_method)
    if check in ("use_after_free", "ensure_resource_availability"):
        return False  # counted only by the stateful phase, which knows the links (see below)
    if check == "status_code_conformance":
        return not probe
    if check in (
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    ):
        # The contract documents no 3xx, so these checks skip a redirect's content: nothing
        # held (its status fails status_code_conformance).
        return not probe and not 300 <= response.status_code < 400
    return True


# ------------------------------------------------------------------------ the runner
class ServerGoneError(RuntimeError):
    """Several requests in a row got no usable response: the phases cannot go on."""


class ServerUnreachableError(ServerGoneError, ServerGone):
    """Several requests in a row got no answer at all: the server is gone."""


@dataclass(frozen=True)
class PhaseSizes:
    fuzzing_examples: int  # per operation and generation mode
    coverage_limit: int | None  # cases per operation and mode; None: all
    stateful_examples: int
    stateful_steps: int


@dataclass
class PhaseCounts:
    cases: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


class SchemaPhaseRunner:
    def __init__(
        self,
        schemas: LoadedSchemas,
        profile: Profile,
        *,
        seed: int,
        sizes: PhaseSizes,
        stats: ClientStats | None = None,
    ) -> None:
        """``stats``: the run's, whose rate limiting (counts, waits, budget) the session shares."""
        self.schemas = schemas
        self.profile = profile
        self.seed = seed
        self.sizes = sizes
        self.stats = stats if stats is not None else ClientStats()
        self.session = signed_session(profile, stats=self.stats)
        self.preparer = CasePreparer(
            seed, (profile.idempotency.min_length, profile.idempotency.max_length)
        )
        self.ledger = CheckLedger(unexercisable_ids(profile))
        self.constraints = ConstraintIds(profile)
        self.keys = KeyAdmission(profile)
        self.routing = RoutingRules(profile)
        self.requests = RequestSchemas(schemas.raw_contract)
        self.server_errors = ServerErrors(profile, self.requests)
        self.response_schemas = ResponseSchemas(schemas.raw_contract)
        self.secrets = tuple(c.api_secret for c in profile.credentials)
        self.counts = PhaseCounts()
        self.counted = 0  # cases already added to the run's request count
        self._transport_errors = 0
        # why the last request of the current test that got no answer got none (TLS, reset...)
        self.unanswered: str | None = None
        self._phase = "examples"
        self._in_stateful = False
        self._linked: dict[str, bool] = {}
        self._deleted: set[str] = set()  # paths deleted in the current stateful scenario
        for schema in (schemas.contract, schemas.generation):
            schema.hooks.register_hook_with_name(self._after_validate, "after_validate")

    def reset_ledger(self) -> None:
        """A fresh ledger: each test records only what its own phases saw."""
        self.ledger = CheckLedger(unexercisable_ids(self.profile))
        self.unanswered = None

    def check_answered(self, phases: str) -> None:
        """Raise ``ServerUnreachableError`` when the ``phases`` of this test checked no response
        because their requests got no answer (TLS, reset...): not judged, never failed."""
        if not self.ledger.observations and self.unanswered is not None:
            raise ServerUnreachableError(f"{phases}: {self.unanswered}")

    def close(self) -> None:
        self.session.close()
        for schema in (self.schemas.contract, self.schemas.generation):
            schema.hooks.unregister(self._after_validate)

    # -- one case --------------------------------------------------------------------------
    def transport_kwargs(self) -> dict[str, Any]:
        return {"session": self.session, "timeout": (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)}

    def operation_id(self, case: schemathesis.Case[Any]) -> str:
        return str(case.operation.schema.get_operation_id(case.operation))

    def send(self, case: schemathesis.Case[Any], phase: str, recorder: Any = None) -> None:
        """Prepare, send and validate one case; every check's result goes to the ledger."""
        self._phase = phase
        operation_id = self.operation_id(case)
        self.preparer.prepare(case, operation_id)
        kwargs = self.transport_kwargs()
        try:
            response = case.call(**kwargs)
        except requests.RequestException as exc:
            self.transport_failure(operation_id, exc)
            return
        defuse(response)
        self._answered()
        self.counts.cases[phase] += 1
        self.validate(case, response, kwargs, recorder)

    def transport_failure(self, operation_id: str, exc: requests.RequestException) -> None:
        """No usable response. A reply that is not HTTP (or a broken body) fails
        no_server_error; no answer at all (refused, reset, TLS, timeout) fails nothing
        (``tool_errors``). After a few in a row the server is gone. A request the
        server kept rate limiting past its bounds is no failure either: its case is left out,
        and a check it leaves without a case is not exercised for that reason."""
        self.counts.cases[self._phase] += 1
        if isinstance(exc, RateLimitedRequest):
            self.ledger.rate_limited.setdefault(operation_id, rate_limited_reason(str(exc)) or "")
            return
        self._transport_errors += 1
        if no_answer(exc):
            self.unanswered = describe(exc)
        if _could_not_connect(exc):
            # as the suite's client counts its own: three in a row and the server is gone
            self.stats.note_connection(refused=True, tls_failure=describe_failure(exc))
        request = exc.request if isinstance(exc.request, requests.PreparedRequest) else None
        if request is not None and not no_answer(exc):
            self.ledger.failed(
                "no_server_error",
                operation_id,
                self._phase,
                requirement_ids("no_server_error", operation_id),
                f"no response: {type(exc).__name__}: {exc}",
                request_evidence(request, self.secrets),
            )
        if self._transport_errors >= TRANSPORT_ERRORS_BEFORE_GIVING_UP:
            last = f"{self._transport_errors} requests in a row got no response; last: "
            if no_answer(exc):
                # not SERVER_GONE: the suite's own client may still reach the server
                raise ServerUnreachableError(f"the schema phases gave up ({last}{describe(exc)})")
            last += f"{type(exc).__name__}: {exc}"
            raise ServerGoneError(f"the server's answers cannot be used ({last})")

    def _answered(self) -> None:
        self._transport_errors = 0
        self.stats.note_connection(refused=False)

    def validate(
        self,
        case: schemathesis.Case[Any],
        response: schemathesis.Response,
        transport_kwargs: dict[str, Any],
        recorder: Any = None,
    ) -> None:
        refused = refused_body(response)
        if refused is not None:
            self._refused(case, response, refused)
            return
        # Every failure reaches the ledger through the hook; the exception adds nothing.
        with contextlib.suppress(AssertionError, FailureGroup):
            case.validate_response(response, transport_kwargs=transport_kwargs, recorder=recorder)

    def _refused(
        self, case: schemathesis.Case[Any], response: schemathesis.Response, reason: str
    ) -> None:
        """A body too deep or too large to parse safely fails the response-schema check here:
        schemathesis' checks would hand it to ``json.loads``, which recurses once per level."""
        check = RESPONSE_SCHEMA_CHECK
        operation_id = self.operation_id(case)
        ids = requirement_ids(
            check, operation_id, response.status_code, case_mode(case), self.profile
        )
        self.ledger.failed(
            check,
            operation_id,
            self._phase,
            ids or requirement_ids(check, operation_id),
            f"{response.status_code}: the body is not a JSON document the contract allows: "
            f"{reason}",
            evidence_from(response, self.secrets),
        )

    def _after_validate(
        self,
        context: schemathesis.HookContext,
        case: schemathesis.Case[Any],
        response: schemathesis.Response,
        results: list[StCheckResult],
    ) -> None:
        operation_id = self.operation_id(case)
        mode = case_mode(case)
        status = response.status_code
        found = coverage_scenario(case)
        scenario = {str(found)} if found is not None else set()
        if found == CoverageScenario.UNSPECIFIED_HTTP_METHOD:
            self._undocumented_method(case, response, operation_id)
        for result in results:
            check = result.name
            if result.status == Status.FAILURE and result.failure is not None:
                candidates = requirement_ids(check, operation_id, status, mode, self.profile)
                fields, tags = failure_fields(result.failure), failure_tags(result.failure)
                problems = (
                    self._schema_problems(operation_id, response)
                    if check == RESPONSE_SCHEMA_CHECK
                    else []
                )
                if code_only(status, problems):  # as the validator names it
                    candidates = requirement_ids(
                        ERROR_CODE_CHECK, operation_id, status, mode, self.profile
                    )
                elif problems and not fields:
                    fields = {name for problem in problems for name in problem.fields}
                    tags = {tag for problem in problems for tag in problem.tags}
                fields |= case_fields(case)
                tags |= scenario
                refused = 400 <= status < 500  # with another answer than the profile's
                if check == RESPONSE_SCHEMA_CHECK and 200 <= status < 300 and problems:
                    # as the responses family and the validator judge a success body
                    body_breaks = broken_ids(candidates, problems)
                    ids = tuple(rid for rid in candidates if rid in body_breaks)
                else:
                    ids = self._broken_constraint(check, case, operation_id, fields, tags, refused)
                    ids = ids or self._refused_key(check, case, response)
                    ids = ids or pin(candidates, fields, tags) or candidates
                if not ids:  # a status the mapping does not name: every id of the check
                    ids = requirement_ids(check, operation_id)
                message = failure_text(result.failure)
                if (
                    check == SERVER_ERROR_CHECK
                    and found != CoverageScenario.UNSPECIFIED_HTTP_METHOD
                ):
                    # (a method the path does not have is no request of the operation's)
                    refusals = self._refusals(case, response, operation_id)
                    ids = tuple(dict.fromkeys([*ids, *(i for f in refusals for i in f.ids)]))
                    message = "; ".join([message, *(f.message for f in refusals)])
                self.ledger.failed(
                    check,
                    operation_id,
                    self._phase,
                    ids,
                    message,
                    evidence_from(response, self.secrets),
                )
            elif self._counts_as_pass(check, case, response):
                ids = requirement_ids(check, operation_id, status, mode, self.profile)
                if is_pinned(check):
                    fields = case_fields(case)
                    broken = self._broken_constraint(check, case, operation_id, fields, scenario)
                    ids = broken or pin(ids, fields, scenario)
                self.ledger.passed(check, operation_id, self._phase, ids)

    def _refusals(
        self, case: schemathesis.Case[Any], response: schemathesis.Response, operation_id: str
    ) -> list[Finding]:
        """A server error to a request that had to be refused: the refusals it did not get
        (``judge.server_errors``), as the validator names them on the same exchange."""
        call = SchemaCall(response, operation_id, case.operation.path)
        return self.server_errors.refusals(call, self.requests.shape(operation_id))

    def _undocumented_method(
        self, case: schemathesis.Case[Any], response: schemathesis.Response, operation_id: str
    ) -> None:
        """A method the path does not have gets the profile's answer (``judge.routing``)."""
        path = case.operation.path
        methods = [m.upper() for m in self.schemas.raw_contract["paths"][path] if m in HTTP_METHODS]
        try:
            body = jsonsafe.loads(response.content)
        except ValueError:
            body = None
        values = response.headers.get("allow")
        finding = self.routing.unknown(
            f"{case.method} {case.formatted_path}",
            methods,
            authenticated=True,  # signed like every request of the phases
            status=response.status_code,
            code=body.get("code") if isinstance(body, dict) else NOT_READ,
            allow=", ".join(values) if values else None,
        )
        if finding.outcome is Outcome.FAILED:
            evidence = evidence_from(response, self.secrets)
            self.ledger.failed(
                METHOD_CHECK, operation_id, self._phase, finding.ids, finding.message, evidence
            )
        elif finding.outcome is Outcome.PASSED:
            self.ledger.passed(METHOD_CHECK, operation_id, self._phase, finding.ids)

    def _schema_problems(self, operation_id: str, response: schemathesis.Response) -> list[Problem]:
        """A body's schema problems as the judge finds them (and the validator names them):
        their fields and tags pin a failure of schemathesis' that names none (one inside an
        ``anyOf``, which it reports at the schema's top), and a code alone is the profile's
        code rule."""
        try:
            body = jsonsafe.loads(response.content)
        except ValueError:
            return []
        return self.response_schemas.problems(operation_id, response.status_code, body)

    def _broken_constraint(
        self,
        check: str,
        case: schemathesis.Case[Any],
        operation_id: str,
        fields: set[str],
        tags: set[str],
        refused: bool = False,
    ) -> tuple[str, ...]:
        """A negative case without the Idempotency-Key its operation requires, or that breaks
        a constraint of the boundaries family's (a pattern, a length, a range...), is judged
        under those ids, as the validator judges the same request (``refused``: with another
        answer than the profile's, which breaks only the ids of that answer); empty for any
        other case or check."""
        if check != NEGATIVE_CHECK:
            return ()
        headers = {name.lower() for name in case.headers or {}}
        if IDEMPOTENCY_HEADER.lower() not in headers and self.profile.idempotency_required(
            case.method, operation_id
        ):
            return MISSING_KEY_IDS
        return self.constraints.of(operation_id, fields, tags, status_only=refused)

    def _refused_key(
        self, check: str, case: schemathesis.Case[Any], response: schemathesis.Response
    ) -> tuple[str, ...]:
        """A valid case refused as having an invalid Idempotency-Key, though its key is within
        the bounds, is judged under the key's ids (``judge.idempotency.KeyAdmission``, as the
        validator judges it); else empty."""
        if check != POSITIVE_CHECK:
            return ()
        key = next(
            (v for k, v in (case.headers or {}).items() if k.lower() == IDEMPOTENCY_HEADER.lower()),
            None,
        )
        if not isinstance(key, str):
            return ()
        try:
            body = jsonsafe.loads(response.content)
        except ValueError:
            return ()
        found = self.keys.judge(
            self.operation_id(case),
            key,
            requires=True,
            accepts=True,
            status=response.status_code,
            code=body.get("code") if isinstance(body, dict) else None,
        )
        return next((f.ids for f in found if f.outcome is Outcome.FAILED), ())

    def _counts_as_pass(
        self, check: str, case: schemathesis.Case[Any], response: schemathesis.Response
    ) -> bool:
        if check == "ensure_resource_availability":
            return self._in_stateful and self._linked.get(case.id, False)
        if check == "use_after_free":
            # Only a read after a successful DELETE of the same resource has something to check.
            return (
                self._in_stateful
                and 200 <= response.status_code < 400
                and case.method.lower() in READ_METHODS
                and any(case.formatted_path.startswith(path) for path in self._deleted)
            )
        return applies(check, case, response)

    # -- unit phases -----------------------------------------------------------------------
    def run_unit_phases(self, operation_id: str) -> None:
        started = time.monotonic()
        generation = self.schemas.generation.find_operation_by_id(operation_id)
        contract = self.schemas.contract.find_operation_by_id(operation_id)
        for case in ExamplesGenerator(
            operation=generation, override=Override(), feedback=FeedbackSources(), fill_missing=True
        ):
            self.send(case, "examples")
        for operation, mode in (
            (generation, GenerationMode.POSITIVE),
            (contract, GenerationMode.NEGATIVE),
        ):
            for case in self._coverage_cases(operation, mode):
                self.send(case, "coverage")
        for operation in (generation, contract):
            self._fuzz(operation)
        self.counts.seconds += time.monotonic() - started

    def _coverage_cases(self, operation: Any, mode: GenerationMode) -> list[schemathesis.Case[Any]]:
        config = operation.schema.config.generation_for(operation=operation, phase="coverage")
        # Negative cases: with both modes schemathesis negates one parameter at a time and keeps
        # the others valid; with the negative mode alone it makes every parameter invalid at
        # once, and the first one the server checks hides the rest.
        modes = [GenerationMode.POSITIVE]
        if mode == GenerationMode.NEGATIVE:
            modes.append(GenerationMode.NEGATIVE)
        # schemathesis probes each (path, undeclared method) once per process, for whichever
        # operation on that path comes first; the test processes of a run and of its replay
        # take operations in different orders. Forgotten here, every operation sends its own
        # probes, and the same cases whatever ran before it.
        operation.schema.coverage_unexpected_methods_seen.clear()
        cases = [
            case
            for case in CoverageGenerator(
                operation=operation,
                generation_modes=modes,
                generation_config=config,
                auth_storage=None,
                override=Override(),
                feedback=FeedbackSources(),
            )
            if case.meta is not None and case.meta.generation.mode == mode
        ]
        limit = self.sizes.coverage_limit
        if limit is None or len(cases) <= limit:
            return cases
        return spread(cases, limit, key=lambda c: str(coverage_scenario(c)))

    def _fuzz(self, operation: Any) -> None:
        project = operation.schema.config

        def run(case: schemathesis.Case[Any]) -> None:
            self.send(case, "fuzzing")

        settings = hypothesis.settings(
            max_examples=self.sizes.fuzzing_examples,
            database=None,
            deadline=None,
            derandomize=False,
            phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
            suppress_health_check=list(hypothesis.HealthCheck),
            verbosity=hypothesis.Verbosity.quiet,
            print_blob=False,
        )
        test = create_test(
            operation=operation,
            test_func=run,
            config=HypothesisTestConfig(
                project=project,
                modes=[HypothesisTestMode.FUZZING],
                settings=settings,
                seed=self.seed,
            ),
        )
        # SkipTest: nothing to generate in this mode (no parameter can be made invalid).
        with contextlib.suppress(SkipTest, unittest.SkipTest):
            test()

    # -- stateful --------------------------------------------------------------------------
    def run_stateful(self) -> None:
        started = time.monotonic()
        runner = self
        base = self.schemas.generation.as_state_machine()

        class Machine(base):  # type: ignore[valid-type, misc]
            def before_call(self, case: schemathesis.Case[Any]) -> None:
                runner._phase = "stateful"
                runner.preparer.prepare(case, runner.operation_id(case))
                parent = self.recorder.find_parent(case_id=case.id)
                runner._linked[case.id] = parent is not None and _created(self.recorder, parent)

            def get_call_kwargs(self, case: schemathesis.Case[Any]) -> dict[str, Any]:
                return runner.transport_kwargs()

            def call(self, case: schemathesis.Case[Any], **kwargs: Any) -> schemathesis.Response:
                try:
                    response = defuse(case.call(**kwargs))
                except requests.RequestException as exc:
                    runner.transport_failure(runner.operation_id(case), exc)
                    if isinstance(exc, RateLimitedRequest):  # ends the sequences as suite's do
                        raise RateLimitedStop(str(exc)) from None
                    # A sequence cannot go on without the response its links read.
                    raise ServerGoneError(f"no response: {type(exc).__name__}: {exc}") from None
                runner._answered()
                return response

            def setup(self) -> None:
                runner._deleted.clear()

            def after_call(
                self, response: schemathesis.Response, case: schemathesis.Case[Any]
            ) -> None:
                super().after_call(response, case)
                if case.method.lower() == "delete" and 200 <= response.status_code < 300:
                    runner._deleted.add(case.formatted_path)
                runner.counts.cases["stateful"] += 1

            def validate_response(
                self,
                response: schemathesis.Response,
                case: schemathesis.Case[Any],
                additional_checks: Any = None,
                **kwargs: Any,
            ) -> None:
                runner.validate(case, response, kwargs, self.recorder)

        settings = hypothesis.settings(
            max_examples=self.sizes.stateful_examples,
            stateful_step_count=self.sizes.stateful_steps,
            database=None,
            deadline=None,
            phases=[hypothesis.Phase.generate],
            suppress_health_check=list(hypothesis.HealthCheck),
            verbosity=hypothesis.Verbosity.quiet,
            print_blob=False,
        )
        self._in_stateful = True
        try:
            run_state_machine_as_test(hypothesis.seed(self.seed)(Machine), settings=settings)
        except ServerGoneError:
            pass  # the ledger holds the failure with its evidence
        except (RateLimitedStop, HypothesisException) as exc:
            if rate_limit_stop(exc) is None:
                raise
            # a case given up for rate limits ended the sequences: the ledger says why
        finally:
            self._in_stateful = False
            self.counts.seconds += time.monotonic() - started


def defuse(response: schemathesis.Response) -> schemathesis.Response:
    """A response whose body is too deep or large to parse safely reads as JSON ``null``.

    The stateful phase reads links from earlier responses (``response.json()``, cached in
    ``_deserialized``, a 4.32 internal): they resolve to nothing instead of recursing into the
    body. ``validate`` judges the body itself (``_refused``).
    """
    if refused_body(response) is not None:
        response._deserialized = None  # type: ignore[assignment]
    return response


def _could_not_connect(exc: requests.RequestException) -> bool:
    """Whether ``exc`` is a connection refused or a failed TLS handshake (no request sent)."""
    if isinstance(exc, requests.exceptions.SSLError):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, urllib3.exceptions.NewConnectionError)


def _created(recorder: Any, parent: schemathesis.Case[Any]) -> bool:
    response = recorder.find_response(case_id=parent.id)
    return (
        parent.operation.method.upper() == "POST"
        and response is not None
        and 200 <= response.status_code < 300
    )


def spread(cases: list[Any], limit: int, key: Callable[[Any], str]) -> list[Any]:
    """At most ``limit`` cases, one per kind first (round robin over kinds, in order)."""
    groups: dict[str, list[Any]] = {}
    for case in cases:
        groups.setdefault(key(case), []).append(case)
    chosen: list[Any] = []
    queues: list[Iterator[Any]] = [iter(g) for g in groups.values()]
    while len(chosen) < limit and queues:
        remaining = []
        for queue in queues:
            item = next(queue, None)
            if item is None:
                continue
            chosen.append(item)
            remaining.append(queue)
            if len(chosen) == limit:
                break
        queues = remaining
    return chosen


def describe_counts(counts: PhaseCounts) -> str:
    parts = ", ".join(f"{phase} {n}" for phase, n in sorted(counts.cases.items()))
    return f"{sum(counts.cases.values())} cases ({parts}) in {counts.seconds:.1f} s"
