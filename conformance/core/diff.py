"""What changed between two runs, requirement by requirement: the regression gate.

``compare`` sets the outcomes of an earlier run (the baseline) against a later one's: the
requirements newly failed, newly passed, newly not exercised, and the failures both runs share.
Only a new failure fails the gate (``payment-conformance diff`` and ``run --baseline``); a
failure the baseline already had is a known deviation, listed but not held against the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from conformance.core.results import Outcome, RunResult, Verdict


@dataclass(frozen=True)
class RunOutcomes:
    """What a comparison needs of one run: where it comes from and each requirement's outcome."""

    source: str  # the file it was read from, as given
    suite_version: str
    contract_sha256: str
    profile_name: str
    profile_sha256: str
    started_at: str
    verdict: str
    outcomes: Mapping[str, Outcome]  # requirement id -> outcome, in the run's order
    seed: int | None = None  # None: not known (a validation has none)
    target: str | None = None  # ``target_name``; None: not known


def target_name(base_url: str, embedded: bool, fault: str | None) -> str:
    """What makes two targets the same server: its URL, or (each run starting its own embedded
    reference server on a port of its own) the embedded server and its faults."""
    if not embedded:
        return base_url
    return "the embedded reference server" + (f" with fault {fault}" if fault else "")


@dataclass(frozen=True)
class Change:
    """One requirement whose outcome the comparison lists: before (None: not in the baseline)
    and now."""

    id: str
    was: Outcome | None
    now: Outcome


