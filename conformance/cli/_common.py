"""What every subcommand shares: how it fails, and how it reads lists of selectors."""

from __future__ import annotations

from typing import NoReturn

import click

USAGE_ERROR = 2  # could not run: bad options, bad files, nothing to test


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on standard error and exit with the could-not-run code."""
    click.echo(f"error: {message}", err=True)
    raise SystemExit(USAGE_ERROR)


def split_selectors(values: tuple[str, ...]) -> tuple[str, ...]:
    """``("IDEM,AUTH-003", "spec 5")`` -> ``("IDEM", "AUTH-003", "spec 5")``."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


profile_option = click.option(
    "--profile",
    "profile_name",
    default="default",
    show_default=True,
    help="A shipped profile name or the path of a profile .toml file.",
)
