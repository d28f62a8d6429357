"""Benchmark of the suite on the embedded reference server.

    python -m conformance.benchmarks.suite [--seed 42] [--workers 1] [--quick-only]

Runs the default run and ``--quick`` (each with the same seed) and prints wall time, requests
sent, requests per second and the share of the time spent outside the server. Server time is
measured by an ASGI timing middleware around the reference application (summed over requests;
with several workers requests overlap, so the share is only exact with one worker). It also
checks what ``--quick`` promises: every operation and every check family exercised.

Targets (2 cores): default run under 120 s, ``--quick`` under 30 s.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from conformance.core.contract import operations
from conformance.core.results import Outcome, RunResult
from conformance.engine.progress import NullDisplay
from conformance.engine.runner import RunError, RunOptions, execute

TARGETS_S = {"default": 120.0, "quick": 30.0}
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
    return Measurement(name, wall, finished.result.requests_sent, clock.seconds, finished.result)


def coverage_gaps(result: RunResult) -> tuple[list[str], list[str]]:
    """Operations and families the run did not exercise (a check passed or failed for them)."""
    ran = [c for c in result.checks if c.outcome is not Outcome.NOT_EXERCISED]
    seen_operations = {c.operation_id for c in ran if c.operation_id}
    missing_operations = [
        op.operation_id for op in operations() if op.operation_id not in seen_operations
    ]
    families = {c.family for c in result.checks}
    missing_families = sorted(f for f in families if not any(c.family == f for c in ran))
    return missing_operations, missing_families


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.benchmarks.suite")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--quick-only", action="store_true", help="Measure --quick alone.")
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 120)
    runs = [("quick", True)] if args.quick_only else [("default", False), ("quick", True)]
    measurements = []
    for name, quick in runs:
        console.print(f"measuring the {name} run (seed {args.seed}, {args.workers} worker(s))...")
        try:
            measurements.append(
                measure(name, RunOptions(seed=args.seed, quick=quick, workers=args.workers))
            )
        except RunError as exc:
            console.print(f"error: {exc}")
            return 2
    table = Table(title="payment-conformance suite benchmark (embedded reference server)")
    for column in (
        "run",
        "wall s",
        "target s",
        "requests",
        "req/s",
        "server s",
        "outside server",
        "checks",
        "verdict",
    ):
        table.add_column(column, justify="left" if column in {"run", "verdict"} else "right")
    within = True
    for m in measurements:
        target = TARGETS_S[m.name]
        within = within and m.wall_s < target
        table.add_row(
            m.name,
            f"{m.wall_s:.1f}",
            f"< {target:.0f}",
            f"{m.requests:,}",
            f"{m.requests_per_s:.0f}",
            f"{m.server_s:.1f}",
            f"{m.outside_share:.0%}",
            f"{len(m.result.checks):,}",
            m.result.verdict.value,
        )
    console.print(table)
    for m in measurements:
        missing_ops, missing_families = coverage_gaps(m.result)
        families = sorted({c.family for c in m.result.checks})
        console.print(
            f"{m.name}: families {', '.join(families)}; operations not exercised: "
            f"{', '.join(missing_ops) or 'none'}; families without a run check: "
            f"{', '.join(missing_families) or 'none'}"
        )
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
