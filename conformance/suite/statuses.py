"""The status codes the server answered, per operation: what the reports' coverage table shows.

``StatusTally`` listens on the wire tap (``wiretap``), so it sees the exchanges of both HTTP
stacks of the suite (the suite's client and the schemathesis session), and counts each answer
under the operation whose method and path template match its request's path from ``/v1`` on
(a base URL may put a prefix before it). Requests to no operation of the contract and requests
without an answer are not counted. The plugin hands each test's counts to the engine
(``take``), which sums them into ``RunResult.statuses_seen``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from conformance.core.contract import effective_contract
from conformance.core.openapi import operations
from conformance.core.profile import Profile
from conformance.core.untrusted import split_url
from conformance.suite.wire import tap as wiretap
from conformance.suite.wire.tap import WireExchange

StatusCounts = dict[str, dict[int, int]]
"""Per operation id: status code -> answers."""

_PARAMETER = re.compile(r"\{[^/{}]+\}")


def _pattern(template: str) -> re.Pattern[str]:
    """``/v1/payments/{id}/cancel`` as a regex of the whole path, a parameter one segment."""
    return re.compile("[^/]+".join(re.escape(part) for part in _PARAMETER.split(template)))


class StatusTally:
    """Counts answers per operation and status (a ``wiretap`` observer)."""

    def __init__(
        self, contract: Mapping[str, Any], extra: Iterable[tuple[str, str, str]] = ()
    ) -> None:
        """``extra``: more (method, path template, operation id), such as the test helpers."""
        documented = [(e.method, e.path, e.operation_id) for e in operations(contract)]
        self._routes = [
            (method.upper(), _pattern(template), operation_id)
            for method, template, operation_id in (*documented, *extra)
        ]
        self._counts: StatusCounts = {}

    @classmethod
    def of_profile(cls, profile: Profile) -> StatusTally:
        """The tally of ``profile``'s effective contract and test helpers."""
        extra = [(h.method, h.path, h.operation_id) for h in profile.helpers.values()]
        return cls(effective_contract(profile), extra)

    def operation_of(self, method: str, url: str) -> str | None:
        try:
            path = split_url(url).path
        except ValueError:
            return None
        at = path.find("/v1/")
        if at < 0:
            return None
        path = path[at:]
        method = method.upper()
        for route_method, pattern, operation_id in self._routes:
            if route_method == method and pattern.fullmatch(path):
                return operation_id
        return None

    def __call__(self, exchange: WireExchange) -> None:
        if exchange.status is None:
            return
        operation_id = self.operation_of(exchange.method, exchange.url)
        if operation_id is None:
            return
        counts = self._counts.setdefault(operation_id, {})
        counts[exchange.status] = counts.get(exchange.status, 0) + 1

    def take(self) -> StatusCounts:
        """The counts since the last ``take``, and start again from nothing."""
        counts, self._counts = self._counts, {}
        return counts

    def take_property(self) -> dict[str, dict[str, int]]:
        """``take`` as plain JSON values (status codes as text), as xdist carries them."""
        return {
            operation_id: {str(status): answers for status, answers in counts.items()}
            for operation_id, counts in self.take().items()
        }

    def subscribe(self) -> None:
        """Count the exchanges of the wire tap from now on."""
        wiretap.subscribe(self)

    def unsubscribe(self) -> None:
        wiretap.unsubscribe(self)

    @contextlib.contextmanager
    def listening(self) -> Iterator[StatusTally]:
        """Count the exchanges of the wire tap while in the block."""
        self.subscribe()
        try:
            yield self
        finally:
            self.unsubscribe()
