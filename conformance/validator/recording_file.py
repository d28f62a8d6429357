"""Validate a whole recording: stream its exchanges, check each, fold into a ``RunResult``.

``validate_file`` reads a HAR or JSON Lines file one exchange at a time, runs the per-exchange
checks (``checks.ExchangeValidator``) and the cross-exchange ones (``cross.CrossExchangeChecks``)
on it, and keeps, per (check, requirement), only counts and the first failure: the result's
size does not grow with the recording (a requirement's check reads "12 of 4,000 exchanges
failed; first: traffic.har entry 17: ..."). The ``RunResult`` covers the whole catalogue; a
requirement no exchange touched is "not exercised" with the reason.

Traffic split over many files (shards) is validated shard by shard, anywhere:
``validate_partition(lines)`` checks the JSON Lines of one shard into a ``PartialResult`` (pure,
picklable), ``merge(partials)`` folds them into one ``RunResult``, the same as one pass over the
concatenated shards gives for the per-exchange checks. The cross-exchange checks see one shard
at a time, so shard by API key (a merchant's traffic in one shard) to keep them whole
(docs/validate.md, "Partitioned traffic").
"""

from __future__ import annotations

import contextlib
import functools
import gc
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from conformance import __version__
from conformance.core.catalogue import Requirement, load_catalogue
from conformance.core.profile import Profile, load_profile
from conformance.core.results import (
    CheckResult,
    Outcome,
    RunResult,
    Target,
    fold,
    merge_statuses,
)
from conformance.core.untrusted import split_url
from conformance.core.yamldata import load_yaml
from conformance.validator import validator_for
from conformance.validator.checks import FAMILY, ExchangeValidator, api_path
from conformance.validator.cross import CrossExchangeChecks, reused_key
from conformance.validator.exchange import Exchange
from conformance.validator.isolation import FOREIGN_ID
from conformance.validator.tables import Finding

F = TypeVar("F", bound=Finding)

VALIDATOR_PREFIX = f"{FAMILY}."
PROGRESS_EVERY = 10_000
"""Exchanges between two calls of the progress callback."""

NO_BASE_URL = "(no exchange recorded)"
UNSEEN_HALVES: dict[str, str] = load_yaml(
    (Path(__file__).parent / "unseen_halves.yaml").read_text(encoding="utf-8")
)
"""Requirement id -> the half of it a recording cannot show: failed on the rest, never passed."""
NOT_MET_REASON = (
    "no exchange in the recording exercised it (the recorded traffic has no request of the kind "
    "it needs, or it needs a check the passive validator does not make)"
)


@dataclass
class Tally:
    """What the results of one check for one requirement add up to."""

    check: str  # the check's name: its id without the exchange's source
    requirement_id: str
    operation_id: str | None
    total: int = 0
    failed: int = 0
    first_failure: CheckResult | None = None
    reason_not_exercised: str | None = None

    def add(self, result: CheckResult) -> None:
        if result.outcome is Outcome.NOT_EXERCISED:
            if self.reason_not_exercised is None:
                self.reason_not_exercised = result.reason_not_exercised
            return
        self.total += 1
        if result.outcome is Outcome.FAILED:
            self.failed += 1
            if self.first_failure is None:
                self.first_failure = result

    def absorb(self, other: Tally) -> None:
        """Add ``other``'s counts (a later part of the same traffic)."""
        self.total += other.total
        self.failed += other.failed
        if self.first_failure is None:
            self.first_failure = other.first_failure
        if self.reason_not_exercised is None:
            self.reason_not_exercised = other.reason_not_exercised

    def check_result(self) -> CheckResult:
        """One ``CheckResult`` standing for every result of this check on this requirement."""
        rid = (self.requirement_id,)
        unseen = UNSEEN_HALVES.get(self.requirement_id) if self.first_failure is None else None
        if self.total == 0 or unseen is not None:
            reason = self.reason_not_exercised
            if self.total:
                reason = (
                    f"{self.total:,} of {self.total:,} exchanges passed, but the rule has a half "
                    f"no recording shows: {unseen}"
                )
            return CheckResult(
                self.check,
                FAMILY,
                rid,
                Outcome.NOT_EXERCISED,
                operation_id=self.operation_id,
                reason_not_exercised=reason,
            )
        if self.first_failure is None:
            return CheckResult(
                self.check,
                FAMILY,
                rid,
                Outcome.PASSED,
                f"{self.total:,} of {self.total:,} exchanges passed",
                self.operation_id,
            )
        first = self.first_failure
        where = first.check_id[len(self.check) :].strip() or "an exchange"
        return CheckResult(
            self.check,
            FAMILY,
            rid,
            Outcome.FAILED,
            f"{self.failed:,} of {self.total:,} exchanges failed; first: {where}: {first.message}",
            first.operation_id,
            evidence=first.evidence,
        )


