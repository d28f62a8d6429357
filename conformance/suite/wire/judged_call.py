"""What a suite test sent and got back, as the judge's answer rules read an exchange
(``judge.answers.Call``): built from an ``httpx.Response``, whose ``request`` holds the sent
body, URL and headers.

A family that timed its request passes ``handled``: the window, in the suite's clock and
widened by what it allows the server's clock, in which the server handled the request; the
judge's times derived from the request are then judged against that narrower window instead
of the judge's own allowance.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import httpx

from conformance.judge.findings import NOT_JSON


@dataclass
class JudgedCall:
    response: httpx.Response
    operation_id: str
    path_params: dict[str, str] = field(default_factory=dict)
    handled: tuple[float, float] | None = None
    status: int = field(init=False)
    answer: Any = field(init=False)  # the response's JSON document (None when there is none)
    request: Any = field(init=False)  # the request's JSON document, or ``NOT_JSON``

    def __post_init__(self) -> None:
        self.status = self.response.status_code
        self.answer = None
        with contextlib.suppress(ValueError):
            self.answer = self.response.json()
        self.request = NOT_JSON
        with contextlib.suppress(ValueError, httpx.RequestNotRead):
            if self.response.request.content:
                self.request = json.loads(self.response.request.content)

    @property
    def success(self) -> bool:
        return 200 <= self.status < 300

    @property
    def code(self) -> str | None:
        code = self.answer.get("code") if isinstance(self.answer, dict) else None
        return code if isinstance(code, str) else None

    @cached_property
    def query(self) -> dict[str, str]:
        """The query parameters, the first value of each."""
        found: dict[str, str] = {}
        for name, value in self.response.request.url.params.multi_items():
            found.setdefault(name, value)
        return found

    def field(self, name: str) -> Any:
        """A top-level member of the request body (None when absent or no object)."""
        return self.request.get(name) if isinstance(self.request, dict) else None

    def header(self, name: str) -> str | None:
        value: str | None = self.response.request.headers.get(name)
        return value

    def handled_between(
        self, slack: float, unix_timestamps: bool
    ) -> tuple[tuple[float, float], ...]:
        """The family's own window when it gave one, else none: the suite does not judge a
        derived time it did not time."""
        return () if self.handled is None else (self.handled,)
