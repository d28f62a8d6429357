"""The plugin's session (``conformance.suite.plugin.session``): inert outside the suite, and
while checks run Hypothesis is bounded, seeded and kept from the process's own constants,
then restored.

Each test writes a small project with pytester (``tests.suite.plugin.projects``). Files under
``checks/`` are conformance checks, files elsewhere are ordinary tests.
"""

from __future__ import annotations

import pytest

from tests.suite.plugin.projects import project, write_check

pytest_plugins = ("pytester",)
__all__ = ["project"]  # the fixture, used by name


# -- inert outside the suite -----------------------------------------------------------------
def test_ordinary_tests_are_left_alone(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain="""
        from hypothesis import settings

        def test_unmarked_is_fine(request):
            assert settings.get_current_profile_name() != "payment-conformance"
            assert request.node.user_properties == []
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "seed" not in result.stdout.str()  # no conformance header


def test_hypothesis_state_is_restored_after_a_suite_session(project: pytest.Pytester) -> None:
    from hypothesis import core, settings

    before = (settings.get_current_profile_name(), core.global_force_seed)
    write_check(
        project,
        "test_seeded",
        """
        import pytest
        from hypothesis import core, settings

        @pytest.mark.requirement("AUTH-001")
        def test_seed_is_forced():
            assert core.global_force_seed == 99
            assert settings.get_current_profile_name() == "payment-conformance"
            assert settings.default.database is None
        """,
    )
    project.inline_run("--conformance-seed", "99").assertoutcome(passed=1)
    assert (settings.get_current_profile_name(), core.global_force_seed) == before


def test_a_session_draws_no_constant_of_the_modules_the_process_imported(
    project: pytest.Pytester,
) -> None:
    # Hypothesis draws some values from the literals of the process's own modules: a module
    # imported before the run (a caller's, a benchmark's) changed what a seed generated.
    noise = [123456.5 + i for i in range(1000)]
    (project.path / "checks" / "noise_constants.py").write_text(f"NOISE = {noise!r}\n")
    write_check(
        project,
        "test_drawn",
        """
        import pytest
        from hypothesis import given, settings, strategies as st

        from noise_constants import NOISE

        @pytest.mark.requirement("AUTH-001")
        @settings(max_examples=300)
        @given(st.floats())
        def test_draws_none_of_them(value):
            assert value not in NOISE
        """,
    )
    project.syspathinsert(project.path / "checks")
    from hypothesis.internal.conjecture import providers

    before = providers._get_local_constants
    project.inline_run("--conformance-seed", "99").assertoutcome(passed=1)
    assert providers._get_local_constants is before  # let back in after the session
