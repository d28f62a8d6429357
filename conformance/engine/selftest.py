"""``selftest``: the kill matrix. Does the suite catch every bug of the fault catalogue?

The suite runs against the embedded reference server once unfaulted and once per catalogue
fault (``conformance.reference.faults``), each run in its own ``payment-conformance run``
subprocess with one test worker, several runs at a time. A subprocess per run keeps runs apart
(no state shared between two suites in one interpreter) and can always be stopped: a run that
crashes is reported as an error, a run that outlives its timeout is killed and reported as
timed out, and an interrupt stops every child before returning.

A fault is *caught* when its run fails at least one requirement it names in ``breaks``. It is
caught *through other ids* when its run fails only requirements it does not name (the suite
notices something, but not the bug the catalogue describes), and it *survives* when its run
passes. With ``--fail-fast`` each faulted run stops at its first failure, before it may reach
the ids the fault names: any failure then counts as caught, and the row says so. The selftest
passes when every fault is caught and the unfaulted run is conformant.

Every run tests the reference server under one profile (``--profile``, the default's by
default). A fault whose ``needs`` that profile does not meet (``fault_needs``) is not run: its
row says *not applicable* and what it needs, and it neither fails nor passes the matrix.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from conformance.core.profile import (
    API_KEY_ENV,
    API_SECRET_ENV,
    Profile,
    ProfileError,
    load_profile,
)
from conformance.reference.config import MAX_LATENCY_MS
from conformance.reference.fault_needs import unmet
from conformance.reference.faults import CATEGORIES, Fault, catalogue

# 4: profile, not applicable rows; 3: server_rate_limit; 2: fail_fast, latency_ms
REPORT_SCHEMA = "payment-conformance-selftest/4"
# A quick run takes ~25 s on two idle cores with one worker, a default run a few minutes; on a
# loaded machine several times that. The timeout is there for runs that hang, not slow ones.
DEFAULT_TIMEOUT_S = {True: 600.0, False: 1800.0}
POLL_INTERVAL_S = 0.1
KILL_GRACE_S = 3.0
LOG_TAIL_CHARS = 600
UNFAULTED_NAME = "(unfaulted)"


class SelftestError(Exception):
    """The selftest cannot run (unknown fault or category, bad options): exit 2."""


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class SelftestOptions:
    quick: bool = False
    categories: tuple[str, ...] = ()  # with ``faults``: the faults of these categories ...
    faults: tuple[str, ...] = ()  # ... and these; neither: the whole catalogue
    jobs: int = field(default_factory=default_jobs)
    seed: int | None = None  # None: one random seed, shared by every run
    only: tuple[str, ...] = ()  # passed to every run: faster, but see ``narrowed``
    timeout_s: float | None = None  # per run; None: DEFAULT_TIMEOUT_S
    fail_fast: bool = False  # each run stops at its first failure: the matrix in minutes
    latency_ms: int = 0  # the embedded server's latency in each run (a remote server's)
    server_rate_limit: float | None = None  # and its rate limit (a rate-limited sandbox's)
    profile: str = "default"  # the profile of every run, and of its embedded server

    @property
    def run_timeout_s(self) -> float:
        return self.timeout_s if self.timeout_s is not None else DEFAULT_TIMEOUT_S[self.quick]


@dataclass(frozen=True)
class RunSpec:
    """One suite run of the selftest: unfaulted (``fault`` None) or with one fault."""

    fault: Fault | None
    quick: bool
    seed: int
    only: tuple[str, ...] = ()
    fail_fast: bool = False
    latency_ms: int = 0
    server_rate_limit: float | None = None
    profile: str = "default"
    unmet: tuple[str, ...] = ()  # what the fault needs that the profile does not declare

    @property
    def name(self) -> str:
        return self.fault.name if self.fault is not None else UNFAULTED_NAME

    @property
    def category(self) -> str:
        return self.fault.category if self.fault is not None else ""


@dataclass(frozen=True)
class RunOutcome:
    """What one suite run left behind, before it is judged."""

    exit_code: int | None  # None: killed at its timeout
    wall_s: float
    failed_ids: tuple[str, ...] = ()
    suite_s: float | None = None  # the run's own duration (results.json), without startup
    requests: int | None = None
    message: str = ""  # why the run could not give a verdict
    timed_out: bool = False
    has_results: bool = False
    outcomes: dict[str, str] = field(default_factory=dict)  # requirement id -> its outcome
    log_tail: str = ""  # the end of its output, when it gave no verdict
    first_failure_s: float | None = None  # results.json: its first failure, from the run's start


class Status(StrEnum):
    CAUGHT = "caught"
    OTHER_IDS = "caught-through-other-ids"  # failed, but none of the ids it names
    SURVIVED = "survived"
    PASSED = "passed"  # the unfaulted run: conformant
    FAILED = "failed"  # the unfaulted run: not conformant
    ERROR = "error"  # no verdict: the run could not run or crashed
    TIMEOUT = "timeout"  # no verdict: killed after the per-run timeout
    NOT_APPLICABLE = "not-applicable"  # not run: the profile does not meet the fault's needs


GOOD = frozenset({Status.CAUGHT, Status.PASSED, Status.NOT_APPLICABLE})


@dataclass(frozen=True)
class Row:
    """One line of the kill matrix."""

    spec: RunSpec
    status: Status
    outcome: RunOutcome
    named: tuple[str, ...] = ()  # failed ids the fault names in ``breaks``
    other: tuple[str, ...] = ()  # failed ids it does not name
    note: str = ""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def category(self) -> str:
        return self.spec.category

    @property
    def ok(self) -> bool:
        return self.status in GOOD

    @property
    def overhead_s(self) -> float | None:
        """Process start, imports and report writing: the wall time outside the suite's run."""
        if self.outcome.suite_s is None:
            return None
        return max(0.0, self.outcome.wall_s - self.outcome.suite_s)

    def to_dict(self) -> dict[str, object]:
        fault = self.spec.fault
        return {
            "fault": fault.name if fault is not None else None,
            "category": fault.category if fault is not None else None,
            "breaks": list(fault.breaks) if fault is not None else [],
            "needs": list(fault.needs) if fault is not None else [],
            "status": self.status.value,
            "ok": self.ok,
            "failed_ids": list(self.outcome.failed_ids),
            "named_ids": list(self.named),
            "other_ids": list(self.other),
            "wall_s": round(self.outcome.wall_s, 3),
            "suite_s": None if self.outcome.suite_s is None else round(self.outcome.suite_s, 3),
            "requests": self.outcome.requests,
            "first_failure_s": self.outcome.first_failure_s,
            "exit_code": self.outcome.exit_code,
            "note": self.note,
            "message": self.outcome.message,
            "log_tail": self.outcome.log_tail,
        }


