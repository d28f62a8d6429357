"""Sending the family's operations: each answer with the times it was sent and answered."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx

from conformance.core.formats import parse_date_time
from conformance.suite.factories import ABSENT, locate_operation
from conformance.suite.schedules.clock import ServerClock, now, resolution
from conformance.suite.stateful import MachineContext, body_of
from conformance.suite.wire.client import SuiteClient
from conformance.suite.wire.judged_call import JudgedCall

CLOCK_KEY = "schedules.clock"


@dataclass(frozen=True)
class Answer:
    response: httpx.Response
    operation_id: str
    path_id: str | None
    started: datetime  # suite clock
    finished: datetime
    started_mono: float
    finished_mono: float

    @property
    def body(self) -> dict[str, Any]:
        return body_of(self.response)

    @property
    def status_code(self) -> int:
        return self.response.status_code


class Calls:
    """The operations of the contract by id, sent through the context's clients."""

    def __init__(self, ctx: MachineContext) -> None:
        self.ctx = ctx
        window = timedelta(seconds=ctx.profile.clock_window_secs)
        self.clock: ServerClock = ctx.extra.setdefault(CLOCK_KEY, ServerClock(window))

    def send(
        self,
        operation_id: str,
        *,
        path_id: str | None = None,
        body: Any = ABSENT,
        client: SuiteClient | None = None,
    ) -> Answer:
        method, template = locate_operation(self.ctx.contract, operation_id)
        path = template
        if path_id is not None:
            path = template.replace("{id}", quote(path_id, safe=""))
        kwargs: dict[str, Any] = {"operation_id": operation_id}
        if body is not ABSENT:
            kwargs["json"] = body
        started, started_mono = now(), time.monotonic()
        response = (client or self.ctx.client).request(method, path, **kwargs)
        finished, finished_mono = now(), time.monotonic()
        self.clock.observe(response, finished)
        return Answer(
            response, operation_id, path_id, started, finished, started_mono, finished_mono
        )

    def judged(self, answer: Answer) -> JudgedCall:
        """The exchange as the judge's rules read it, handled within the clock's window."""
        low, high = self.clock.window(answer.started, answer.finished)
        return JudgedCall(
            answer.response,
            answer.operation_id,
            {} if answer.path_id is None else {"id": answer.path_id},
            (low.timestamp(), high.timestamp()),
        )


def advanced(before: object, after: object, elapsed_secs: float) -> bool | None:
    """Whether ``after`` (a timestamp) must lie strictly after ``before``: True/False when it
    can be told, None when the two may fall into one tick of the server's clock.

    ``elapsed_secs`` is the time between the answer that set ``before`` and the request that
    set ``after``; a server whose timestamps show whole seconds can stamp both with the same
    second when less than a second went by.
    """
    old, new = parse_date_time(before), parse_date_time(after)
    if old is None or new is None:
        return False
    if new > old:
        return True
    if elapsed_secs > resolution(before, after).total_seconds():
        return False
    return None if new == old else False
