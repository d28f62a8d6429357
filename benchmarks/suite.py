"""Benchmark of the suite on the embedded reference server.

    python -m benchmarks.suite [--seed 42] [--workers auto|N] [--quick-only]
        [--latency-ms 0,20,50]

Runs the default run and ``--quick`` (each with the same seed) at each latency of the embedded
server (``run --latency-ms``: a remote server's round trip) and prints wall time, requests
sent, requests per second, wall time / (requests x latency) (1.0: requests one at a time; the
lower, the more the run overlaps its requests) and the share of the time spent outside the
server. Server time is
measured by an ASGI timing middleware around the reference application (summed over requests;
with several workers requests overlap, so the share is only exact with one worker). It also
checks what ``--quick`` promises: every operation and every check family exercised. The
families are those the suite declares (its tests' ``family`` markers, as pytest collects them,
top-level modules and ``conformance/suite/<family>/`` subpackages alike), so a new family is
expected without editing this file.

Targets (2 cores): at 0 ms the default run under 120 s and ``--quick`` under 30 s; at 50 ms
the default run within 300 s and ``--quick`` within 60 s. Exit 1 when a run misses its target
or a run leaves an operation or a family unexercised.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.table import Table

from conformance.core.contract import operations
from conformance.core.results import Outcome, RunResult
from conformance.engine.inventory import collect_suite
from conformance.engine.options import RunError, RunOptions
from conformance.engine.progress import NullDisplay
from conformance.engine.runner import execute
from conformance.engine.target import default_workers
from conformance.reference.config import MAX_LATENCY_MS
from conformance.suite.plugin.collection import is_suite_item

TARGETS_S = {
    (0, "default"): 120.0,
    (0, "quick"): 30.0,
    (50, "default"): 300.0,
    (50, "quick"): 60.0,
}
ASGIApp = Callable[..., Any]


@dataclass
class ServerClock:
    """Time the server spends inside the application, summed over requests."""

    seconds: float = 0.0
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float) -> None:
        with self._lock:
            self.seconds += seconds
            self.requests += 1


class TimingMiddleware:
    def __init__(self, app: ASGIApp, clock: ServerClock) -> None:
        self.app = app
        self.clock = clock

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            await self.app(scope, receive, send)
        finally:
            self.clock.add(time.perf_counter() - started)


@contextmanager
def timed_reference_server(clock: ServerClock) -> Iterator[None]:
    """Every reference server started meanwhile gets the timing middleware."""
    from conformance.reference import server as server_module

    namespace = vars(server_module)
    original = namespace["create_app"]

    def create_app(config: Any) -> Any:
        app = original(config)
        app.add_middleware(TimingMiddleware, clock=clock)
        return app

    namespace["create_app"] = create_app
    try:
        yield
    finally:
        namespace["create_app"] = original


@dataclass(frozen=True)
class Measurement:
    name: str
    wall_s: float
    requests: int
    server_s: float
    result: RunResult
    latency_ms: int = 0
    workers: int = 1

    @property
    def serial_share(self) -> float | None:
        """Wall time / (requests x latency): 1.0 when the requests are sent one at a time."""
        if not self.latency_ms or not self.requests:
            return None
        return self.wall_s / (self.requests * self.latency_ms / 1000)

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.wall_s if self.wall_s else 0.0

    @property
    def outside_share(self) -> float:
        return max(0.0, 1.0 - self.server_s / self.wall_s) if self.wall_s else 0.0


def measure(name: str, options: RunOptions) -> Measurement:
    clock = ServerClock()
    with timed_reference_server(clock):
        started = time.perf_counter()
        finished = execute(options, NullDisplay())
        wall = time.perf_counter() - started
    return Measurement(
        name,
        wall,
        finished.result.requests_sent,
        clock.seconds,
        finished.result,
        options.embedded_latency_ms,
        options.workers,
    )


# Families that send nothing and judge only answers the server chose to give: the rate-limit
# family judges 429s and 503s, and a server that limits nothing leaves it not exercised.
ANSWER_ONLY_FAMILIES = frozenset({"rate_limit"})


def coverage_gaps(result: RunResult, families: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """Operations and families the run did not exercise (no check passed or failed for them).

    ``families``: the families expected (``suite_families``); the run's own are added. An
    ``ANSWER_ONLY_FAMILIES`` family left not exercised is no gap.
    """
    ran = [c for c in result.checks if c.outcome is not Outcome.NOT_EXERCISED]
    seen_operations = {c.operation_id for c in ran if c.operation_id}
    missing_operations = [
        op.operation_id for op in operations() if op.operation_id not in seen_operations
    ]
    expected = set(families) | {c.family for c in result.checks}
    exercised = {c.family for c in ran}
    return missing_operations, sorted(expected - exercised - ANSWER_ONLY_FAMILIES)


class _FamilyCollector:
    def __init__(self) -> None:
        self.families: dict[str, int] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            if is_suite_item(item):
                family = family_of(item)
                self.families[family] = self.families.get(family, 0) + 1


def family_of(item: pytest.Item) -> str:
    """The family a test's checks are recorded under: its ``family`` marker, else its module."""
    mark = item.get_closest_marker("family")
    if mark is not None and mark.args:
        return str(mark.args[0])
    return Path(str(item.path)).stem.removeprefix("test_") or "suite"


