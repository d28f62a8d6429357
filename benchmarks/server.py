"""Throughput and latency of the reference server on loopback.

    python -m benchmarks.server [--duration 5] [--clients 4]

The server runs in this process (uvicorn in a thread, as ``ReferenceServer`` runs it); the
clients are separate processes, each one keep-alive connection sending signed requests back to
back (closed loop) with the standard library's http.client, the cheapest client available, so
that the figures measure the server rather than the client. Two scenarios: a GET
(``listPayments``, 20 payments per page) and a create (``createPayment``: a new resource, an
idempotency record, an event, each time).
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from conformance.core.profile import Credential, load_profile
from conformance.core.signing import Signer

TARGETS = {"GET": 500.0, "create": 300.0}  # requests per second on a 2-core machine
P99_TARGET_MS = 20.0


@dataclass(frozen=True)
class Scenario:
    name: str
    method: str
    target: str


SCENARIOS = (
    Scenario("GET", "GET", "/v1/payments?limit=20"),
    Scenario("create", "POST", "/v1/payments"),
)


@dataclass(frozen=True)
class WorkerResult:
    latencies: list[float]  # seconds
    errors: int


def _payment_body() -> bytes:
    body = {
        "quotes": {"usdc": {"amount": "25.00", "chain_ids": ["base"]}},
        "merchant_order_no": "bench-" + uuid.uuid4().hex,
    }
    return json.dumps(body, separators=(",", ":")).encode()


def _worker(
    base_url: str, credential: Credential, scenario: Scenario, start_at: float, stop_at: float
) -> WorkerResult:
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    signer = Signer(credential.api_key, credential.api_secret)
    latencies: list[float] = []
    errors = 0
    while time.time() < start_at:
        time.sleep(0.001)
    # at least one request: a worker that started late on a busy machine still says whether
    # it reached the server
    while not latencies or time.time() < stop_at:
        body = _payment_body() if scenario.method == "POST" else b""
        headers = signer.headers(scenario.method, scenario.target, body)
        if body:
            headers["Content-Type"] = "application/json"
            headers["Idempotency-Key"] = uuid.uuid4().hex
        began = time.perf_counter()
        connection.request(scenario.method, scenario.target, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        latencies.append(time.perf_counter() - began)
        if response.status >= 300:
            errors += 1
    connection.close()
    return WorkerResult(latencies, errors)


@dataclass(frozen=True)
class Figures:
    scenario: str
    requests: int
    errors: int
    per_second: float
    p50_ms: float
    p99_ms: float


def _percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def run_scenario(
    pool: multiprocessing.pool.Pool,
    base_url: str,
    credential: Credential,
    scenario: Scenario,
    clients: int,
    duration: float,
) -> Figures:
    start_at = time.time() + 0.5
    stop_at = start_at + duration
    results = pool.starmap(_worker, [(base_url, credential, scenario, start_at, stop_at)] * clients)
    latencies = [value for result in results for value in result.latencies]
    if not latencies:
        return Figures(scenario.name, 0, 0, 0.0, 0.0, 0.0)
    return Figures(
        scenario=scenario.name,
        requests=len(latencies),
        errors=sum(r.errors for r in results),
        per_second=len(latencies) / duration,
        p50_ms=statistics.median(latencies) * 1000,
        p99_ms=_percentile(latencies, 0.99) * 1000,
    )


def _table(figures: Sequence[Figures], clients: int, duration: float) -> str:
    lines = [
        f"reference server, loopback, {clients} client processes, {duration:g} s per scenario",
        f"{'scenario':<10}{'requests':>10}{'errors':>8}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'target':>16}",
    ]
    for f in figures:
        target = f">= {TARGETS[f.scenario]:g}/s, p99 < {P99_TARGET_MS:g}"
        lines.append(
            f"{f.scenario:<10}{f.requests:>10}{f.errors:>8}{f.per_second:>10.0f}"
            f"{f.p50_ms:>9.2f}{f.p99_ms:>9.2f}  {target}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.server")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per scenario")
    parser.add_argument("--clients", type=int, default=4, help="client processes")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.duration <= 0 or args.clients < 1:
        parser.error("--duration must be positive and --clients at least 1")

    from conformance.reference.server import ReferenceServer

    profile = load_profile()
    credential = profile.primary
    context = multiprocessing.get_context("spawn")
    with ReferenceServer(profile=profile) as server, context.Pool(args.clients) as pool:
        warm = run_scenario(pool, server.base_url, credential, SCENARIOS[1], args.clients, 0.5)
        if warm.requests == 0:
            print("error: the benchmark clients could not reach the server", file=sys.stderr)
            return 2
        figures = [
            run_scenario(pool, server.base_url, credential, s, args.clients, args.duration)
            for s in SCENARIOS
        ]
    if args.json:
        print(json.dumps([f.__dict__ for f in figures], indent=2))
    else:
        print(_table(figures, args.clients, args.duration))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
