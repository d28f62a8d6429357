"""``serve`` and ``faults``: run the reference server, list its fault catalogue."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from conformance.cli._common import (
    escape_reading_option,
    fail,
    latency_option,
    parsed_by,
    profile_option,
)
from conformance.core.hosts import is_loopback
from conformance.core.profile import Profile, ProfileError, load_profile
from conformance.reference import connections, gateway
from conformance.reference.config import check_escape_reading
from conformance.reference.fault_needs import NEEDS
from conformance.reference.faults import CATEGORIES, catalogue, fault_names

if TYPE_CHECKING:
    from conformance.reference.server import ReferenceServer

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Any other than loopback exposes the server (see above).",
)
@click.option(
    "--port",
    default=8402,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite file that keeps the data across restarts (default: a temporary file).",
)
@profile_option
@click.option(
    "--fault",
    "faults",
    multiple=True,
    metavar="NAME",
    help="Switch on a fault of the catalogue (repeatable; see `faults`).",
)
@latency_option("Answer every request this much later, as a remote server would (no CPU is used).")
@escape_reading_option(
    "--escape-reading",
    "Read a % not followed by two hex digits in a query or path parameter as text (literal) or "
    "refuse it (refuse); default: the profile's status.malformed_percent_escape, refuse where it "
    "allows either.",
)
@click.option(
    "--tls-cert",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Serve HTTPS with this certificate (PEM, the chain after it); needs --tls-key.",
)
@click.option(
    "--tls-key",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The private key (PEM, unencrypted) of --tls-cert.",
)
@click.option(
    "--tls-client-ca",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Mutual TLS: require a client certificate signed by this CA (PEM).",
)
@click.option(
    "--rate-limit",
    type=float,
    callback=parsed_by(gateway.rate_limit),
    metavar="N",
    help="At most N requests per second per API key, in bursts of up to N; over it: 429 with "
    "Retry-After.",
)
@click.option(
    "--require-header",
    callback=parsed_by(gateway.header),
    metavar='"NAME: VALUE"',
    help="A gateway in front: requests without this header and value get 403 (the value is a "
    "secret, never printed).",
)
@click.option(
    "--base-path",
    default="",
    callback=parsed_by(gateway.base_path),
    metavar="/PREFIX",
    help="Serve the API under this prefix (/PREFIX/v1/payments); anything else gets 404.",
)
@click.option(
    "--header-timeout",
    type=float,
    default=connections.HEADER_TIMEOUT_SECS,
    show_default=True,
    callback=parsed_by(connections.header_timeout),
    metavar="SECONDS",
    help="Close a connection that has not sent a whole request head within this long (from "
    "connecting, or from the next request's first byte on a kept-alive connection).",
)
@click.option(
    "--max-connections",
    type=int,
    callback=parsed_by(connections.max_connections),
    metavar="N",
    help=f"Connections open at once, at most (default: {connections.MAX_CONNECTIONS}, fewer if "
    "ulimit -n is low). Past it a new one closes the connection idle the longest, or is answered "
    "503 when none is idle; one log line says so.",
)
def serve(
    host: str,
    port: int,
    db_path: Path | None,
    profile_name: str,
    faults: tuple[str, ...],
    latency_ms: int,
    escape_reading: str | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    tls_client_ca: Path | None,
    rate_limit: float | None,
    require_header: tuple[str, str] | None,
    base_path: str,
    header_timeout: float,
    max_connections: int | None,
) -> None:
    """Run the reference server until Ctrl-C (or SIGTERM).

    A test server for this machine: it accepts the profile's test credentials (the default
    profile's are published) and POSTs webhooks to any URL a merchant registers, private,
    loopback and link-local addresses included. Keep it on loopback and never expose it to a
    network you do not trust.
    """
    from conformance.reference.server import ReferenceServer, ServerStartError

    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together: give both or neither")
    if tls_client_ca is not None and tls_cert is None:
        raise click.UsageError("--tls-client-ca needs --tls-cert and --tls-key")
    unknown = sorted(set(faults) - fault_names())
    if unknown:
        fail(f"unknown fault {', '.join(unknown)}; `payment-conformance faults` lists them")
    try:
        profile = load_profile(profile_name)
    except ProfileError as exc:
        fail(str(exc))
    try:
        check_escape_reading(profile, escape_reading)
    except ValueError as exc:
        fail(str(exc))
    warning = exposure_warning(host, profile)
    if warning is not None:
        click.echo(warning, err=True)
    server = ReferenceServer(
        profile=profile,
        faults=faults,
        db_path=db_path,
        host=host,
        port=port,
        latency_ms=latency_ms,
        tls_cert=tls_cert,
        tls_key=tls_key,
        tls_client_ca=tls_client_ca,
        rate_limit=rate_limit,
        require_header=require_header,
        base_path=base_path,
        header_timeout=header_timeout,
        max_connections=max_connections,
        escape_reading=escape_reading,
    )
    with stop_requests(server) as stop_requested:
        try:
            server.start()
        except ServerStartError as exc:
            fail(str(exc))
        try:
            click.echo(f"reference server listening on {server.base_url}")
            click.echo(f"profile: {profile.name} ({profile.source})")
            keys = ", ".join(f"{c.api_key} ({c.merchant_id})" for c in profile.credentials)
            click.echo(f"API keys: {keys}; their secrets are in the profile file")
            click.echo(
                f"database: {db_path if db_path is not None else 'temporary (lost on exit)'}"
            )
            if faults:
                click.echo(f"faults switched on: {', '.join(faults)}")
            if server.literal_escapes:
                click.echo("a malformed percent-escape is read literally (usdc%zz as text)")
            for line in deployment_lines(server):
                click.echo(line)
            click.echo(
                f"connections: at most {server.max_connections} open, request heads within "
                f"{server.header_timeout:g} s"
            )
            click.echo("press Ctrl-C to stop")
            server.serve_forever(until=stop_requested)
        finally:
            server.stop()
    click.echo("stopped")


def deployment_lines(server: ReferenceServer) -> list[str]:
    """What ``serve`` says about the deployment it stands in for (the header value is not
    printed: it is a secret)."""
    lines = []
    if server.tls is not None:
        lines.append(f"TLS: https with the certificate {server.tls.cert}")
        if server.tls.client_ca is not None:
            lines.append(
                f"mutual TLS: client certificates signed by {server.tls.client_ca} required"
            )
    settings = server.gateway
    if settings.base_path:
        lines.append(f"base path: {settings.base_path} (anything outside it gets 404)")
    if settings.require_header is not None:
        lines.append(f"gateway header required: {settings.require_header[0]}: [redacted]")
    if settings.rate_limit is not None:
        lines.append(
            f"rate limit: {settings.rate_limit:g} requests/s per API key, bursts of up to "
            f"{max(settings.rate_limit, 1):g} (429 with Retry-After over it)"
        )
    return lines


@contextlib.contextmanager
def stop_requests(server: ReferenceServer) -> Iterator[threading.Event]:
    """Ctrl-C (SIGINT) and SIGTERM set the event, and the caller stops the server in order:
    no exception lands in the middle of the shutdown. A second one aborts in-flight requests
    at once rather than after the grace period."""
    requested = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        if requested.is_set():
            server.abort()
        requested.set()

    previous = {signum: signal.signal(signum, handle) for signum in STOP_SIGNALS}
    try:
        yield requested
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def exposure_warning(host: str, profile: Profile) -> str | None:
    """One line for a server that listens beyond loopback while it accepts a secret of the
    default profile: those are published, so anyone who reaches it can use it."""
    if is_loopback(host):
        return None
    published = {c.api_secret for c in load_profile().credentials}
    if not any(c.api_secret in published for c in profile.credentials):
        return None
    return (
        f"warning: --host {host} is not a loopback address and the profile's API secrets are"
        " the published test ones: anyone who reaches this server can use it, and it POSTs"
        " webhooks to any URL (private addresses included)"
    )


@click.command()
@click.option("--category", type=click.Choice(CATEGORIES), help="Only faults of this category.")
def faults(category: str | None) -> None:
    """List the reference server's fault catalogue."""
    shown = [f for f in catalogue() if category is None or f.category == category]
    width = max((len(f.name) for f in shown), default=4)
    for fault in shown:
        click.echo(f"{fault.name:<{width}}  {fault.category:<11}  {', '.join(fault.breaks)}")
        click.echo(f"{'':<{width}}  {fault.description}")
        if fault.needs:
            click.echo(f"{'':<{width}}  needs: {', '.join(fault.needs)}")
    click.echo(f"{len(shown)} faults")
    used = sorted({n for f in shown for n in f.needs})
    if used:
        click.echo("needs (a fault is not applicable under a profile that does not meet them):")
        for name in used:
            click.echo(f"  {name}: {NEEDS[name].meaning}")
