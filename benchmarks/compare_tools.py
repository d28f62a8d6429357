"""The three tools of the comparison, each run as a subprocess: what one run found and when.

* ``quick`` and ``default``: ``payment-conformance run [--quick]`` against the embedded
  reference server, one test worker. A faulted run stops at its first failure
  (``--fail-fast``), so its wall time is its time to the first failure.
* ``schemathesis``: plain ``schemathesis run`` over ``openapi/payment-service.yaml`` with all
  its checks and phases, signed by ``compare_hooks``, against ``payment-conformance serve``.
  Its NDJSON event stream is read while it runs: the first failure whose signature (check and
  operation) none of its unfaulted runs showed is its first failure, and the run is stopped
  there. Failures it also raises on the unfaulted server are false alarms and catch nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.core import jsonsafe
from conformance.engine.selftest import read_outcome

TOOLS = ("quick", "default", "schemathesis")
OPENAPI = Path(__file__).resolve().parents[1] / "openapi" / "payment-service.yaml"
HOOKS_MODULE = "benchmarks.compare_hooks"
POLL_S = 0.2
SERVER_START_S = 60.0
STOP_GRACE_S = 5.0
# Past its time budget (``--max-time``) schemathesis finishes the case at hand and writes its
# reports; a run still going this long after the budget is killed and recorded as timed out.
OVERRUN_S = 120.0
OUR_TIMEOUT_S = 1800.0


@dataclass(frozen=True)
class Job:
    tool: str
    fault: str | None  # None: the unfaulted server
    category: str
    seed: int
    budget_s: float | None = None  # schemathesis: its --max-time

    @property
    def key(self) -> str:
        return f"{self.tool}|{self.fault or '-'}|{self.seed}"


@dataclass
class Record:
    """One run of one tool: the raw result kept in the comparison's JSON file."""

    tool: str
    fault: str | None
    category: str
    seed: int
    status: str  # "ok", "error" (no verdict), "timeout"
    exit_code: int | None
    wall_s: float
    first_failure_s: float | None  # from the process's start
    failures: list[str] = field(default_factory=list)  # requirement ids or signatures
    message: str = ""

    @property
    def key(self) -> str:
        return f"{self.tool}|{self.fault or '-'}|{self.seed}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "fault": self.fault,
            "category": self.category,
            "seed": self.seed,
            "status": self.status,
            "exit_code": self.exit_code,
            "wall_s": round(self.wall_s, 3),
            "first_failure_s": None
            if self.first_failure_s is None
            else round(self.first_failure_s, 3),
            "failures": self.failures,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        return cls(
            tool=str(data["tool"]),
            fault=data.get("fault"),
            category=str(data.get("category", "")),
            seed=int(data["seed"]),
            status=str(data["status"]),
            exit_code=data.get("exit_code"),
            wall_s=float(data["wall_s"]),
            first_failure_s=data.get("first_failure_s"),
            failures=[str(f) for f in data.get("failures", [])],
            message=str(data.get("message", "")),
        )


