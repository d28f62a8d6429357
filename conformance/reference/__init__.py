"""The reference server: a complete implementation of the default profile.

``ReferenceServer`` (``conformance.reference.server``) runs it on a loopback port for the
suite, the tests and ``payment-conformance serve``. Faults from ``faults/*.yaml`` switch on
one realistic bug each, so that every check of the suite can be shown to fail.
"""

from __future__ import annotations
