"""``contract`` and ``profile`` subcommands: read what a server is held to."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from conformance.core.profile import ProfileError, load_profile, resolve_profile_path


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(2)


@click.command()
@click.option(
    "--profile",
    "profile_name",
    default="default",
    show_default=True,
    help="A shipped profile name or the path of a profile file.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of standard output.",
)
def contract(profile_name: str, output: Path | None) -> None:
    """Print the effective contract: the OpenAPI document plus the profile's choices."""
    _fail("the effective contract is not built yet")  # replaced by issue 2's contract builder


@click.group()
def profile() -> None:
    """Work with profiles."""


@profile.command("init")
@click.argument(
    "path", type=click.Path(dir_okay=False, path_type=Path), default=Path("my-profile.toml")
)
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def profile_init(path: Path, force: bool) -> None:
    """Write a copy of the default profile to PATH, to edit for another implementation."""
    if path.exists() and not force:
        _fail(f"{path} exists; pass --force to overwrite it")
    shutil.copyfile(resolve_profile_path("default"), path)
    click.echo(f"wrote {path}: edit it, then pass --profile {path}")


@profile.command("check")
@click.argument("path")
def profile_check(path: str) -> None:
    """Validate a profile file and say what is wrong with it."""
    try:
        loaded = load_profile(path)
    except ProfileError as exc:
        _fail(str(exc))
    click.echo(f"profile {loaded.name!r} is valid (sha256 {loaded.sha256[:12]})")