@dataclass
class PartialResult:
    """The checks of part of a recording, counted (picklable; ``merge`` folds several)."""

    profile_name: str
    exchanges: int = 0
    tallies: dict[tuple[str, str], Tally] = field(default_factory=dict)
    operations: set[str] = field(default_factory=set)
    base_url: str | None = None
    started_at: str | None = None
    duration_s: float = 0.0
    statuses: dict[str, dict[int, int]] = field(default_factory=dict)  # per operation

    def add(self, exchange: Exchange, operation_id: str | None, results: list[CheckResult]) -> None:
        self.note(exchange, operation_id)
        self.record(results)

    def note(self, exchange: Exchange, operation_id: str | None) -> None:
        """Count ``exchange`` itself: its operation, its status, the base URL and start."""
        self.exchanges += 1
        if operation_id is not None:
            self.operations.add(operation_id)
            if exchange.status is not None:
                counts = self.statuses.setdefault(operation_id, {})
                counts[exchange.status] = counts.get(exchange.status, 0) + 1
        if self.base_url is None:
            self.base_url = base_url_of(exchange)
        if self.started_at is None and exchange.started_at:
            self.started_at = exchange.started_at

    def count(
        self,
        findings: Sequence[F],
        operation_id: str | None,
        prefix: str,
        results: Callable[[list[F]], list[CheckResult]],
    ) -> None:
        """Count ``findings`` of one exchange, in order: a pass adds one to its tallies (no
        ``CheckResult`` is made for it: the hot path), the others are made results by
        ``results`` and recorded. ``prefix`` + a finding's check is the check's name."""
        rest = [f for f in findings if f[2] is not Outcome.PASSED]
        made = iter(results(rest)) if rest else None
        tallies = self.tallies
        for finding in findings:
            check, ids, outcome, _ = finding
            if outcome is not Outcome.PASSED:
                if made is not None:
                    self.record((next(made),))
                continue
            name = prefix + check
            for rid in ids:
                tally = tallies.get((name, rid))
                if tally is None:
                    tally = tallies[(name, rid)] = Tally(name, rid, operation_id)
                tally.total += 1

    def record(self, results: Iterable[CheckResult]) -> None:
        tallies = self.tallies
        for result in results:
            check = result.check_id.split(" ", 1)[0]
            passed = result.outcome is Outcome.PASSED
            for rid in result.requirement_ids:
                tally = tallies.get((check, rid))
                if tally is None:
                    tally = tallies[(check, rid)] = Tally(check, rid, result.operation_id)
                if passed:
                    tally.total += 1  # Tally.add's whole work for a pass, on the hot path
                else:
                    tally.add(result)


def base_url_of(exchange: Exchange) -> str:
    """The base URL the exchange was sent to: scheme, host and any prefix before ``/v1`` (no
    userinfo: a recorded password stays out of the reports)."""
    parts = split_url(exchange.url)
    root = f"{parts.scheme}://{parts.netloc}"
    path = exchange.path
    api = api_path(path)
    prefix = path[: len(path) - len(api)] if api is not None else ""
    return root + prefix.rstrip("/")


def check_exchanges(
    exchanges: Iterable[Exchange],
    profile: Profile,
    *,
    on_progress: Callable[[int], None] | None = None,
) -> PartialResult:
    """Run every check on ``exchanges`` (in order) and count the results."""
    validator = validator_for(profile, pass_evidence=False)  # evidence only for failures
    cross = CrossExchangeChecks(profile)
    partial = PartialResult(profile.name)
    clock = time.perf_counter()
    with _rare_full_collections():
        _check_all(exchanges, validator, cross, partial, on_progress)
    partial.record(cross.finish())
    partial.duration_s = time.perf_counter() - clock
    return partial


