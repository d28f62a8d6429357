"""``run_suite``: run the conformance suite in-process and fold its checks into a ``RunResult``.

The engine starts the embedded reference server itself when no base URL is given (so that
preflight, every pytest-xdist worker and the report see one server), runs preflight, runs
pytest on the ``conformance.suite`` package in this process with its own output captured
and the caller's pytest configuration shut out, collects
the CheckResults the plugin attaches to each test report, and folds them per requirement.

A run that cannot finish (its time budget ran out, a test process crashed, the server stopped
answering, Ctrl-C or SIGTERM during the tests) still gives a result and reports with what ran
until then, marked incomplete (``RunResult.incomplete_reason``, exit code 2). ``stop_signals``
is the one place where the run handles signals.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from rich.console import Console

from conformance import __version__
from conformance.core.catalogue import Requirement
from conformance.core.diff import RunOutcomes, compare, outcomes_of
from conformance.core.environment import environ
from conformance.core.headers import Header
from conformance.core.profile import Profile, ProfileError, load_profile
from conformance.core.receiver_counts import ReceiverCounts
from conformance.core.redaction import run_secrets
from conformance.core.results import (
    CheckResult,
    Outcome,
    RateLimitCounts,
    RunResult,
    Target,
    budget_reason,
    fold,
    merge_statuses,
)
from conformance.core.shards import Shard, ShardPlan, plan_from_dict
from conformance.core.untrusted import mask_url_passwords, split_url
from conformance.core.waivers import WaiverFile, apply_waivers
from conformance.engine.har_file import (
    Merged,
    RecordingError,
    check_record_path,
    recording,
)
from conformance.engine.preflight import PreflightReport, preflight
from conformance.engine.progress import ConsoleDisplay, Display, NullDisplay, RunHeader
from conformance.suite.plugin import (
    API_KEY_ENV,
    API_SECRET_ENV,
    SUITE_DIR,
    UNMARKED_MESSAGE,
    with_credential,
)
from conformance.suite.tool_errors import SERVER_GONE
from conformance.suite.wire import gateway, proxy, tls
from conformance.suite.wire.check_properties import (
    CHECK_PROPERTY,
    FAMILY_PROPERTY,
    RATE_LIMITS_PROPERTY,
    REQUESTS_PROPERTY,
    STATUSES_PROPERTY,
    WEBHOOK_RECEIVER_PROPERTY,
    check_from_dict,
)

OUTPUT_TAIL_CHARS = 3000
# Past the budget no new check starts and no request is sent; a check still running this long
# after it (waiting for a slow response) is stopped where it is.
HARD_STOP_GRACE_S = 10.0
INTERRUPTED_REASON = "the run was interrupted (Ctrl-C)"
TERMINATED_REASON = "the run was stopped by SIGTERM"
NOT_REACHED_CHECK = "run: not reached"
FAIL_FAST_REASON = "the run stopped at its first failure (--fail-fast)"
AUTOLOAD_ENV = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
# the suite's own plugins (entry points payment_conformance and payment_conformance_embedded)
# and hypothesis' (its @given tests report through it, as in a plain pytest run)
SUITE_PLUGINS = (
    "conformance.suite.plugin",
    "conformance.engine.embedded",
    "_hypothesis_pytestplugin",
)
XDIST_PLUGIN = "xdist.plugin"
SHARD_PLAN_FILE = "shard-plan.json"  # in the run's scratch directory (core.shards.ShardPlan)


# Test processes when the server answers at once (the embedded one): one per core, at most two,
# beyond which the CPU, not the server, is the limit. A remote or slow server keeps each
# process waiting on the network most of the time, so more processes than cores pay off
# (measured: see the README's latency table).
LOCAL_WORKERS_MAX = 2
REMOTE_WORKERS = 8


def default_workers(base_url: str | None, latency_ms: int = 0) -> int:
    """``--workers auto``: the number of test processes that suits the server under test."""
    if base_url is None and latency_ms == 0:
        return min(LOCAL_WORKERS_MAX, os.cpu_count() or 1)
    return REMOTE_WORKERS


class RunError(Exception):
    """The run could not happen (bad options, preflight failure, nothing selected): exit 2."""


@dataclass(frozen=True)
class RunOptions:
    base_url: str | None = None
    profile: str = "default"
    seed: int | None = None  # None: a random seed, reported in the result
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    embedded_fault: str | None = None
    embedded_latency_ms: int = 0  # the embedded server answers each request this much later
    embedded_rate_limit: float | None = None  # and 429s past this many requests/s per API key
    quick: bool = False
    max_examples: int | None = None
    report_dir: Path | None = None
    progress: bool = False
    workers: int = 1
    api_key: str | None = field(default=None, repr=False)
    api_secret: str | None = field(default=None, repr=False)
    preflight: bool = True
    webhook_url: str | None = None  # how the server reaches the suite's webhook receiver
    webhook_bind: str | None = None  # HOST:PORT the webhook receiver listens on
    max_duration_s: float | None = None  # the run's wall-clock budget (None: none)
    sign_key: Path | None = None  # Ed25519 private key (PEM) signing the manifest
    record: Path | None = None  # run --record: the run's traffic as a HAR file
    fail_fast: bool = False  # stop at the first failed requirement (pytest --maxfail=1)
    cacert: Path | None = None  # run --cacert: the CA bundle (PEM) to trust
    insecure: bool = False  # run --insecure: the server's certificate is not verified
    client_cert: Path | None = None  # run --client-cert/--client-key: mutual TLS
    client_key: Path | None = None
    headers: tuple[Header, ...] = field(default=(), repr=False)  # run -H: secrets
    rate_limit: float | None = None  # run --rate-limit: requests a second, all processes together
    proxy: str | None = field(default=None, repr=False)  # run --proxy: its password is a secret
    waivers: WaiverFile | None = None  # run --waivers, loaded (and checked) before the run
    strict_waivers: bool = False  # run --strict-waivers: a stale waiver fails the run
    baseline: RunOutcomes | None = None  # run --baseline: only failures new since it fail the run
    shard: Shard | None = None  # run --shard i/N: only this part of the run's tests (core.shards)

    # --workers auto: ``workers`` is replaced after preflight by what suits the cores and the
    # round trip it measured (``engine.workers``); ``auto_why`` says why, for the reports
    auto_workers: bool = False
    auto_why: str | None = None

    @property
    def tls_settings(self) -> tls.TlsSettings:
        return tls.TlsSettings(self.cacert, self.insecure, self.client_cert, self.client_key)


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


@contextlib.contextmanager
def _connection(options: RunOptions) -> Iterator[None]:
    """The run's TLS settings, gateway headers and proxy, in force for every request and report."""
    try:
        headers = gateway.parse_headers(f"{name}: {value}" for name, value in options.headers)
        with tls.using(options.tls_settings), gateway.using(headers), proxy.using(options.proxy):
            yield
    except (tls.TlsError, gateway.HeaderError, proxy.ProxyError) as exc:
        raise RunError(str(exc)) from None


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
            with record.here("preflight", secrets):
                checked = preflight(target.base_url, profile, rate_limit=options.rate_limit)
            display.preflight(checked)
            if not checked.ok:
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
    result: RunResult, directory: Path, catalogue: Any, profile: Profile, signer: Any = None
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


