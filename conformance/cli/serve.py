"""``serve`` and ``faults``: run the reference server, list its fault catalogue."""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli._common import fail, profile_option
from conformance.core.profile import ProfileError, load_profile
from conformance.reference.faults import CATEGORIES, catalogue, fault_names


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
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
def serve(
    host: str, port: int, db_path: Path | None, profile_name: str, faults: tuple[str, ...]
) -> None:
    """Run the reference server until Ctrl-C."""
    from conformance.reference.server import ReferenceServer, ServerStartError

    unknown = sorted(set(faults) - fault_names())
    if unknown:
        fail(f"unknown fault {', '.join(unknown)}; `payment-conformance faults` lists them")
    try:
        profile = load_profile(profile_name)
    except ProfileError as exc:
        fail(str(exc))
    server = ReferenceServer(profile=profile, faults=faults, db_path=db_path, host=host, port=port)
    try:
        server.start()
    except ServerStartError as exc:
        fail(str(exc))
    try:
        click.echo(f"reference server listening on {server.base_url}")
        click.echo(f"profile: {profile.name} ({profile.source})")
        keys = ", ".join(f"{c.api_key} ({c.merchant_id})" for c in profile.credentials)
        click.echo(f"API keys: {keys}; their secrets are in the profile file")
        click.echo(f"database: {db_path if db_path is not None else 'temporary (lost on exit)'}")
        if faults:
            click.echo(f"faults switched on: {', '.join(faults)}")
        click.echo("press Ctrl-C to stop")
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopping")
    finally:
        server.stop()


@click.command()
@click.option("--category", type=click.Choice(CATEGORIES), help="Only faults of this category.")
def faults(category: str | None) -> None:
    """List the reference server's fault catalogue."""
    shown = [f for f in catalogue() if category is None or f.category == category]
    width = max((len(f.name) for f in shown), default=4)
    for fault in shown:
        click.echo(f"{fault.name:<{width}}  {fault.category:<11}  {', '.join(fault.breaks)}")
        click.echo(f"{'':<{width}}  {fault.description}")
    click.echo(f"{len(shown)} faults")
