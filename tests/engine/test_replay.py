"""What the replay command a report prints for a failed requirement repeats: the same examples,
coverage and fuzzing cases for that requirement's checks (``REPLAY_NOTE`` says so, and says
that call sequences may differ: they follow the server's answers)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conformance.cli.run import run as run_command
from conformance.core.results import Outcome
from conformance.engine.options import RunOptions
from conformance.engine.progress import NullDisplay
from conformance.engine.runner import execute

FAULT = "shape-expires-at-not-date-time"  # breaks SHAPE-001 in the examples, coverage,
# fuzzing and stateful phases of the schema family and in the responses family
REQUIREMENT = "SHAPE-001"


def unit_phase_cases(checks: list[dict[str, Any]]) -> dict[tuple[str, str | None], str]:
    """Per schema check of the examples, coverage and fuzzing phases on an operation, the
    cases it saw per phase.

    Its message says "12 of 23 responses failed (coverage 16, examples 1, fuzzing 6)" or
    "23 responses passed (coverage 16, examples 1, fuzzing 6)": the bracket counts the
    generated cases; how many failed may follow the server's state (a list's length).
    """
    cases = {}
    for c in checks:
        if c["check_id"].startswith("schema.unit.") and REQUIREMENT in c["requirement_ids"]:
            phases = re.search(r"\(([a-z]+ [0-9]+(?:, [a-z]+ [0-9]+)*)\)", c["message"])
            if phases is not None:
                cases[(c["check_id"], c["operation_id"])] = phases.group(1)
    return cases


def failed_in_unit_phases(checks: list[dict[str, Any]]) -> set[tuple[str, str | None]]:
    return {
        (c["check_id"], c["operation_id"])
        for c in checks
        if c["check_id"].startswith("schema.unit.")
        and REQUIREMENT in c["requirement_ids"]
        and c["outcome"] == Outcome.FAILED.value
    }


@pytest.mark.slow
def test_a_replay_sends_the_same_unit_phase_cases_as_the_run(tmp_path: Path) -> None:
    # The run: a whole section, of which the failed requirement is one.
    original = execute(
        RunOptions(
            seed=3,
            only=("spec 2",),
            families=("schema", "responses"),  # those that judge SHAPE-001
            quick=True,
            embedded_fault=FAULT,
            report_dir=tmp_path / "run",
        ),
        NullDisplay(),
    )
    document = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    (replay,) = [r["replay"] for r in document["requirements"] if r["id"] == REQUIREMENT]
    assert replay == original.result.replay_command(REQUIREMENT)
    words = shlex.split(replay)
    assert words[:2] == ["payment-conformance", "run"]

    # The replay, exactly as printed (plus where to write its reports).
    replayed = CliRunner().invoke(
        run_command, [*words[2:], "--no-progress", "--report-dir", str(tmp_path / "replay")]
    )
    assert replayed.exit_code == 1, replayed.output
    again = json.loads((tmp_path / "replay" / "results.json").read_text(encoding="utf-8"))

    assert failed_in_unit_phases(document["checks"])  # the fault shows in the unit phases
    assert failed_in_unit_phases(again["checks"])
    before = unit_phase_cases(document["checks"])
    assert len(before) >= 5, before
    assert unit_phase_cases(again["checks"]) == before
