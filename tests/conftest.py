"""Hypothesis settings of the project's own tests.

No example database: a failing example saved under ``.hypothesis/`` would be replayed by every
later run in that working tree (``.ci/run`` included), so one unlucky draw would fail them all.
A failure prints its reproduction blob instead.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("payment-conformance-tests", database=None, print_blob=True)
settings.load_profile("payment-conformance-tests")
