"""Preflight: before the suite runs, prove the target can be tested at all, without side effects.

Three steps, each with a message that says what to fix when it fails:

1. reachable: a TCP connection, then any HTTP answer to an unsigned request;
2. signed request accepted: ``GET /v1/payments?limit=1`` signed with the first credential is 2xx
   (a 401 is diagnosed: clock skew from the ``Date`` header, else key/secret/signing scheme);
3. fixtures present: for each currency of the profile, a statement read is 2xx, and the second
   credential is accepted too (tenant isolation needs it).
"""

from __future__ import annotations

import email.utils
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import httpx

from conformance.core import jsonsafe
from conformance.core.profile import Credential, Profile
from conformance.core.results import RateLimitCounts
from conformance.core.signing import SignerHookError
from conformance.core.untrusted import split_url
from conformance.suite.wire import proxy, tls
from conformance.suite.wire.client import (
    ClientStats,
    SuiteClient,
    SuiteTlsError,
    SuiteTransportError,
)
from conformance.suite.wire.ratelimit import SendLimiter

PREFLIGHT_TIMEOUT_S = 10.0
PROBE_PATH = "/v1/payments"


@dataclass(frozen=True)
class PreflightStep:
    name: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class PreflightReport:
    steps: tuple[PreflightStep, ...]
    requests_sent: int
    # the server's round trip: the quickest of its steps' mean time per request (a loaded
    # machine only adds to it), None when no step got through
    round_trip_ms: float | None = None
    rate_limits: RateLimitCounts = field(default_factory=RateLimitCounts)  # 429s waited out

    @property
    def ok(self) -> bool:
        return all(step.ok for step in self.steps)

    @property
    def message(self) -> str:
        """The first failed step's explanation (empty when everything passed)."""
        for step in self.steps:
            if not step.ok:
                return f"preflight failed ({step.name}): {step.detail}"
        return ""


class _Failed(Exception):
    def __init__(self, step: str, detail: str) -> None:
        super().__init__(detail)
        self.step = step
        self.detail = detail


def preflight(
    base_url: str,
    profile: Profile,
    *,
    timeout_s: float = PREFLIGHT_TIMEOUT_S,
    rate_limit: float | None = None,
    deadline: float | None = None,
) -> PreflightReport:
    """Run the three steps in order; stop at the first that fails. Rate limits are waited
    out as in the suite, never past ``deadline`` (the run's budget, epoch seconds);
    ``rate_limit`` (requests a second) spaces the requests."""
    steps: list[PreflightStep] = []
    clients: list[SuiteClient] = []
    round_trips: list[float] = []  # per step: its time over its requests, in ms
    stats = ClientStats()
    stats.deadline = deadline
    stats.rate_limiting.limiter = None if rate_limit is None else SendLimiter(rate_limit)

    def client(credential: Credential) -> SuiteClient:
        made = SuiteClient(base_url, profile, credential, read_timeout_s=timeout_s, stats=stats)
        clients.append(made)
        return made

    try:
        primary = client(profile.primary)
        steps_to_run: tuple[tuple[str, Callable[[], None]], ...] = (
            ("reachable", lambda: _reachable(base_url, primary, timeout_s)),
            ("signed request accepted", lambda: _signed_request(primary)),
            ("fixtures present", lambda: _fixtures(primary, client(profile.secondary))),
        )
        for name, step in steps_to_run:
            sent = sum(c.requests_sent for c in clients)
            waited = _waited_s(stats)
            started = time.perf_counter()
            try:
                step()
            except _Failed as failure:
                steps.append(PreflightStep(name, False, failure.detail))
                break
            except Exception as exc:  # whatever the server sent, a failed step, not a traceback
                detail = f"the server's answer could not be handled ({type(exc).__name__}: {exc})"
                steps.append(PreflightStep(name, False, detail))
                break
            steps.append(PreflightStep(name, True))
            requests = sum(c.requests_sent for c in clients) - sent
            if requests:  # the time spent waiting out rate limits is no round trip
                spent = time.perf_counter() - started - (_waited_s(stats) - waited)
                round_trips.append(max(spent, 0.0) * 1000 / requests)
    finally:
        for made in clients:
            made.close()
    round_trip = min(round_trips) if round_trips else None
    return PreflightReport(
        tuple(steps),
        sum(c.requests_sent for c in clients),
        round_trip,
        rate_limits=stats.rate_limiting.counts,
    )


