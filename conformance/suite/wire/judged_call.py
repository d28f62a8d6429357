"""An exchange a suite family sent and got back, as the judge's rules read one
(``judge.answers.Call``): built from the ``httpx.Response``, whose ``.request`` holds the URL,
headers and body that were sent."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from conformance.judge.findings import NOT_JSON


@dataclass(slots=True)
class JudgedCall:
    """``handled``: when the server handled the request, in Unix seconds on the server's clock,
    where the family knows it (an estimate of the server's clock); without it, the judge's slack
    either side of the time the request was sent."""

    response: httpx.Response
    operation_id: str
    path_params: dict[str, str] = field(default_factory=dict)
    handled: tuple[float, float] | None = None
    status: int = field(init=False)
    answer: Any = field(init=False)
    request: Any = field(init=False)
    _received: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._received = time.time()
        self.status = self.response.status_code
        self.answer = _document(self.response.content)
        self.request = _document(self.response.request.content)
        if self.request is None:
            self.request = NOT_JSON

    @property
    def success(self) -> bool:
        return 200 <= self.status < 300

    @property
    def code(self) -> str | None:
        code = self.answer.get("code") if isinstance(self.answer, dict) else None
        return code if isinstance(code, str) else None

    @property
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
        if self.handled is not None:
            return (self.handled,)
        elapsed = 0.0
        with contextlib.suppress(RuntimeError):  # a response not read to its end
            elapsed = self.response.elapsed.total_seconds()
        return ((self._received - elapsed - slack, self._received + slack),)


def _document(raw: bytes) -> Any:
    """The JSON document of a body, None when it is empty or not JSON."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None
