"""The outcome of a run, as every report format reads it.

The suite (``conformance.suite``) records one ``CheckResult`` per executed check; the engine
folds them into one ``RequirementResult`` per catalogue entry and a ``RunResult``; each module of
``conformance.reporting`` renders a ``RunResult`` in one format.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from conformance.core.case_coverage import CaseLog, OperationCaseCoverage
from conformance.core.catalogue import Requirement
from conformance.core.receiver_counts import ReceiverCounts
from conformance.core.shards import ShardPlan

if TYPE_CHECKING:  # core.diff and core.waivers read Outcome and Verdict from here
    from conformance.core.diff import Diff
    from conformance.core.waivers import WaiverReport


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_EXERCISED = "not_exercised"
    WAIVED = "waived"  # of a requirement only: failed, every failing check named by a waiver


class Verdict(StrEnum):
    CONFORMANT = "CONFORMANT"
    # every failure waived (run --waivers); shown with the count, ``verdict_with_waivers``
    CONFORMANT_WITH_WAIVERS = "CONFORMANT WITH WAIVERS"
    NOT_CONFORMANT = "NOT CONFORMANT"
    NOT_TESTED = "NOT TESTED"
    INCOMPLETE = "INCOMPLETE"  # the run stopped early (time budget, crash, interruption)


def verdict_with_waivers(used: int) -> str:
    """The verdict of a run whose every failure a waiver covered: never plain CONFORMANT."""
    return f"CONFORMANT WITH {used} WAIVER{'' if used == 1 else 'S'}"


def budget_reason(seconds: float) -> str:
    """Why checks were not run once the run's wall-clock budget (``run --max-duration``) ran out."""
    return f"the run's time budget ({seconds:g} s) ran out"


# The value a replay or rerun command shows for a ``-H`` header: the real one is a secret.
REDACTED_HEADER_VALUE = "[redacted]"
REPLAY_NOTE = (
    "a replay command runs only that requirement's checks with the same seed and options: "
    "the examples, coverage and fuzzing cases and the stateful phase's call sequences are the "
    "same, but the scenario checks follow the server's answers (deliveries in flight, the "
    "clock), so a replay can find fewer or other failures than the run"
)
"""What every report says next to the replay commands. The seed alone draws each operation's
examples, coverage and fuzzing cases, so ``--only`` leaves them as they were (measured:
``tests/engine/test_replay.py``), and the stateful phase follows only links out of resources
its sequences create, so its sequences do not depend on other checks' data
(``tests/suite/schema/test_stateful_replay.py``); a scenario check reads the server's answers,
and those change with deliveries in flight and the clock."""
# what every report and the console say of a run whose server certificate was not verified
INSECURE_WARNING = (
    "--insecure: the server's TLS certificate was not verified; a verdict of this run does not "
    "prove which server answered"
)
VALIDATE_REPLAY_NOTE = "validating the same recording again repeats every check exactly"
"""The replay note of a ``validate`` run, whose commands re-validate the recording."""

STEPS_HEADING = "Steps that reproduce it:"
"""Starts the numbered step list a failure of a call sequence carries below its message."""


def split_steps(message: str) -> tuple[str, list[str]]:
    """A check's message without its step list, and the step list's lines (``[]``: none)."""
    head, found, steps = message.partition("\n" + STEPS_HEADING)
    if not found:
        return message, []
    return head, [STEPS_HEADING, *(line for line in steps.splitlines() if line.strip())]


