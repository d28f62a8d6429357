"""What every report shows, computed once from a ``RunResult``: sections, counts, cleaned evidence.

Every string in a ``RunView`` has been redacted and made printable (``scrub``), so a format
module only lays it out. Evidence bodies are kept whole here; each format clips them to its own
size limit with ``clip_body``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from conformance.core.case_coverage import CaseKey, CaseLog, OperationCaseCoverage
from conformance.core.catalogue import Layer, Section
from conformance.core.diff import Diff, scrubbed, verdict_note
from conformance.core.receiver_counts import ReceiverCounts
from conformance.core.redaction import REDACTED
from conformance.core.results import (
    INSECURE_WARNING,
    NO_CHECK_REASON,
    REPLAY_NOTE,
    CheckResult,
    Evidence,
    Outcome,
    RateLimitCounts,
    RequirementResult,
    RunResult,
    outside_selection_note,
    summarise_verdict,
)
from conformance.core.untrusted import mask_url_passwords
from conformance.core.waivers import WaiverReport
from conformance.reporting import waivers
from conformance.reporting.scrub import Scrubber, clip, learn_secrets

# "contract", as the CLI and the catalogue say (``requirements --layer contract``)
LAYER_BADGE = {Layer.CONTRACT: "contract", Layer.PROFILE: "profile"}
LAYER_ADVICE = {
    Layer.CONTRACT: "the specification states it: the server must be fixed",
    Layer.PROFILE: "a choice of the profile: fix the server, or the profile if it declares the "
    "wrong choice",
}


class HasSections(Protocol):
    """The part of the requirement catalogue the reports use: its sections, in document order."""

    @property
    def sections(self) -> Any: ...


@dataclass(frozen=True)
class Counts:
    passed: int = 0
    failed: int = 0
    not_exercised: int = 0
    waived: int = 0  # run --waivers: failed, every failing check named by a live waiver

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.not_exercised + self.waived

    @classmethod
    def of(cls, outcomes: Iterable[Outcome]) -> Counts:
        values = list(outcomes)
        return cls(
            passed=values.count(Outcome.PASSED),
            failed=values.count(Outcome.FAILED),
            not_exercised=values.count(Outcome.NOT_EXERCISED),
            waived=values.count(Outcome.WAIVED),
        )

    def as_dict(self) -> dict[str, int]:
        """The counts; ``waived`` only when a waiver waived one (results.json of a run without
        waivers stays as it was)."""
        return {
            "passed": self.passed,
            "failed": self.failed,
            "not_exercised": self.not_exercised,
            **({"waived": self.waived} if self.waived else {}),
            "total": self.total,
        }


@dataclass(frozen=True)
class Body:
    text: str  # redacted, printable, whole
    escaped: bool  # unprintable characters (binary, non-UTF-8) are shown as \xNN escapes

    @property
    def length(self) -> int:
        return len(self.text)


@dataclass(frozen=True)
class ClippedBody:
    text: str
    length: int  # characters of the whole body
    truncated: bool
    escaped: bool

    @property
    def note(self) -> str:
        notes = []
        if self.truncated:
            notes.append(f"truncated: first {len(self.text):,} of {self.length:,} characters shown")
        if self.escaped:
            notes.append("binary or non-UTF-8 content: unprintable bytes shown as \\xNN")
        return "; ".join(notes)


def clip_body(body: Body, limit: int) -> ClippedBody:
    text, truncated = clip(body.text, limit)
    return ClippedBody(text, body.length, truncated, body.escaped)


@dataclass(frozen=True)
class EvidenceView:
    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    request_body: Body | None
    status: int | None
    response_headers: tuple[tuple[str, str], ...]
    response_body: Body | None
    curl: str


@dataclass(frozen=True)
class CheckView:
    index: int  # position in RunView.checks (and in results.json "checks")
    check_id: str
    family: str
    requirement_ids: tuple[str, ...]
    outcome: Outcome
    message: str
    operation_id: str | None
    duration_s: float
    evidence: EvidenceView | None
    reason_not_exercised: str | None


@dataclass(frozen=True)
class RequirementView:
    id: str
    anchor: str
    section: Section
    layer: Layer
    level: str
    text: str
    operations: tuple[str, ...]
    outcome: Outcome
    checks: tuple[CheckView, ...]
    reason_not_exercised: str | None
    replay: str
    waived_by: tuple[int, ...] = ()  # WAIVED: positions of its waivers in RunView.waivers

    @property
    def badge(self) -> str:
        return LAYER_BADGE[self.layer]

    @property
    def advice(self) -> str:
        return LAYER_ADVICE[self.layer]

    @property
    def failures(self) -> tuple[CheckView, ...]:
        return tuple(c for c in self.checks if c.outcome is Outcome.FAILED)

    @property
    def duration_s(self) -> float:
        return sum(c.duration_s for c in self.checks)


@dataclass(frozen=True)
class SectionView:
    section: Section
    requirements: tuple[RequirementView, ...]

    @property
    def key(self) -> str:
        return self.section.key

    @property
    def title(self) -> str:
        return self.section.title

    @property
    def counts(self) -> Counts:
        return Counts.of(r.outcome for r in self.requirements)


@dataclass(frozen=True)
class RunView:
    suite_version: str
    contract_sha256: str
    profile_name: str
    profile_sha256: str
    seed: int
    base_url: str
    embedded: bool
    fault: str | None
    started_at: str
    duration_s: float
    requests_sent: int
    options: tuple[tuple[str, str], ...]
    verdict: str
    exit_code: int
    requirements: tuple[RequirementView, ...]
    sections: tuple[SectionView, ...]
    checks: tuple[CheckView, ...]
    reports_dir: str
    incomplete_reason: str | None = None  # why the run stopped early (None: it finished)
    first_failure_s: float | None = None  # seconds from the run's start to its first failure
    rerun: str = ""  # the command repeating the whole run (RunResult.rerun_command)
    replay_note: str = REPLAY_NOTE  # what a replay command repeats (RunResult.replay_note)
    rate_limits: RateLimitCounts = field(default_factory=RateLimitCounts)
    outside_selection: int = 0  # results left out: they name no selected requirement
    # the statuses the server answered, per operation id: status -> answers
    statuses_seen: dict[str, dict[int, int]] = field(default_factory=dict)
    webhook_receiver: ReceiverCounts | None = None  # kept and dropped (None: no receiver ran)
    waivers: WaiverReport | None = None  # run --waivers: what each waiver did (None: none)
    baseline: Diff | None = None  # run --baseline: the run against an earlier one
    shard: dict[str, object] | None = None  # run --shard: ShardPlan.as_dict (None: unsharded)
    # constraint-case coverage per operation, and the triples behind it (None: none logged)
    case_coverage: tuple[OperationCaseCoverage, ...] = ()
    case_log: CaseLog | None = None

    @property
    def outside_selection_note(self) -> str:
        """ "3 results outside the selection ignored", or "" when there were none."""
        return outside_selection_note(self.outside_selection) if self.outside_selection else ""

    @property
    def exercised(self) -> int:
        return self.counts.passed + self.counts.failed + self.counts.waived

    @property
    def quick(self) -> bool:
        """A ``--quick`` run: it samples the near-miss classes of each constraint."""
        return dict(self.options).get("quick") == "true"

    @property
    def insecure(self) -> bool:
        """The run did not verify the server's TLS certificate (``run --insecure``)."""
        return dict(self.options).get("insecure") == "true"

    @property
    def unsigned_shards(self) -> str | None:
        """The shards a merge took without a signature ("1/4, 3/4"); None: none."""
        return dict(self.options).get("unsigned_shards")

    @property
    def warnings(self) -> tuple[str, ...]:
        """What a reader of any report must know before trusting the verdict."""
        found = [INSECURE_WARNING] if self.insecure else []
        if self.unsigned_shards:
            found.append(
                f"merged from unsigned shards {self.unsigned_shards}: nothing proves their "
                "results are those the shards wrote (merge --public-key takes signed shards only)"
            )
        return tuple(found)

    @property
    def verdict_summary(self) -> str:
        """The verdict as every format shows it: CONFORMANT, 166 of 329 requirements exercised."""
        return summarise_verdict(self.verdict_text, self.exercised, self.counts.total)

    @property
    def verdict_text(self) -> str:
        """The verdict and what a baseline adds: NOT CONFORMANT (no new failures against the
        baseline)."""
        return self.verdict + verdict_note(self.verdict, self.baseline)

    @property
    def counts(self) -> Counts:
        return Counts.of(r.outcome for r in self.requirements)

    @property
    def check_counts(self) -> Counts:
        return Counts.of(c.outcome for c in self.checks)

    def layer_counts(self, layer: Layer) -> Counts:
        return Counts.of(r.outcome for r in self.requirements if r.layer is layer)

    @property
    def layers(self) -> tuple[tuple[str, Counts], ...]:
        return tuple((LAYER_BADGE[layer], self.layer_counts(layer)) for layer in Layer)

    @property
    def failed(self) -> tuple[RequirementView, ...]:
        return tuple(r for r in self.requirements if r.outcome is Outcome.FAILED)

    @property
    def waived(self) -> tuple[RequirementView, ...]:
        return tuple(r for r in self.requirements if r.outcome is Outcome.WAIVED)

    @property
    def not_exercised(self) -> tuple[RequirementView, ...]:
        return tuple(r for r in self.requirements if r.outcome is Outcome.NOT_EXERCISED)

    @property
    def unattributed(self) -> tuple[CheckView, ...]:
        """Checks naming no requirement of this run (a marker typo, a stale id)."""
        known = {r.id for r in self.requirements}
        return tuple(c for c in self.checks if not set(c.requirement_ids) & known)

    @property
    def validation(self) -> bool:
        """A ``validate`` of recorded traffic: no seed, no server called."""
        return dict(self.options).get("mode") == "validate"

    @property
    def seed_text(self) -> str | None:
        """The seed as the reports show it; None for a validation, which has none."""
        return None if self.validation else str(self.seed)

    @property
    def target(self) -> str:
        """One line saying what was tested."""
        if self.validation:
            return self._validated()
        if self.embedded:
            line = f"embedded reference server at {self.base_url}"
        else:
            line = f"server at {self.base_url}"
        if self.fault:
            line += f" with reference fault {self.fault}"
        return line

    def _validated(self) -> str:
        """What a validation checked: the recording, its exchanges and the server they went to."""
        options = dict(self.options)
        exchanges = int(options.get("exchanges", "0"))
        line = f"traffic recorded in {options.get('recording', 'a recording')} ({exchanges:,} "
        line += "exchange" if exchanges == 1 else "exchanges"
        if self.base_url.startswith(("http://", "https://")):
            line += f" with {self.base_url}"
        return line + ")"

    @property
    def duration(self) -> str:
        return format_duration(self.duration_s)