def _signer(options: RunOptions) -> Any:
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
def _check_options(options: RunOptions) -> None:
    if options.embedded_fault is not None and options.base_url is not None:
        raise RunError(
            "--fault switches on a fault of the embedded reference server; "
            "it cannot be combined with --base-url"
        )
    if options.embedded_rate_limit is not None and options.base_url is not None:
        raise RunError(
            "--server-rate-limit rate-limits the embedded reference server; "
            "it cannot be combined with --base-url"
        )
    if options.base_url is not None and not options.base_url.startswith(("http://", "https://")):
        raise RunError(f"--base-url must start with http:// or https://, not {options.base_url!r}")
    if options.base_url is not None:
        _check_url("--base-url", options.base_url)
    if options.workers < 1:
        raise RunError(f"--workers must be at least 1, not {options.workers}")
    if options.max_examples is not None and options.max_examples < 1:
        raise RunError(f"--max-examples must be at least 1, not {options.max_examples}")
    if options.seed is not None and options.seed < 0:
        raise RunError(f"--seed must not be negative, not {options.seed}")
    if options.max_duration_s is not None and not options.max_duration_s > 0:
        raise RunError(f"--max-duration must be positive, not {options.max_duration_s:g}")
    if options.rate_limit is not None and not 0 < options.rate_limit < float("inf"):
        raise RunError(f"--rate-limit must be a positive number, not {options.rate_limit:g}")
    _check_webhook_options(options)


