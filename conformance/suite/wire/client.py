"""SuiteClient: the HTTP client every suite test talks to the server through.

It signs requests under the profile's scheme, adds an Idempotency-Key where the profile
requires one, counts what it sends and keeps the last exchange as redacted evidence. A
transport problem (no connection, no answer in time, a connection closed mid-way, bytes that
are not HTTP) raises ``SuiteTransportError`` with a sentence saying what happened. A rate limit
(429, or 503 with ``Retry-After``) is waited out and the request sent again, re-signed, as
``ratelimit`` says; one that never got through raises ``RateLimitedError`` (inside a hypothesis
example, ``RateLimitedStop``).
"""

from __future__ import annotations

import json as jsonlib
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from typing import Any, Final

import httpx
from hypothesis.control import currently_in_test_context

from conformance.core.evidence import evidence_from_parts
from conformance.core.profile import Credential, Profile
from conformance.core.results import Evidence, budget_reason
from conformance.core.untrusted import mask_url_passwords
from conformance.judge.rate_limits import RETRY_AFTER, is_rate_limited
from conformance.suite import shard_data
from conformance.suite.tool_errors import SERVER_GONE
from conformance.suite.wire import gateway, tls
from conformance.suite.wire.ratelimit import RateLimitExhausted, RateLimiting, RequestWaits
from conformance.suite.wire.transport import (
    BoundedTransport,
    Limits,
    ResponseDeadlineExceeded,
    body_cut_at,
    cut_marker,
    socket_transport,
)

CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 15.0
# After this many timeouts in a row the server is taken as gone: later requests fail at once
# instead of each waiting READ_TIMEOUT_S, so a hung server cannot stretch a run for hours.
TIMEOUTS_BEFORE_GIVING_UP = 3
IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_CONTEXTS = 8  # hypothesis errors raised one while handling another, followed back to a stop


class _Sentinel(Enum):
    MISSING = "MISSING"
    AUTO = "AUTO"


MISSING: Final = _Sentinel.MISSING
"""``json=MISSING``: send no JSON body (the default)."""
AUTO: Final = _Sentinel.AUTO
"""``idempotency_key=AUTO``: a fresh key when the profile requires one for the request."""


Observer = Callable[[httpx.Request, "httpx.Response | None"], None]
"""Called after every exchange (``None``: no response); ``stateful.Transcript`` is one."""


class SuiteTransportError(Exception):
    """The request got no usable HTTP response; the message says why, in plain words."""


class RateLimitedError(SuiteTransportError):
    """The server kept rate limiting the request past its bounds: the check is not exercised."""


class RateLimitedStop(BaseException):
    """``RateLimitedError`` inside a hypothesis example (a state machine's step, a generated
    scenario): it ends the whole run of examples at once (``stateful.run_guarded`` catches it).

    Not an ``Exception``, as ``pytest.skip``'s is not: hypothesis lets it through instead of
    taking it for a failure, to shrink and replay (a replay the server lets through would read
    as "inconsistent behaviour"), and no further example is sent only to meet the same limit.
    """


def rate_limit_stop(exc: BaseException) -> RateLimitedStop | None:
    """The ``RateLimitedStop`` that ``exc`` is, or that hypothesis raised ``exc`` while handling
    (None: neither). Hypothesis records even an example a stop cut short, and finds it
    "inconsistent" (``FlakyStrategyDefinition``) when an earlier example with the same choices
    went further: that error is the stop's doing, not a finding."""
    from hypothesis.errors import HypothesisException

    seen: BaseException | None = exc
    for _ in range(MAX_CONTEXTS):
        if isinstance(seen, RateLimitedStop):
            return seen
        if not isinstance(seen, HypothesisException):
            return None
        seen = seen.__context__
    return None


class NoAnswerError(SuiteTransportError):
    """The request got no HTTP answer at all (refused, reset, TLS handshake, no byte in time,
    closed before any response, not sent): not an answer of the server, so never its failure
    (``tool_errors``). A reply that is not valid HTTP, or incomplete at its deadline, is one."""


class SuiteTlsError(NoAnswerError):
    """The TLS handshake failed (an untrusted certificate, no client certificate...)."""


MAX_SERVER_ERRORS_KEPT = 20


@dataclass
class ServerErrors:
    """The 5xx answers the clients got (ERR-006: never a 5xx, whatever the request): how many,
    and the first few with their evidence."""

    seen: int = 0
    kept: list[tuple[str, Evidence]] = field(default_factory=list)

    def add(self, what: str, evidence: Callable[[], Evidence]) -> None:
        self.seen += 1
        if len(self.kept) < MAX_SERVER_ERRORS_KEPT:
            self.kept.append((what, evidence()))


