"""``contract`` and ``profile`` subcommands: read what a server is held to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import yaml

from conformance.cli._common import USAGE_ERROR, fail, profile_option
from conformance.core.contract import effective_contract
from conformance.core.openapi import ContractError
from conformance.core.profile import (
    EXTENDS_HINT,
    ProfileError,
    load_profile,
    resolve_profile_path,
    shipped_profiles,
)


@click.command()
@profile_option
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of standard output.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["yaml", "json"]),
    default="yaml",
    show_default=True,
    help="Serialisation of the document.",
)
def contract(profile_name: str, output: Path | None, output_format: str) -> None:
    """Print the effective contract: the OpenAPI document plus the profile's choices."""
    try:
        document = effective_contract(load_profile(profile_name))
    except (ProfileError, ContractError) as exc:
        fail(str(exc))
    text = _serialise(document, output_format)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    click.echo(f"wrote the effective contract of profile {profile_name!r} to {output}", err=True)


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings (descriptions) as YAML block scalars, readable as written."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and value == value.rstrip() + "\n" else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _represent_str)


def _serialise(document: dict[str, Any], output_format: str) -> str:
    if output_format == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return yaml.dump(document, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)


@click.group()
def profile() -> None:
    """Work with profiles."""


PARTIAL_PROFILE = """\
# A partial profile: only what differs from the shipped profile it extends. Add the tables and
# keys your implementation chose differently (docs/profile.md); a table you write changes only
# the keys you give, any other value replaces the shipped one whole.
extends = {extends}

[profile]
name = {name}
"""


@profile.command("init")
@click.argument(
    "path", type=click.Path(dir_okay=False, path_type=Path), default=Path("my-profile.toml")
)
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.option(
    "--extends",
    type=click.Choice(shipped_profiles()),
    help="Write a partial profile instead: extends = NAME, to which you add only the keys "
    "that differ (docs/profile.md).",
)
def profile_init(path: Path, force: bool, extends: str | None) -> None:
    """Write a profile to PATH, to edit for another implementation: a copy of the default
    profile, or with --extends a partial profile holding only what differs."""
    if path.exists() and not force:
        fail(f"{path} exists; pass --force to overwrite it")
    if extends is not None:
        text = PARTIAL_PROFILE.format(extends=json.dumps(extends), name=json.dumps(path.stem))
    else:
        text = resolve_profile_path("default").read_text(encoding="utf-8")
        # the copy describes another implementation: name it after its file, not "default"
        text = text.replace('name = "default"', f"name = {json.dumps(path.stem)}", 1)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")
    click.echo(f"wrote {path}: edit it, then pass --profile {path}")


@profile.command("check")
@click.argument("path")
def profile_check(path: str) -> None:
    """Validate a profile file and say what is wrong with it: every problem, once each.

    A partial profile (``extends = "default"`` and only what differs) is checked merged over
    the profile it extends."""
    try:
        loaded = load_profile(path)
    except ProfileError as exc:
        if len(exc.problems) < 2:
            fail(str(exc))
        click.echo(
            f"error: {exc.context} is not a valid profile ({len(exc.problems)} problems):",
            err=True,
        )
        for problem in exc.problems:
            click.echo(f"  {problem}", err=True)
        if EXTENDS_HINT in str(exc):
            click.echo(f"hint: {EXTENDS_HINT}", err=True)
        raise SystemExit(USAGE_ERROR) from None
    extends = f"extends {loaded.extends!r}; " if loaded.extends else ""
    click.echo(f"profile {loaded.name!r} is valid ({extends}sha256 {loaded.sha256[:12]})")
