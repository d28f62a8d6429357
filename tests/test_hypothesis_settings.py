"""The project's tests never depend on examples saved in the working tree."""

from __future__ import annotations

from hypothesis import HealthCheck, settings


def test_the_tests_keep_no_example_database() -> None:
    assert settings.default.database is None


def test_a_failure_prints_how_to_reproduce_it() -> None:
    assert settings.default.print_blob is True


def test_a_loaded_machine_is_no_failure() -> None:
    assert HealthCheck.too_slow in settings.default.suppress_health_check
