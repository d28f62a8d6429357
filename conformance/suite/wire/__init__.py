"""The suite's plumbing: how its requests reach the server and how its results reach the engine.

The HTTP client the checks talk through (``client``) and the bounded transports under it
(``transport``), the run's TLS, proxy and gateway headers (``tls``, ``proxy``, ``gateway``), the
rate-limit policy both HTTP stacks follow (``ratelimit``), the wire tap every exchange passes
(``tap``) and its HAR recording (``har``), and how a test's CheckResults ride through
pytest-xdist to the engine (``check_properties``). No check family lives here.
"""

from __future__ import annotations