@dataclass
class ClientStats:
    """Shared by the clients of one test session: request count, health and the last sender."""

    requests_sent: int = 0
    exchanges: int = 0  # requests attempted, including ones refused without sending
    consecutive_timeouts: int = 0
    last_client: SuiteClient | None = field(default=None, repr=False)
    # The run's wall-clock budget (``run --max-duration``): past ``deadline`` (epoch seconds)
    # nothing more is sent; ``budget_refusals`` counts the requests refused for it.
    deadline: float | None = None
    budget_s: float = 0.0
    budget_refusals: int = 0
    consecutive_refused: int = 0  # connections refused (or failing their TLS handshake) in a row
    # the last refused connection's TLS failure, if it was one: a server that changed its
    # certificate mid-run is named as such (``gone_reason``), not as one that went away
    refused_tls: str | None = None
    # of the timeouts in a row, those of a response begun but incomplete at its deadline: a
    # server that trickles is there, and too slow; one that sends nothing is gone
    late_answers: int = 0
    # 429s and 503s with Retry-After: counts, waits, --rate-limit (``ratelimit``)
    rate_limiting: RateLimiting = field(default_factory=RateLimiting)
    server_errors: ServerErrors = field(default_factory=ServerErrors)

    def note_connection(self, refused: bool, tls_failure: str | None = None) -> None:
        """A request's connection was refused (or failed its TLS handshake: ``tls_failure``
        says how), or was made: the count in a row the server is taken as gone by."""
        self.consecutive_refused = self.consecutive_refused + 1 if refused else 0
        self.refused_tls = tls_failure if refused else None

    @property
    def server_gone(self) -> bool:
        return (
            self.consecutive_timeouts >= TIMEOUTS_BEFORE_GIVING_UP
            or self.consecutive_refused >= TIMEOUTS_BEFORE_GIVING_UP
        )

    @property
    def out_of_time(self) -> bool:
        return self.deadline is not None and time.time() >= self.deadline


