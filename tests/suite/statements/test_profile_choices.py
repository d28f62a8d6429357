"""The statements family under other names for a line's direction (``statements.directions``).

A server that writes ``in`` and ``out`` instead of ``credit`` and ``debit`` passes under a
profile that says so, and fails STMT-003 under the default profile.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import RunResult
from conformance.engine.options import RunOptions
from conformance.engine.runner import run_suite
from conformance.reference.server import ReferenceServer
from tests.suite.proofs import family_failures, family_passed

pytestmark = pytest.mark.slow

IN_OUT = """extends = "default"

[profile]
name = "in-out"

[statements]
directions = ["in", "out"]
"""


def run(profile: str, base_url: str) -> RunResult:
    options = RunOptions(
        base_url=base_url, profile=profile, seed=5, families=("statements",), quick=True
    )
    return run_suite(options)


def test_other_direction_names_pass_where_the_profile_gives_them(tmp_path: Path) -> None:
    path = tmp_path / "in-out.toml"
    path.write_text(IN_OUT, encoding="utf-8")
    with ReferenceServer(profile=load_profile(path)) as server:
        own = run(str(path), server.base_url)
        default = run("default", server.base_url)
    assert family_failures(own, "statements") == {}
    assert {"STMT-003", "STMT-004"} <= family_passed(own, "statements")
    failed = family_failures(default, "statements")
    assert "STMT-003" in failed
    assert any("direction is not one of ['credit', 'debit']" in m for m in failed["STMT-003"])
