"""``run_suite``: run the conformance suite in-process and fold its checks into a ``RunResult``.

A run checks its options (``options``), starts or names its target (``target``), runs preflight,
runs pytest on the ``conformance.suite`` package (``session``), collects the CheckResults the
plugin attaches to each test report (``collector``), folds them per requirement and writes the
reports.

A run that cannot finish (its time budget ran out, a test process crashed, the server stopped
answering, Ctrl-C or SIGTERM during the tests) still gives a result and reports with what ran
until then, marked incomplete (``RunResult.incomplete_reason``, exit code 2).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from conformance import __version__
from conformance.core.case_coverage import logged
from conformance.core.catalogue import Catalogue, Requirement
from conformance.core.diff import compare, outcomes_of
from conformance.core.profile import Profile, ProfileError, load_profile, with_credential
from conformance.core.redaction import run_secrets
from conformance.core.results import RateLimitCounts, RunResult, fold
from conformance.core.waivers import apply_waivers
from conformance.engine.collector import ResultCollector, _not_reached
from conformance.engine.har_file import Merged, RecordingError, check_record_path, recording
from conformance.engine.options import (
    RunError,
    RunOptions,
    _check_options,
    _recorded_options,
    check_report_dir,
)
from conformance.engine.preflight import PreflightReport, preflight
from conformance.engine.progress import ConsoleDisplay, Display, NullDisplay, RunHeader
from conformance.engine.session import _run_pytest
from conformance.engine.target import _auto_workers, _connection, _target

if TYPE_CHECKING:  # the reporting package is imported when reports are written
    from conformance.reporting.signing import SigningKey

FAIL_FAST_REASON = "the run stopped at its first failure (--fail-fast)"


@dataclass(frozen=True)
class Run:
    """A finished run: its result, the reports written and the requirements it covered."""

    result: RunResult
    report_paths: tuple[Path, ...]
    selected: tuple[Requirement, ...]
    preflight: PreflightReport | None
    report_error: str | None = None  # the reports could not be written (the run itself did)
    recording: Merged | None = None  # run --record: the HAR file written, what was cut


def run_suite(options: RunOptions) -> RunResult:
    """Run the suite as ``options`` say; raises ``RunError`` when it cannot run.

    A run that started but could not finish returns a result with ``incomplete_reason``."""
    display: Display = ConsoleDisplay(_console()) if options.progress else NullDisplay()
    return execute(options, display).result


def _console() -> Console:
    return Console(file=sys.stdout)


def execute(options: RunOptions, display: Display) -> Run:
    """``run_suite`` with a caller-provided display; returns the reports written too."""
    with _connection(options):
        return _execute(options, display)


def _execute(options: RunOptions, display: Display) -> Run:
    _check_options(options)
    if options.report_dir is not None:
        check_report_dir(options.report_dir)
    if options.record is not None:
        _check_record(options.record)
    signer = _signer(options)  # before the run: a bad key costs no run
    deadline = None if options.max_duration_s is None else time.time() + options.max_duration_s
    profile = _profile(options)
    catalogue = _catalogue()
    selected = _select(catalogue, options.only, options.skip)
    seed = options.seed if options.seed is not None else random.randrange(2**31)
    contract_sha = _contract_sha256()
    display.header(RunHeader(__version__, contract_sha, profile.name, seed))
    started_at = datetime.now(UTC)
    clock = time.perf_counter()
    secrets = [c.api_secret for c in profile.credentials] + list(run_secrets())
    with recording(options.record) as record, _target(options, profile) as target:
        display.target(target)
        checked: PreflightReport | None = None
        if options.preflight:
            with record.here("preflight", secrets, profile):
                checked = preflight(
                    target.base_url, profile, rate_limit=options.rate_limit, deadline=deadline
                )
            display.preflight(checked)
            spent = deadline is not None and time.time() >= deadline
            if not checked.ok and not spent:  # a spent budget: the tests say so, exit 2
                raise RunError(checked.message)
        if options.auto_workers:
            options = _auto_workers(options, target, checked)
            display.workers(f"workers: {options.workers} (auto: {options.auto_why})")
        outside = frozenset({r.id for r in catalogue.requirements} - {r.id for r in selected})
        collector = ResultCollector(display, started=clock, outside=outside)
        try:
            incomplete = _run_pytest(options, target, seed, collector, deadline, record.directory)
        finally:
            display.close()
    duration = time.perf_counter() - clock
    stopped = incomplete
    if stopped is None and options.fail_fast and collector.first_failure_s is not None:
        stopped = FAIL_FAST_REASON  # a stop, not an unfinished run: the verdict stands
    if stopped is not None:
        not_reached = _not_reached(selected, collector.checks, stopped)
        if not_reached is not None:
            collector.checks.append(not_reached)
    requirements = fold(list(selected), collector.checks)
    waived = None
    if options.waivers is not None:  # "today" is the day the run started (UTC)
        requirements, waived = apply_waivers(
            requirements, options.waivers, started_at.date(), strict=options.strict_waivers
        )
    result = RunResult(
        suite_version=__version__,
        contract_sha256=contract_sha,
        profile_name=profile.name,
        profile_sha256=profile.sha256,
        seed=seed,
        target=target,
        started_at=started_at.isoformat(timespec="seconds").replace("+00:00", "Z"),
        duration_s=round(duration, 3),
        requests_sent=collector.requests_sent + (checked.requests_sent if checked else 0),
        requirements=requirements,
        checks=tuple(collector.checks),
        options=_recorded_options(options, profile),
        incomplete_reason=incomplete,
        first_failure_s=collector.first_failure_s,
        rate_limits=collector.rate_limits + (checked.rate_limits if checked else RateLimitCounts()),
        outside_ids=outside,
        statuses_seen=collector.statuses_seen,
        webhook_receiver=collector.webhook_receiver,
        waivers=waived,
        shard=collector.shard_plan,
        case_coverage=collector.case_log.by_operation(),
        case_log=logged(collector.case_log),
    )
    if options.baseline is not None:
        result = replace(result, baseline=compare(options.baseline, outcomes_of(result)))
    paths: tuple[Path, ...] = ()
    report_error = record.error  # the traffic could not be recorded (the run itself did)
    if options.report_dir is not None:
        try:
            paths = tuple(write_run_reports(result, options.report_dir, catalogue, profile, signer))
        except RunError as exc:
            report_error = str(exc)
    return Run(result, paths, tuple(selected), checked, report_error, record.merged)


def write_run_reports(
    result: RunResult,
    directory: Path,
    catalogue: Catalogue,
    profile: Profile,
    signer: SigningKey | None = None,
) -> list[Path]:
    from conformance.reporting import ReportError, write_reports

    secrets = [c.api_secret for c in profile.credentials] + list(run_secrets())
    try:
        return write_reports(result, directory, catalogue, secrets=secrets, signer=signer)
    except ReportError as exc:
        raise RunError(str(exc)) from None


def _check_record(path: Path) -> None:
    try:
        check_record_path(path)
    except RecordingError as exc:
        raise RunError(str(exc)) from None


def _signer(options: RunOptions) -> SigningKey | None:
    """The loaded ``--sign-key`` (a ``reporting.signing.SigningKey``), or None."""
    if options.sign_key is None:
        return None
    if options.report_dir is None:
        raise RunError("--sign-key signs the reports' manifest: it needs a report directory")
    from conformance.reporting.signing import SigningError, load_private_key

    try:
        return load_private_key(options.sign_key)
    except SigningError as exc:
        raise RunError(str(exc)) from None


# -- preparation -----------------------------------------------------------------------------
def _profile(options: RunOptions) -> Profile:
    try:
        profile = load_profile(options.profile)
    except ProfileError as exc:
        raise RunError(f"--profile: {exc}") from None
    if options.base_url is None:
        from conformance.engine.credentials import embedded_credential_problem

        problem = embedded_credential_problem(profile, options.api_key, options.api_secret)
        if problem is not None:
            raise RunError(problem)
    return with_credential(profile, options.api_key, options.api_secret)


def _catalogue() -> Catalogue:
    from conformance.core.catalogue import load_catalogue

    try:
        return load_catalogue()
    except (OSError, ValueError) as exc:
        raise RunError(f"the requirement catalogue cannot be read: {exc}") from None


def _select(catalogue: Catalogue, only: Sequence[str], skip: Sequence[str]) -> list[Requirement]:
    try:
        selected = list(catalogue.select(tuple(only), tuple(skip)))
    except ValueError as exc:
        raise RunError(f"--only/--skip: {exc}") from None
    if not selected:
        raise RunError("--only/--skip leave no requirement to test")
    return selected


def _contract_sha256() -> str:
    from conformance.core.contract import document_sha256

    try:
        return document_sha256()
    except (OSError, ValueError) as exc:
        raise RunError(f"the OpenAPI document cannot be read: {exc}") from None
