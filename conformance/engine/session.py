"""The run's pytest session: its arguments, its plugins, and why it ended early.

pytest runs on the ``conformance.suite`` package in this process with its own output captured
and the caller's pytest configuration shut out (``pytest_args``, ``_only_named_plugins``).
A session that cannot finish (its time budget ran out, a test process crashed, the server
stopped answering, Ctrl-C or SIGTERM during the tests) says why (``_run_pytest``);
``stop_signals`` is the one place where the run handles signals.
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest

from conformance.core.environment import environ
from conformance.core.results import Target, budget_reason
from conformance.core.shards import ShardPlan, plan_from_dict
from conformance.engine.collector import ResultCollector, rate_limited, server_gone
from conformance.engine.options import RunError, RunOptions
from conformance.engine.target import _credentials_env
from conformance.suite.plugin.collection import SUITE_DIR, UNMARKED_MESSAGE
from conformance.suite.wire import gateway, proxy

OUTPUT_TAIL_CHARS = 3000
# Past the budget no new check starts and no request is sent; a check still running this long
# after it (waiting for a slow response) is stopped where it is.
HARD_STOP_GRACE_S = 10.0
INTERRUPTED_REASON = "the run was interrupted (Ctrl-C)"
TERMINATED_REASON = "the run was stopped by SIGTERM"
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
        # its end-of-session gc.collect() passes cost 0.8 s a run inside a large process (the
        # project's tests run the suite hundreds of times), and its warnings are not read
        "-p",
        "no:unraisableexception",
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
    for family in options.families:
        args += ["--conformance-family", family]
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
    if code == pytest.ExitCode.INTERRUPTED and collector.stopped_at_maxfail and not stop.reason:
        code = pytest.ExitCode.TESTS_FAILED  # --fail-fast under pytest-xdist: a stop, as one
    if code == pytest.ExitCode.INTERNAL_ERROR and (stop.reason or stop.interrupted):
        # The interruption landed inside pytest-xdist's own loop (in a lock's bookkeeping, say)
        # and pytest reported it as its internal error: the run was stopped all the same.
        code = pytest.ExitCode.INTERRUPTED
    reason = _check_exit(int(code), collector, output.getvalue(), stop.reason)
    if reason is None and options.max_duration_s is not None:
        spent = budget_reason(options.max_duration_s)
        if stop.reason or any(c.reason_not_exercised == spent for c in collector.checks):
            reason = spent  # checks were skipped for the budget, or its hard stop fired
    if reason is None:
        reason = server_gone(collector.checks)
    if reason is None:
        reason = rate_limited(collector.rate_limits)
    return reason


def read_shard_plan(path: Path) -> ShardPlan | None:
    """The plan the test processes of a ``--shard`` run wrote (None: they collected nothing)."""
    try:
        return plan_from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise RunError(f"the shard's plan cannot be read: {exc}") from None


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
    interrupted: bool = False  # Ctrl-C (SIGINT) arrived

    def interrupt(self, signum: int, frame: FrameType | None) -> None:
        """Ctrl-C: Python's own KeyboardInterrupt, remembered."""
        self.interrupted = True
        raise KeyboardInterrupt

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
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, stop.interrupt)
    alarm = hard_stop_at is not None and hasattr(signal, "setitimer")
    previous_alarm = None
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
        if previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous_int)


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


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= OUTPUT_TAIL_CHARS else "..." + text[-OUTPUT_TAIL_CHARS:]
