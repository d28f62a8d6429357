"""Behaviour over time: what the stateful families (payments, schedules, webhooks, x402,
statements, isolation) share.

- ``Transcript`` writes down, step by step, every exchange of one call sequence, so that a
  failure shows the numbered requests and responses that led to it. In a hypothesis state
  machine the transcript restarts with every example; the example hypothesis reports last is
  the shrunk one, so the step list of a failure is the shortest sequence that reproduces it.
- ``Verdicts`` tallies, per requirement id, the checks that held and the first one that did
  not; ``finish`` turns the tally into one ``CheckResult`` per requirement (passed, failed with
  the step list and the failing exchange as evidence, or not exercised with the reason).
- ``ConformanceMachine`` is the base of every ``RuleBasedStateMachine`` of the suite: it gets
  its ``MachineContext`` (clients, factories, profile, contract, verdicts) through ``bind``.
  ``run_machine`` runs a bound machine under the session's seed and folds its outcome into the
  verdicts, whatever it raised.
- A rate limit is never a failure. A request the server kept rate limiting past what the run
  can wait ends the run of examples there (``client.RateLimitedStop``): hypothesis neither
  shrinks nor replays that sequence, so it is never "inconsistent behaviour" either. What held
  before is kept, a failure found before (``Verdicts.found``) is still reported, and the ids no
  check reached are not exercised, "rate limited (...)".

A check names its requirement ids; a failing check raises ``ConformanceFailure`` (an
``AssertionError``, so hypothesis shrinks it) unless it is recorded with ``fatal=False``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import httpx
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import Flaky, HypothesisException
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from conformance.core.profile import ErrorSpec, Profile
from conformance.core.redaction import redact_text
from conformance.core.results import STEPS_HEADING, Evidence, Outcome
from conformance.judge.admission import AdmissionChecks
from conformance.judge.answers import Call
from conformance.judge.findings import Finding
from conformance.judge.lifecycle import StateMachine, refusal_findings
from conformance.judge.outcomes import (
    json_object,
    status_problems,
    summary,
)
from conformance.suite.factories import Factories
from conformance.suite.steps import STEPS_CHAR_LIMIT, select
from conformance.suite.tool_errors import CaseError, PrerequisiteError, not_the_servers
from conformance.suite.wire.client import (
    RateLimitedStop,
    SuiteClient,
    SuiteTransportError,
    build_evidence,
    rate_limit_stop,
)

# Shrinking replays call sequences against the server; hypothesis allows it 300 s. A shorter
# budget keeps a failing run (and a selftest over the fault catalogue) quick: most sequences
# reach their minimum within a few seconds.
SHRINK_BUDGET_S = 20
EXCHANGE_TEXT_LIMIT = 200


class ConformanceFailure(AssertionError):
    """A check that did not hold: the requirement ids it breaks and what was seen."""

    def __init__(
        self, requirement_ids: Sequence[str], message: str, evidence: Evidence | None = None
    ) -> None:
        super().__init__(message)
        self.requirement_ids = tuple(requirement_ids)
        self.message = message
        self.evidence = evidence


# ------------------------------------------------------------------------------ transcript
@dataclass
class _Step:
    title: str
    exchanges: list[str] = field(default_factory=list)


class Transcript:
    """The numbered steps of the current call sequence and the exchanges each made.

    ``attach`` it to the clients of a test; call ``step(title)`` before each action (a rule of
    a state machine, a stage of a scenario); ``restart`` at the start of every example.
    """

    def __init__(self, secrets: Sequence[str] = ()) -> None:
        self._secrets = tuple(secrets)
        self._steps: list[_Step] = []
        self.last: tuple[httpx.Request, httpx.Response | None] | None = None

    def attach(self, *clients: SuiteClient) -> Transcript:
        for client in clients:
            if self._observe not in client.observers:
                client.observers.append(self._observe)
        return self

    def detach(self, *clients: SuiteClient) -> None:
        for client in clients:
            if self._observe in client.observers:
                client.observers.remove(self._observe)

    def restart(self) -> None:
        self._steps = []
        self.last = None

    def step(self, title: str) -> None:
        self._steps.append(_Step(title))

    def note(self, text: str) -> None:
        """A line under the current step that is not an exchange (a webhook received, say)."""
        if not self._steps:
            self.step("(setup)")
        self._steps[-1].exchanges.append(redact_text(text, self._secrets))

    def _observe(self, request: httpx.Request, response: httpx.Response | None) -> None:
        self.last = (request, response)
        target = request.url.raw_path.decode("ascii", errors="replace")
        line = f"{request.method} {target}"
        if request.content:
            line += " " + _clip(request.content.decode("utf-8", errors="replace"))
        answer = "no response" if response is None else _clip(summary(response))
        self.note(f"{line} -> {answer}")

    @property
    def evidence(self) -> Evidence | None:
        """The last exchange, redacted, with its curl command."""
        if self.last is None:
            return None
        request, response = self.last
        return build_evidence(request, response, secrets=self._secrets)

    def render(self) -> str:
        """The numbered steps; a long list cut in the middle, the failing (last) step and the
        steps that created what it uses kept whole (``steps.select``)."""
        if not self._steps:
            return ""
        blocks = [
            [f"  {number}. {step.title}", *(f"     {text}" for text in step.exchanges)]
            for number, step in enumerate(self._steps, start=1)
        ]
        shown = select(blocks, STEPS_CHAR_LIMIT - len(STEPS_HEADING) - 1)
        return "\n".join([STEPS_HEADING, *shown])


def _clip(text: str) -> str:
    text = text.replace("\n", " ")
    if len(text) > EXCHANGE_TEXT_LIMIT:
        return text[:EXCHANGE_TEXT_LIMIT] + "..."
    return text


# -------------------------------------------------------------------------------- verdicts
@dataclass
class _Tally:
    passes: int = 0
    failure: ConformanceFailure | None = None
    steps: str = ""


NOT_REACHED = "no generated call sequence reached it"
"""Why an id of ``Verdicts.finish`` was not exercised, when the caller names no better reason."""


class Verdicts:
    """Per requirement id: how many checks held, and the first that did not."""

    def __init__(self, recorder: Any, family: str, transcript: Transcript) -> None:
        self.recorder = recorder
        self.family = family
        self.transcript = transcript
        self._tally: dict[str, _Tally] = {}
        self._errors: list[tuple[ConformanceFailure, str]] = []
        # why a sequence broke off without an answer of the server to blame (tool_errors)
        self.not_judged: str | None = None
        # the first failure a check raised in the current run_guarded, with its steps
        self.found: tuple[ConformanceFailure, str] | None = None

    def _entry(self, requirement_id: str) -> _Tally:
        return self._tally.setdefault(requirement_id, _Tally())

    # -- checking -------------------------------------------------------------------------
    def check(
        self, requirement_ids: Sequence[str], ok: bool, message: str, *, fatal: bool = True
    ) -> bool:
        """Count a check that held, or note a failure (raised unless ``fatal`` is False)."""
        if ok:
            for requirement_id in requirement_ids:
                self._entry(requirement_id).passes += 1
            return True
        failure = ConformanceFailure(requirement_ids, message, self.transcript.evidence)
        if fatal:
            if self.found is None:
                self.found = (failure, self.transcript.render())
            raise failure
        self.fail(failure)
        return False

    def problems(
        self, requirement_ids: Sequence[str], problems: Iterable[str], *, fatal: bool = True
    ) -> bool:
        """``check`` over a list of problems (empty: it held)."""
        found = list(problems)
        return self.check(requirement_ids, not found, "; ".join(found[:6]), fatal=fatal)

    def findings(self, found: Iterable[Finding], what: str = "", *, fatal: bool = True) -> bool:
        """The judge's findings of one exchange, each a check that held or failed (a failure's
        message after ``what``); the passes are counted before a failure raises."""
        held = True
        judged = [f for f in found if f.outcome in (Outcome.PASSED, Outcome.FAILED)]
        for finding in sorted(judged, key=lambda f: f.outcome is not Outcome.PASSED):
            ok = finding.outcome is Outcome.PASSED
            message = f"{what}: {finding.message}" if what and not ok else finding.message
            held = self.check(finding.ids, ok, message, fatal=fatal) and held
        return held

    def refusal(
        self, machine: StateMachine, state: str, call: Call, what: str, *, fatal: bool = True
    ) -> bool:
        """The answer to a transition the profile does not allow from ``state``, the rest of
        the request valid (``lifecycle.refusal_findings``)."""
        found = refusal_findings(machine, [state], call, known_valid=True, resource_id=what)
        if not found:
            raise CaseError(f"{call.operation_id} is allowed from {state}: no refusal to judge")
        return self.findings(found, fatal=fatal)

    def status(
        self,
        requirement_ids: Sequence[str],
        response: httpx.Response,
        expected: int | ErrorSpec,
        what: str,
        *,
        fatal: bool = True,
    ) -> bool:
        """The response has the expected status (and, for an ``ErrorSpec``, its code)."""
        if isinstance(expected, ErrorSpec):
            found = status_problems(response, expected)
            wanted = f"{expected.status}" + (f" {expected.code}" if expected.code else "")
        else:
            found = (
                []
                if response.status_code == expected
                else [f"status {response.status_code}, expected {expected}"]
            )
            wanted = str(expected)
        return self.check(
            requirement_ids,
            not found,
            f"{what}: expected {wanted}, got {summary(response)}" if found else "",
            fatal=fatal,
        )

    def fail(self, failure: ConformanceFailure, steps: str | None = None) -> None:
        """Note a failure (first one per requirement wins), with the current step list (or
        ``steps``)."""
        steps = self.transcript.render() if steps is None else steps
        if not failure.requirement_ids:  # the sequence broke off: fails every id of the run
            self._errors.append((failure, steps))
            return
        for requirement_id in failure.requirement_ids:
            entry = self._entry(requirement_id)
            if entry.failure is None:
                entry.failure = failure
                entry.steps = steps

    def broke_off(self, exc: BaseException) -> None:
        """A sequence ended on ``exc``: a failure of every id of the run when the server's
        answer caused it, else (no answer, an error of hypothesis) the reason its unchecked
        ids are not exercised."""
        reason = not_the_servers(exc)
        if reason is not None:
            self.transcript.note(reason)
            if self.not_judged is None:
                self.not_judged = reason
            return
        self.fail(ConformanceFailure((), str(exc), self.transcript.evidence))

    def seen(self, requirement_id: str) -> bool:
        entry = self._tally.get(requirement_id)
        return entry is not None and (entry.passes > 0 or entry.failure is not None)

    # -- recording ------------------------------------------------------------------------
    def finish(
        self,
        name: str,
        requirement_ids: Sequence[str],
        not_reached: str | Mapping[str, str] = NOT_REACHED,
        operation_id: str | None = None,
    ) -> None:
        """One CheckResult per id of ``requirement_ids`` (and per other id a check named),
        plus one failed check naming them all for each error that broke a sequence off."""
        ids = list(dict.fromkeys([*requirement_ids, *self._tally]))
        for error, steps in self._errors:
            self.recorder.record(
                f"{self.family} {name}",
                ids,
                Outcome.FAILED,
                error.message + ("\n" + steps if steps else ""),
                operation_id,
                error.evidence,
            )
        for requirement_id in ids:
            entry = self._tally.get(requirement_id, _Tally())
            check_id = f"{self.family} {name} {requirement_id}"
            if entry.failure is not None:
                message = entry.failure.message
                if entry.steps:
                    message += "\n" + entry.steps
                self.recorder.record(
                    check_id,
                    (requirement_id,),
                    Outcome.FAILED,
                    message,
                    operation_id,
                    entry.failure.evidence,
                )
            elif entry.passes:
                self.recorder.record(
                    check_id,
                    (requirement_id,),
                    Outcome.PASSED,
                    f"{entry.passes} check(s) held",
                    operation_id,
                )
            else:
                reason = (
                    not_reached.get(requirement_id, NOT_REACHED)
                    if isinstance(not_reached, Mapping)
                    else not_reached
                )
                if self.not_judged is not None:
                    reason = f"{self.not_judged}; {reason}"
                self.recorder.record(
                    check_id, (requirement_id,), Outcome.NOT_EXERCISED, reason, operation_id
                )


# ---------------------------------------------------------------------------- machines
@dataclass
class MachineContext:
    """What a state machine (or a scenario) of a family works with."""

    client: SuiteClient
    other_client: SuiteClient
    factories: Factories
    other_factories: Factories
    profile: Profile
    contract: Mapping[str, Any]
    verdicts: Verdicts
    quick: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def transcript(self) -> Transcript:
        return self.verdicts.transcript

    @cached_property
    def admission(self) -> AdmissionChecks:
        """The judge's rules on what a request breaks and the answer the profile gives it."""
        return AdmissionChecks(self.profile)

    def refused(
        self,
        ids: Sequence[str],
        call: Call,
        what: str,
        *,
        also: Sequence[ErrorSpec] = (),
        fatal: bool = True,
    ) -> bool:
        """The judge's verdicts on a request built to break the rules ``ids`` that it reads
        from a request (``judge.admission``), valid otherwise but for rules whose answers
        ``also`` lists; a case the judge does not see break them is the suite's bug
        (``CaseError``)."""
        try:
            found = self.admission.refusal(call, ids, also)
        except ValueError as unseen:
            raise CaseError(f"{what}: {unseen}") from None
        return self.verdicts.findings(found, what, fatal=fatal)


