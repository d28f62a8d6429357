"""``profile points``: the specification's open points with a profile's value for each key."""

from __future__ import annotations

import click

from conformance.cli._common import fail, profile_option
from conformance.core.open_points import RENDERERS
from conformance.core.profile import ProfileError, load_profile


@click.command("points")
@profile_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(sorted(RENDERERS)),
    default="text",
    show_default=True,
    help="text for reading, markdown for docs, json for tools.",
)
def points(profile_name: str, output_format: str) -> None:
    """Print every point the specification leaves open: the profile key(s) that pin it with
    the profile's value, what they accept, and the requirements that test it (or why none can).
    Credentials are never printed."""
    try:
        loaded = load_profile(profile_name)
    except ProfileError as exc:
        fail(str(exc))
    click.echo(RENDERERS[output_format](loaded), nl=False)
