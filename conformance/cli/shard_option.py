"""``run --shard i/N``: the option, parsed by ``core.shards.parse_shard``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from conformance.core.shards import MAX_SHARDS, Shard, ShardError, ShardPlan, parse_shard


class ShardType(click.ParamType):  # type: ignore[type-arg]
    """``i/N``: part i (from 1) of N (1 to ``MAX_SHARDS``)."""

    name = "i/N"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> Shard:
        if isinstance(value, Shard):
            return value
        try:
            return parse_shard(str(value))
        except ShardError as exc:
            self.fail(str(exc).removeprefix("--shard "), param, ctx)


def shard_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--shard",
        type=ShardType(),
        help=f"Run only part i of N (N up to {MAX_SHARDS}) of the run's checks: the same split "
        "on every machine for the same version and options, balanced by each check family's "
        "measured cost. Run every part (at once, against one server), then `merge` their "
        "report directories (docs/ci.md).",
    )(function)


def shard_note(plan: ShardPlan) -> str:
    """What the console says after a shard's verdict: it is a part, not the run."""
    return (
        f"shard {plan.shard}: {len(plan.tests)} of the run's {plan.plan_tests} tests; the "
        "requirements of the other shards' tests are not exercised here: `merge` the reports "
        "of every shard for the run's verdict"
    )
