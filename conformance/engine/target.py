"""What the run tests and how it reaches it: the embedded server or a base URL.

The embedded reference server is started for the run when no base URL is given (so preflight,
every test process and the report see one server); the run's TLS settings, gateway headers
and proxy are in force around it (``_connection``); the credential reaches the test processes
through the environment, never argv (``_credentials_env``); ``--workers auto`` picks the test
processes from the cores and the round trip preflight measured.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import replace

from conformance.core import run_inputs
from conformance.core.environment import environ
from conformance.core.profile import API_KEY_ENV, API_SECRET_ENV, Profile
from conformance.core.results import Target, fault_names
from conformance.engine.options import RunError, RunOptions
from conformance.engine.preflight import PreflightReport
from conformance.suite.wire import gateway, proxy, tls

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


@contextlib.contextmanager
def _connection(options: RunOptions) -> Iterator[None]:
    """The run's TLS settings, gateway headers and proxy, in force for every request and report."""
    try:
        headers = run_inputs.parse_headers(f"{name}: {value}" for name, value in options.headers)
        with tls.using(options.tls_settings), gateway.using(headers), proxy.using(options.proxy):
            yield
    except (tls.TlsError, run_inputs.HeaderError, run_inputs.ProxyError) as exc:
        raise RunError(str(exc)) from None


@contextlib.contextmanager
def _target(options: RunOptions, profile: Profile) -> Iterator[Target]:
    if options.base_url is not None:
        yield Target(options.base_url.rstrip("/"), embedded=False)
        return
    from conformance.reference.server import ReferenceServer, ServerStartError

    faults = fault_names(options.embedded_fault)
    try:
        server = ReferenceServer(
            profile=profile,
            faults=faults,
            latency_ms=options.embedded_latency_ms,
            rate_limit=options.embedded_rate_limit,
            escape_reading=options.embedded_escape_reading,
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

    if target.embedded:
        # on loopback a measured round trip is this machine's load, not distance: the embedded
        # server is as far away as the latency it was told to add
        round_trip: float | None = float(options.embedded_latency_ms)
    else:
        round_trip = checked.round_trip_ms if checked is not None else None
    if round_trip is None:  # no preflight against another server: today's default
        return replace(options, auto_why="no round trip measured (preflight off)")
    choice = choose_workers(
        usable_cores(), round_trip, embedded=target.embedded, rate_limit=options.rate_limit
    )
    return replace(options, workers=choice.workers, auto_why=choice.why)


@contextlib.contextmanager
def _credentials_env(options: RunOptions) -> Iterator[None]:
    """Hand the credential to pytest (and its xdist workers) without putting it in argv."""
    with environ({API_KEY_ENV: options.api_key, API_SECRET_ENV: options.api_secret}):
        yield
