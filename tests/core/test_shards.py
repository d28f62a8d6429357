"""``run --shard i/N``: a deterministic split of the run's tests into parts that share nothing,
balanced by each family's measured cost, with a fingerprint that proves a complete merge."""

from __future__ import annotations

import random

import pytest

from conformance.core.shards import (
    MAX_SHARDS,
    CollectedTest,
    Shard,
    ShardError,
    family_costs,
    parse_shard,
    plan_for,
    plan_from_dict,
    plan_sha256,
    split,
)
from conformance.suite.plugin.collection import FAIL_FAST_FAMILIES

COSTS = {"schema": 40.0, "auth": 4.0, "payments": 16.0}
TESTS = [
    *(CollectedTest(f"schema/test_schema.py::test_unit_phases[op{i}]", "schema") for i in range(8)),
    *(CollectedTest(f"test_auth.py::test_auth[op{i}]", "auth") for i in range(20)),
    *(CollectedTest(f"payments/test_payments.py::test_{i}", "payments") for i in range(4)),
]


@pytest.mark.parametrize(("text", "shard"), [("1/1", Shard(1, 1)), ("2/4", Shard(2, 4))])
def test_a_shard_is_i_of_n(text: str, shard: Shard) -> None:
    assert parse_shard(text) == shard
    assert str(shard) == text


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("2", "must be i/N"),
        ("a/4", "must be i/N"),
        ("-1/4", "must be i/N"),
        ("0/4", "i must be 1 to 4"),
        ("5/4", "i must be 1 to 4"),
        ("1/0", f"N must be 1 to {MAX_SHARDS}"),
        (f"1/{MAX_SHARDS + 1}", f"N must be 1 to {MAX_SHARDS}"),
    ],
)
def test_anything_else_is_refused_with_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ShardError, match=says):
        parse_shard(text)


@pytest.mark.parametrize("total", [1, 2, 3, 4, 7])
def test_the_parts_share_no_test_and_together_hold_every_test(total: int) -> None:
    parts = split(TESTS, total, COSTS)
    assert sorted(parts) == sorted(t.nodeid for t in TESTS)
    assert set(parts.values()) == set(range(1, total + 1))


def test_the_split_does_not_depend_on_the_order_tests_were_collected_in() -> None:
    shuffled = TESTS[:]
    random.Random(4).shuffle(shuffled)
    assert split(shuffled, 4, COSTS) == split(TESTS, 4, COSTS)


def test_the_parts_are_balanced_by_the_cost_of_each_family() -> None:
    # 60 s in all: a split by test count would give the 4-test payments family (16 s) to one
    # part with a quarter of the cheap auth tests; by cost each part holds about 15 s.
    parts = split(TESTS, 4, COSTS)
    per_test = {t.nodeid: COSTS[t.family] / sum(u.family == t.family for u in TESTS) for t in TESTS}
    loads = [sum(per_test[n] for n, p in parts.items() if p == i) for i in range(1, 5)]
    assert max(loads) - min(loads) <= max(per_test.values())
    assert max(loads) < 16.5


def test_a_family_the_table_does_not_list_costs_the_median_of_the_others() -> None:
    tests = [*TESTS, CollectedTest("test_new.py::test_new", "new-family")]
    assert sorted(split(tests, 3, COSTS)) == sorted(t.nodeid for t in tests)


def test_each_shard_keeps_its_own_part_and_all_share_one_fingerprint() -> None:
    plans = [plan_for(Shard(i, 3), TESTS, COSTS) for i in (1, 2, 3)]
    assert {p.plan_sha256 for p in plans} == {plans[0].plan_sha256}
    assert sorted(n for p in plans for n in p.tests) == sorted(t.nodeid for t in TESTS)
    assert all(p.plan_tests == len(TESTS) for p in plans)
    parts = [(n, p.shard.index) for p in plans for n in p.tests]
    assert plan_sha256(parts) == plans[0].plan_sha256


def test_the_fingerprint_changes_with_the_tests_and_with_the_split() -> None:
    one = plan_for(Shard(1, 3), TESTS, COSTS).plan_sha256
    assert plan_for(Shard(1, 3), TESTS[:-1], COSTS).plan_sha256 != one
    other_costs = {**COSTS, "auth": 400.0}
    assert split(TESTS, 3, other_costs) != split(TESTS, 3, COSTS)
    assert plan_for(Shard(1, 3), TESTS, other_costs).plan_sha256 != one
    assert plan_for(Shard(1, 4), TESTS, COSTS).plan_sha256 != one


def test_a_plan_reads_back_from_its_dict_and_a_broken_one_is_refused() -> None:
    plan = plan_for(Shard(2, 3), TESTS, COSTS)
    assert plan_from_dict(plan.as_dict()) == plan
    for broken in ({**plan.as_dict(), "index": "2"}, {**plan.as_dict(), "tests": [1]}, []):
        with pytest.raises(ValueError):
            plan_from_dict(broken)


def test_the_shipped_cost_table_lists_every_family_of_the_suite() -> None:
    costs = family_costs()
    assert set(FAIL_FAST_FAMILIES) <= set(costs)
    assert all(seconds > 0 for seconds in costs.values())
