"""The small pytester projects the plugin's tests write: files under ``checks/`` are
conformance checks (the ``conformance_suite_dirs`` ini option), files elsewhere are ordinary
tests; and what a run of one recorded."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import httpcore
import pytest

from conformance.core.evidence import check_from_dict
from conformance.core.profile import load_profile
from conformance.core.results import CheckResult
from conformance.reference.server import ReferenceServer
from conformance.suite.wire.check_properties import CHECK_PROPERTY

# pytester drops modules first imported during an inline run; httpx maps httpcore's exception
# classes once, so httpcore must be imported before any inline run for later tests to see them.
assert issubclass(httpcore.ConnectError, Exception)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nconformance_suite_dirs = checks\n")
    pytester.mkdir("checks")
    return pytester


def write_check(pytester: pytest.Pytester, name: str, source: str) -> None:
    (pytester.path / "checks" / f"{name}.py").write_text(textwrap.dedent(source))


def recorded(result: pytest.HookRecorder) -> list[CheckResult]:
    checks = []
    for report in result.getreports("pytest_runtest_logreport"):
        if report.when == "teardown":
            checks += [
                check_from_dict(v)
                for k, v in report.user_properties
                if k == CHECK_PROPERTY and isinstance(v, dict)
            ]
    return checks


def by_test(checks: list[CheckResult]) -> dict[str, CheckResult]:
    return {c.check_id.split("::")[-1]: c for c in checks}


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with ReferenceServer(profile=load_profile()) as server:
        yield server.base_url
