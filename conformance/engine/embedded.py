"""The embedded reference server of a plain pytest run (entry point
``payment_conformance_embedded``).

``pytest --pyargs conformance.suite`` without ``--base-url`` tests a reference server started on
loopback for the session. The suite package never imports the reference server: its
``conformance_target`` fixture asks for ``embedded_reference_target``, which this engine-side
plugin provides. ``payment-conformance run`` starts its own server instead and passes its URL.
A key or secret other than the profile's own (``--api-key``, ``--api-secret``) ends the session
before the server starts: the server would adopt it (``conformance.engine.credentials``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.core.results import Target, fault_names
from conformance.suite.plugin.options import SuiteSettings


@pytest.fixture(scope="session")
def embedded_reference_target(
    pytestconfig: pytest.Config, conformance_settings: SuiteSettings, conformance_profile: Profile
) -> Iterator[Target]:
    from conformance.engine.credentials import embedded_credential_problem
    from conformance.reference.server import ReferenceServer

    # conformance_profile is the profile with the credential given, if any, in place
    given = conformance_profile.primary
    own = load_profile(str(pytestconfig.getoption("--profile")))
    problem = embedded_credential_problem(own, given.api_key, given.api_secret)
    if problem is not None:
        pytest.exit(problem, returncode=pytest.ExitCode.USAGE_ERROR)

    fault = conformance_settings.embedded_fault
    with ReferenceServer(profile=conformance_profile, faults=fault_names(fault)) as server:
        yield Target(server.base_url, embedded=True, fault=fault)
