"""Fixtures of the reference server tests: one server per module, signed clients per merchant."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.reference.server import ReferenceServer
from tests.reference.signed_client import SignedClient


@pytest.fixture(scope="session")
def profile() -> Profile:
    return load_profile()


@pytest.fixture(scope="module")
def server(profile: Profile) -> Iterator[ReferenceServer]:
    with ReferenceServer(profile=profile) as srv:
        yield srv


@pytest.fixture
def server_url(server: ReferenceServer) -> str:
    return server.base_url


@pytest.fixture
def alpha(server: ReferenceServer, profile: Profile) -> Iterator[SignedClient]:
    """Signed as mk_test_alpha (merchant m_alpha)."""
    with SignedClient(server.base_url, profile.primary) as client:
        yield client


@pytest.fixture
def beta(server: ReferenceServer, profile: Profile) -> Iterator[SignedClient]:
    """Signed as mk_test_beta (merchant m_beta)."""
    with SignedClient(server.base_url, profile.secondary) as client:
        yield client