def _waited_s(stats: ClientStats) -> float:
    counts = stats.rate_limiting.counts
    return counts.waited_s + counts.limiter_waited_s


# -- step 1 ----------------------------------------------------------------------------------
def _reachable(base_url: str, client: SuiteClient, timeout_s: float) -> None:
    step = "reachable"
    parts = split_url(base_url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise _Failed(step, f"{base_url!r} is not an http:// or https:// URL")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise _Failed(step, f"{base_url!r} has an invalid port") from None
    through = proxy.active()
    # through a proxy the connection is to the proxy: the server may be reachable only from it
    host, at, option, what = (
        (parts.hostname, port, "--base-url", "server")
        if through is None
        else (*proxy.address(through), "--proxy", "proxy")
    )
    try:
        with socket.create_connection((host, at), timeout=min(timeout_s, 5.0)):
            pass
    except socket.gaierror:
        raise _Failed(step, f"cannot resolve the host {host!r}: check {option}") from None
    except TimeoutError:
        raise _Failed(
            step,
            f"no answer from {host}:{at} within 5 s: check {option}, "
            f"the host's firewall and that the {what} is up",
        ) from None
    except OSError as exc:
        raise _Failed(
            step,
            f"cannot connect to {host}:{at} ({exc.strerror or exc}): "
            f"is the {what} running, and is {option} right?",
        ) from None
    try:
        client.get(PROBE_PATH, params={"limit": 1}, sign=False)
    except SuiteTlsError as exc:
        raise _Failed(step, str(exc)) from None  # says which option fixes it
    except SuiteTransportError as exc:
        if (
            parts.scheme == "https"
            and through is None  # the probe connects straight to the server
            and tls.active().client_cert is None
            and tls.wants_client_certificate(parts.hostname, port)
        ):
            raise _Failed(step, f"{exc!s}: {tls.CLIENT_CERT_HINT}") from None
        raise _Failed(step, f"{exc!s}; is --base-url the Payment Service API?") from None


# -- step 2 ----------------------------------------------------------------------------------
def _signed_request(client: SuiteClient) -> None:
    step = "signed request accepted"
    response = _send(step, client, PROBE_PATH, {"limit": 1})
    if response.is_success:
        refused = _refused(response)
        if refused:
            raise _Failed(
                step,
                f"GET {PROBE_PATH} answered {response.status_code} with a body this suite "
                f"refuses to parse ({refused}): this does not look like the Payment Service API",
            )
        body = _json(response)
        if not isinstance(body, dict) or not isinstance(body.get("payments"), list):
            raise _Failed(
                step,
                f"GET {PROBE_PATH} answered {response.status_code} but not with a JSON object "
                f"holding a 'payments' list ({_kind(response)}): this does not look like the "
                "Payment Service API; check --base-url (the URL before /v1)",
            )
        return
    status = response.status_code
    if not _is_json(response):
        raise _Failed(
            step,
            f"GET {PROBE_PATH} answered {status} with {_kind(response)}, not a JSON error: "
            "this does not look like the Payment Service API; check --base-url "
            "(the URL before /v1)",
        )
    if status in {401, 403} | client.profile.auth.statuses:
        skew = _clock_skew(response)
        window = client.profile.clock_window_secs
        if skew is not None and abs(skew) > window:
            raise _Failed(
                step,
                f"the server rejected the signed request ({status}) and its clock differs from "
                f"this machine's by {skew:+.0f} s (more than the {window} s window): fix the "
                "clock (NTP) on one side",
            )
        raise _Failed(
            step,
            f"the server rejected the signed request ({status}{_code(response)}): check the "
            f"API key and secret (--api-key/--api-secret or the profile's first credential "
            f"{client.credential.name!r}, key {client.credential.api_key!r}) and the "
            "profile's [auth] section (scheme, timestamp_format, string_to_sign, signer): "
            f"{_signing_choices(client.profile)}",
        )
    if status in {404, 405}:
        raise _Failed(
            step,
            f"GET {PROBE_PATH} answered {status}: is --base-url the API root "
            "(the URL in front of /v1)?",
        )
    raise _Failed(
        step, f"a signed GET {PROBE_PATH}?limit=1 answered {status}{_code(response)}, not 2xx"
    )


def _signing_choices(profile: Profile) -> str:
    auth = profile.auth
    if auth.signer:
        return f"signed by the hook {auth.signer}"
    return f"signed {auth.scheme}, timestamps {auth.timestamp_format}"


# -- step 3 ----------------------------------------------------------------------------------
def _fixtures(primary: SuiteClient, secondary: SuiteClient) -> None:
    step = "fixtures present"
    now = datetime.now(UTC).replace(microsecond=0)
    window = {
        "from": (now - timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
        "to": now.isoformat().replace("+00:00", "Z"),
    }
    for currency_id in primary.profile.currencies:
        response = _send(step, primary, "/v1/statements", {"currency_id": currency_id, **window})
        if not response.is_success:
            raise _Failed(
                step,
                f"the profile's currency {currency_id!r} is not usable on this server "
                f"(GET /v1/statements?currency_id={currency_id} answered {response.status_code}"
                f"{_code(response)}): describe this server's fixtures in the profile "
                "(--profile, section [fixtures])",
            )
    response = _send(step, secondary, PROBE_PATH, {"limit": 1})
    if not response.is_success:
        raise _Failed(
            step,
            f"the profile's second credential {secondary.credential.name!r} (key "
            f"{secondary.credential.api_key!r}) was rejected ({response.status_code}"
            f"{_code(response)}): tenant-isolation checks need a second merchant's credential "
            "in the profile",
        )


# -- helpers ---------------------------------------------------------------------------------
def _send(
    step: str, client: SuiteClient, path: str, params: dict[str, str | int]
) -> httpx.Response:
    try:
        return client.get(path, params=params)
    except SuiteTransportError as exc:
        raise _Failed(step, str(exc)) from None
    except SignerHookError as exc:  # the profile's code, not the server: say so
        raise _Failed(step, f"{exc}: fix the hook, or remove auth.signer") from None


def _is_json(response: httpx.Response) -> bool:
    media = str(response.headers.get("content-type", "")).split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _json(response: httpx.Response) -> object:
    if not _is_json(response):
        return None
    try:
        return jsonsafe.loads(response.content)
    except ValueError:
        return None


def _refused(response: httpx.Response) -> str:
    """Why a JSON body is too deep or large to parse safely ("" when it is not)."""
    if not _is_json(response):
        return ""
    try:
        jsonsafe.check(response.content)
    except jsonsafe.JsonTooComplex as exc:
        return str(exc)
    return ""


def _kind(response: httpx.Response) -> str:
    media = response.headers.get("content-type", "").split(";")[0].strip()
    return f"a {media} body" if media else "a body without Content-Type"


def _code(response: httpx.Response) -> str:
    body = _json(response)
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        return f" code {body['code']!r}"
    return ""


def _clock_skew(response: httpx.Response) -> float | None:
    """Server clock minus ours, in seconds, from the ``Date`` header (None when absent)."""
    raw = response.headers.get("date")
    if not raw:
        return None
    try:
        server = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if server.tzinfo is None:
        server = server.replace(tzinfo=UTC)
    return server.timestamp() - time.time()
