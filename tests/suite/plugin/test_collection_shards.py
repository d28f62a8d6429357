"""The plugin under ``--conformance-shard i/N`` (``run --shard``): each shard runs its own part
of the selected tests, the parts together are every test once, the plan is written for the
engine, and the data of the shard's tests carries its tag; and under ``--conformance-family``
(``RunOptions.families``), which runs chosen families alone."""

from __future__ import annotations

import json

import pytest

from tests.suite.plugin.projects import project, write_check

pytest_plugins = ("pytester",)
__all__ = ["project"]  # the fixture, used by name

CHECKS = """
import pytest

from conformance.suite import shard_data

@pytest.mark.requirement("AUTH-001")
@pytest.mark.parametrize("case", range(7))
def test_auth_case(case):
    pass

@pytest.mark.requirement("SHAPE-001")
@pytest.mark.family("schema")
@pytest.mark.parametrize("case", range(3))
def test_shape_case(case):
    pass

@pytest.mark.requirement("AUTH-002")
def test_data_is_tagged(request):
    shard = request.config.getoption("--conformance-shard")
    expected = "" if shard is None else "s{}o{}".format(*shard.split("/"))
    assert shard_data.unique_hex(20).startswith(expected)
"""
EVERY_TEST = 7 + 3 + 1


def ran(result: pytest.HookRecorder) -> list[str]:
    return sorted(
        r.nodeid
        for r in result.getreports("pytest_runtest_logreport")
        if r.passed and r.when == "call"
    )


def test_the_shards_run_every_test_once_between_them(project: pytest.Pytester) -> None:
    write_check(project, "test_many", CHECKS)
    every = ran(project.inline_run())
    assert len(every) == EVERY_TEST
    parts = []
    plans = []
    for index in (1, 2, 3):
        plan_file = project.path / f"plan-{index}.json"
        result = project.inline_run(
            "--conformance-shard", f"{index}/3", "--conformance-shard-plan", str(plan_file)
        )
        assert not result.listoutcomes()[2]  # nothing failed
        parts.append(ran(result))
        plans.append(json.loads(plan_file.read_text(encoding="utf-8")))
    assert sorted(n for part in parts for n in part) == every
    assert all(part for part in parts)
    assert [p["tests"] for p in plans] == parts
    assert {p["plan_sha256"] for p in plans} == {plans[0]["plan_sha256"]}
    assert {p["plan_tests"] for p in plans} == {EVERY_TEST}


def test_the_split_is_of_the_tests_only_and_skip_leave(project: pytest.Pytester) -> None:
    write_check(project, "test_many", CHECKS)
    plan_file = project.path / "plan.json"
    result = project.inline_run(
        "--only", "AUTH", "--conformance-shard", "1/2", "--conformance-shard-plan", str(plan_file)
    )
    assert not result.listoutcomes()[2]
    assert json.loads(plan_file.read_text(encoding="utf-8"))["plan_tests"] == 7 + 1
    assert not any("test_shape_case" in nodeid for nodeid in ran(result))


def test_a_bad_shard_is_a_usage_error(project: pytest.Pytester) -> None:
    write_check(project, "test_many", CHECKS)
    result = project.runpytest("--conformance-shard", "4/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--shard 4/3: i must be 1 to 3*"])


def test_without_a_shard_nothing_is_tagged(project: pytest.Pytester) -> None:
    write_check(project, "test_many", CHECKS)
    project.inline_run("-k", "tagged").assertoutcome(passed=1)


def test_a_family_runs_alone_and_an_unknown_one_is_a_usage_error(
    project: pytest.Pytester,
) -> None:
    write_check(project, "test_many", CHECKS)
    alone = ran(project.inline_run("--conformance-family", "schema"))
    assert len(alone) == 3 and all("test_shape_case" in nodeid for nodeid in alone)
    result = project.runpytest_inprocess("--conformance-family", "scheme")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no check family scheme; the families are many, schema" in result.stderr.str()