@dataclass(frozen=True)
class Evidence:
    """One request and its response, with secrets already redacted (``core.redaction``)."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: str | None
    status: int | None
    response_headers: dict[str, str]
    response_body: str | None
    curl: str


@dataclass(frozen=True)
class CheckResult:
    """One executed check: a test of the suite, or one schemathesis check on one operation."""

    check_id: str
    family: str  # schema, auth, idempotency, boundaries, state, domain, ...
    requirement_ids: tuple[str, ...]
    outcome: Outcome
    message: str = ""
    operation_id: str | None = None
    duration_s: float = 0.0
    evidence: Evidence | None = None
    reason_not_exercised: str | None = None


@dataclass(frozen=True)
class RequirementResult:
    requirement: Requirement
    outcome: Outcome
    checks: tuple[CheckResult, ...] = ()
    reason_not_exercised: str | None = None  # set by ``fold`` exactly when not exercised
    waived_by: tuple[int, ...] = ()  # WAIVED: positions of its waivers in RunResult.waivers

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        return tuple(c for c in self.checks if c.outcome is Outcome.FAILED)


FAULT_SEPARATOR = ","  # between the names of several faults in ``Target.fault``


def fault_names(fault: str | None) -> tuple[str, ...]:
    """The faults ``Target.fault`` (or ``RunOptions.embedded_fault``) names: "a,b" -> (a, b)."""
    return tuple(filter(None, (fault or "").split(FAULT_SEPARATOR)))


@dataclass(frozen=True)
class Target:
    base_url: str
    embedded: bool  # True when the suite started the reference server itself
    fault: str | None = None  # reference-server faults switched on, if any: "a" or "a,b"


@dataclass(frozen=True)
class RateLimitCounts:
    """How the server's rate limits touched a run (or one check): answers that asked the client
    to wait, the time waited for them and for ``--rate-limit``, and requests that never got
    through within their bounds."""

    received_429: int = 0
    received_503: int = 0  # 503 answers that carried Retry-After
    waited_s: float = 0.0  # waiting as the 429/503 answers said
    limiter_waited_s: float = 0.0  # waiting for a slot of the client-side --rate-limit
    given_up: int = 0

    def __add__(self, other: RateLimitCounts) -> RateLimitCounts:
        return RateLimitCounts(
            self.received_429 + other.received_429,
            self.received_503 + other.received_503,
            self.waited_s + other.waited_s,
            self.limiter_waited_s + other.limiter_waited_s,
            self.given_up + other.given_up,
        )

    def __sub__(self, other: RateLimitCounts) -> RateLimitCounts:
        return RateLimitCounts(
            self.received_429 - other.received_429,
            self.received_503 - other.received_503,
            self.waited_s - other.waited_s,
            self.limiter_waited_s - other.limiter_waited_s,
            self.given_up - other.given_up,
        )

    def as_dict(self) -> dict[str, int | float]:
        return {
            "received_429": self.received_429,
            "received_503": self.received_503,
            "waited_s": round(self.waited_s, 3),
            "limiter_waited_s": round(self.limiter_waited_s, 3),
            "given_up": self.given_up,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> RateLimitCounts:
        """The counts of ``as_dict`` (a missing or wrongly typed entry counts as zero)."""

        def number(name: str) -> float:
            value = data.get(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return 0.0
            return float(value)

        return cls(
            int(number("received_429")),
            int(number("received_503")),
            number("waited_s"),
            number("limiter_waited_s"),
            int(number("given_up")),
        )

    def describe(self) -> str:
        """One line for the console and the reports, compact when nothing was rate limited."""
        text = (
            f"429s: {self.received_429}, 503s with Retry-After: {self.received_503}, "
            f"waited {self.waited_s:.1f} s"
        )
        if self.limiter_waited_s:
            text += f", {self.limiter_waited_s:.1f} s for --rate-limit"
        if self.given_up:
            text += f"; {self.given_up} request(s) given up"
        return text


@dataclass(frozen=True)
class RunResult:
    suite_version: str
    contract_sha256: str
    profile_name: str
    profile_sha256: str
    seed: int
    target: Target
    started_at: str  # ISO 8601, UTC
    duration_s: float
    requests_sent: int
    requirements: tuple[RequirementResult, ...]
    checks: tuple[CheckResult, ...]
    options: dict[str, str] = field(default_factory=dict)
    # Why the run stopped before every selected check ran (None: it finished). What ran until
    # then is kept; the exit code is 2 whatever was found.
    incomplete_reason: str | None = None
    # Seconds from the start of the run to the first failed check recorded (None: none failed).
    first_failure_s: float | None = None
    rate_limits: RateLimitCounts = field(default_factory=RateLimitCounts)
    # Ids of the catalogue's requirements ``--only``/``--skip`` left out. A test names several
    # requirements, so results naming only such ids are recorded too: they stay in ``checks``
    # (for callers that want them) but count nowhere, and the reports leave them out and say
    # how many there were (``selected_checks``, ``outside_selection``).
    outside_ids: frozenset[str] = frozenset()
    # The status codes the server answered, per operation id: status -> answers.
    statuses_seen: dict[str, dict[int, int]] = field(default_factory=dict)
    # What the webhook receiver kept and dropped (None: no receiver ran).
    webhook_receiver: ReceiverCounts | None = None
    # run --waivers: each waiver and what it did (None: no waivers file)
    waivers: WaiverReport | None = None
    # run --baseline: this run against an earlier one (None: no baseline)
    baseline: Diff | None = None
    # run --shard: the part of the run's tests this shard ran (None: an unsharded run)
    shard: ShardPlan | None = None
    # Constraint-case coverage per operation (``case_log.by_operation()``); empty when no test
    # logged a constraint case (no boundaries family ran, or ``validate``'s recordings).
    case_coverage: tuple[OperationCaseCoverage, ...] = ()
    # The triples behind ``case_coverage``, merged over every test (None: none was logged):
    # results.json keeps them, so that ``merge`` unions the shards' sets, not their summaries.
    # When given, the reports compute the summaries from them (``reporting.view``).
    case_log: CaseLog | None = None

    def count(self, outcome: Outcome) -> int:
        return sum(1 for r in self.requirements if r.outcome is outcome)

    def is_outside(self, check: CheckResult) -> bool:
        """Whether ``check`` names only requirements the selection left out (one naming none,
        or an unknown id, is in: it shows a broken suite)."""
        ids = check.requirement_ids
        return bool(ids) and self.outside_ids.issuperset(ids)

    @property
    def selected_checks(self) -> tuple[CheckResult, ...]:
        """The check results the console and the reports count: ``checks`` but those outside
        the selection."""
        if not self.outside_ids:
            return self.checks
        return tuple(c for c in self.checks if not self.is_outside(c))

    @property
    def outside_selection(self) -> int:
        """How many check results name only requirements the selection left out."""
        return len(self.checks) - len(self.selected_checks)

    @property
    def verdict(self) -> Verdict:
        if self.count(Outcome.FAILED):
            return Verdict.NOT_CONFORMANT  # a failure found is one, finished or not
        if self.incomplete_reason is not None:
            return Verdict.INCOMPLETE
        if not self.count(Outcome.PASSED) and not self.count(Outcome.WAIVED):
            return Verdict.NOT_TESTED
        if self.count(Outcome.WAIVED):
            return Verdict.CONFORMANT_WITH_WAIVERS
        return Verdict.CONFORMANT

    @property
    def verdict_text(self) -> str:
        """The verdict as every report words it: "CONFORMANT WITH 2 WAIVERS", not the enum's."""
        if self.verdict is Verdict.CONFORMANT_WITH_WAIVERS and self.waivers is not None:
            return verdict_with_waivers(self.waivers.used)
        return self.verdict.value

    @property
    def exit_code(self) -> int:
        """0: every exercised requirement passed or was waived (with a baseline: every failure
        was in it); 1: one failed (with a baseline: one that was not), or ``--strict-waivers``
        found a stale waiver; 2: nothing was tested or the run did not finish."""
        if self.incomplete_reason is not None:
            return 2
        if self.verdict in (Verdict.CONFORMANT, Verdict.CONFORMANT_WITH_WAIVERS):
            code = 0
        elif self.verdict is Verdict.NOT_CONFORMANT:
            # with a baseline, only a failure new since it fails the run
            code = 1 if self.baseline is None else self.baseline.exit_code
        else:
            return 2
        if code == 0 and self.waivers is not None and self.waivers.strict_failure is not None:
            return 1
        return code

    @property
    def exercised(self) -> int:
        """Requirements a check passed, failed or a waiver waived (the rest were selected but
        not exercised)."""
        return self.count(Outcome.PASSED) + self.count(Outcome.FAILED) + self.count(Outcome.WAIVED)

    @property
    def verdict_summary(self) -> str:
        """The verdict with how much it rests on: "CONFORMANT, 166 of 329 requirements
        exercised"; with a baseline, "NOT CONFORMANT (no new failures against the baseline),
        ..." (``core.diff.verdict_note``)."""
        from conformance.core.diff import verdict_note

        verdict = self.verdict_text + verdict_note(self.verdict.value, self.baseline)
        return summarise_verdict(verdict, self.exercised, len(self.requirements))

    def replay_command(self, requirement_id: str, *, base_url: str | None = None) -> str:
        """The ``payment-conformance run`` command repeating this requirement's checks.

        Same target, profile, seed and the options that shape the generated cases, so its checks
        get the same per-operation cases (``REPLAY_NOTE`` says what may still differ).
        ``base_url`` replaces the target's URL in the command (a report passes it scrubbed).
        """
        if self.is_validation:
            return self._validate_command()
        words = ["payment-conformance", "run", *self._target_words(base_url)]
        words += ["--only", requirement_id, "--seed", str(self.seed)]
        if self.options.get("quick") == "true":
            words.append("--quick")
        return shlex.join(words + self._case_words())

    def rerun_command(self, *, base_url: str | None = None) -> str:
        """The ``payment-conformance run`` command repeating this whole run: same target,
        profile, selection, seed and options (credentials come from the environment). Call
        sequences still follow the server's answers (``REPLAY_NOTE``)."""
        if self.is_validation:
            return self._validate_command()
        words = ["payment-conformance", "run", *self._target_words(base_url)]
        for option in ("only", "skip"):
            for selector in filter(None, self.options.get(option, "").split(",")):
                words += [f"--{option}", selector]
        words += ["--seed", str(self.seed)]
        if "workers" in self.options:
            words += ["--workers", self.options["workers"]]
        if "shard" in self.options:
            words += ["--shard", self.options["shard"]]
        if self.options.get("quick") == "true":
            words.append("--quick")
        if "max_duration_s" in self.options:
            words += ["--max-duration", self.options["max_duration_s"]]
        if self.options.get("fail_fast") == "true":
            words.append("--fail-fast")
        if "waivers" in self.options:
            words += ["--waivers", self.options["waivers"]]
        if self.options.get("strict_waivers") == "true":
            words.append("--strict-waivers")
        if "baseline" in self.options:
            words += ["--baseline", self.options["baseline"]]
        return shlex.join(words + self._case_words())

    @property
    def is_validation(self) -> bool:
        """The result of ``validate`` (checks of recorded traffic), not of a run of the suite."""
        return self.options.get("mode") == "validate"

    @property
    def replay_note(self) -> str:
        return VALIDATE_REPLAY_NOTE if self.is_validation else REPLAY_NOTE

    def _validate_command(self) -> str:
        words = ["payment-conformance", "validate", self.options.get("recording", "RECORDING")]
        if "format" in self.options:
            words += ["--format", self.options["format"]]
        profile = self.options.get("profile", "default")
        if profile != "default":
            words += ["--profile", profile]
        return shlex.join(words)

    def _target_words(self, base_url: str | None) -> list[str]:
        words = []
        if not self.target.embedded:
            words += ["--base-url", base_url or self.target.base_url]
            words += self._connection_words()
        else:
            for fault in fault_names(self.target.fault):
                words += ["--fault", fault]
            if "latency_ms" in self.options:
                words += ["--latency-ms", self.options["latency_ms"]]
            if "escape_reading" in self.options:  # the server's reading decides STATUS-011
                words += ["--server-escape-reading", self.options["escape_reading"]]
        profile = self.options.get("profile", "default")
        if profile != "default":
            words += ["--profile", profile]
        if "rate_limit" in self.options:  # a sandbox's published limit holds for a replay too
            words += ["--rate-limit", self.options["rate_limit"]]
        return words

    def _connection_words(self) -> list[str]:
        """The TLS options of the run, and its ``-H`` headers with their values masked (secrets:
        the reader puts them back)."""
        words = []
        for option, flag in (
            ("cacert", "--cacert"),
            ("client_cert", "--client-cert"),
            ("client_key", "--client-key"),
            ("proxy", "--proxy"),  # recorded with its password masked
        ):
            if option in self.options:
                words += [flag, self.options[option]]
        if self.options.get("insecure") == "true":
            words.append("--insecure")
        for name in filter(None, self.options.get("headers", "").split(",")):
            words += ["-H", f"{name}: {REDACTED_HEADER_VALUE}"]
        return words

    def _case_words(self) -> list[str]:
        """Options that change the generated cases or how the server reaches the suite."""
        words = []
        for option, flag in (
            ("max_examples", "--max-examples"),
            ("webhook_url", "--webhook-url"),
            ("webhook_bind", "--webhook-bind"),
        ):
            if option in self.options:
                words += [flag, self.options[option]]
        return words


