"""What the auth, idempotency and boundaries families run: operations at collection, quick subsets.

Test parameters are decided while pytest collects, before any fixture exists, so the profile
is read here from the ``--profile`` option (the plugin's fixture reads the same option) and the
operations come from its effective contract. ``--quick`` keeps a representative subset.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, TypeVar

import pytest

from conformance.core.contract import effective_contract, operations
from conformance.core.profile import Profile, load_profile
from conformance.core.signing import AUTH_HEADERS
from conformance.judge.constraints import iter_constraints
from conformance.suite.boundaries.near_misses import Case
from conformance.suite.wire.client import IDEMPOTENCY_HEADER

T = TypeVar("T")
SKIPPED_HEADERS = frozenset(h.lower() for h in (*AUTH_HEADERS, IDEMPOTENCY_HEADER))

# Near misses kept by --quick: the ones lenient parsers most often let through ("10." is a
# number to float() and Decimal()).
QUICK_NEAR_MISSES = frozenset(
    {
        "leading zero",
        "trailing dot",
        "trailing newline",
        "non-ASCII digits",
        "surrounding spaces",
        "exponent",
    }
)
QUICK_FORMAT_NEAR_MISSES = frozenset({"no scheme", "no time zone", "space instead of T"})
# Other JSON types kept by --quick, per declared type: null and the types a coercing parser
# turns into the declared one (12 -> "12", "86400" -> 86400, {} -> its JSON text, [] -> {}).
QUICK_TYPE_CLASSES: dict[str, frozenset[str]] = {
    "string": frozenset({"null", "number", "object"}),
    "integer": frozenset({"null", "string"}),
    "number": frozenset({"null", "string"}),
    "object": frozenset({"null", "array"}),
    "array": frozenset({"null", "object"}),
    "boolean": frozenset({"null", "string"}),
}


def _option(config: pytest.Config, name: str, default: Any) -> Any:
    try:
        value = config.getoption(name)
    except ValueError:  # the plugin did not register the option (run without it)
        return default
    return default if value is None else value


def collection_profile(config: pytest.Config) -> Profile:
    return _profile(str(_option(config, "--profile", "default")))


@cache
def _profile(name: str) -> Profile:
    return load_profile(name)


@cache
def _contract(name: str) -> dict[str, Any]:
    return effective_contract(_profile(name))


def collection_contract(config: pytest.Config) -> dict[str, Any]:
    return _contract(str(_option(config, "--profile", "default")))


def is_quick(config: pytest.Config) -> bool:
    return bool(_option(config, "--quick", False))


def selected_requirement_ids(only: Sequence[str], skip: Sequence[str]) -> set[str]:
    """Ids of the catalogue's requirements selected by ``--only``/``--skip``."""
    from conformance.core.catalogue import load_catalogue

    try:
        selected = load_catalogue().select(tuple(only), tuple(skip))
    except ValueError as exc:
        raise pytest.UsageError(f"--only/--skip: {exc}") from None
    return {requirement.id for requirement in selected}


def selection(only: Sequence[str], skip: Sequence[str]) -> frozenset[str] | None:
    """The requirement ids a run selects, or None when it selects every one."""
    if not only and not skip:
        return None
    return frozenset(selected_requirement_ids(only, skip))


def collection_selection(config: pytest.Config) -> frozenset[str] | None:
    """``selection`` of the ``--only``/``--skip`` options, read where tests are collected."""
    return selection(
        split_values(_option(config, "--only", [])), split_values(_option(config, "--skip", []))
    )


def split_values(values: Sequence[str]) -> tuple[str, ...]:
    """The comma-separated parts of a repeatable option's values (``--only A,B --only C``)."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def collection_operations(
    config: pytest.Config, *, with_constraints: bool = False, idempotency: bool = False
) -> list[str]:
    """Operation ids of the contract, in document order.

    ``with_constraints``: only those whose request has a constraint the boundaries family
    derives; ``idempotency``: only those that take an Idempotency-Key.
    """
    contract = collection_contract(config)
    found = []
    for op in operations(contract):
        if idempotency and not op.accepts_idempotency_key:
            continue
        if with_constraints and not any(
            iter_constraints(contract, op.operation_id, skip_headers=SKIPPED_HEADERS)
        ):
            continue
        found.append(op.operation_id)
    return found


def quick_subset(cases: Sequence[Case]) -> list[Case]:
    """The cases --quick keeps of one constraint: edges, one accepted value, key near misses,
    null and the JSON types a coercing parser confuses with the declared one; never fewer than
    one refused case when the constraint has any."""
    kept: list[Case] = []
    accepted = False
    for case in cases:
        if case.constraint.kind in ("pattern", "enum", "format"):
            if case.valid:
                if accepted:
                    continue
                accepted = True
            elif not _kept_in_quick(case):
                continue
        elif case.constraint.kind == "type" and not _type_kept_in_quick(case):
            continue
        kept.append(case)
    refused = [c for c in cases if not c.valid]
    if refused and not any(not c.valid for c in kept):
        kept.append(refused[0])
    return kept


def _type_kept_in_quick(case: Case) -> bool:
    declared = case.constraint.value if isinstance(case.constraint.value, tuple) else ()
    kept = set().union(*(QUICK_TYPE_CLASSES.get(str(t), frozenset()) for t in declared))
    return not kept or case.near_miss in kept


def _kept_in_quick(case: Case) -> bool:
    kind = case.constraint.kind
    if kind == "pattern":
        return case.label in QUICK_NEAR_MISSES
    if kind == "format":
        return case.label in QUICK_FORMAT_NEAR_MISSES
    return case.label.startswith(("upper case", "trailing space"))


def rotate(items: Sequence[T], index: int, count: int = 1) -> list[T]:
    """``count`` items of ``items`` starting at ``index`` (wrapping): spreads a quick subset
    over operations so that together they still cover every item."""
    if not items:
        return []
    return [items[(index + i) % len(items)] for i in range(min(count, len(items)))]