def _check_url(option: str, url: str) -> None:
    """``RunError`` when ``url`` cannot be parsed (a bracket that does not close, a bad port)."""
    try:
        split_url(url).port  # noqa: B018 (reading the port checks it)
    except ValueError as exc:
        raise RunError(f"{option} {mask_url_passwords(url)!r} is not a valid URL ({exc})") from None


def check_report_dir(directory: Path) -> None:
    """Raise ``RunError`` when the reports could not be written to ``directory``.

    Checked before the run, so a bad ``--report-dir`` costs no run (and sends no request);
    the directory and a file in it are really created, then removed (``writable``).
    """
    where = f"cannot write the reports to {directory}"
    if directory.exists():
        if not directory.is_dir():
            raise RunError(f"{where}: it is a file, not a directory")
        if not os.access(directory, os.W_OK | os.X_OK):
            raise RunError(f"{where}: the directory is not writable")
        _probe_report_dir(directory, where)
        return
    ancestor = next((p for p in directory.absolute().parents if p.exists()), Path("/"))
    if not ancestor.is_dir():
        raise RunError(f"{where}: it cannot be created, {ancestor} is a file")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise RunError(f"{where}: it cannot be created, {ancestor} is not writable")
    _probe_report_dir(directory, where)


def _probe_report_dir(directory: Path, where: str) -> None:
    from conformance.engine.writable import probe_directory

    try:
        probe_directory(directory)
    except OSError as exc:
        other = exc.filename and Path(exc.filename) != directory.absolute()
        failed = f" (at {exc.filename})" if other else ""
        raise RunError(f"{where}: {exc.strerror or exc}{failed}") from None


def _check_webhook_options(options: RunOptions) -> None:
    from conformance.suite.webhooks.receiver import (
        ReceiverOptionError,
        check_public_url,
        parse_bind,
    )

    try:
        if options.webhook_url is not None:
            check_public_url(options.webhook_url)
        if options.webhook_bind is not None:
            parse_bind(options.webhook_bind)
    except ReceiverOptionError as exc:
        raise RunError(str(exc)) from None


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


def _catalogue() -> Any:
    from conformance.core.catalogue import load_catalogue

    try:
        return load_catalogue()
    except (OSError, ValueError) as exc:
        raise RunError(f"the requirement catalogue cannot be read: {exc}") from None


def _select(catalogue: Any, only: Sequence[str], skip: Sequence[str]) -> list[Requirement]:
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


@contextlib.contextmanager
def _target(options: RunOptions, profile: Profile) -> Iterator[Target]:
    if options.base_url is not None:
        yield Target(options.base_url.rstrip("/"), embedded=False)
        return
    from conformance.reference.server import ReferenceServer, ServerStartError

    faults = (options.embedded_fault,) if options.embedded_fault else ()
    try:
        server = ReferenceServer(
            profile=profile,
            faults=faults,
            latency_ms=options.embedded_latency_ms,
            rate_limit=options.embedded_rate_limit,
        ).start()
    except (ValueError, ServerStartError) as exc:
        raise RunError(f"the embedded reference server cannot start: {exc}") from None
    try:
        yield Target(server.base_url, embedded=True, fault=options.embedded_fault)
    finally:
        server.stop()


def _auto_workers(
    options: RunOptions, target: Target, checked: PreflightReport | None
) -> RunOptions:
    """``options`` with the workers ``auto`` picks from the cores and the round trip."""
    from conformance.engine.workers import choose_workers, usable_cores

    round_trip = checked.round_trip_ms if checked is not None else None
    if round_trip is None and target.embedded:
        round_trip = float(options.embedded_latency_ms)
    if round_trip is None:  # no preflight against another server: today's default
        return replace(options, auto_why="no round trip measured (preflight off)")
    choice = choose_workers(
        usable_cores(), round_trip, embedded=target.embedded, rate_limit=options.rate_limit
    )
    return replace(options, workers=choice.workers, auto_why=choice.why)


