"""``requirements``: list the requirement catalogue."""

from __future__ import annotations

import click


@click.command()
@click.option("--section", help="Only requirements of this section, e.g. 'spec 5' or 'profile 2'.")
@click.option("--layer", type=click.Choice(["contract", "profile"]), help="Only this layer.")
def requirements(section: str | None, layer: str | None) -> None:
    """List the requirement catalogue."""
    click.echo("error: the requirement catalogue is not built yet", err=True)
    raise SystemExit(2)
