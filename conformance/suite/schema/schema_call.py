"""A schema-phase exchange as the judge's rules read one (``judge.answers.Call``): the request
``requests`` sent, as sent (its URL's escapes kept), and the answer schemathesis got.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import requests
import schemathesis

from conformance.core import jsonsafe
from conformance.judge.answers import CallReading
from conformance.judge.findings import NOT_JSON
from conformance.judge.values import first_values


def path_params(template: str, raw_path: str) -> dict[str, str]:
    """The path parameters of ``raw_path`` (as sent, escapes kept) under the operation's
    ``template``, decoded, as a recording's path is read; empty when they do not line up."""
    names = template.strip("/").split("/")
    sent = raw_path.strip("/").split("/")
    if len(sent) < len(names):
        return {}
    sent = sent[len(sent) - len(names) :]  # a base URL may put a prefix before /v1
    return {
        name[1:-1]: unquote(segment)
        for name, segment in zip(names, sent, strict=True)
        if name.startswith("{") and name.endswith("}")
    }


@dataclass
class SchemaCall(CallReading):
    response: schemathesis.Response
    operation_id: str
    template: str
    status: int = field(init=False)
    answer: Any = field(init=False)
    request: Any = field(init=False)
    path_params: dict[str, str] = field(init=False)
    _prepared: requests.PreparedRequest = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._prepared = self.response.request
        self.status = self.response.status_code
        self.answer = None
        with contextlib.suppress(ValueError):  # a hostile server's: bounded in depth and size
            self.answer = jsonsafe.loads(self.response.content)
        self.request = NOT_JSON
        with contextlib.suppress(ValueError):
            if self.request_body:
                self.request = json.loads(self.request_body)
        self.path_params = path_params(self.template, self.raw_path)

    @property
    def _url(self) -> tuple[str, str]:
        parts = urlsplit(self._prepared.url or "")
        return parts.path, parts.query

    @property
    def query(self) -> dict[str, str]:
        return first_values(self.raw_query)

    @property
    def raw_query(self) -> str:
        return self._url[1]

    @property
    def raw_path(self) -> str:
        return self._url[0]

    @property
    def request_body(self) -> bytes:
        body = self._prepared.body
        if isinstance(body, str):
            return body.encode()
        return body if isinstance(body, bytes) else b""  # none (the phases stream no body)

    def header(self, name: str) -> str | None:
        value = self._prepared.headers.get(name)
        return value.decode("latin-1") if isinstance(value, bytes) else value

    def response_header(self, name: str) -> str | None:
        values = self.response.headers.get(name.lower())
        return values[0] if values else None

    def handled_between(
        self, slack: float, unix_timestamps: bool
    ) -> tuple[tuple[float, float], ...]:
        return ()  # the schema phase judges no time of its answers
