"""``requirements``: list the requirement catalogue."""

from __future__ import annotations

import json
from collections import Counter

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from conformance.cli._common import fail, refuse_empty_selectors, split_selectors
from conformance.core.catalogue import Catalogue, CatalogueError, Requirement, load_catalogue


@click.command()
@click.option("--section", help="Only requirements of this section, e.g. 'spec 5' or 'profile 2'.")
@click.option("--layer", type=click.Choice(["contract", "profile"]), help="Only this layer.")
@click.option(
    "--only",
    callback=refuse_empty_selectors,
    multiple=True,
    metavar="SELECTOR[,...]",
    help="Only these ids, id prefixes or sections (IDEM-004, IDEM, 'spec 5').",
)
@click.option(
    "--skip",
    callback=refuse_empty_selectors,
    multiple=True,
    metavar="SELECTOR[,...]",
    help="Leave these out.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json", "ids"]),
    default="table",
    show_default=True,
    help="table for people, json for tools, ids one per line.",
)
def requirements(
    section: str | None,
    layer: str | None,
    only: tuple[str, ...],
    skip: tuple[str, ...],
    output_format: str,
) -> None:
    """List the requirement catalogue: what a server is held to, and where each rule comes from."""
    try:
        catalogue = load_catalogue()
        wanted = catalogue.section(section) if section is not None else None
        if section is not None and wanted is None:
            known = ", ".join(s.key for s in catalogue.sections)
            fail(f"unknown section {section!r}: sections are {known}")
        selected = catalogue.select(only=split_selectors(only), skip=split_selectors(skip))
    except CatalogueError as exc:
        fail(str(exc))
    selected = tuple(
        r
        for r in selected
        if (wanted is None or r.section == wanted) and (layer is None or r.layer == layer)
    )

    if output_format == "ids":
        for req in selected:
            click.echo(req.id)
    elif output_format == "json":
        click.echo(json.dumps(_as_json(catalogue, selected), indent=2, ensure_ascii=False))
    else:
        _print_table(selected, len(catalogue.requirements))


def _as_json(catalogue: Catalogue, selected: tuple[Requirement, ...]) -> dict[str, object]:
    return {
        "catalogue_sha256": catalogue.sha256,
        "count": len(selected),
        "requirements": [
            {
                "id": r.id,
                "section": r.section.key,
                "section_title": r.section.title,
                "layer": r.layer.value,
                "level": r.level,
                "text": r.text,
                "operations": list(r.operations),
            }
            for r in selected
        ],
    }


def _print_table(selected: tuple[Requirement, ...], total: int) -> None:
    console = Console(highlight=False)
    table = Table(show_lines=False, expand=False)
    for name in ("id", "layer", "level", "section"):
        table.add_column(name, no_wrap=True)
    table.add_column("text", overflow="fold")
    for r in selected:
        # Text(), not markup: requirement texts contain brackets such as [from, to)
        table.add_row(
            Text(r.id), Text(r.layer.value), Text(r.level), Text(r.section.key), Text(r.text)
        )
    if selected:
        console.print(table)
    layers = Counter(r.layer.value for r in selected)
    detail = ", ".join(f"{layers[name]} {name}" for name in ("contract", "profile") if layers[name])
    noun = "requirement" if len(selected) == 1 else "requirements"
    count = f"{len(selected)} {noun}"
    if selected and len(selected) < total:
        # a filtered list says it is part of the catalogue: its count is not the whole's
        count = f"{len(selected)} of {total} requirements listed"
    console.print(Text(count + (f" ({detail})" if detail else "")))
