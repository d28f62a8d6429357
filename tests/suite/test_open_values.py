"""Guard: no check compares an answer with a status or code the specification leaves open.

The specification does not show the status or code of an error (validation, not found, invalid
state, idempotency, authentication...): the profile declares them, and every check reads them
from it. A literal such as ``status == 422`` or ``code == "validation_error"`` in
``conformance/suite`` or ``conformance/validator`` would judge every server by the default
profile's choice. Status classes (``400 <= status < 500``) are the specification's own, and so
are 429 and 503 of rate limiting (RFC 6585, RFC 9110).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.core.profile import load_profile

ROOT = Path(__file__).resolve().parents[2] / "conformance"
CHECKED = ("suite", "validator")
OPEN_STATUSES = frozenset({400, 401, 403, 404, 405, 409, 410, 413, 415, 422})
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def open_codes() -> frozenset[str]:
    """The error codes the default profile declares: each one a choice of the profile."""
    return frozenset(spec.code for spec in load_profile().error_specs if spec.code)


def literals(node: ast.expr) -> Iterator[object]:
    if isinstance(node, ast.Constant):
        yield node.value
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for element in node.elts:
            yield from literals(element)


def hard_coded(tree: ast.AST, codes: frozenset[str]) -> Iterator[tuple[int, str]]:
    """(line, source) of every equality or membership test, and every ``ErrorSpec(...)``,
    against an open status or code written as a literal."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and not all(isinstance(o, ORDERING) for o in node.ops):
            values = [v for side in (node.left, *node.comparators) for v in literals(side)]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ErrorSpec":
            values = [v for arg in node.args for v in literals(arg)]
        else:
            continue
        if any(v in OPEN_STATUSES or v in codes for v in values if isinstance(v, (int, str))):
            yield node.lineno, ast.unparse(node)


def test_the_guard_finds_a_hard_coded_status_or_code() -> None:
    codes = open_codes()
    found = hard_coded(
        ast.parse(
            "a = response.status_code == 422\n"
            "b = status in (401, 404)\n"
            'c = body.get("code") != "validation_error"\n'
            "d = ErrorSpec(400)\n"
            "e = 400 <= status < 500 and status == profile_status and status in (429, 503)\n"
        ),
        codes,
    )
    assert [line for line, _ in found] == [1, 2, 3, 4]


@pytest.mark.parametrize("package", CHECKED)
def test_no_check_hard_codes_an_open_status_or_code(package: str) -> None:
    codes = open_codes()
    found = [
        f"{path.relative_to(ROOT.parent)}:{line}: {source}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, source in hard_coded(ast.parse(path.read_text("utf-8")), codes)
    ]
    assert found == []