def _recorded_options(options: RunOptions, profile: Profile) -> dict[str, str]:
    recorded = {
        "profile": options.profile,
        "quick": str(options.quick).lower(),
        "workers": str(options.workers),
    }
    if options.base_url:
        recorded["base_url"] = mask_url_passwords(options.base_url)
    if options.embedded_fault:
        recorded["fault"] = options.embedded_fault
    if options.embedded_latency_ms:
        recorded["latency_ms"] = str(options.embedded_latency_ms)
    if options.embedded_rate_limit is not None:
        recorded["server_rate_limit"] = f"{options.embedded_rate_limit:g}"
    if options.only:
        recorded["only"] = ",".join(options.only)
    if options.skip:
        recorded["skip"] = ",".join(options.skip)
    if options.max_examples is not None:
        recorded["max_examples"] = str(options.max_examples)
    if options.webhook_url is not None:
        recorded["webhook_url"] = options.webhook_url
    if options.webhook_bind is not None:
        recorded["webhook_bind"] = options.webhook_bind
    if options.api_key is not None:
        recorded["api_key"] = options.api_key
    if options.max_duration_s is not None:
        recorded["max_duration_s"] = f"{options.max_duration_s:g}"
    if options.fail_fast:
        recorded["fail_fast"] = "true"
    recorded.update(options.tls_settings.recorded)
    if options.headers:  # the names only: the values are secrets
        recorded["headers"] = ",".join(name for name, _ in options.headers)
    if options.auto_workers:
        recorded["workers_auto"] = options.auto_why or "auto"
    if options.rate_limit is not None:
        recorded["rate_limit"] = f"{options.rate_limit:g}/s"
    if options.proxy is not None:
        recorded["proxy"] = mask_url_passwords(options.proxy)
    if options.waivers is not None:
        recorded["waivers"] = options.waivers.path
    if options.strict_waivers:
        recorded["strict_waivers"] = "true"
    if options.baseline is not None:
        recorded["baseline"] = options.baseline.source
    if options.shard is not None:
        recorded["shard"] = str(options.shard)
    return recorded


# -- running pytest --------------------------------------------------------------------------
def pytest_args(
    options: RunOptions,
    target: Target,
    seed: int,
    config_file: Path,
    deadline: float | None = None,
    record_dir: Path | None = None,
) -> list[str]:
    args = [
        # The package's directory rather than ``--pyargs conformance.suite``: with a path
        # pytest anchors conftest discovery there instead of at the caller's working directory.
        str(SUITE_DIR),
        "-c",
        str(config_file),
        "--rootdir",
        str(config_file.parent),
        # pytest's temporary directories (its workers' too) in the run's scratch directory,
        # which goes however the run ends
        "--basetemp",
        str(config_file.parent / "basetemp"),
        # conftest.py files of the suite package only, none of the caller's project
        "--confcutdir",
        str(SUITE_DIR),
        "-p",
        "no:cacheprovider",
        "-q",
        "--capture=sys",
        "--tb=short",
        "--no-header",
        "-W",
        "ignore::DeprecationWarning",
        "--profile",
        options.profile,
        "--conformance-seed",
        str(seed),
    ]
    if target.embedded:
        args += ["--base-url", target.base_url, "--embedded-url", target.base_url]
        if target.fault:
            args += ["--embedded-fault", target.fault]
    else:
        args += ["--base-url", target.base_url]
    if options.quick:
        args.append("--quick")
    if options.max_examples is not None:
        args += ["--max-examples", str(options.max_examples)]
    for prefix in options.only:
        args += ["--only", prefix]
    for prefix in options.skip:
        args += ["--skip", prefix]
    # Only the plugins the suite needs (``_only_named_plugins``): each test process then
    # neither loads the others nor rewrites the asserts of every module of their packages.
    for plugin in SUITE_PLUGINS:
        args += ["-p", plugin]
    if options.workers > 1:
        args += ["-p", XDIST_PLUGIN, "-n", str(options.workers)]
    if options.fail_fast:
        args.append("--maxfail=1")
    if options.webhook_url is not None:
        args += ["--webhook-url", options.webhook_url]
    if options.webhook_bind is not None:
        args += ["--webhook-bind", options.webhook_bind]
    if deadline is not None and options.max_duration_s is not None:
        args += ["--conformance-deadline", repr(deadline)]
        args += ["--conformance-budget", f"{options.max_duration_s:g}"]
    if record_dir is not None:
        args += ["--record-dir", str(record_dir)]
    args += options.tls_settings.pytest_args()  # paths; the gateway headers go by the environment
    if options.rate_limit is not None:
        # one send-time file in the run's scratch directory, shared by every test process
        args += ["--rate-limit", repr(options.rate_limit)]
        args += ["--conformance-rate-file", str(config_file.parent / "rate-limit")]
    if options.shard is not None:
        args += ["--conformance-shard", str(options.shard)]
        args += ["--conformance-shard-plan", str(config_file.parent / SHARD_PLAN_FILE)]
    return args


