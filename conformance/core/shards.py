"""``run --shard i/N``: one deterministic part of a run's checks, for a CI matrix of machines.

The tests a run collects (after ``--only``/``--skip``) are split into N parts that share no
test. Each test costs its family's measured seconds (``shard_costs.toml``) shared evenly among
the family's tests; the tests, costliest first and then by node id, go one by one to the part
with the least cost so far (the lowest index on a tie). Nothing of the machine enters the split
(no time, no core count, no hash seed), so every machine computes the same parts for the same
suite version and options, and each keeps the part its index names.

The plan's fingerprint (``plan_sha256``) covers every test and the part it went to: each shard
records it with its own tests, and ``merge`` recomputes it from the union of the shards' tests,
which proves that together they ran every test of the plan exactly once.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from conformance.core.resources import package_data

MAX_SHARDS = 64
COSTS_FILE = ("core", "shard_costs.toml")


class ShardError(ValueError):
    """A ``--shard`` value that is not ``i/N`` with 1 <= i <= N <= ``MAX_SHARDS``."""


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (from 1) of ``total``."""

    index: int
    total: int

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"

    @property
    def data_tag(self) -> str:
        """Marks the data this shard creates (order numbers, user ids, keys): ``s2o4``."""
        return f"s{self.index}o{self.total}"


def parse_shard(text: str) -> Shard:
    """``"2/4"`` -> ``Shard(2, 4)``; ``ShardError`` says what is wrong with anything else."""
    index_text, slash, total_text = text.strip().partition("/")
    if not slash or not index_text.isdigit() or not total_text.isdigit():
        raise ShardError(f"--shard must be i/N (e.g. 2/4), not {text!r}")
    index, total = int(index_text), int(total_text)
    if not 1 <= total <= MAX_SHARDS:
        raise ShardError(f"--shard {text}: N must be 1 to {MAX_SHARDS}")
    if not 1 <= index <= total:
        raise ShardError(f"--shard {text}: i must be 1 to {total}")
    return Shard(index, total)


@cache
def family_costs() -> dict[str, float]:
    """Seconds a full run spends in each check family (``shard_costs.toml``)."""
    with package_data(*COSTS_FILE).open("rb") as file:
        data = tomllib.load(file)
    return {str(name): float(seconds) for name, seconds in data["families"].items()}


def default_cost(costs: dict[str, float]) -> float:
    """The cost of a family the table does not list (one added since it was measured)."""
    return sorted(costs.values())[len(costs) // 2] if costs else 1.0


@dataclass(frozen=True)
class CollectedTest:
    """A collected test: its pytest node id and its check family."""

    nodeid: str
    family: str


def split(tests: Sequence[CollectedTest], total: int, costs: dict[str, float]) -> dict[str, int]:
    """The part (1 to ``total``) of every test, balanced by cost (see the module)."""
    per_family = Counter(test.family for test in tests)
    fallback = default_cost(costs)

    def cost(test: CollectedTest) -> float:
        return costs.get(test.family, fallback) / per_family[test.family]

    loads = [0.0] * total
    parts: dict[str, int] = {}
    for test in sorted(tests, key=lambda t: (-cost(t), t.nodeid)):
        lightest = min(range(total), key=lambda i: (loads[i], i))
        loads[lightest] += cost(test)
        parts[test.nodeid] = lightest + 1
    return parts


def plan_sha256(parts: Iterable[tuple[str, int]]) -> str:
    """The fingerprint of a split: every test's node id and its part, in node id order."""
    lines = sorted(f"{nodeid}\t{part}\n" for nodeid, part in parts)
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ShardPlan:
    """What one shard ran of the split: recorded in its results.json (``shard``)."""

    shard: Shard
    plan_sha256: str
    plan_tests: int  # tests of the whole run, every shard together
    tests: tuple[str, ...]  # the node ids this shard ran, sorted

    def as_dict(self) -> dict[str, object]:
        return {
            "index": self.shard.index,
            "total": self.shard.total,
            "plan_sha256": self.plan_sha256,
            "plan_tests": self.plan_tests,
            "tests": list(self.tests),
        }


def plan_for(shard: Shard, tests: Sequence[CollectedTest], costs: dict[str, float]) -> ShardPlan:
    """``shard``'s part of ``tests``, with the fingerprint of the whole split."""
    parts = split(tests, shard.total, costs)
    mine = tuple(sorted(nodeid for nodeid, part in parts.items() if part == shard.index))
    return ShardPlan(shard, plan_sha256(parts.items()), len(parts), mine)


def plan_from_dict(data: object) -> ShardPlan:
    """The ``ShardPlan`` of ``as_dict``; ``ValueError`` when ``data`` is not one."""
    if not isinstance(data, dict):
        raise ValueError("a shard plan is an object")
    index, total, sha, count, tests = (
        data.get(key) for key in ("index", "total", "plan_sha256", "plan_tests", "tests")
    )
    numbers = (index, total, count)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise ValueError("a shard plan's index, total and plan_tests are integers")
    if not isinstance(sha, str) or not isinstance(tests, list):
        raise ValueError("a shard plan has a plan_sha256 and a list of tests")
    if not all(isinstance(t, str) for t in tests):
        raise ValueError("a shard plan's tests are node ids")
    shard = parse_shard(f"{index}/{total}")
    return ShardPlan(shard, sha, int(str(count)), tuple(tests))