def suite_families(profile: str = "default") -> dict[str, int]:
    """Every family of the suite with its number of tests, as a default run collects them."""
    collector = _FamilyCollector()
    collect_suite(collector, profile)
    if not collector.families:
        raise RunError("the suite has no test")
    return dict(sorted(collector.families.items()))


def latencies(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of milliseconds: {text!r}") from None
    if not values or any(not 0 <= v <= MAX_LATENCY_MS for v in values):
        raise argparse.ArgumentTypeError(f"latencies must be 0 to {MAX_LATENCY_MS} ms: {text!r}")
    return values


def workers_option(text: str) -> int | None:
    if text == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'auto' or a number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {value}")
    return value


def target_of(m: Measurement) -> float | None:
    return TARGETS_S.get((m.latency_ms, m.name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suite")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--workers", type=workers_option, default=None, help="auto (run's default) or N."
    )
    parser.add_argument("--quick-only", action="store_true", help="Measure --quick alone.")
    parser.add_argument(
        "--latency-ms",
        type=latencies,
        default=[0],
        help="Comma-separated latencies of the embedded server, e.g. 0,20,50 (default 0).",
    )
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 140)
    runs = [("quick", True)] if args.quick_only else [("default", False), ("quick", True)]
    try:
        families = suite_families()
    except RunError as exc:
        console.print(f"error: {exc}")
        return 2
    console.print(
        f"the suite's families ({len(families)}): "
        + ", ".join(f"{name} ({count} tests)" for name, count in families.items())
    )
    measurements = []
    for latency in args.latency_ms:
        workers = args.workers or default_workers(None, latency)
        for name, quick in runs:
            console.print(
                f"measuring the {name} run at {latency} ms (seed {args.seed}, "
                f"{workers} worker(s))..."
            )
            options = RunOptions(
                seed=args.seed, quick=quick, workers=workers, embedded_latency_ms=latency
            )
            try:
                measurements.append(measure(name, options))
            except RunError as exc:
                console.print(f"error: {exc}")
                return 2
    table = Table(title="payment-conformance suite benchmark (embedded reference server)")
    for column in (
        "latency",
        "run",
        "workers",
        "wall s",
        "target s",
        "requests",
        "req/s",
        "wall/(req x lat)",
        "server s",
        "checks",
        "families",
        "verdict",
    ):
        table.add_column(column, justify="left" if column in {"run", "verdict"} else "right")
    within = True
    gaps = {id(m): coverage_gaps(m.result, families) for m in measurements}
    for m in measurements:
        target = target_of(m)
        within = within and (target is None or m.wall_s <= target)
        missing_families = gaps[id(m)][1]
        expected = len(set(families) | {c.family for c in m.result.checks})
        share = m.serial_share
        table.add_row(
            f"{m.latency_ms} ms",
            m.name,
            str(m.workers),
            f"{m.wall_s:.1f}",
            "-" if target is None else f"<= {target:.0f}",
            f"{m.requests:,}",
            f"{m.requests_per_s:.0f}",
            "-" if share is None else f"{share:.2f}",
            f"{m.server_s:.1f}",
            f"{len(m.result.checks):,}",
            f"{expected - len(missing_families)}/{expected}",
            m.result.verdict_summary,
        )
    console.print(table)
    covered = True
    for m in measurements:
        missing_ops, missing_families = gaps[id(m)]
        covered = covered and not missing_ops and not missing_families
        console.print(
            f"{m.name} at {m.latency_ms} ms: operations not exercised: "
            f"{', '.join(missing_ops) or 'none'}; "
            f"families not exercised: {', '.join(missing_families) or 'none'}"
        )
    if not within:
        console.print("a run is over its target time")
    return 0 if within and covered else 1


if __name__ == "__main__":
    sys.exit(main())