def format_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{seconds:.1f} s ({minutes} min {rest} s)"


def _section_sort_key(section: Section) -> tuple[int, tuple[tuple[int, str], ...], str]:
    document = {"spec": 0, "profile": 1}.get(section.document, 2)
    parts = tuple(
        (int(p), "") if re.fullmatch(r"[0-9]+", p) else (1 << 30, p)
        for p in section.number.split(".")
    )
    return document, parts, section.document


def _catalogue_sections(catalogue: HasSections | None) -> list[Section]:
    if catalogue is None:
        return []
    sections = catalogue.sections
    if isinstance(sections, dict):
        sections = sections.values()
    return [s for s in sections if isinstance(s, Section)]


def _anchor(requirement_id: str) -> str:
    return "req-" + re.sub(r"[^A-Za-z0-9_-]", "_", requirement_id)


class _Builder:
    def __init__(self, run: RunResult, scrubber: Scrubber) -> None:
        self.run = run
        self.scrub = scrubber
        self.checks: list[CheckView] = []
        self._by_identity: dict[int, CheckView] = {}
        self._by_check_id: dict[str, list[tuple[CheckResult, CheckView]]] = {}
        self._evidence: dict[int, EvidenceView] = {}

    def evidence(self, evidence: Evidence) -> EvidenceView:
        cached = self._evidence.get(id(evidence))
        if cached is not None:
            return cached
        s = self.scrub

        def body(text: str | None) -> Body | None:
            return None if text is None else Body(*s.body(text))

        view = EvidenceView(
            method=s.text(evidence.method),
            url=s.url(evidence.url),
            request_headers=s.headers(evidence.request_headers),
            request_body=body(evidence.request_body),
            status=evidence.status,
            response_headers=s.headers(evidence.response_headers),
            response_body=body(evidence.response_body),
            curl=s.evidence_curl(evidence),
        )
        self._evidence[id(evidence)] = view
        return view

    def check(self, check: CheckResult) -> CheckView:
        cached = self._by_identity.get(id(check))
        if cached is not None:
            return cached
        # The same check may be held as an equal but distinct object (e.g. after pickling).
        same_id = self._by_check_id.setdefault(check.check_id, [])
        for original, known in same_id:
            if original == check:
                self._by_identity[id(check)] = known
                return known
        s = self.scrub
        view = CheckView(
            index=len(self.checks),
            check_id=s.catalogue(check.check_id),
            family=s.catalogue(check.family),
            requirement_ids=tuple(s.catalogue(r) for r in check.requirement_ids),
            outcome=check.outcome,
            message=s.text(check.message),
            operation_id=None if check.operation_id is None else s.text(check.operation_id),
            duration_s=check.duration_s,
            evidence=None if check.evidence is None else self.evidence(check.evidence),
            reason_not_exercised=(
                None if check.reason_not_exercised is None else s.text(check.reason_not_exercised)
            ),
        )
        self.checks.append(view)
        self._by_identity[id(check)] = view
        same_id.append((check, view))
        return view

    def requirement(self, result: RequirementResult) -> RequirementView:
        req = result.requirement
        checks = tuple(self.check(c) for c in result.checks)
        reason = None
        if result.outcome is Outcome.NOT_EXERCISED:
            reasons = dict.fromkeys(
                c.reason_not_exercised for c in checks if c.reason_not_exercised
            )
            reason = (
                "; ".join(r for r in reasons if r)
                or (result.reason_not_exercised and self.scrub.text(result.reason_not_exercised))
                or NO_CHECK_REASON
            )
        return RequirementView(
            id=self.scrub.catalogue(req.id),
            anchor=_anchor(req.id),
            section=req.section,
            layer=req.layer,
            level=self.scrub.catalogue(req.level),
            text=self.scrub.catalogue(req.text),
            operations=req.operations,
            outcome=result.outcome,
            checks=checks,
            reason_not_exercised=reason,
            # catalogue text (the id) and options: URL password masked, never redacted
            replay=self.scrub.catalogue(
                self.run.replay_command(
                    req.id, base_url=mask_url_passwords(self.run.target.base_url)
                )
            ),
            waived_by=result.waived_by,
        )


