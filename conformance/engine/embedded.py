"""The embedded reference server of a plain pytest run (entry point
``payment_conformance_embedded``).

``pytest --pyargs conformance.suite`` without ``--base-url`` tests a reference server started on
loopback for the session. The suite package never imports the reference server: its
``conformance_target`` fixture asks for ``embedded_reference_target``, which this engine-side
plugin provides. ``payment-conformance run`` starts its own server instead and passes its URL.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.core.profile import Profile
from conformance.core.results import Target
from conformance.suite.plugin import SuiteSettings


@pytest.fixture(scope="session")
def embedded_reference_target(
    conformance_settings: SuiteSettings, conformance_profile: Profile
) -> Iterator[Target]:
    from conformance.reference.server import ReferenceServer

    fault = conformance_settings.embedded_fault
    with ReferenceServer(profile=conformance_profile, faults=(fault,) if fault else ()) as server:
        yield Target(server.base_url, embedded=True, fault=fault)
