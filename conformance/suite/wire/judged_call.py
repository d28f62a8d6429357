"""One exchange the suite sent, as the judge's answer rules read it (``judge.answers.Call``).

Built from the ``httpx.Response``: its ``.request`` holds the URL, headers and body the suite
sent. ``sent`` is when (suite clock, just before and just after): the server handled the
request between the two, within the slack the rule allows for its clock; without it the
request's ``X-Timestamp`` stands for that moment, as in the validator.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from typing import Any

import httpx

from conformance.judge.answers import AnswerChecks
from conformance.judge.findings import NOT_JSON, Finding
from conformance.judge.outcomes import json_body


@dataclasses.dataclass
class JudgedCall:
    """What the suite sent and got back, read once (not to be changed)."""

    response: httpx.Response
    operation_id: str
    path_params: dict[str, str] = dataclasses.field(default_factory=dict)
    sent: tuple[float, float] | None = None
    status: int = dataclasses.field(init=False)
    answer: Any = dataclasses.field(init=False)
    request: Any = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.status = self.response.status_code
        self.answer = json_body(self.response)
        document = NOT_JSON
        with contextlib.suppress(ValueError, httpx.RequestNotRead):
            content = self.response.request.content
            if content:
                document = json.loads(content)
        self.request = document

    @property
    def success(self) -> bool:
        return 200 <= self.status < 300

    @property
    def code(self) -> str | None:
        code = self.answer.get("code") if isinstance(self.answer, dict) else None
        return code if isinstance(code, str) else None

    @property
    def query(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for name, value in self.response.request.url.params.multi_items():
            found.setdefault(name, value)
        return found

    def field(self, name: str) -> Any:
        return self.request.get(name) if isinstance(self.request, dict) else None

    def header(self, name: str) -> str | None:
        value: str | None = self.response.request.headers.get(name)
        return value

    def handled_between(
        self, slack: float, unix_timestamps: bool
    ) -> tuple[tuple[float, float], ...]:
        if self.sent is not None:
            start, end = self.sent
            return ((start - slack, end + slack),)
        stamp = self.header("X-Timestamp")
        if unix_timestamps and stamp is not None and stamp.isdigit() and len(stamp) < 16:
            return ((float(stamp) - slack, float(stamp) + slack),)
        return ()


def judged(
    answers: AnswerChecks,
    response: httpx.Response,
    operation_id: str,
    path_params: dict[str, str] | None = None,
    sent: tuple[float, float] | None = None,
) -> list[Finding]:
    """The judge's findings on one exchange the suite sent."""
    return answers.judge(JudgedCall(response, operation_id, path_params or {}, sent))
