"""The ``requests`` session schemathesis sends through, waiting out rate limits as SuiteClient does.

A 429 (or a 503 with ``Retry-After``, see ``conformance.suite.wire.ratelimit``) is never handed to
schemathesis' checks: the session waits, signs the same prepared request again with its auth
(fresh timestamp and nonce; method, URL, body and Idempotency-Key unchanged) and resends it.
A request that cannot get through within its bounds raises ``RateLimitedRequest``, which the
schema runner records as not exercised instead of a failure.

The session follows no redirect, whatever its caller asks (schemathesis asks for one unless the
operation documents a 3xx): a ``3xx`` is the server's answer, judged like any other, and the
signed request is never sent to the host its ``Location`` names.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import requests

from conformance.core.evidence import evidence_from_parts
from conformance.core.results import Evidence
from conformance.core.untrusted import mask_url_passwords
from conformance.judge.rate_limits import RETRY_AFTER, is_rate_limited
from conformance.suite.wire.client import ClientStats
from conformance.suite.wire.ratelimit import RateLimitExhausted, RequestWaits


class RateLimitedRequest(requests.RequestException):
    """The server kept rate limiting the request past its bounds; the message says how."""


class ResendingSession(requests.Session):
    """A session whose every request goes through the rate-limit policy of ``stats``' clients
    (their counts, limiter, profile rule and run budget); a resend counts as a request sent."""

    def __init__(self, stats: ClientStats, secrets: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.stats = stats
        self.secrets = secrets

    def get_redirect_target(self, response: requests.Response) -> str | None:
        """None: no answer is a redirect to follow (``requests`` then neither follows one nor
        prepares its request)."""
        return None

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        kwargs["allow_redirects"] = False
        rates = self.stats.rate_limiting
        waits = RequestWaits(rates, self.stats.deadline)
        while True:
            rates.before_send(self.stats.deadline)
            response = super().send(request, **kwargs)
            if not is_rate_limited(response.status_code, response.headers, rates.rule):
                return response
            rates.judge(
                response.status_code,
                response.headers,
                response.content,
                partial(_evidence, request, response, self.secrets),
            )
            try:
                waits.wait(response.status_code, response.headers.get(RETRY_AFTER))
            except RateLimitExhausted as exc:
                where = f"{request.method} {mask_url_passwords(str(request.url))}"
                raise RateLimitedRequest(
                    f"{where}: {exc}", request=request, response=response
                ) from None
            if callable(self.auth):
                self.auth(request)  # signed again: a fresh timestamp and nonce
            # the schema phases count their cases; the resends are counted here
            self.stats.requests_sent += 1


def _evidence(
    request: requests.PreparedRequest, response: requests.Response, secrets: tuple[str, ...]
) -> Evidence:
    body = request.body
    raw = body.encode("iso-8859-1", errors="replace") if isinstance(body, str) else body
    return evidence_from_parts(
        method=str(request.method),
        url=str(request.url),
        request_headers=[(k, str(v)) for k, v in request.headers.items()],
        request_body=raw if isinstance(raw, bytes) else b"",
        status=response.status_code,
        response_headers=response.headers.items(),
        response_body=response.content,
        secrets=secrets,
    )
