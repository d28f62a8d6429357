"""The plugin under ``--only``/``--skip``: a recorded failure of a requirement outside the
selection does not fail the pytest test, so ``run --fail-fast`` does not stop on it."""

from __future__ import annotations

import pytest

from tests.suite.plugin.projects import project, write_check

pytest_plugins = ("pytester",)
__all__ = ["project"]  # the fixture, used by name

MIXED = """
import pytest

@pytest.mark.requirement("SHAPE-001", "AUTH-001")
def test_phase(check_recorder):
    check_recorder.record("status", ["AUTH-001"], "passed")
    check_recorder.record("body", ["SHAPE-001"], "failed", "body is not an object")
"""


def test_a_failure_outside_the_selection_does_not_fail_the_test(project: pytest.Pytester) -> None:
    write_check(project, "test_mixed", MIXED)
    project.inline_run("--only", "AUTH-001").assertoutcome(passed=1)


def test_a_failure_inside_the_selection_still_fails_it(project: pytest.Pytester) -> None:
    write_check(project, "test_mixed", MIXED)
    project.inline_run("--only", "SHAPE-001").assertoutcome(failed=1)
    project.inline_run().assertoutcome(failed=1)
