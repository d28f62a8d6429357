"""``run --shard i/N``: the option refuses what is not a part of a run, and the console of a
shard says that its verdict is a part's."""

from __future__ import annotations

from click.testing import CliRunner

from conformance.cli import main
from conformance.cli.shard_option import shard_note
from conformance.core.shards import CollectedTest, Shard, plan_for

TESTS = [CollectedTest(f"test_auth.py::test_{i}", "auth") for i in range(5)]


def test_a_shards_console_says_it_is_a_part_of_the_run() -> None:
    note = shard_note(plan_for(Shard(2, 3), TESTS, {"auth": 1.0}))
    assert note.startswith("shard 2/3: ")
    assert "of the run's 5 tests" in note
    assert "`merge` the reports of every shard" in note


def test_a_bad_shard_is_exit_2_before_anything_runs() -> None:
    result = CliRunner().invoke(main, ["run", "--shard", "3/2"])
    assert result.exit_code == 2
    assert result.output.startswith("error: Invalid value for '--shard': 3/2: i must be 1 to 2")
