"""Feed ``CrossExchangeChecks`` a sequence of exchanges, as the cross-exchange tests do.

``Traffic`` sends one exchange after another, each starting a second after the previous one
(so none overlap unless a test says so), for the API key it is told, and keeps every result;
``outcomes(rid)`` reads what a requirement got, including the failures that waited for later
exchanges (``finish``).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from conformance.core.profile import Profile, load_profile
from conformance.core.results import CheckResult, Outcome
from conformance.validator.cross import CrossExchangeChecks
from tests.validator.samples import exchange

ALPHA, BETA = "mk_test_alpha", "mk_test_beta"
START = datetime(2026, 1, 1)


class Traffic:
    """A recording fed to the cross-exchange checks one exchange at a time."""

    def __init__(self, profile: Profile | None = None) -> None:
        self.cross = CrossExchangeChecks(profile or load_profile("default"))
        self.results: list[CheckResult] = []
        self._clock = itertools.count()
        self._entries = itertools.count(1)

    def send(
        self,
        operation_id: str,
        method: str,
        path: str,
        *,
        api_key: str = ALPHA,
        key: str | None = None,
        request: Any = b"",
        status: int = 200,
        answer: Any = b"",
        replayed: bool = False,
        at: float | None = None,
        duration_ms: float = 10.0,
    ) -> list[CheckResult]:
        """Record one exchange (``at``: seconds after START, else the next second)."""
        headers = [("X-Api-Key", api_key)]
        if key is not None:
            headers.append(("Idempotency-Key", key))
        response_headers = [("Content-Type", "application/json")]
        if replayed:
            response_headers.append(("Idempotent-Replayed", "true"))
        moment = START + timedelta(seconds=next(self._clock) if at is None else at)
        ex = exchange(
            method,
            path,
            request_headers=headers,
            request_body=request,
            status=status,
            response_headers=response_headers,
            response_body=answer,
            started_at=moment.isoformat(timespec="milliseconds") + "Z",
            duration_ms=duration_ms,
        )
        ex = replace(ex, source=f"traffic.har entry {next(self._entries)}")
        results = self.cross.observe(ex, operation_id)
        self.results += results
        return results

    def finish(self) -> None:
        self.results += self.cross.finish()

    def outcomes(self, rid: str) -> list[Outcome]:
        return [r.outcome for r in self.results if rid in r.requirement_ids]
