"""Probes of the fault catalogue.

A probe is a function of a ``Probe``: it drives a reference server started with one fault and
asserts the broken behaviour (``assert`` statements). The same probe must raise AssertionError
against the unfaulted server: tests/reference/test_faults.py checks both directions for every
catalogue entry. probes_core.py and probes_domain.py each export ``PROBES: dict[str, ProbeFn]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from conformance.core.profile import Profile
from tests.reference.signed_client import SignedClient


@dataclass
class Probe:
    base_url: str
    profile: Profile
    client: SignedClient  # signed as the profile's primary credential (m_alpha)
    other: SignedClient  # signed as the secondary credential (m_beta)
    extras: dict[str, object] = field(default_factory=dict)


ProbeFn = Callable[[Probe], None]
