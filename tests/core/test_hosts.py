"""Which hosts count as this machine's own (core/hosts.py)."""

from __future__ import annotations

import pytest

from conformance.core.hosts import is_loopback


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.9.9.9", "::1", "[::1]", "localhost", "LOCALHOST.", "a.localhost"]
)
def test_loopback_addresses_and_localhost_names_are_this_machine(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["10.0.0.1", "0.0.0.0", "::", "localhost.example.test", "example", "[::2]", ""]
)
def test_any_other_address_or_name_is_another_machine(host: str) -> None:
    assert not is_loopback(host)
