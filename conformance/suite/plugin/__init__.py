"""The pytest plugin of the conformance suite (entry point ``payment_conformance``).

It is loaded in every pytest run of an environment where payment-conformance is installed,
so it stays inert unless conformance checks are collected: its fixtures are lazy, and only
tests under the suite package (or a directory of the ``conformance_suite_dirs`` ini option)
are checked for markers, filtered by ``--only``/``--skip`` and recorded as CheckResults.
Its rooms: ``options`` (the options and ``SuiteSettings``), ``session`` (the session's state,
activation), ``collection`` (which tests are checks, and which run in what order), ``fixtures``
and ``results`` (each check's outcome and CheckResults).

Options: ``--base-url`` (none: an embedded reference server), ``--profile``, ``--api-key`` /
``--api-secret``, ``--conformance-seed``, ``--max-examples``, ``--only`` / ``--skip``,
``--quick``, ``--embedded-fault``, ``--webhook-url`` / ``--webhook-bind`` (where the webhooks
family's receiver listens and how the server reaches it), ``--cacert`` / ``--insecure`` /
``--client-cert`` / ``--client-key`` (the TLS of every request, ``conformance.suite.wire.tls``),
``--rate-limit N/s`` (all test processes together), ``--conformance-shard i/N`` (one part of
the selected tests, ``conformance.core.shards``); gateway headers come from the
environment (``conformance.suite.wire.gateway.HEADERS_ENV``). Markers: ``requirement(*ids)``
(mandatory on suite tests) and ``family(name)``.

Only an answer of the server fails a requirement (``tool_errors.not_the_servers``). A check
that raised one of hypothesis' own errors (``Flaky``, "Inconsistent data generation",
``Unsatisfiable``, a health check) or whose request got no HTTP answer (a refused or reset
connection, a TLS handshake or DNS error, no byte of a response within the read timeout, a
connection closed before any response) is not exercised, with that reason; what it recorded
from the server's answers before (``CheckRecorder`` failures with their evidence) stays. A reply
that is not valid HTTP, a body cut at the size cap and a response still incomplete at its 30 s
deadline (a trickle) are the server's answers and may fail the requirements that cover them.
When the server is gone (three requests in a row of the suite's client timed out or could not
connect), no further check runs, and the engine ends the run incomplete (exit code 2). The
schema phases' own HTTP stack giving up while the suite's client still reaches the server
leaves its checks not exercised, not the run incomplete. A request the server kept rate
limiting past its bounds leaves what it cut short not exercised (``rate_limit_checks``).
"""

from __future__ import annotations

# pytest finds hooks and fixtures as attributes of the module it registers: this one alone, so
# that each is registered once (the submodules are never registered themselves).
from conformance.suite.plugin.collection import (
    pytest_collection_modifyitems,
    pytest_collectstart,
)
from conformance.suite.plugin.fixtures import (
    case_log,  # TEMP(h21-params)
    check_recorder,
    conformance_profile,
    conformance_seed,
    conformance_settings,
    conformance_target,
    effective_contract,
    machine_context,
    other_client,
    record_operation,
    suite_client,
)
from conformance.suite.plugin.options import pytest_addoption
from conformance.suite.plugin.results import pytest_runtest_makereport, pytest_runtest_setup
from conformance.suite.plugin.session import (
    pytest_configure,
    pytest_configure_node,
    pytest_report_header,
    pytest_unconfigure,
)

__all__ = [
    "case_log",  # TEMP(h21-params)
    "check_recorder",
    "conformance_profile",
    "conformance_seed",
    "conformance_settings",
    "conformance_target",
    "effective_contract",
    "machine_context",
    "other_client",
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_collectstart",
    "pytest_configure",
    "pytest_configure_node",
    "pytest_report_header",
    "pytest_runtest_makereport",
    "pytest_runtest_setup",
    "pytest_unconfigure",
    "record_operation",
    "suite_client",
]