@contextlib.contextmanager
def _rare_full_collections() -> Iterator[None]:
    """The garbage collector's full collections ten times rarer, for the block: the
    cross-exchange tables hold some 500,000 small objects at 100,000 exchanges, long-lived and
    in no reference cycle (an entry is freed when its table forgets it), and each full
    collection walks them all and frees nothing: 6 of them cost 1.1 s of a 20 s validation
    (measured), a twentieth of the throughput. The younger generations are collected as
    usual."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, full * 10)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)


def _check_all(
    exchanges: Iterable[Exchange],
    validator: ExchangeValidator,
    cross: CrossExchangeChecks,
    partial: PartialResult,
    on_progress: Callable[[int], None] | None,
) -> None:
    for exchange in exchanges:
        operation_id, findings = validator.judge(exchange)
        partial.note(exchange, operation_id)
        due: list[CheckResult] = []
        found: list[Finding] = []
        if not exchange.truncated:  # a cut body is no evidence of what a replay answered
            due, found = cross.judge(exchange, operation_id)
        if any(f[0] == FOREIGN_ID for f in found):
            # an id another key holds: its answer is judged as an unknown id's (isolation), not
            # against the statuses of a request that had to succeed
            findings = [f for f in findings if f[0] != "status" or f[2] is not Outcome.FAILED]
        if any(reused_key(f) for f in found):
            # a key reused with another request, not refused: the answer is no answer to this
            # request (another's stored one, or one that had to be a refusal)
            findings = [f for f in findings if f[2] is not Outcome.FAILED]
        partial.count(
            findings,
            operation_id,
            VALIDATOR_PREFIX,
            functools.partial(validator.results, exchange, operation_id),
        )
        partial.record(due)
        partial.count(
            found, operation_id, "", functools.partial(cross.results, exchange, operation_id)
        )
        if on_progress is not None and partial.exchanges % PROGRESS_EVERY == 0:
            on_progress(partial.exchanges)


def validate_file(
    path: Path,
    profile_name: str | Profile = "default",
    *,
    format: str | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> RunResult:
    """Validate the recording at ``path`` (HAR or JSON Lines, gzip-compressed or not) against
    ``profile_name`` (a profile's name or path, or a loaded ``Profile``: one whose credentials
    ``validate --api-key/--api-secret`` replaced, say).

    Raises ``RecordingError`` when the file cannot be read as a recording and ``ProfileError``
    when the profile cannot be loaded."""
    from conformance.validator.readers import iter_exchanges

    profile = profile_name if isinstance(profile_name, Profile) else load_profile(profile_name)
    partial = check_exchanges(
        iter_exchanges(Path(path), format=format), profile, on_progress=on_progress
    )
    return to_run_result([partial], profile, recording=str(path), format=format)


def validate_partition(
    lines: Iterable[str], profile_name: str = "default", *, name: str = "shard"
) -> PartialResult:
    """Check one shard of JSON Lines (an iterable of lines, as ``dask.bag`` hands a partition);
    the exchanges' sources read ``<name> line N``. Pure: the same lines give the same result."""
    from conformance.validator.readers import parse_jsonl_line

    def exchanges() -> Iterator[Exchange]:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                yield parse_jsonl_line(line.removeprefix("\ufeff"), f"{name} line {number}")

    return check_exchanges(exchanges(), load_profile(profile_name))


def merge(partials: Sequence[PartialResult], profile_name: str | None = None) -> RunResult:
    """One ``RunResult`` from the results of consecutive parts of the traffic (in order)."""
    name = profile_name or (partials[0].profile_name if partials else "default")
    return to_run_result(list(partials), load_profile(name))


def _combine(partials: list[PartialResult]) -> PartialResult:
    total = PartialResult(partials[0].profile_name if partials else "default")
    for part in partials:
        total.exchanges += part.exchanges
        total.operations |= part.operations
        total.base_url = total.base_url or part.base_url
        total.started_at = total.started_at or part.started_at
        total.duration_s += part.duration_s
        merge_statuses(total.statuses, part.statuses)
        for key, tally in part.tallies.items():
            mine = total.tallies.get(key)
            if mine is None:
                total.tallies[key] = replace(tally)
            else:
                mine.absorb(tally)
    return total


def to_run_result(
    partials: list[PartialResult],
    profile: Profile,
    *,
    recording: str | None = None,
    format: str | None = None,
) -> RunResult:
    """Fold counted checks into a ``RunResult`` over the whole catalogue."""
    from conformance.core.contract import document_sha256

    total = _combine(partials)
    catalogue = load_catalogue()
    requirements = list(catalogue.requirements)
    checks = [tally.check_result() for tally in total.tallies.values()]
    folded = tuple(
        replace(r, reason_not_exercised=_reason(r.requirement, total.operations))
        if r.outcome is Outcome.NOT_EXERCISED and not r.checks
        else r
        for r in fold(requirements, checks)
    )
    options = {"profile": profile.name, "mode": "validate", "exchanges": str(total.exchanges)}
    if recording is not None:
        options["recording"] = recording  # the path as given: the replay command repeats it
    if format is not None:
        options["format"] = format
    started = total.started_at or datetime.now(UTC).isoformat(timespec="seconds")
    return RunResult(
        suite_version=__version__,
        contract_sha256=document_sha256(),
        profile_name=profile.name,
        profile_sha256=profile.sha256,
        seed=0,
        target=Target(total.base_url or NO_BASE_URL, embedded=False),
        started_at=started.replace("+00:00", "Z"),
        duration_s=round(total.duration_s, 3),
        requests_sent=0,
        requirements=folded,
        checks=tuple(checks),
        options=options,
        statuses_seen=total.statuses,
    )


def _reason(requirement: Requirement, seen: set[str]) -> str:
    operations = requirement.operations
    if operations and not seen.intersection(operations):
        if len(operations) > 3:
            return "no exchange of any of its operations in the recording"
        return f"no exchange of {' or '.join(operations)} in the recording"
    return NOT_MET_REASON
