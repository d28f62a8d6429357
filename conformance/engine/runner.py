"""``run_suite``: run the conformance suite in-process and fold its checks into a ``RunResult``.

The engine starts the embedded reference server itself when no base URL is given (so that
preflight, every pytest-xdist worker and the report see one server), runs preflight, runs
pytest on the ``conformance.suite`` package in this process with its own output captured
and the caller's pytest configuration shut out, collects
the CheckResults the plugin attaches to each test report, and folds them per requirement.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conformance import __version__
from conformance.core.catalogue import Requirement
from conformance.core.profile import Profile, ProfileError, load_profile
from conformance.core.results import CheckResult, Outcome, RunResult, Target, fold
from conformance.engine.preflight import PreflightReport, preflight
from conformance.engine.progress import ConsoleDisplay, Display, NullDisplay, RunHeader
from conformance.suite.plugin import API_KEY_ENV, API_SECRET_ENV, SUITE_DIR, UNMARKED_MESSAGE
from conformance.suite.recording import (
    CHECK_PROPERTY,
    FAMILY_PROPERTY,
    REQUESTS_PROPERTY,
    check_from_dict,
)

OUTPUT_TAIL_CHARS = 3000


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


@dataclass(frozen=True)
class Run:
    """A finished run: its result, the reports written and the requirements it covered."""

    result: RunResult
    report_paths: tuple[Path, ...]
    selected: tuple[Requirement, ...]
    preflight: PreflightReport | None
    report_error: str | None = None  # the reports could not be written (the run itself did)


def run_suite(options: RunOptions) -> RunResult:
    """Run the suite as ``options`` say; raises ``RunError`` when it cannot run."""
    display: Display = ConsoleDisplay(_console()) if options.progress else NullDisplay()
    return execute(options, display).result


def _console() -> Console:
    return Console(file=sys.stdout)


def execute(options: RunOptions, display: Display) -> Run:
    """``run_suite`` with a caller-provided display; returns the reports written too."""
    _check_options(options)
    profile = _profile(options)
    catalogue = _catalogue()
    selected = _select(catalogue, options.only, options.skip)
    seed = options.seed if options.seed is not None else random.randrange(2**31)
    contract_sha = _contract_sha256()
    display.header(RunHeader(__version__, contract_sha, profile.name, seed))
    started_at = datetime.now(UTC)
    clock = time.perf_counter()
    with _target(options, profile) as target:
        display.target(target)
        checked: PreflightReport | None = None
        if options.preflight:
            checked = preflight(target.base_url, profile)
            display.preflight(checked)
            if not checked.ok:
                raise RunError(checked.message)
        collector = ResultCollector(display)
        try:
            _run_pytest(options, target, seed, collector)
        finally:
            display.close()
    duration = time.perf_counter() - clock
    requirements = fold(list(selected), collector.checks)
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
    )
    paths: tuple[Path, ...] = ()
    report_error = None
    if options.report_dir is not None:
        try:
            paths = tuple(write_run_reports(result, options.report_dir, catalogue, profile))
        except RunError as exc:
            report_error = str(exc)
    return Run(result, paths, tuple(selected), checked, report_error)


def write_run_reports(
    result: RunResult, directory: Path, catalogue: Any, profile: Profile
) -> list[Path]:
    from conformance.reporting import ReportError, write_reports

    secrets = [c.api_secret for c in profile.credentials]
    try:
        return write_reports(result, directory, catalogue, secrets=secrets)
    except ReportError as exc:
        raise RunError(str(exc)) from None


# -- preparation -----------------------------------------------------------------------------
def _check_options(options: RunOptions) -> None:
    if options.embedded_fault is not None and options.base_url is not None:
        raise RunError(
            "--fault switches on a fault of the embedded reference server; "
            "it cannot be combined with --base-url"
        )
    if options.base_url is not None and not options.base_url.startswith(("http://", "https://")):
        raise RunError(f"--base-url must start with http:// or https://, not {options.base_url!r}")
    if options.workers < 1:
        raise RunError(f"--workers must be at least 1, not {options.workers}")
    if options.max_examples is not None and options.max_examples < 1:
        raise RunError(f"--max-examples must be at least 1, not {options.max_examples}")
    if options.seed is not None and options.seed < 0:
        raise RunError(f"--seed must not be negative, not {options.seed}")
    _check_webhook_options(options)
    if (options.api_key is None) != (options.api_secret is None):
        raise RunError(
            f"give both --api-key and --api-secret (or {API_KEY_ENV} and {API_SECRET_ENV})"
        )


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
    if options.api_key is not None and options.api_secret is not None:
        data = {**profile.data, "credentials": [dict(c) for c in profile.data["credentials"]]}
        data["credentials"][0].update(api_key=options.api_key, api_secret=options.api_secret)
        profile = replace(profile, data=data)
    return profile


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
        server = ReferenceServer(profile=profile, faults=faults).start()
    except (ValueError, ServerStartError) as exc:
        raise RunError(f"the embedded reference server cannot start: {exc}") from None
    try:
        yield Target(server.base_url, embedded=True, fault=options.embedded_fault)
    finally:
        server.stop()


def _recorded_options(options: RunOptions, profile: Profile) -> dict[str, str]:
    recorded = {
        "profile": options.profile,
        "quick": str(options.quick).lower(),
        "workers": str(options.workers),
    }
    if options.base_url:
        recorded["base_url"] = options.base_url
    if options.embedded_fault:
        recorded["fault"] = options.embedded_fault
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
    return recorded


# -- running pytest --------------------------------------------------------------------------
def pytest_args(options: RunOptions, target: Target, seed: int, config_file: Path) -> list[str]:
    args = [
        # The package's directory rather than ``--pyargs conformance.suite``: with a path
        # pytest anchors conftest discovery there instead of at the caller's working directory.
        str(SUITE_DIR),
        "-c",
        str(config_file),
        "--rootdir",
        str(config_file.parent),
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
    if options.workers > 1:
        args += ["-n", str(options.workers)]
    if options.webhook_url is not None:
        args += ["--webhook-url", options.webhook_url]
    if options.webhook_bind is not None:
        args += ["--webhook-bind", options.webhook_bind]
    return args


@contextlib.contextmanager
def _credentials_env(options: RunOptions) -> Iterator[None]:
    """Hand the credential to pytest (and its xdist workers) without putting it in argv."""
    saved = {name: os.environ.get(name) for name in (API_KEY_ENV, API_SECRET_ENV)}
    for name in saved:
        os.environ.pop(name, None)
    if options.api_key is not None and options.api_secret is not None:
        os.environ[API_KEY_ENV] = options.api_key
        os.environ[API_SECRET_ENV] = options.api_secret
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run_pytest(options: RunOptions, target: Target, seed: int, collector: ResultCollector) -> None:
    output = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="payment-conformance-") as scratch:
        config_file = Path(scratch) / "pytest.ini"
        config_file.write_text("[pytest]\n", encoding="utf-8")
        args = pytest_args(options, target, seed, config_file)
        with (
            _credentials_env(options),
            contextlib.redirect_stdout(output),
            contextlib.redirect_stderr(output),
        ):
            code = pytest.main(args, plugins=[collector])
    _check_exit(int(code), collector, output.getvalue())


def _check_exit(code: int, collector: ResultCollector, output: str) -> None:
    if collector.collection_errors:
        raise RunError(
            "the suite could not be loaded:\n" + _tail("\n".join(collector.collection_errors))
        )
    if collector.crashed:
        raise RunError(
            "a test process crashed, so the results are incomplete: "
            + "; ".join(collector.crashed[:5])
        )
    unmarked = sorted({c.check_id for c in collector.checks if UNMARKED_MESSAGE in c.message})
    if unmarked:
        raise RunError(
            "the suite is broken: these checks name no requirement "
            f"(@pytest.mark.requirement): {', '.join(unmarked[:10])}"
        )
    if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        raise RunError("no check of the suite covers the selected requirements")
    if code == pytest.ExitCode.INTERRUPTED:
        raise RunError("the run was interrupted")
    raise RunError(f"the suite could not run (pytest exit code {code}):\n{_tail(output)}")


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= OUTPUT_TAIL_CHARS else "..." + text[-OUTPUT_TAIL_CHARS:]


def phase_of(nodeid: str) -> str:
    """``conformance/suite/test_auth.py::test_x[y]`` -> ``auth``."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return module.removesuffix(".py").removeprefix("test_")


class ResultCollector:
    """A pytest plugin (controller side) gathering CheckResults and feeding the display."""

    def __init__(self, display: Display) -> None:
        self.display = display
        self.checks: list[CheckResult] = []
        self.requests_sent = 0
        self.collection_errors: list[str] = []
        self.crashed: list[str] = []
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
                failed = failed or check.outcome is Outcome.FAILED
            elif name == REQUESTS_PROPERTY and isinstance(value, int):
                requests = value
            elif name == FAMILY_PROPERTY and isinstance(value, str):
                family = value
        self.requests_sent += requests
        self.display.test_done(phase_of(report.nodeid), family, failed, requests)