class SuiteClient:
    """Signed, counted HTTP calls to the server under test for one credential."""

    def __init__(
        self,
        base_url: str,
        profile: Profile,
        credential: Credential | None = None,
        *,
        stats: ClientStats | None = None,
        transport: httpx.BaseTransport | None = None,
        read_timeout_s: float = READ_TIMEOUT_S,
        limits: Limits | None = None,
    ) -> None:
        """``transport`` replaces the sockets (tests); ``limits`` the byte cap and deadline of
        each request (``transport.DEFAULT_LIMITS``)."""
        self.base_url = base_url.rstrip("/")
        self.profile = profile
        self.credential = credential if credential is not None else profile.primary
        self.requests_sent = 0
        self.stats = stats if stats is not None else ClientStats()
        self._signer = profile.signer(self.credential)
        self._http = httpx.Client(
            timeout=httpx.Timeout(
                connect=CONNECT_TIMEOUT_S,
                read=read_timeout_s,
                write=read_timeout_s,
                pool=read_timeout_s,
            ),
            follow_redirects=False,
            trust_env=False,  # no proxy, .netrc or CA bundle from the environment (``proxy``)
            transport=BoundedTransport(transport or socket_transport(_tls_context()), limits),
            verify=_tls_context(),
        )
        self._last_request: httpx.Request | None = None
        self._last_response: httpx.Response | None = None
        self.observers: list[Observer] = []

    def __repr__(self) -> str:
        return f"SuiteClient({self.base_url!r}, credential={self.credential.name!r})"

    # -- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SuiteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests ---------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = MISSING,
        content: bytes | None = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        idempotency_key: str | _Sentinel | None = AUTO,
        sign: bool = True,
        auth: dict[str, str | None] | None = None,
        timestamp: int | None = None,
        nonce: str | None = None,
        operation_id: str | None = None,
    ) -> httpx.Response:
        """Send one request and return the response, whatever its status.

        ``json`` and ``content`` are exclusive; ``content`` is sent byte for byte (with
        ``Content-Type: application/json`` unless ``headers`` names another). ``auth`` sets or,
        with ``None``, removes individual authentication headers after signing.
        """
        method = method.upper()
        if json is not MISSING and content is not None:
            raise ValueError("pass json or content, not both")
        body = b""
        send_headers: dict[str, str] = {}
        if json is not MISSING:
            body = jsonlib.dumps(json, ensure_ascii=False, separators=(",", ":")).encode()
            send_headers["Content-Type"] = "application/json"
        elif content is not None:
            body = content
            send_headers["Content-Type"] = "application/json"
        send_headers.update(headers or {})
        key = self._idempotency_key(method, operation_id, idempotency_key)
        if key is not None:
            send_headers[IDEMPOTENCY_HEADER] = key

        # A resend after a rate limit is built again: re-signed with a fresh nonce unless one
        # was given, and an explicit timestamp keeps its offset from now (``ratelimit``).
        offset = None if timestamp is None else timestamp - int(time.time())

        def build() -> httpx.Request:
            try:
                request = self._http.build_request(
                    method, self.base_url + path, params=params, content=body, headers=send_headers
                )
            except (httpx.InvalidURL, httpx.UnsupportedProtocol, ValueError) as exc:
                raise SuiteTransportError(
                    mask_url_passwords(f"{method} {self.base_url}{path}: invalid URL ({exc})")
                ) from None
            if sign:
                target = request.url.raw_path.decode("ascii")
                stamp = None if offset is None else int(time.time()) + offset
                request.headers.update(
                    self._signer.headers(
                        method,
                        target,
                        body,
                        timestamp=stamp,
                        nonce=nonce,
                        host=request.headers.get("Host", ""),
                    )
                )
            for name, value in (auth or {}).items():
                if value is None:
                    request.headers.pop(name, None)
                else:
                    request.headers[name] = value
            request.headers.update(gateway.active())  # kept when ``auth`` removes the API's own
            return request

        return self._send(build(), build)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)

    def _idempotency_key(
        self, method: str, operation_id: str | None, given: str | _Sentinel | None
    ) -> str | None:
        if given is not AUTO:
            return given if isinstance(given, str) else None
        if self.profile.idempotency_required(method, operation_id or ""):
            return shard_data.unique_uuid()
        return None

    def _send(
        self, request: httpx.Request, rebuild: Callable[[], httpx.Request] | None = None
    ) -> httpx.Response:
        """Send ``request``; after a rate-limit answer wait and send ``rebuild()`` (or the same
        request) again. Observers and evidence see the final answer only."""
        rates = self.stats.rate_limiting
        waits = RequestWaits(rates, self.stats.deadline)
        while True:
            response = self._send_once(request)
            if not is_rate_limited(response.status_code, response.headers, rates.rule):
                break
            rates.judge(
                response.status_code,
                response.headers,
                response.content,
                partial(build_evidence, request, response, (self.credential.api_secret,)),
            )
            try:
                waits.wait(response.status_code, response.headers.get(RETRY_AFTER))
            except RateLimitExhausted as exc:
                self._last_response = response
                where = f"{request.method} {mask_url_passwords(str(request.url))}"
                if currently_in_test_context():
                    raise RateLimitedStop(f"{where}: {exc}") from None
                raise RateLimitedError(f"{where}: {exc}") from None
            if rebuild is not None:
                request = rebuild()
        self._last_response = response
        if response.status_code >= 500:
            where = f"{request.method} {mask_url_passwords(str(request.url))}"
            self.stats.server_errors.add(
                f"{where} answered {response.status_code}",
                partial(build_evidence, request, response, (self.credential.api_secret,)),
            )
        self._notify(request, response)
        return response

    def _send_once(self, request: httpx.Request) -> httpx.Response:
        self._last_request = request
        self._last_response = None
        self.stats.last_client = self
        self.stats.exchanges += 1
        where = f"{request.method} {mask_url_passwords(str(request.url))}"
        if self.stats.out_of_time:
            self.stats.budget_refusals += 1
            # not judged either way: the plugin reports it as the budget's cut (_spare_budget_cut)
            raise SuiteTransportError(f"{where}: not sent: {budget_reason(self.stats.budget_s)}")
        if self.stats.server_gone:
            raise NoAnswerError(f"{where}: not sent: {gone_reason(self.stats)}")
        self.stats.rate_limiting.before_send(self.stats.deadline)
        self.requests_sent += 1
        self.stats.requests_sent += 1
        try:
            response = self._http.send(request)
        except httpx.TimeoutException as exc:
            self.stats.consecutive_timeouts += 1
            self.stats.late_answers += int(isinstance(exc, ResponseDeadlineExceeded))
            self._notify(request, None)
            error = SuiteTransportError if _answered(exc) else NoAnswerError
            raise error(f"{where}: {_describe_timeout(exc)}") from None
        except httpx.TransportError as exc:
            self.stats.consecutive_timeouts = self.stats.late_answers = 0
            tls_failure = tls.describe_failure(exc)
            self.stats.note_connection(isinstance(exc, httpx.ConnectError), tls_failure)
            self._notify(request, None)
            if tls_failure is not None:
                raise SuiteTlsError(f"{where}: {tls_failure}") from None
            error = SuiteTransportError if _answered(exc) else NoAnswerError
            raise error(f"{where}: {_describe_transport(exc)}") from None
        self.stats.consecutive_timeouts = self.stats.late_answers = 0
        self.stats.note_connection(refused=False)
        # httpx's stream wrapper and the response refer to each other: such a cycle waits for the
        # garbage collector, and a test sending many requests keeps every body until it runs.
        # The body is read: a plain stream of it breaks the cycle.
        response.stream = httpx.ByteStream(response.content)
        return response

    def _notify(self, request: httpx.Request, response: httpx.Response | None) -> None:
        for observer in self.observers:
            observer(request, response)

    # -- evidence ---------------------------------------------------------------------------
    @property
    def last_exchange(self) -> Evidence | None:
        """The last request sent and its response (``status`` None when there was none),
        redacted: no API secret, signature or webhook secret appears in it."""
        if self._last_request is None:
            return None
        return build_evidence(
            self._last_request, self._last_response, secrets=(self.credential.api_secret,)
        )