@contextlib.contextmanager
def _credentials_env(options: RunOptions) -> Iterator[None]:
    """Hand the credential to pytest (and its xdist workers) without putting it in argv."""
    with environ({API_KEY_ENV: options.api_key, API_SECRET_ENV: options.api_secret}):
        yield


@contextlib.contextmanager
def _only_named_plugins() -> Iterator[None]:
    """pytest (and its xdist workers, started now) loads only the plugins ``-p`` names.

    Every installed plugin package (pytest11 entry point) is otherwise loaded, and all of its
    modules get their asserts rewritten as they are imported: schemathesis, hypothesis and this
    package, several hundred modules, in every test process (without a bytecode cache, as under
    PYTHONDONTWRITEBYTECODE, about half of each process's start-up).
    """
    with environ({AUTOLOAD_ENV: "1"}):
        yield


@contextlib.contextmanager
def _workers_tmpdir(scratch: Path) -> Iterator[None]:
    """The temporary files of the xdist workers (processes started now) go to the run's
    scratch directory, so an interrupted run leaves none behind."""
    with environ({"TMPDIR": str(scratch)}):
        yield


def _run_pytest(
    options: RunOptions,
    target: Target,
    seed: int,
    collector: ResultCollector,
    deadline: float | None = None,
    record_dir: Path | None = None,
) -> str | None:
    """Run pytest; return why the run did not finish (``None``: it did)."""
    output = io.StringIO()
    stop = StopSignals(options.max_duration_s)
    collector.stop = stop
    hard_stop_at = None
    if deadline is not None and options.max_duration_s is not None:
        hard_stop_at = deadline + min(HARD_STOP_GRACE_S, max(1.0, options.max_duration_s / 10))
    code: int = pytest.ExitCode.INTERRUPTED
    try:
        with tempfile.TemporaryDirectory(prefix="payment-conformance-") as scratch:
            config_file = Path(scratch) / "pytest.ini"
            config_file.write_text("[pytest]\n", encoding="utf-8")
            args = pytest_args(options, target, seed, config_file, deadline, record_dir)
            with (
                stop_signals(stop, hard_stop_at),
                _credentials_env(options),
                gateway.in_env(options.headers),
                proxy.in_env(options.proxy),
                _workers_tmpdir(Path(scratch)),
                _only_named_plugins(),
                contextlib.redirect_stdout(output),
                contextlib.redirect_stderr(output),
            ):
                code = pytest.main(args, plugins=[collector])
            if options.shard is not None:
                collector.shard_plan = read_shard_plan(Path(scratch) / SHARD_PLAN_FILE)
    except KeyboardInterrupt:
        # pytest turns an interruption of its session into ExitCode.INTERRUPTED; one that
        # lands just before or after the session gets here
        code = pytest.ExitCode.INTERRUPTED
    except Exception as exc:
        if stop.reason is None and not _raised_while_interrupted(exc):
            raise
        # A stop that lands inside a context manager's __enter__ leaves a traceback entry
        # without a line number, and pytest's own report of the interruption then fails on it
        # (TypeError in _pytest._code): the run was stopped all the same.
        code = pytest.ExitCode.INTERRUPTED
    plan = collector.shard_plan
    if plan is not None and not plan.tests and not collector.collection_errors:
        raise RunError(
            f"--shard {plan.shard}: this part holds no test (the selection has "
            f"{plan.plan_tests} for {plan.shard.total} shards): run fewer shards"
        )
    reason = _check_exit(int(code), collector, output.getvalue(), stop.reason)
    if reason is None and options.max_duration_s is not None:
        spent = budget_reason(options.max_duration_s)
        if stop.reason or any(c.reason_not_exercised == spent for c in collector.checks):
            reason = spent  # checks were skipped for the budget, or its hard stop fired
    if reason is None:
        reason = server_gone(collector.checks)
    return reason


