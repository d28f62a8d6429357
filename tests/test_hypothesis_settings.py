"""The project's tests never depend on examples saved in the working tree."""

from __future__ import annotations

from hypothesis import settings


def test_the_tests_keep_no_example_database() -> None:
    assert settings.default.database is None


def test_a_failure_prints_how_to_reproduce_it() -> None:
    assert settings.default.print_blob is True