def gone_reason(stats: ClientStats) -> str:
    """Why no more requests are sent to a server that is gone (``stats.server_gone``)."""
    if stats.consecutive_refused >= TIMEOUTS_BEFORE_GIVING_UP:
        last = "" if stats.refused_tls is None else f"; last: {stats.refused_tls}"
        return (
            f"{SERVER_GONE} ({stats.consecutive_refused} connections in a row could not be "
            f"made{last})"
        )
    if stats.late_answers:
        return (
            f"the server answers too slowly ({stats.consecutive_timeouts} requests in a row got "
            "no complete response in time)"
        )
    return (
        f"{SERVER_GONE} ({stats.consecutive_timeouts} requests in a row got no complete "
        "response in time)"
    )


def _answered(exc: httpx.TransportError) -> bool:
    """Whether the server sent something back: bytes that are not valid HTTP, or a response
    still incomplete at its deadline (a trickle). Everything else got no answer at all."""
    if isinstance(exc, ResponseDeadlineExceeded):
        return True
    if isinstance(exc, httpx.RemoteProtocolError):
        return "without sending" not in str(exc) and "disconnected" not in str(exc).lower()
    return False


def _tls_context() -> ssl.SSLContext:
    """The run's one TLS context (``tls.active_context``), built once per process."""
    return tls.active_context()


def _describe_timeout(exc: httpx.TimeoutException) -> str:
    if isinstance(exc, ResponseDeadlineExceeded):
        return str(exc)
    if isinstance(exc, httpx.ConnectTimeout):
        return f"could not connect within {CONNECT_TIMEOUT_S:g} s (is the host reachable?)"
    if isinstance(exc, httpx.PoolTimeout):
        return "no free connection to send on (timeout)"
    return "the server accepted the request but sent no response in time (read timeout)"


def _describe_transport(exc: httpx.TransportError) -> str:
    if isinstance(exc, httpx.ConnectError):
        return f"could not connect: {exc or 'connection refused'} (is the server running there?)"
    if isinstance(exc, httpx.RemoteProtocolError):
        text = str(exc)
        if "without sending" in text or "disconnected" in text.lower():
            return "the server closed the connection without a response"
        return f"the server's reply is not valid HTTP ({text})"
    if isinstance(exc, httpx.ReadError):
        return f"the server closed the connection before a full response ({exc or 'reset'})"
    if isinstance(exc, httpx.WriteError):
        return f"the connection broke while sending the request ({exc or 'reset'})"
    if isinstance(exc, httpx.UnsupportedProtocol):
        return f"unsupported URL scheme ({exc})"
    return f"transport error: {type(exc).__name__}: {exc}"


def build_evidence(
    request: httpx.Request, response: httpx.Response | None, secrets: tuple[str, ...] = ()
) -> Evidence:
    """Redacted evidence of one exchange, with a curl command that repeats the request."""
    cut_at = body_cut_at(response) if response is not None else None
    return evidence_from_parts(
        method=request.method,
        url=str(request.url),
        request_headers=request.headers.items(),
        request_body=request.content,
        status=response.status_code if response is not None else None,
        response_headers=response.headers.items() if response is not None else (),
        response_body=response.content if response is not None else b"",
        secrets=secrets,
        response_note=cut_marker(cut_at) if cut_at is not None else None,
    )
