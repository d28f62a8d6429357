"""Which collected tests are conformance checks, their markers, and which of them run:
``--only``/``--skip``, the shard of ``--conformance-shard`` and the order of ``--exitfirst``."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.core.shards import CollectedTest, Shard, family_costs, plan_for
from conformance.suite.plugin.session import _STATE, _activate
from conformance.suite.selection import selected_requirement_ids

SUITE_DIR = Path(__file__).resolve().parent.parent
_IN_SUITE = pytest.StashKey[dict[Path, bool]]()
_UNMARKED = pytest.StashKey[bool]()
UNMARKED_MESSAGE = (
    "conformance checks must name the requirements they verify with "
    "@pytest.mark.requirement('ID', ...)"
)


def _suite_dirs(config: pytest.Config) -> list[Path]:
    extra: list[Path] = config.getini("conformance_suite_dirs")
    return [SUITE_DIR, *(Path(p).resolve() for p in extra)]


def _in_suite(config: pytest.Config, path: Path | None) -> bool:
    if path is None:
        return False
    known = config.stash.setdefault(_IN_SUITE, {})
    if path not in known:
        resolved = path.resolve()
        known[path] = any(resolved.is_relative_to(d) for d in _suite_dirs(config))
    return known[path]


def is_suite_item(item: pytest.Item) -> bool:
    return _in_suite(item.config, getattr(item, "path", None))


def pytest_collectstart(collector: pytest.Collector) -> None:
    state = collector.config.stash.get(_STATE, None)
    if state is not None and not state.active and _in_suite(collector.config, collector.path):
        _activate(collector.config, state)


def _marker_ids(item: pytest.Item) -> tuple[str, ...]:
    ids: list[str] = []
    for mark in item.iter_markers("requirement"):
        ids.extend(str(a) for a in mark.args)
    return tuple(dict.fromkeys(ids))


def family_of(item: pytest.Item) -> str:
    """The check family of a suite test: its family marker, else its module's name."""
    mark = item.get_closest_marker("family")
    if mark is not None and mark.args:
        return str(mark.args[0])
    stem = Path(str(getattr(item, "path", item.nodeid))).stem
    return stem.removeprefix("test_") or "suite"


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    suite_items = [item for item in items if is_suite_item(item)]
    if not suite_items:
        return
    _activate(config, state)
    unmarked = [item for item in suite_items if not _marker_ids(item)]
    if unmarked:
        if hasattr(config, "workerinput"):
            # A UsageError on a pytest-xdist worker is an internal error of the controller:
            # let each unmarked check fail with the explanation instead.
            for item in unmarked:
                item.stash[_UNMARKED] = True
        else:
            listed = "\n  ".join(item.nodeid for item in unmarked[:20])
            raise pytest.UsageError(f"{UNMARKED_MESSAGE}; these do not:\n  {listed}")
    if config.getoption("maxfail", 0) == 1:
        items[:] = fail_fast_order(items)
    settings = state.settings
    if settings.only or settings.skip:
        selected = selected_requirement_ids(settings.only, settings.skip)
        _deselect(config, items, lambda item: bool(selected.intersection(_marker_ids(item))))
    if settings.families:
        _keep_families(config, items, settings.families)
    if settings.shard is not None:
        _keep_shard(config, items, settings.shard)


def _keep_families(
    config: pytest.Config, items: list[pytest.Item], families: tuple[str, ...]
) -> None:
    known = {family_of(item) for item in items if is_suite_item(item)}
    unknown = sorted(set(families) - known)
    if unknown and not hasattr(config, "workerinput"):
        raise pytest.UsageError(
            f"--conformance-family: no check family {', '.join(unknown)}; "
            f"the families are {', '.join(sorted(known))}"
        )
    _deselect(config, items, lambda item: family_of(item) in families)


def _deselect(
    config: pytest.Config, items: list[pytest.Item], kept: Callable[[pytest.Item], bool]
) -> None:
    """Deselect the suite's items ``kept`` refuses (other items stay)."""
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        if is_suite_item(item) and not kept(item):
            dropped.append(item)
        else:
            keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def _keep_shard(config: pytest.Config, items: list[pytest.Item], shard: Shard) -> None:
    """Keep ``shard``'s part of the suite's items; write its plan where the engine said."""
    tests = [CollectedTest(item.nodeid, family_of(item)) for item in items if is_suite_item(item)]
    plan = plan_for(shard, tests, family_costs())
    mine = frozenset(plan.tests)
    _deselect(config, items, lambda item: item.nodeid in mine)
    where = config.getoption("--conformance-shard-plan")
    if where is not None:
        # every xdist worker collects the same items and writes the same plan
        path = Path(where)
        scratch = path.with_suffix(f".{os.getpid()}")
        scratch.write_text(json.dumps(plan.as_dict()), encoding="utf-8")
        os.replace(scratch, path)


# With --exitfirst (run --fail-fast) the families that check one exchange at a time, and catch
# the most bugs for their time, go first; the scenario families (state machines, a payment that
# waits to expire) last. Within a family the order is kept. Families not listed go in between.
FAIL_FAST_FAMILIES = (
    "auth",
    "idempotency",
    "boundaries",
    "robustness",
    "responses",
    "schema",
    "isolation",
    "x402",
    "webhooks",
    "statements",
    "schedules",
    "payments",
)


def fail_fast_order(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` in the order that reaches a first failure soonest (a stable sort)."""
    middle = FAIL_FAST_FAMILIES.index("schema")

    def rank(item: pytest.Item) -> int:
        if not is_suite_item(item):
            return -1
        family = family_of(item)
        return FAIL_FAST_FAMILIES.index(family) if family in FAIL_FAST_FAMILIES else middle

    return sorted(items, key=rank)