def not_applicable(spec: RunSpec) -> Row:
    """The row of a fault the profile gives nothing to break: not run."""
    note = "not applicable: " + "; ".join(spec.unmet)
    return Row(spec, Status.NOT_APPLICABLE, RunOutcome(None, 0.0), note=note)


def judge(spec: RunSpec, outcome: RunOutcome) -> Row:
    """The row of one finished run."""
    if outcome.timed_out:
        return Row(spec, Status.TIMEOUT, outcome, note=outcome.message)
    if not outcome.has_results or outcome.exit_code not in (0, 1):
        return Row(spec, Status.ERROR, outcome, note=outcome.message)
    failed = outcome.failed_ids
    if spec.fault is None:
        return Row(spec, Status.FAILED if failed else Status.PASSED, outcome, other=failed)
    breaks = set(spec.fault.breaks)
    named = tuple(i for i in failed if i in breaks)
    other = tuple(i for i in failed if i not in breaks)
    if named:
        return Row(spec, Status.CAUGHT, outcome, named, other)
    if other and spec.fail_fast:
        # the run stopped at its first failure, which may be another requirement the bug
        # breaks before the suite reached the ones it names: caught all the same
        note = "stopped at its first failure (--fail-fast) before " + ", ".join(spec.fault.breaks)
        return Row(spec, Status.CAUGHT, outcome, (), other, note)
    if spec.only and not _selected(spec.fault.breaks, spec.only):
        note = f"{', '.join(spec.fault.breaks)} not selected by --only"
    else:
        note = ", ".join(
            f"{i} {outcome.outcomes.get(i, 'not run').replace('_', ' ')}" for i in spec.fault.breaks
        )
    return Row(spec, Status.OTHER_IDS if other else Status.SURVIVED, outcome, (), other, note)


def _selected(ids: Sequence[str], only: Sequence[str]) -> bool:
    from conformance.core.catalogue import load_catalogue

    selected = {r.id for r in load_catalogue().select(tuple(only), ())}
    return any(i in selected for i in ids)