def read_shard_plan(path: Path) -> ShardPlan | None:
    """The plan the test processes of a ``--shard`` run wrote (None: they collected nothing)."""
    try:
        return plan_from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise RunError(f"the shard's plan cannot be read: {exc}") from None


def server_gone(checks: Sequence[CheckResult]) -> str | None:
    """Why the run is incomplete when the server stopped answering during it (``None``: it did
    not): a run whose later checks could not reach the server has no verdict."""
    for check in checks:
        reason = check.reason_not_exercised or ""
        if SERVER_GONE in reason:
            return reason[reason.index(SERVER_GONE) :]
    return None


def _raised_while_interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while an interruption (Ctrl-C, a stop) was being handled."""
    seen: BaseException | None = exc.__context__
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__context__
    return False


class _Stop(KeyboardInterrupt):
    """Stops the run where it is, as Ctrl-C does: SIGTERM, or the budget's hard stop."""


@dataclass
class StopSignals:
    """What ``stop_signals`` saw: why the run was stopped early (``None``: it was not)."""

    budget_s: float | None = None
    reason: str | None = None
    taken: bool = False  # pytest has seen the interruption and is ending its session

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.taken:
            return  # let pytest's session end (and clean up) in peace
        if self.reason is None:
            if signum == signal.SIGTERM:
                self.reason = TERMINATED_REASON
            else:
                self.reason = budget_reason(self.budget_s or 0)
        raise _Stop


@contextlib.contextmanager
def stop_signals(stop: StopSignals, hard_stop_at: float | None = None) -> Iterator[StopSignals]:
    """The run's signal handling while the tests run: the one place it is done.

    SIGTERM stops the run as Ctrl-C (SIGINT, left to Python) does: pytest sees a
    KeyboardInterrupt and ends its session, so the results so far are kept and every ``with``
    on the way out (temporary directories, the embedded server) cleans up. At ``hard_stop_at``
    (epoch seconds) a SIGALRM does the same to a check that outlived the time budget. Signals
    are handled in the main thread only; elsewhere this does nothing (the budget still stops
    new checks and requests, see ``conformance.suite.plugin``). Previous handlers are restored.
    """
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous_term = signal.signal(signal.SIGTERM, stop.handle)
    alarm = hard_stop_at is not None and hasattr(signal, "setitimer")
    previous_alarm: Any = None
    if alarm and hard_stop_at is not None:
        previous_alarm = signal.signal(signal.SIGALRM, stop.handle)
        # repeated each second: code that swallows exceptions (a gc callback, a bare
        # ``except``) may swallow one stop, not all of them
        signal.setitimer(signal.ITIMER_REAL, max(hard_stop_at - time.time(), 0.001), 1.0)
    try:
        yield stop
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous_alarm)
        signal.signal(signal.SIGTERM, previous_term)


def _check_exit(
    code: int, collector: ResultCollector, output: str, stop_reason: str | None = None
) -> str | None:
    """Why the run did not finish (``None``: it did); ``RunError`` when it did not run."""
    if collector.collection_errors:
        raise RunError(
            "the suite could not be loaded:\n" + _tail("\n".join(collector.collection_errors))
        )
    unmarked = sorted({c.check_id for c in collector.checks if UNMARKED_MESSAGE in c.message})
    if unmarked:
        raise RunError(
            "the suite is broken: these checks name no requirement "
            f"(@pytest.mark.requirement): {', '.join(unmarked[:10])}"
        )
    if code == pytest.ExitCode.INTERRUPTED:
        return stop_reason or INTERRUPTED_REASON
    if collector.crashed:
        return "a test process crashed: " + "; ".join(collector.crashed[:5])
    if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return None
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        raise RunError("no check of the suite covers the selected requirements")
    if collector.checks:
        return (
            f"the suite stopped with an internal error (pytest exit code {code}): "
            + _tail(output)[-500:]
        )
    raise RunError(f"the suite could not run (pytest exit code {code}):\n{_tail(output)}")


def _not_reached(
    selected: Sequence[Requirement], checks: Sequence[CheckResult], reason: str
) -> CheckResult | None:
    """One not-exercised check naming the selected requirements no check reached."""
    reached = {rid for check in checks for rid in check.requirement_ids}
    missing = tuple(r.id for r in selected if r.id not in reached)
    if not missing:
        return None
    return CheckResult(
        NOT_REACHED_CHECK,
        "run",
        missing,
        Outcome.NOT_EXERCISED,
        message=f"not run: {reason}",
        reason_not_exercised=reason,
    )


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= OUTPUT_TAIL_CHARS else "..." + text[-OUTPUT_TAIL_CHARS:]