def build_view(
    run: RunResult,
    catalogue: HasSections | None = None,
    *,
    secrets: Iterable[str] = (),
    reports_dir: str = ".",
) -> RunView:
    """The report view of ``run``: sections in the catalogue's order (or spec, then profile)."""
    scrubber = Scrubber(learn_secrets(run, secrets))
    builder = _Builder(run, scrubber)
    for check in run.selected_checks:
        builder.check(check)
    requirements = tuple(builder.requirement(r) for r in run.requirements)

    grouped: dict[Section, list[RequirementView]] = {}
    for view in requirements:
        grouped.setdefault(view.section, []).append(view)
    order = {s: i for i, s in enumerate(_catalogue_sections(catalogue))}
    ordered = sorted(
        grouped, key=lambda s: (order.get(s, len(order)), _section_sort_key(s), s.title)
    )
    sections = tuple(SectionView(s, tuple(grouped[s])) for s in ordered)

    case_coverage, case_log = _case_coverage(run, scrubber)
    options = tuple(
        (scrubber.text(k), REDACTED if scrubber.is_secret_option(k) else scrubber.text(v))
        for k, v in sorted(run.options.items())
    )
    return RunView(
        suite_version=scrubber.text(run.suite_version),
        contract_sha256=scrubber.text(run.contract_sha256),
        profile_name=scrubber.text(run.profile_name),
        profile_sha256=scrubber.text(run.profile_sha256),
        seed=run.seed,
        base_url=scrubber.url(run.target.base_url),
        embedded=run.target.embedded,
        fault=None if run.target.fault is None else scrubber.text(run.target.fault),
        started_at=scrubber.text(run.started_at),
        duration_s=run.duration_s,
        requests_sent=run.requests_sent,
        options=options,
        verdict=run.verdict_text,
        exit_code=run.exit_code,
        requirements=requirements,
        sections=sections,
        checks=tuple(builder.checks),
        reports_dir=scrubber.text(reports_dir),
        incomplete_reason=(
            None if run.incomplete_reason is None else scrubber.text(run.incomplete_reason)
        ),
        first_failure_s=run.first_failure_s,
        rerun=scrubber.catalogue(
            run.rerun_command(base_url=mask_url_passwords(run.target.base_url))
        ),
        replay_note=run.replay_note,
        rate_limits=run.rate_limits,
        outside_selection=run.outside_selection,
        statuses_seen={
            scrubber.catalogue(op): dict(sorted(counts.items()))
            for op, counts in sorted(run.statuses_seen.items())
        },
        webhook_receiver=_receiver_counts(run.webhook_receiver, scrubber),
        waivers=waivers.scrubbed(run.waivers, scrubber),
        baseline=None if run.baseline is None else scrubbed(run.baseline, scrubber.text),
        shard=None if run.shard is None else run.shard.as_dict(),
        case_coverage=case_coverage,
        case_log=case_log,
    )


