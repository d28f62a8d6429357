"""The conformance suite: a pytest test package run against a Payment Service server.

Run it with ``payment-conformance run`` or with plain pytest
(``pytest --pyargs conformance.suite --base-url URL -n 4``). The pytest plugin in
``conformance.suite.plugin`` provides the options, fixtures and result recording; every test
module here declares the requirements it checks with ``@pytest.mark.requirement(...)``.
"""

from __future__ import annotations
