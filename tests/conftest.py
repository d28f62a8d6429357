"""Hypothesis settings of the project's own tests, and an environment without CI side effects.

No example database: a failing example saved under ``.hypothesis/`` would be replayed by every
later run in that working tree (``.ci/run`` included), so one unlucky draw would fail them all.
A failure prints its reproduction blob instead.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

# too_slow: a strategy that is quick on an idle machine draws slowly on a loaded CI runner (seen
# with four test processes on two cores); that says nothing about the code under test.
settings.register_profile(
    "payment-conformance-tests",
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("payment-conformance-tests")


@pytest.fixture(autouse=True)
def _no_github_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests' own runs never append to the step summary of the CI job running the tests
    (``run`` appends summary.md to the file GITHUB_STEP_SUMMARY names); a test that wants it
    sets it."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