class Children:
    """The subprocesses running now, so that an interruption stops every one of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self.stopping = threading.Event()

    def start(self, argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
        with self._lock:
            if self.stopping.is_set():
                raise KeyboardInterrupt
            with log.open("wb") as out:
                process = subprocess.Popen(
                    argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
                )
            self._running.add(process)
            return process

    def forget(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.discard(process)

    def stop_all(self) -> None:
        self.stopping.set()
        with self._lock:
            running = list(self._running)
        for process in running:
            stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group, then SIGKILL after a grace. Not SIGINT: a process started
    from a background job inherits SIGINT ignored."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PAYMENT_CONFORMANCE_API_KEY", None)
    env.pop("PAYMENT_CONFORMANCE_API_SECRET", None)
    return env


# -- our suite -------------------------------------------------------------------------------
def suite_argv(job: Job, report_dir: Path) -> list[str]:
    argv = [sys.executable, "-m", "conformance", "run", "--no-progress", "--workers", "1"]
    argv += ["--seed", str(job.seed), "--report-dir", str(report_dir)]
    if job.tool == "quick":
        argv.append("--quick")
    if job.fault is not None:
        argv += ["--fault", job.fault, "--fail-fast"]
    return argv


def run_suite_job(job: Job, scratch: Path, children: Children) -> Record:
    report_dir = scratch / "reports"
    log = scratch / "output.log"
    started = time.perf_counter()
    process = children.start(suite_argv(job, report_dir), log, environment())
    timed_out = False
    try:
        process.wait(OUR_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        stop(process)
        timed_out = True
    finally:
        children.forget(process)
    wall = time.perf_counter() - started
    outcome = read_outcome(report_dir, log, process.returncode, wall, timed_out)
    if outcome.timed_out or not outcome.has_results or outcome.exit_code not in (0, 1):
        status = "timeout" if outcome.timed_out else "error"
        return Record(
            job.tool, job.fault, job.category, job.seed, status, outcome.exit_code, wall, None,
            message=outcome.message,
        )  # fmt: skip
    failed = list(outcome.failed_ids)
    # A faulted run stops at its first failure: its whole wall time is the time to it.
    first = wall if failed and job.fault is not None else _first_failure(report_dir, wall)
    return Record(
        job.tool, job.fault, job.category, job.seed, "ok", outcome.exit_code, wall,
        first if failed else None, failed,
    )  # fmt: skip


def _first_failure(report_dir: Path, wall: float) -> float | None:
    """An unfaulted full run's first failure, from the process start (startup included)."""
    try:
        data = json.loads((report_dir / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    first, duration = data.get("first_failure_s"), data.get("duration_s")
    if not isinstance(first, int | float) or not isinstance(duration, int | float):
        return None
    return max(0.0, wall - float(duration)) + float(first)


# -- schemathesis ----------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def reference_server(fault: str | None, scratch: Path, children: Children) -> Iterator[str]:
    """``payment-conformance serve`` on a free loopback port, until the block ends."""
    port = free_port()
    argv = [sys.executable, "-m", "conformance", "serve", "--port", str(port)]
    if fault is not None:
        argv += ["--fault", fault]
    process = children.start(argv, scratch / "server.log", environment())
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)
        children.forget(process)


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the reference server exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(POLL_S)
    raise RuntimeError(f"the reference server did not listen on port {port} in time")


def schemathesis_argv(job: Job, base_url: str, ndjson: Path) -> list[str]:
    argv = [sys.executable, "-m", "schemathesis.cli", "run", str(OPENAPI), "--url", base_url]
    argv += ["--checks", "all", "--phases", "examples,coverage,fuzzing,stateful"]
    argv += ["--workers", "1", "--seed", str(job.seed)]
    argv += ["--generation-with-security-parameters", "false"]
    argv += ["--report", "ndjson", "--report-ndjson-path", str(ndjson)]
    if job.budget_s is not None:
        argv += ["--max-time", str(max(1, round(job.budget_s)))]
    return argv


def failure_signatures(event: dict[str, Any]) -> list[str]:
    """``check operation`` for each failed check of a ScenarioFinished event."""
    finished = event.get("ScenarioFinished")
    if not isinstance(finished, dict):
        return []
    recorder = finished.get("recorder") or {}
    label = str(recorder.get("label", ""))
    found = []
    for results in (recorder.get("checks") or {}).values():
        for check in results or []:
            if isinstance(check, dict) and check.get("status") == "failure":
                found.append(f"{check.get('name')} {label}")
    return found


class EventTail:
    """Reads the NDJSON events schemathesis appends, a complete line at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._partial = b""

    def read(self) -> list[dict[str, Any]]:
        try:
            with self.path.open("rb") as stream:
                stream.seek(self._offset)
                chunk = stream.read()
        except FileNotFoundError:
            return []
        self._offset += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        events = []
        for line in lines:
            try:
                event = jsonsafe.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
        return events


def run_schemathesis_job(
    job: Job, scratch: Path, children: Children, known: frozenset[str] | None
) -> Record:
    """``known``: the unfaulted runs' signatures (faulted runs stop at the first new one);
    None for an unfaulted run, which runs its whole budget."""
    ndjson = scratch / "events.ndjson"
    log = scratch / "output.log"
    seen: list[str] = []
    first: float | None = None
    with reference_server(job.fault, scratch, children) as base_url:
        env = environment() | {"SCHEMATHESIS_HOOKS": HOOKS_MODULE}
        started_epoch = time.time()
        started = time.perf_counter()
        process = children.start(schemathesis_argv(job, base_url, ndjson), log, env)
        tail = EventTail(ndjson)
        ceiling = (job.budget_s or 0) + OVERRUN_S
        timed_out = False
        try:
            while True:
                done = process.poll() is not None
                for event in tail.read():
                    for signature in failure_signatures(event):
                        if signature in seen:
                            continue
                        seen.append(signature)
                        new = known is None or signature not in known
                        if first is None and new:
                            stamp = (event.get("ScenarioFinished") or {}).get("timestamp")
                            first = (
                                float(stamp) - started_epoch
                                if isinstance(stamp, int | float)
                                else time.perf_counter() - started
                            )
                if done:
                    break
                if known is not None and first is not None:
                    stop(process)  # caught: as our faulted runs, it stops at its first failure
                    continue
                if time.perf_counter() - started > ceiling:
                    stop(process)
                    timed_out = True
                    continue
                time.sleep(POLL_S)
        finally:
            stop(process)
            children.forget(process)
        wall = time.perf_counter() - started
    caught = [s for s in seen if known is None or s not in known]
    if timed_out and first is None:
        return Record(
            job.tool, job.fault, job.category, job.seed, "timeout", None, wall, None, seen,
            f"schemathesis ran {OVERRUN_S:.0f} s past its --max-time and was stopped",
        )  # fmt: skip
    if not seen and process.returncode not in (0, 1, -signal.SIGTERM):
        return Record(
            job.tool, job.fault, job.category, job.seed, "error", process.returncode, wall,
            None, message=_tail(log),
        )  # fmt: skip
    return Record(
        job.tool, job.fault, job.category, job.seed, "ok", process.returncode, wall,
        first if caught else None, caught if known is not None else seen,
    )  # fmt: skip


def _tail(log: Path) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "no output"
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][-300:] if lines else "no output"


def run_job(job: Job, children: Children, known: frozenset[str] | None = None) -> Record:
    with tempfile.TemporaryDirectory(prefix="payment-conformance-compare-") as scratch:
        try:
            if job.tool == "schemathesis":
                return run_schemathesis_job(job, Path(scratch), children, known)
            return run_suite_job(job, Path(scratch), children)
        except RuntimeError as exc:
            return Record(
                job.tool, job.fault, job.category, job.seed, "error", None, 0.0, None,
                message=str(exc),
            )  # fmt: skip
