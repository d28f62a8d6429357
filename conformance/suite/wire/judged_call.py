"""What a suite test sent and got back, as the judge's rules read an exchange
(``judge.answers.Call``): built from an ``httpx.Response``, whose ``request`` holds the sent
body, URL and headers.

A family that timed its request passes ``handled``: the window, in Unix seconds on its estimate
of the server's clock, in which the server handled the request; the times the judge derives from
the request are then judged against that window instead of the judge's own allowance (the
profile's clock window and a minute of latency either side of the time the answer came).
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import httpx

from conformance.core import jsonsafe
from conformance.judge.answers import AnswerChecks, CallReading
from conformance.judge.findings import NOT_JSON, Finding


@dataclass
class JudgedCall(CallReading):
    response: httpx.Response
    operation_id: str
    path_params: dict[str, str] = field(default_factory=dict)
    handled: tuple[float, float] | None = None
    status: int = field(init=False)
    answer: Any = field(init=False)  # the response's JSON document (None when there is none)
    request: Any = field(init=False)  # the request's JSON document, or ``NOT_JSON``
    _received: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._received = time.time()
        self.status = self.response.status_code
        self.answer = None
        with contextlib.suppress(ValueError):  # a hostile server's: bounded in depth and size
            self.answer = jsonsafe.loads(self.response.content)
        self.request = NOT_JSON
        with contextlib.suppress(ValueError, httpx.RequestNotRead):
            if self.response.request.content:
                self.request = json.loads(self.response.request.content)

    @cached_property
    def query(self) -> dict[str, str]:
        """The query parameters, the first value of each."""
        found: dict[str, str] = {}
        for name, value in self.response.request.url.params.multi_items():
            found.setdefault(name, value)
        return found

    @property
    def raw_query(self) -> str:
        return self.response.request.url.query.decode("ascii", "replace")

    @property
    def raw_path(self) -> str:
        return self.response.request.url.raw_path.partition(b"?")[0].decode("ascii", "replace")

    @property
    def request_body(self) -> bytes:
        try:
            return self.response.request.content
        except httpx.RequestNotRead:
            return b""

    def header(self, name: str) -> str | None:
        value: str | None = self.response.request.headers.get(name)
        return value

    def response_header(self, name: str) -> str | None:
        value: str | None = self.response.headers.get(name)
        return value

    def handled_between(
        self, slack: float, unix_timestamps: bool
    ) -> tuple[tuple[float, float], ...]:
        if self.handled is not None:
            return (self.handled,)
        elapsed = 0.0
        with contextlib.suppress(RuntimeError):  # a response not read to its end
            elapsed = self.response.elapsed.total_seconds()
        return ((self._received - elapsed - slack, self._received + slack),)


def judged(
    answers: AnswerChecks,
    response: httpx.Response,
    operation_id: str,
    path_params: dict[str, str] | None = None,
) -> list[Finding]:
    """The judge's findings on one exchange the suite sent (times with the judge's slack)."""
    return answers.judge(JudgedCall(response, operation_id, path_params or {}))
