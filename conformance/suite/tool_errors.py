"""Exceptions that are not an answer of the server, and so never fail a requirement.

``not_the_servers(exc)`` says why a check that raised ``exc`` was not judged, or ``None`` when
``exc`` is (or wraps) something the server answered: a check that did not hold, a reply that is
not valid HTTP, a body cut at the size cap, a response still incomplete at its deadline.

Not the server's answer:

- hypothesis' own errors (``Flaky`` and its kinds, "Inconsistent data generation",
  ``Unsatisfiable``, a failed health check...), unless they wrap a failure of a check: a
  ``FlakyFailure`` or an exception group is the server's as soon as one exception inside is;
- a request the server kept rate limiting past what the run can wait (``RateLimitedError`` and
  ``RateLimitedStop``, the schema phases' ``RateLimitedRequest``): its reason is the "rate
  limited (...)" one, also inside an exception group or a hypothesis error that holds one;
- a request the profile's ``auth.signer`` hook failed to sign (``SignerHookError``);
- a case the judge does not see break the rule it was built to break (``CaseError``);
- a step that should have made what a test needs and did not (``PrerequisiteError``): the
  family that owns that step's rule judges it;
- a request that got no HTTP answer at all: a refused or reset connection, a TLS handshake
  error, a name that does not resolve, no byte of a response within the read timeout, a
  connection closed before any response, a request not sent (``client.NoAnswerError``, and the
  same errors of the other HTTP stacks: httpx, requests, sockets).
"""

from __future__ import annotations

import http.client
import ssl
from typing import Any

from conformance.core.signing import SignerHookError
from conformance.suite.wire.ratelimit import RATE_LIMITED_REASON, rate_limited_reason
from conformance.suite.wire.tls import describe_failure

REASON_LIMIT = 200
SERVER_GONE = "the server stopped answering"
"""In every reason of a check not run or not judged because the server is gone (the engine ends
such a run incomplete)."""


class CaseError(RuntimeError):
    """The judge does not see a request break the rule the family built it to break: the
    suite's bug, never the server's."""


class PrerequisiteError(Exception):
    """The server did not create what an operation needs; the message says which step failed.

    Not judged where it is raised: the requirement that step breaks is judged by the family
    that owns it (a deposit that settles an underpaid payment fails HELP-001 in the payments
    family, not every webhook, statement and idempotency test that needed an underpaid one)."""


class ServerGone(Exception):
    """Raised where several requests in a row got no answer: the server is taken as gone."""


def not_the_servers(exc: BaseException) -> str | None:
    """Why a check that raised ``exc`` is not judged (``None``: it is the server's failure)."""
    from hypothesis.errors import HypothesisException

    if isinstance(exc, BaseExceptionGroup):
        reasons = [not_the_servers(inner) for inner in exc.exceptions]
        if not reasons or any(reason is None for reason in reasons):
            return None
        for reason in reasons:
            if str(reason).startswith(RATE_LIMITED_REASON):
                return reason  # the rate limit is why the tool's error came about
        if isinstance(exc, HypothesisException):
            return _tool_error(exc)
        return str(reasons[0])
    if isinstance(exc, CaseError):
        return _clip(f"not judged: an error of the test tool, not of the server ({exc})")
    if isinstance(exc, PrerequisiteError):
        return _clip(f"not exercised: a prerequisite failed ({exc})")
    if isinstance(exc, SignerHookError):
        return _clip(f"not judged: {exc} (the profile's code, not the server's answer)")
    rate_limited = _rate_limited(exc)
    if rate_limited is not None:
        return rate_limited
    if isinstance(exc, HypothesisException):
        return _tool_error(exc)
    if no_answer(exc):
        return _clip(f"no answer from the server, not judged: {describe(exc)}")
    return None


def _rate_limited(exc: BaseException) -> str | None:
    """The "rate limited (...)" reason of a request given up for rate limits (None: not one)."""
    names = {f"{cls.__module__}.{cls.__qualname__}" for cls in type(exc).__mro__}
    if not names & _RATE_LIMITED:
        return None
    return _clip(rate_limited_reason(str(exc)) or RATE_LIMITED_REASON)


def no_answer(exc: BaseException) -> bool:
    """Whether ``exc`` says the request got no HTTP answer at all (any HTTP stack)."""
    from conformance.suite.wire.client import NoAnswerError, SuiteTransportError

    if isinstance(exc, NoAnswerError | ServerGone):
        return True
    if isinstance(exc, SuiteTransportError):
        return False  # an answer the client could not use: invalid HTTP, cut, too slow
    names = {f"{cls.__module__}.{cls.__qualname__}" for cls in type(exc).__mro__}
    if names & _ANSWERED or _bad_reply_inside(exc):
        return False
    return bool(names & _UNANSWERED) or isinstance(exc, ssl.SSLError | ConnectionError)


def _bad_reply_inside(exc: BaseException, depth: int = 0) -> bool:
    """Whether ``exc`` wraps a reply that is not valid HTTP (requests reports one as a
    ConnectionError around urllib3's ProtocolError around http.client's BadStatusLine)."""
    if isinstance(exc, http.client.HTTPException):
        return not isinstance(exc, http.client.RemoteDisconnected)  # closed without a reply
    if depth > 4:
        return False
    inner = [a for a in exc.args if isinstance(a, BaseException)]
    inner += [e for e in (exc.__cause__, exc.__context__) if e is not None]
    return any(_bad_reply_inside(e, depth + 1) for e in inner)


# By name, so that neither stack is imported to classify the other's errors.
_UNANSWERED = frozenset(
    {
        "httpx.ConnectError",
        "httpx.ConnectTimeout",
        "httpx.ReadTimeout",
        "httpx.WriteTimeout",
        "httpx.PoolTimeout",
        "httpx.ReadError",
        "httpx.WriteError",
        "requests.exceptions.ConnectionError",  # refused, reset, TLS, DNS, connect timeout
        "requests.exceptions.ReadTimeout",
        "socket.gaierror",
    }
)
# Given up after the server's rate-limit answers (either stack): not judged, "rate limited".
_RATE_LIMITED = frozenset(
    {
        "conformance.suite.wire.client.RateLimitedError",
        "conformance.suite.wire.client.RateLimitedStop",
        "conformance.suite.schema.resending.RateLimitedRequest",
    }
)
# Bytes came back, but not a usable response: the server's answer.
_ANSWERED = frozenset(
    {
        "requests.exceptions.ChunkedEncodingError",
        "requests.exceptions.ContentDecodingError",
        "conformance.suite.wire.transport.ResponseDeadlineExceeded",
    }
)


def _tool_error(exc: BaseException) -> str:
    return _clip(
        f"not judged: an error of the test tool, not of the server "
        f"(hypothesis {type(exc).__name__}: {_first_line(exc)})"
    )


def describe(exc: BaseException) -> str:
    """``exc`` in one line; a TLS failure of another HTTP stack as the sentence naming its fix
    (its own words bury it behind the connection pool's)."""
    if _is_suite(exc):
        return _first_line(exc)  # the suite's client says it in plain words already
    return describe_failure(exc) or f"{type(exc).__name__}: {_first_line(exc)}"


def _is_suite(exc: BaseException) -> bool:
    return type(exc).__module__.startswith("conformance.")


def _first_line(exc: Any) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no message"


def _clip(text: str) -> str:
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 3] + "..."