def _case_coverage(
    run: RunResult, scrubber: Scrubber
) -> tuple[tuple[OperationCaseCoverage, ...], CaseLog | None]:
    """``case_coverage`` and ``case_log`` of the view: the names of operations, fields, keywords
    and classes come from the effective contract (a profile's too), so they are made printable.
    With the triples at hand the summaries are computed from the printable ones, so that both
    name a gap alike."""
    if run.case_log is None:
        coverage = tuple(
            replace(
                c,
                operation_id=scrubber.catalogue(c.operation_id),
                missing=tuple(scrubber.catalogue(m) for m in c.missing),
            )
            for c in run.case_coverage
        )
        return coverage, None
    log = CaseLog(
        applicable={_printable_key(k, scrubber) for k in run.case_log.applicable},
        sent={_printable_key(k, scrubber) for k in run.case_log.sent},
    )
    for operation_id, count in run.case_log.cases.items():
        shown = scrubber.catalogue(operation_id)
        log.cases[shown] = log.cases.get(shown, 0) + count
    return log.by_operation(), log


def _printable_key(key: CaseKey, scrubber: Scrubber) -> CaseKey:
    return CaseKey(*(scrubber.catalogue(part) for part in key.to_list()))


def _receiver_counts(counts: ReceiverCounts | None, scrubber: Scrubber) -> ReceiverCounts | None:
    """``counts`` with its paths (chosen by the server under test) scrubbed."""
    if counts is None:
        return None
    drops = tuple(replace(d, path=scrubber.text(d.path)) for d in counts.drops)
    return replace(counts, drops=drops)