@dataclass(frozen=True)
class CategorySummary:
    category: str
    caught: int
    total: int  # applicable faults
    run_s: float  # summed wall time of its runs (they overlap when jobs > 1)
    not_applicable: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "category": self.category,
            "caught": self.caught,
            "total": self.total,
            "not_applicable": self.not_applicable,
            "run_s": round(self.run_s, 3),
        }


@dataclass
class Matrix:
    """Every row of a selftest, as far as it got."""

    options: SelftestOptions
    seed: int
    specs: tuple[RunSpec, ...]
    rows: list[Row] = field(default_factory=list)
    wall_s: float = 0.0
    interrupted: bool = False

    @property
    def unfaulted(self) -> Row | None:
        return next((r for r in self.rows if r.spec.fault is None), None)

    @property
    def fault_rows(self) -> list[Row]:
        """Fault rows grouped by category (catalogue order of categories), then by name."""
        order = {c: i for i, c in enumerate(CATEGORIES)}
        rows = [r for r in self.rows if r.spec.fault is not None]
        return sorted(rows, key=lambda r: (order.get(r.category, len(order)), r.name))

    @property
    def problems(self) -> list[Row]:
        """Rows that make the selftest fail, unfaulted first."""
        bad = [r for r in self.fault_rows if not r.ok]
        unfaulted = self.unfaulted
        return ([unfaulted] if unfaulted is not None and not unfaulted.ok else []) + bad

    def categories(self) -> list[CategorySummary]:
        summaries = []
        for category in CATEGORIES:
            rows = [r for r in self.fault_rows if r.category == category]
            if rows:
                caught = sum(r.status is Status.CAUGHT for r in rows)
                skipped = sum(r.status is Status.NOT_APPLICABLE for r in rows)
                summaries.append(
                    CategorySummary(
                        category,
                        caught,
                        len(rows) - skipped,
                        sum(r.outcome.wall_s for r in rows),
                        skipped,
                    )
                )
        return summaries

    @property
    def median_first_failure_s(self) -> float | None:
        """Median over the caught faults of the time from each run's start to its first failure."""
        times = [
            r.outcome.first_failure_s
            for r in self.fault_rows
            if r.status is Status.CAUGHT and r.outcome.first_failure_s is not None
        ]
        return round(statistics.median(times), 3) if times else None

    @property
    def complete(self) -> bool:
        return not self.interrupted and len(self.rows) == len(self.specs)

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 0 if self.complete and not self.problems else 1

    def to_dict(self) -> dict[str, object]:
        unfaulted = self.unfaulted
        return {
            "schema": REPORT_SCHEMA,
            "profile": self.options.profile,
            "quick": self.options.quick,
            "seed": self.seed,
            "jobs": self.options.jobs,
            "only": list(self.options.only),
            "timeout_s": self.options.run_timeout_s,
            "fail_fast": self.options.fail_fast,
            "latency_ms": self.options.latency_ms,
            "server_rate_limit": self.options.server_rate_limit,
            "median_first_failure_s": self.median_first_failure_s,
            "wall_s": round(self.wall_s, 3),
            "runs_planned": len(self.specs),
            "runs_finished": len(self.rows),
            "interrupted": self.interrupted,
            "exit_code": self.exit_code,
            "unfaulted": None if unfaulted is None else unfaulted.to_dict(),
            "categories": [c.to_dict() for c in self.categories()],
            "faults": [r.to_dict() for r in self.fault_rows],
        }

    def write_json(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")


# -- planning --------------------------------------------------------------------------------
def select_faults(
    categories: Sequence[str], names: Sequence[str], faults: Sequence[Fault] | None = None
) -> list[Fault]:
    """The faults of ``categories`` and those named, in category then catalogue order."""
    faults = list(catalogue() if faults is None else faults)
    unknown_categories = [c for c in categories if c not in CATEGORIES]
    if unknown_categories:
        raise SelftestError(
            f"unknown category {', '.join(map(repr, unknown_categories))}: "
            f"choose from {', '.join(CATEGORIES)}"
        )
    known = {f.name for f in faults}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SelftestError(
            f"unknown fault {', '.join(map(repr, unknown))}"
            f"{_did_you_mean(unknown[0], known)} (list: payment-conformance faults)"
        )
    if categories or names:
        faults = [f for f in faults if f.category in categories or f.name in names]
    order = {c: i for i, c in enumerate(CATEGORIES)}
    return sorted(faults, key=lambda f: order[f.category])  # stable: catalogue order within


def _did_you_mean(name: str, known: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=3)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def plan(
    options: SelftestOptions, faults: Sequence[Fault] | None = None
) -> tuple[int, list[RunSpec]]:
    """The seed and the runs: the unfaulted one first, then one per selected fault."""
    if options.jobs < 1:
        raise SelftestError(f"--jobs must be at least 1, not {options.jobs}")
    if options.timeout_s is not None and options.timeout_s <= 0:
        raise SelftestError(f"--timeout must be positive, not {options.timeout_s:g}")
    if options.seed is not None and options.seed < 0:
        raise SelftestError(f"--seed must not be negative, not {options.seed}")
    if options.only:
        from conformance.core.catalogue import load_catalogue

        try:
            load_catalogue().select(options.only, ())
        except ValueError as exc:
            raise SelftestError(f"--only: {exc}") from None
    selected = select_faults(options.categories, options.faults, faults)
    if not selected:
        raise SelftestError("no fault selected")
    seed = options.seed if options.seed is not None else int.from_bytes(os.urandom(4)) >> 1
    if not 0 <= options.latency_ms <= MAX_LATENCY_MS:
        raise SelftestError(f"--latency-ms must be 0 to {MAX_LATENCY_MS}, not {options.latency_ms}")
    profile = _profile(options.profile)
    return seed, [
        RunSpec(
            fault,
            options.quick,
            seed,
            options.only,
            options.fail_fast,
            options.latency_ms,
            options.server_rate_limit,
            options.profile,
            () if fault is None else tuple(n.meaning for n in unmet(fault.needs, profile)),
        )
        for fault in (None, *selected)
    ]


def _profile(name: str) -> Profile:
    try:
        return load_profile(name)
    except ProfileError as exc:
        raise SelftestError(f"--profile: {exc}") from None


# -- running ---------------------------------------------------------------------------------
Command = Callable[[RunSpec, Path], list[str]]


def suite_command(spec: RunSpec, report_dir: Path) -> list[str]:
    """``payment-conformance run`` for one run, with one worker and its reports in a scratch dir."""
    args = [sys.executable, "-m", "conformance", "run", "--workers", "1", "--no-progress"]
    args += ["--seed", str(spec.seed), "--report-dir", str(report_dir)]
    if spec.profile != "default":
        args += ["--profile", spec.profile]
    if spec.quick:
        args.append("--quick")
    if spec.fault is not None:
        args += ["--fault", spec.fault.name]
    for selector in spec.only:
        args += ["--only", selector]
    if spec.fail_fast and spec.fault is not None:
        args.append("--fail-fast")  # the unfaulted run runs whole: it must pass everything
    if spec.latency_ms:
        args += ["--latency-ms", str(spec.latency_ms)]
    if spec.server_rate_limit is not None:
        args += ["--server-rate-limit", f"{spec.server_rate_limit:g}"]
    return args


def read_outcome(
    report_dir: Path, log: Path, exit_code: int | None, wall_s: float, timed_out: bool = False
) -> RunOutcome:
    """The outcome of a finished (or killed) run from its results.json and its output."""
    if timed_out:
        _, tail = _why(None, log)
        last = tail.splitlines()[-1] if tail else "no output"
        message = f"killed after {wall_s:.0f} s; its last line: {last}"
        return RunOutcome(None, wall_s, message=message, timed_out=True, log_tail=tail)
    data = _results(report_dir / "results.json")
    if data is None or exit_code not in (0, 1):
        message, tail = _why(exit_code, log)
        return RunOutcome(exit_code, wall_s, message=message, log_tail=tail)
    requirements = data.get("requirements")
    outcomes = {
        str(r.get("id")): str(r.get("outcome"))
        for r in (requirements if isinstance(requirements, list) else ())
        if isinstance(r, dict)
    }
    failed = tuple(i for i, o in outcomes.items() if o == "failed")
    return RunOutcome(
        exit_code,
        wall_s,
        failed_ids=failed,
        suite_s=_number(data.get("duration_s")),
        requests=_integer(data.get("requests_sent")),
        has_results=True,
        first_failure_s=_number(data.get("first_failure_s")),
        outcomes=outcomes,
    )


def _results(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _why(exit_code: int | None, log: Path) -> tuple[str, str]:
    """Why a run left no verdict, in one line, and the tail of its output."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    tail = "\n".join(lines)[-LOG_TAIL_CHARS:]
    errors = [line for line in lines if line.startswith("error:")]
    if exit_code == 2 and errors:
        return "could not run: " + " ".join(errors)[:LOG_TAIL_CHARS], tail
    if exit_code is not None and exit_code < 0:
        what = f"killed by signal {-exit_code}"
    else:
        what = f"exited {exit_code} without results"
    # the last line of a traceback names the exception
    return (f"{what}: {lines[-1]}" if lines else what), tail


class Observer(Protocol):
    def begin(self, matrix: Matrix) -> None: ...
    def started(self, spec: RunSpec) -> None: ...
    def finished(self, row: Row, matrix: Matrix) -> None: ...
    def end(self, matrix: Matrix) -> None: ...


class NullObserver:
    def begin(self, matrix: Matrix) -> None:
        pass

    def started(self, spec: RunSpec) -> None:
        pass

    def finished(self, row: Row, matrix: Matrix) -> None:
        pass

    def end(self, matrix: Matrix) -> None:
        pass


@dataclass
class _Child:
    spec: RunSpec
    process: subprocess.Popen[bytes]
    report_dir: Path
    log: Path
    started: float

    def elapsed(self) -> float:
        return time.monotonic() - self.started


def run_selftest(
    options: SelftestOptions,
    observer: Observer | None = None,
    *,
    command: Command | None = None,
    faults: Sequence[Fault] | None = None,
) -> Matrix:
    """Run every planned run, ``options.jobs`` at a time; raises ``SelftestError`` up front.

    An interrupt (Ctrl-C) stops every child and returns the matrix so far, ``interrupted``.
    """
    observer = observer if observer is not None else NullObserver()
    seed, specs = plan(options, faults)
    matrix = Matrix(options, seed, tuple(specs))
    observer.begin(matrix)
    clock = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="payment-conformance-selftest-") as scratch:
            _schedule(matrix, observer, command or suite_command, Path(scratch))
    except KeyboardInterrupt:
        matrix.interrupted = True
    matrix.wall_s = time.monotonic() - clock
    observer.end(matrix)
    return matrix


def _schedule(matrix: Matrix, observer: Observer, command: Command, scratch: Path) -> None:
    pending = deque(s for s in matrix.specs if not s.unmet)
    for spec in matrix.specs:
        if spec.unmet:
            row = not_applicable(spec)
            matrix.rows.append(row)
            observer.finished(row, matrix)
    running: list[_Child] = []
    timeout = matrix.options.run_timeout_s
    with _stopping(running):
        while pending or running:
            while pending and len(running) < matrix.options.jobs:
                spec = pending.popleft()
                number = len(matrix.rows) + len(running) + 1
                _start(spec, command, scratch / f"{number:04d}", running)
                observer.started(spec)
            for child in list(running):
                code = child.process.poll()
                timed_out = code is None and child.elapsed() > timeout
                if code is None and not timed_out:
                    continue
                if timed_out:
                    _stop(child.process)
                running.remove(child)
                outcome = read_outcome(
                    child.report_dir, child.log, code, child.elapsed(), timed_out=timed_out
                )
                row = judge(child.spec, outcome)
                matrix.rows.append(row)
                observer.finished(row, matrix)
            time.sleep(POLL_INTERVAL_S)


def _start(spec: RunSpec, command: Command, directory: Path, running: list[_Child]) -> None:
    directory.mkdir(parents=True)
    report_dir = directory / "reports"
    log = directory / "output.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            command(spec, report_dir),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            # its own process group: Ctrl-C reaches only us, and we stop the whole group
            start_new_session=True,
            env=_child_environment(),
        )
    running.append(_Child(spec, process, report_dir, log, time.monotonic()))


def _child_environment() -> dict[str, str]:
    """Ours, without credentials: every run tests the reference server with the profile's."""
    env = {k: v for k, v in os.environ.items() if k not in (API_KEY_ENV, API_SECRET_ENV)}
    return {**env, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}


@contextlib.contextmanager
def _stopping(running: list[_Child]) -> Iterator[None]:
    """Whatever happens (an interrupt, an error), no child outlives the selftest."""
    try:
        yield
    finally:
        try:
            for child in running:
                _signal(child.process, signal.SIGTERM)
            deadline = time.monotonic() + KILL_GRACE_S
            for child in running:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.process.wait(max(0.0, deadline - time.monotonic()))
        except KeyboardInterrupt:
            pass  # a second Ctrl-C: stop waiting, kill
        finally:
            for child in running:
                if child.process.poll() is None:
                    _signal(child.process, signal.SIGKILL)
                    child.process.wait()


def _stop(process: subprocess.Popen[bytes]) -> None:
    _signal(process, signal.SIGTERM)
    try:
        process.wait(KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        _signal(process, signal.SIGKILL)
        process.wait()


def _signal(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)
