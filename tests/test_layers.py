"""The package's layers import in one direction only.

``judge`` holds the judgements the suite and the validator share; nothing outside the suite
imports the suite but the engine that runs it (never the validator, the reports or the command
line). Every import counts, those inside functions too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "conformance"

# layer -> the other layers it may import
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "judge": frozenset({"core"}),
    "reference": frozenset({"core"}),
    "reporting": frozenset({"core"}),
    "suite": frozenset({"core", "judge"}),
    "validator": frozenset({"core", "judge"}),
    "engine": frozenset({"core", "reference", "reporting", "suite"}),
    "cli": frozenset({"core", "engine", "reference", "reporting", "validator"}),
}
TOP_LEVEL = frozenset({"__init__", "__main__"})  # conformance/__init__.py, __main__.py


def imported_modules(source: str, module: str) -> set[str]:
    """Every module ``source`` (the text of ``module``, a dotted name) imports, resolved."""
    found: set[str] = set()
    package = module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            dotted = ".".join([*base, *([node.module] if node.module else [])])
            found.add(dotted)
            # ``from conformance import suite`` imports the layer itself
            found.update(f"{dotted}.{alias.name}" for alias in node.names)
    return found


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "conformance" or len(parts) < 2:
        return None
    return parts[1]


def crossings(source: str, module: str) -> set[str]:
    """The layers ``module`` imports that its layer may not."""
    own = layer_of(module)
    assert own is not None
    allowed = ALLOWED[own] | {own}
    layers = {layer_of(m) for m in imported_modules(source, module)}
    return {layer for layer in layers if layer is not None and layer in ALLOWED} - allowed


def package_modules() -> list[tuple[str, Path]]:
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = (*parts[:-1], "__init__")
        modules.append((".".join(parts), path))
    return modules


def test_every_module_belongs_to_a_layer() -> None:
    layers = {name.split(".")[1] for name, _ in package_modules()}
    assert layers - TOP_LEVEL <= set(ALLOWED)


@pytest.mark.parametrize(("module", "path"), package_modules(), ids=lambda v: str(v))
def test_each_module_imports_only_the_layers_below_it(module: str, path: Path) -> None:
    if module.split(".")[1] in TOP_LEVEL:
        return
    assert crossings(path.read_text(encoding="utf-8"), module) == set()


@pytest.mark.parametrize(
    ("source", "module", "crossed"),
    [
        ("from conformance.suite.outcomes import x", "conformance.validator.checks", {"suite"}),
        ("from ...suite import wire", "conformance.reporting.html.view", {"suite"}),
        ("def f():\n    import conformance.engine.runner", "conformance.judge.rules", {"engine"}),
        ("from conformance import validator", "conformance.reporting.view", {"validator"}),
        ("from conformance.core import results", "conformance.judge.outcomes", set()),
        ("from . import schemas", "conformance.judge.outcomes", set()),
    ],
    ids=["absolute", "relative", "inside a function", "a layer by name", "allowed", "own layer"],
)
def test_a_crossing_is_found_however_it_is_written(
    source: str, module: str, crossed: set[str]
) -> None:
    assert crossings(source, module) == crossed