class ConformanceMachine(RuleBasedStateMachine):
    """Base of the suite's state machines; ``bind(ctx)`` gives a runnable subclass."""

    ctx: ClassVar[MachineContext]

    def __init__(self) -> None:
        super().__init__()
        self.ctx.transcript.restart()

    @classmethod
    def bind(cls, ctx: MachineContext) -> type[ConformanceMachine]:
        return type(cls.__name__, (cls,), {"ctx": ctx})

    # shorthands for rules
    @property
    def verdicts(self) -> Verdicts:
        return self.ctx.verdicts

    def step(self, title: str) -> None:
        self.ctx.transcript.step(title)


def machine_settings(examples: int, steps: int) -> settings:
    """Settings of one machine run; the session's seed still applies (the plugin forces it)."""
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        # no explain phase: it replays a failing sequence many times over against the server
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        deadline=None,
        database=None,
        print_blob=False,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )


def run_machine(machine: type[ConformanceMachine], run_settings: settings) -> None:
    """Run a bound machine; a failure, whatever raised it, lands in its verdicts.

    A quick run reports a failing sequence as it ran: shrinking replays it against the server
    up to ``SHRINK_BUDGET_S``, which made a failing quick run of one family ten times longer."""
    if machine.ctx.quick:
        kept = [phase for phase in run_settings.phases if phase is not Phase.shrink]
        run_settings = settings(run_settings, phases=kept)
    with _shrink_budget(SHRINK_BUDGET_S):
        run_guarded(
            machine.ctx.verdicts,
            lambda: run_state_machine_as_test(machine, settings=run_settings),
        )