@dataclass(frozen=True)
class Diff:
    """The comparison of a run against a baseline (the earlier run)."""

    baseline: str  # the baseline's file, as given
    baseline_started_at: str
    baseline_verdict: str
    newly_failed: tuple[Change, ...] = ()
    newly_passed: tuple[Change, ...] = ()
    newly_not_exercised: tuple[Change, ...] = ()
    unchanged_failures: tuple[Change, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """1 when a requirement failed that did not fail in the baseline, else 0."""
        return 1 if self.newly_failed else 0

    @property
    def gate(self) -> str:
        """The gate's verdict in words: "no new failures against the baseline" or "2 new
        failures against the baseline"."""
        count = len(self.newly_failed)
        if not count:
            return "no new failures against the baseline"
        return f"{count} new failure{'' if count == 1 else 's'} against the baseline"


def _short(sha256: str) -> str:
    return sha256[:12]


def _warnings(old: RunOutcomes, new: RunOutcomes) -> tuple[str, ...]:
    """What makes the two runs less comparable than they look; never a reason to fail."""
    warnings = []
    if old.contract_sha256 != new.contract_sha256:
        warnings.append(
            f"the runs checked different contracts (sha256 {_short(old.contract_sha256)} "
            f"in the baseline, {_short(new.contract_sha256)} now)"
        )
    if (old.profile_name, old.profile_sha256) != (new.profile_name, new.profile_sha256):
        warnings.append(
            f"the runs used different profiles ({old.profile_name} sha256 "
            f"{_short(old.profile_sha256)} in the baseline, {new.profile_name} sha256 "
            f"{_short(new.profile_sha256)} now)"
        )
    if None not in (old.target, new.target) and old.target != new.target:
        warnings.append(
            f"the runs tested different servers ({old.target} in the baseline, {new.target} now)"
        )
    if None not in (old.seed, new.seed) and old.seed != new.seed:
        warnings.append(
            f"the runs used different seeds ({old.seed} in the baseline, {new.seed} now): "
            "their generated cases differ"
        )
    if old.suite_version != new.suite_version:
        warnings.append(
            f"the runs used different suite versions ({old.suite_version} in the baseline, "
            f"{new.suite_version} now)"
        )
    missing = [rid for rid in old.outcomes if rid not in new.outcomes]
    if missing:
        warnings.append(
            f"{len(missing)} requirement{'' if len(missing) == 1 else 's'} of the baseline "
            f"{'is' if len(missing) == 1 else 'are'} not in this run (another selection or "
            f"catalogue): {', '.join(missing[:5])}{', …' if len(missing) > 5 else ''}"
        )
    return tuple(warnings)


_FAILING = (Outcome.FAILED, Outcome.WAIVED)  # a waived requirement failed, with a waiver


def compare(old: RunOutcomes, new: RunOutcomes) -> Diff:
    """``new`` against the baseline ``old``, in the order of ``new``'s requirements."""
    newly_failed: list[Change] = []
    newly_passed: list[Change] = []
    newly_not_exercised: list[Change] = []
    unchanged: list[Change] = []
    for rid, now in new.outcomes.items():
        was = old.outcomes.get(rid)
        change = Change(rid, was, now)
        # A waived requirement failed: a known deviation, never a new failure of the gate.
        if now is Outcome.FAILED:
            (unchanged if was in _FAILING else newly_failed).append(change)
        elif now is Outcome.WAIVED:
            if was in _FAILING:
                unchanged.append(change)
        elif now is Outcome.PASSED and was is not Outcome.PASSED:
            newly_passed.append(change)
        elif now is Outcome.NOT_EXERCISED and was in (Outcome.PASSED, *_FAILING):
            newly_not_exercised.append(change)
    return Diff(
        baseline=old.source,
        baseline_started_at=old.started_at,
        baseline_verdict=old.verdict,
        newly_failed=tuple(newly_failed),
        newly_passed=tuple(newly_passed),
        newly_not_exercised=tuple(newly_not_exercised),
        unchanged_failures=tuple(unchanged),
        warnings=_warnings(old, new),
    )


def verdict_note(verdict: str, diff: Diff | None) -> str:
    """What a baseline adds to a verdict: " (no new failures against the baseline)" after
    NOT CONFORMANT (the failures found are all in the baseline), "" without a baseline or
    a failure."""
    if diff is None or verdict != Verdict.NOT_CONFORMANT.value:
        return ""
    return f" ({diff.gate})"


CATEGORIES = ("newly_failed", "newly_passed", "newly_not_exercised", "unchanged_failures")
"""The lists of a ``Diff``, in the order every form shows them."""


def category_title(name: str) -> str:
    """``newly_failed`` -> ``newly failed``."""
    return name.replace("_", " ")


def was_text(change: Change) -> str:
    """What the requirement was in the baseline, in words."""
    if change.was is None:
        return "not in the baseline"
    return f"was {change.was.value.replace('_', ' ')}"


def run_line(outcomes: RunOutcomes) -> str:
    """One run as a diff names it: "new/results.json (NOT CONFORMANT, started 2026-...)"."""
    return f"{outcomes.source} ({outcomes.verdict}, started {outcomes.started_at})"


def entry_note(category: str, change: Change) -> str:
    """What a list shows after a requirement's id: " (was passed)"; nothing in
    ``unchanged_failures``, where it always failed."""
    return "" if category == "unchanged_failures" else f" ({was_text(change)})"


def describe(diff: Diff, subject: str = "") -> list[str]:
    """The comparison as plain lines for the console: what was compared (``subject``: the
    later run, when it is not "this run"), each warning, each list (one requirement a line)
    and the gate's verdict."""
    lines = [
        f"{subject + ' ' if subject else ''}against the baseline {diff.baseline} "
        f"({diff.baseline_verdict}, started {diff.baseline_started_at}):"
    ]
    lines += [f"warning: {warning}" for warning in diff.warnings]
    for name in CATEGORIES:
        changes: tuple[Change, ...] = getattr(diff, name)
        lines.append(f"{category_title(name)}: {len(changes)}")
        lines += [f"  {change.id}{entry_note(name, change)}" for change in changes]
    lines.append(f"gate: {diff.gate}")
    return lines


def outcomes_of(result: RunResult, source: str = "this run") -> RunOutcomes:
    """What ``compare`` needs of a finished run."""
    return RunOutcomes(
        source=source,
        suite_version=result.suite_version,
        contract_sha256=result.contract_sha256,
        profile_name=result.profile_name,
        profile_sha256=result.profile_sha256,
        started_at=result.started_at,
        verdict=result.verdict.value,
        outcomes={r.requirement.id: r.outcome for r in result.requirements},
        seed=None if result.is_validation else result.seed,
        target=None if result.is_validation else target_of(result),
    )


def target_of(result: RunResult) -> str:
    target = result.target
    return target_name(target.base_url, target.embedded, target.fault)


def scrubbed(diff: Diff, text: Callable[[str], str]) -> Diff:
    """``diff`` with every text passed through ``text`` (a report's redaction)."""

    def changes(items: tuple[Change, ...]) -> tuple[Change, ...]:
        return tuple(Change(text(c.id), c.was, c.now) for c in items)

    return Diff(
        baseline=text(diff.baseline),
        baseline_started_at=text(diff.baseline_started_at),
        baseline_verdict=text(diff.baseline_verdict),
        newly_failed=changes(diff.newly_failed),
        newly_passed=changes(diff.newly_passed),
        newly_not_exercised=changes(diff.newly_not_exercised),
        unchanged_failures=changes(diff.unchanged_failures),
        warnings=tuple(text(w) for w in diff.warnings),
    )