def merge_statuses(total: dict[str, dict[int, int]], more: dict[str, dict[int, int]]) -> None:
    """Add the answers counted in ``more`` (per operation: status -> answers) to ``total``."""
    for operation_id, statuses in more.items():
        counts = total.setdefault(operation_id, {})
        for status, answers in statuses.items():
            counts[status] = counts.get(status, 0) + answers


def outside_selection_note(count: int) -> str:
    """What the console and the reports say of results left out as outside the selection."""
    return f"{count:,} result{'' if count == 1 else 's'} outside the selection ignored"


def summarise_verdict(verdict: str, exercised: int, selected: int) -> str:
    return f"{verdict}, {exercised:,} of {selected:,} requirements exercised"


def fold(
    requirements: list[Requirement], checks: list[CheckResult]
) -> tuple[RequirementResult, ...]:
    """One result per requirement: failed if any check failed, passed if one passed."""
    by_id: dict[str, list[CheckResult]] = {r.id: [] for r in requirements}
    for check in checks:
        for rid in check.requirement_ids:
            if rid in by_id:
                by_id[rid].append(check)
    folded = []
    for req in requirements:
        mine = by_id[req.id]
        outcomes = {c.outcome for c in mine}
        if Outcome.FAILED in outcomes:
            outcome = Outcome.FAILED
        elif Outcome.PASSED in outcomes:
            outcome = Outcome.PASSED
        else:
            outcome = Outcome.NOT_EXERCISED
        mine.sort(key=lambda c: c.outcome is not Outcome.FAILED)
        reason = _reason_not_exercised(mine) if outcome is Outcome.NOT_EXERCISED else None
        folded.append(RequirementResult(req, outcome, tuple(mine), reason))
    return tuple(folded)


NO_CHECK_REASON = (
    "no check of the selected families covers it (no test of this run names it, "
    "or the tests that name it recorded results for other requirements only)"
)


def _reason_not_exercised(checks: list[CheckResult]) -> str:
    """Why a requirement was not exercised: its checks' own reasons, or why it had none."""
    if not checks:
        return NO_CHECK_REASON
    reasons = dict.fromkeys(c.reason_not_exercised for c in checks if c.reason_not_exercised)
    if reasons:
        return "; ".join(r for r in reasons if r)
    return f"its {len(checks)} check(s) ran but none reached it"