@contextlib.contextmanager
def _shrink_budget(seconds: int) -> Iterator[None]:
    """Bound hypothesis' shrinking time (a module constant of its engine, read per run)."""
    from hypothesis.internal.conjecture import engine

    previous = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if previous is None:  # another hypothesis version: keep its own bound
        yield
        return
    engine.MAX_SHRINKING_SECONDS = min(previous, seconds)
    try:
        yield
    finally:
        engine.MAX_SHRINKING_SECONDS = previous


def run_guarded(verdicts: Verdicts, body: Callable[[], object]) -> None:
    """Run ``body`` (a machine, a scenario) and note what it raised as a failure.

    A conformance failure is noted with its requirement ids; a transport error or a
    prerequisite the server refused breaks the sequence off and fails every id of the run
    (``Verdicts.finish``), with the reason. What is not an answer of the server (no HTTP answer,
    an error of hypothesis: ``tool_errors``) fails nothing: the ids no check reached are not
    exercised, with that reason. A request given up for rate limits inside a hypothesis example
    ends the examples there (``RateLimitedStop``): the failure hypothesis was shrinking, if any,
    is noted as first found.
    """
    verdicts.found = None
    try:
        _unmasked(body)
    except RateLimitedStop as stop:
        if verdicts.found is not None:
            verdicts.fail(*verdicts.found)
        verdicts.broke_off(stop)
    except ConformanceFailure as failure:
        verdicts.fail(failure)
    except (Flaky, BaseExceptionGroup) as group:
        # Flaky: the failure did not repeat when replayed, still a failure; a group: several
        # distinct failures. Each conformance failure inside is noted under its own ids.
        found = _failures(group)
        for inner in found:
            verdicts.fail(inner)
        if not found and not_the_servers(group) is None:
            verdicts.fail(ConformanceFailure((), f"inconsistent behaviour: {group}"))
        elif not found:
            verdicts.broke_off(group)
    except (SuiteTransportError, PrerequisiteError) as exc:
        verdicts.broke_off(exc)
    except HypothesisException as exc:
        verdicts.broke_off(exc)


def _unmasked(body: Callable[[], object]) -> None:
    """Run ``body``; an error of hypothesis raised while a ``RateLimitedStop`` went through it
    is that stop (``client.rate_limit_stop``)."""
    try:
        body()
    except HypothesisException as exc:
        stop = rate_limit_stop(exc)
        if stop is None:
            raise
        raise stop from None


def _failures(error: BaseException) -> list[ConformanceFailure]:
    if isinstance(error, ConformanceFailure):
        return [error]
    found: list[ConformanceFailure] = []
    for inner in getattr(error, "exceptions", ()) or ():
        found += _failures(inner)
    return found


# ----------------------------------------------------------------------------- helpers
def body_of(response: httpx.Response) -> dict[str, Any]:
    """The response's JSON object, or an empty dict when it is none."""
    return json_object(response) or {}


def compact(value: Any) -> str:
    return _clip(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
