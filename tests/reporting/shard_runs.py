"""Shards of one run built by hand, as ``run --shard i/N`` would write them (``merge`` tests).

Each of ``TESTS`` records one check of one AUTH requirement; ``FAILING_TEST``'s fails.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from conformance import __version__
from conformance.core.catalogue import load_catalogue
from conformance.core.results import CheckResult, Outcome, RunResult, Target, fold
from conformance.core.shards import CollectedTest, Shard, plan_for
from conformance.reporting import write_reports
from conformance.reporting.signing import SigningKey

CATALOGUE = load_catalogue()
SELECTED = CATALOGUE.select(("AUTH",), ())
TESTS = [CollectedTest(f"test_auth.py::test_auth[case{i}]", "auth") for i in range(9)]
COSTS = {"auth": 9.0}
FAILING_TEST = TESTS[4].nodeid


def check_of(nodeid: str) -> CheckResult:
    """The one check each test records: test i checks the i-th selected requirement."""
    number = int(nodeid.rsplit("case", 1)[1].rstrip("]"))
    outcome = Outcome.FAILED if nodeid == FAILING_TEST else Outcome.PASSED
    return CheckResult(
        f"auth.case{number}", "auth", (SELECTED[number].id,), outcome, message=f"case {number}"
    )


def shard_result(
    index: int, total: int, tests: list[CollectedTest] = TESTS, **changes: Any
) -> RunResult:
    plan = plan_for(Shard(index, total), tests, COSTS)
    checks = [check_of(nodeid) for nodeid in plan.tests]
    result = RunResult(
        suite_version=changes.pop("suite_version", __version__),
        contract_sha256="c" * 64,
        profile_name="default",
        profile_sha256="p" * 64,
        seed=changes.pop("seed", 5),
        # each machine starts its own embedded server, on a port of its own
        target=Target(f"http://127.0.0.1:{9000 + index}", embedded=True),
        started_at=f"2026-11-25T20:0{index}:00Z",
        duration_s=10.0 * index,
        requests_sent=100,
        requirements=fold(list(SELECTED), checks),
        checks=tuple(checks),
        # workers and the webhook receiver's address are the machine's own
        options={
            "profile": "default",
            "quick": "true",
            "only": "AUTH",
            "workers": str(index),
            "webhook_url": f"http://10.0.0.{index}:8000",
            "shard": f"{index}/{total}",
        },
        shard=plan,
    )
    return replace(result, **changes)


def write_shard(
    tmp_path: Path, result: RunResult, name: str | None = None, signer: SigningKey | None = None
) -> Path:
    assert result.shard is not None
    directory = tmp_path / (name or f"shard-{result.shard.shard.index}")
    write_reports(result, directory, CATALOGUE, signer=signer)
    return directory


def shards(tmp_path: Path, total: int = 3, signer: SigningKey | None = None) -> list[Path]:
    """Every shard of one run, written as ``run --shard i/N`` writes them (signed by ``signer``)."""
    return [
        write_shard(tmp_path, shard_result(i, total), signer=signer) for i in range(1, total + 1)
    ]
