"""What the suite declares it checks: the requirement ids of its collected tests.

The suite is collected as ``run`` would collect it (pytest ``--collect-only``: no request is
sent, the base URL is never used) and each suite test's ``@pytest.mark.requirement`` ids are
read. ``conformance.core.coverage_gate`` holds the catalogue and the contract against them.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest

from conformance.core.results import Target
from conformance.engine.options import RunError, RunOptions
from conformance.engine.session import _only_named_plugins, pytest_args
from conformance.suite.plugin.collection import is_suite_item


class _Markers:
    def __init__(self) -> None:
        self.by_test: dict[str, tuple[str, ...]] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            if is_suite_item(item):
                ids = [str(a) for m in item.iter_markers("requirement") for a in m.args]
                self.by_test[item.nodeid] = tuple(dict.fromkeys(ids))


def collect_suite(plugin: object, profile: str = "default", *, quick: bool = False) -> None:
    """Collect the suite as a run would (``--collect-only``) with ``plugin`` looking on;
    ``RunError`` when it cannot be collected."""
    output = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="payment-conformance-collect-") as scratch:
        config_file = Path(scratch) / "pytest.ini"
        config_file.write_text("[pytest]\n", encoding="utf-8")
        # collection only: no request is sent, the address is never used
        target = Target("http://127.0.0.1:9", embedded=False)
        args = pytest_args(RunOptions(profile=profile, quick=quick), target, 0, config_file)
        with (
            _only_named_plugins(),  # as a run: pytest_args names the suite's plugins with -p
            contextlib.redirect_stdout(output),
            contextlib.redirect_stderr(output),
        ):
            code = pytest.main([*args, "--collect-only"], plugins=[plugin])
    if code != pytest.ExitCode.OK:
        raise RunError(
            f"the suite could not be collected (pytest exit code {code}):\n"
            + output.getvalue()[-2000:]
        )


def requirement_checks(profile: str = "default", *, quick: bool = False) -> dict[str, set[str]]:
    """Requirement id -> the suite tests that declare a check of it."""
    markers = _Markers()
    collect_suite(markers, profile, quick=quick)
    if not markers.by_test:
        raise RunError("the suite has no test")
    checks: dict[str, set[str]] = {}
    for test, ids in markers.by_test.items():
        for requirement_id in ids:
            checks.setdefault(requirement_id, set()).add(test)
    return checks