def statuses_of(value: dict[Any, Any]) -> dict[str, dict[int, int]]:
    """The counts of a test's STATUSES_PROPERTY; what is not a status and a count is left out."""
    found: dict[str, dict[int, int]] = {}
    for operation_id, statuses in value.items():
        if not isinstance(statuses, dict):
            continue
        for status, answers in statuses.items():
            code = str(status)
            valid = code.isdigit() and len(code) == 3 and isinstance(answers, int)
            if valid and not isinstance(answers, bool) and answers > 0:
                found.setdefault(str(operation_id), {})[int(code)] = answers
    return found


def phase_of(nodeid: str) -> str:
    """``conformance/suite/test_auth.py::test_x[y]`` -> ``auth``."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return module.removesuffix(".py").removeprefix("test_")


class ResultCollector:
    """A pytest plugin (controller side) gathering CheckResults and feeding the display."""

    def __init__(
        self,
        display: Display,
        started: float | None = None,
        outside: frozenset[str] = frozenset(),
    ) -> None:
        self.display = display
        # ids of the catalogue's requirements --only/--skip left out: a result naming only such
        # ids is kept but fails no phase line and sets no first-failure time
        self.outside = outside
        self.statuses_seen: dict[str, dict[int, int]] = {}  # summed over STATUSES_PROPERTY
        self.started = time.perf_counter() if started is None else started
        self.first_failure_s: float | None = None  # since ``started``
        self.checks: list[CheckResult] = []
        self.requests_sent = 0
        self.rate_limits = RateLimitCounts()  # summed over the tests' RATE_LIMITS_PROPERTY
        self.webhook_receiver: ReceiverCounts | None = None  # WEBHOOK_RECEIVER_PROPERTY
        self.collection_errors: list[str] = []
        self.crashed: list[str] = []
        self.stop: StopSignals | None = None
        self.shard_plan: ShardPlan | None = None  # run --shard: what the test processes ran
        self._announced = False

    def _announce(self, nodeids: Sequence[str]) -> None:
        if self._announced:
            return
        self._announced = True
        phases: dict[str, int] = {}
        for nodeid in nodeids:
            phase = phase_of(nodeid)
            phases[phase] = phases.get(phase, 0) + 1
        self.display.collected(phases)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not hasattr(session.config, "workerinput") and session.items:
            self._announce([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self._announce(ids)

    def pytest_keyboard_interrupt(self) -> None:
        if self.stop is not None:
            self.stop.taken = True

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {report.longreprtext}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when not in {"setup", "call", "teardown"} and report.failed:
            # pytest-xdist reports a worker that died mid-test this way; no teardown follows
            self.crashed.append(f"{report.nodeid}: {report.longreprtext.strip()[:300]}")
            return
        if report.when != "teardown":
            return
        family = phase_of(report.nodeid)
        requests = 0
        failed = False
        for name, value in report.user_properties:
            if name == CHECK_PROPERTY and isinstance(value, dict):
                check = check_from_dict(value)
                self.checks.append(check)
                if check.requirement_ids and self.outside.issuperset(check.requirement_ids):
                    continue
                failed = failed or check.outcome is Outcome.FAILED
                if check.outcome is Outcome.FAILED and self.first_failure_s is None:
                    self.first_failure_s = round(time.perf_counter() - self.started, 3)
            elif name == REQUESTS_PROPERTY and isinstance(value, int):
                requests = value
            elif name == FAMILY_PROPERTY and isinstance(value, str):
                family = value
            elif name == RATE_LIMITS_PROPERTY and isinstance(value, dict):
                self.rate_limits += RateLimitCounts.from_dict(value)
            elif name == STATUSES_PROPERTY and isinstance(value, dict):
                merge_statuses(self.statuses_seen, statuses_of(value))
            elif name == WEBHOOK_RECEIVER_PROPERTY and isinstance(value, dict):
                self.webhook_receiver = ReceiverCounts.from_dict(value)
        self.requests_sent += requests
        self.display.test_done(phase_of(report.nodeid), family, failed, requests)
