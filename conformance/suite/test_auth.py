"""Authentication headers, for every operation (spec 5, profile 1).

Each operation's known-valid request (from the factories) is sent with one thing wrong at a
time: each of the four headers missing, empty or malformed, an unknown key, a signature made
with another secret, the body, query, path or method changed after signing, a timestamp just
outside the clock window (past and future), a replayed nonce, no credentials and no
Idempotency-Key, no credentials and an invalid body. Each must be refused with the profile's
status and code for its kind of failure (``auth.errors``, else ``auth.error``) and the error
shape. Timestamps just inside the window are accepted. Requests are signed under the profile's
scheme, timestamp format and string to sign (or its ``auth.signer`` hook); a change after signing
to a part the string to sign does not cover is not tried.

Side effects: every refused request of an operation carries the same Idempotency-Key; the
genuine request sent afterwards with that key (and the nonce of a refused request) must be a
first use that succeeds, and a refused create creates nothing (checked through the list).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from conformance.core.contract import operation as contract_operation
from conformance.core.patterns import ecma_search as pattern_matches
from conformance.core.profile import Credential, ErrorSpec, Profile
from conformance.core.results import Evidence, Outcome
from conformance.core.signing import (
    API_KEY_HEADER,
    AUTH_HEADERS,
    NONCE_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    Scheme,
    SigningInput,
)
from conformance.judge.outcomes import (
    ERROR_SHAPE_IDS,
    ErrorShapes,
    status_problems,
    status_problems_any,
    success_problems,
    summary,
)
from conformance.suite.factories import Factories, PrerequisiteError, RequestSpec
from conformance.suite.selection import collection_operations, is_quick, rotate
from conformance.suite.wire.client import MISSING, SuiteClient

pytestmark = pytest.mark.family("auth")

CONTRACT_HEADER_IDS = {
    API_KEY_HEADER: "AUTH-001",
    SIGNATURE_HEADER: "AUTH-002",
    TIMESTAMP_HEADER: "AUTH-003",
    NONCE_HEADER: "AUTH-004",
}
SIDE_EFFECT_IDS = ("AUTH-017", "AUTH-018")
ALL_IDS = (
    *CONTRACT_HEADER_IDS.values(),
    *(f"AUTH-{n:03d}" for n in range(5, 21)),
    *ERROR_SHAPE_IDS,
)
# The operation that runs every mode in --quick (the others run a rotating few).
QUICK_FULL_OPERATION = "createPayment"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "operation_id" in metafunc.fixturenames:
        operations = collection_operations(metafunc.config)
        metafunc.parametrize("operation_id", operations, ids=operations)


# ----------------------------------------------------------------------------- raw signing
@dataclass
class Signed:
    """How one request is signed and how it is then sent (each part may differ)."""

    timestamp: str
    nonce: str
    api_key: str
    secret: str
    sign_method: str | None = None  # default: the method sent
    sign_target: str | None = None  # default: the target sent
    sign_body: bytes | None = None  # default: the body sent
    send_body: bytes | None = None  # default: the spec's body
    send_query: dict[str, Any] | None = None  # default: the spec's query
    drop: tuple[str, ...] = ()
    replace: dict[str, str] = field(default_factory=dict)
    unsigned: bool = False


def body_bytes(spec: RequestSpec) -> bytes:
    """The bytes the SuiteClient sends for ``spec``'s JSON body."""
    if not spec.has_body:
        return b""
    return json.dumps(spec.body, ensure_ascii=False, separators=(",", ":")).encode()


def target_of(client: SuiteClient, spec: RequestSpec, query: dict[str, Any] | None) -> str:
    url = httpx.URL(client.base_url + spec.path, params=query or None)
    return url.raw_path.decode("ascii")


def host_of(client: SuiteClient) -> str:
    """The Host header the client sends."""
    return httpx.URL(client.base_url).netloc.decode("ascii")


def sign_input(client: SuiteClient, spec: RequestSpec, how: Signed, body: bytes) -> SigningInput:
    """What ``how`` signs: the request as sent, but for the parts it changes after signing."""
    query = spec.query if how.send_query is None else how.send_query
    return SigningInput(
        method=(how.sign_method or spec.method).upper(),
        target=how.sign_target or target_of(client, spec, query),
        body=body if how.sign_body is None else how.sign_body,
        timestamp=how.timestamp,
        nonce=how.nonce,
        api_key=how.api_key,
        host=host_of(client),
    )


def auth_headers(client: SuiteClient, inp: SigningInput, secret: str) -> dict[str, str]:
    """The authentication headers of ``inp`` signed with ``secret`` under the profile."""
    own = client.credential
    credential = Credential(own.name, inp.api_key, secret, own.merchant_id)
    return client.profile.signing_scheme.headers(inp, credential)


def send_signed(
    client: SuiteClient, spec: RequestSpec, how: Signed, idempotency_key: str | None
) -> httpx.Response:
    query = spec.query if how.send_query is None else how.send_query
    body = body_bytes(spec) if how.send_body is None else how.send_body
    headers: dict[str, str | None] = {}
    if not how.unsigned:
        headers = {**auth_headers(client, sign_input(client, spec, how, body), how.secret)}
        headers.update(how.replace)
        for name in how.drop:
            headers[name] = None
    return client.request(
        spec.method,
        spec.path,
        content=body if spec.has_body or how.send_body is not None else None,
        json=MISSING,
        params=dict(query) or None,
        headers=dict(spec.headers) or None,
        idempotency_key=idempotency_key,
        sign=False,
        auth=headers,
        operation_id=spec.operation_id,
    )


# ----------------------------------------------------------------------------- the modes
@dataclass(frozen=True)
class Mode:
    """One way of getting authentication wrong, and what the refusal verifies.

    ``contract_ids`` only need a refusal (the spec requires the headers but shows no status);
    ``profile_ids`` need the profile's status and code for one of ``kinds`` (a server may read
    the failure as any of them, e.g. a truncated signature as malformed or as wrong).
    """

    name: str
    contract_ids: tuple[str, ...]
    profile_ids: tuple[str, ...]
    build: Callable[[Context], Signed | None]  # None: the mode does not apply
    kinds: tuple[str, ...] = ("malformed",)


@dataclass
class Context:
    client: SuiteClient
    profile: Profile
    spec: RequestSpec
    other_id: str  # another path id, for "path changed after signing"

    def now(self) -> int:
        return int(time.time())

    @property
    def scheme(self) -> Scheme:
        return self.profile.signing_scheme

    def stamp(self, unix_seconds: int) -> str:
        """``unix_seconds`` as the profile writes ``X-Timestamp``."""
        return self.scheme.timestamp(unix_seconds)

    def covers(self, part: str) -> bool:
        """The signature covers ``part`` (a hook is taken to cover every part)."""
        return self.scheme.hook is not None or part in self.scheme.covers()

    def fresh(self, **changes: Any) -> Signed:
        credential = self.client.credential
        signed = Signed(
            timestamp=self.stamp(self.now()),
            nonce=uuid.uuid4().hex,
            api_key=credential.api_key,
            secret=credential.api_secret,
        )
        for key, value in changes.items():
            setattr(signed, key, value)
        return signed

    @property
    def margin(self) -> int:
        """How far from the window's edge the edge cases sit (clock skew, request time)."""
        return max(3, self.profile.clock_window_secs // 60)


def _without(header: str, value: str | None) -> Callable[[Context], Signed]:
    """The header absent (``None``) or empty; a client leaving out the timestamp or the nonce
    signs without it too, so the string to sign then has an empty value in its place."""

    def build(ctx: Context) -> Signed:
        signed = ctx.fresh()
        if header == TIMESTAMP_HEADER:
            signed.timestamp = ""
        elif header == NONCE_HEADER:
            signed.nonce = ""
        if value is None:
            signed.drop = (header,)
        else:
            signed.replace = {header: value}
        return signed

    return build


def _missing(header: str) -> Mode:
    return Mode(
        f"{header} missing",
        (CONTRACT_HEADER_IDS[header],),
        ("AUTH-006",),
        _without(header, None),
        ("missing",),
    )


def _empty(header: str) -> Mode:
    return Mode(
        f"{header} empty",
        (CONTRACT_HEADER_IDS[header],),
        ("AUTH-006",),
        _without(header, ""),
        ("missing", "malformed"),
    )


def _malformed_timestamps(ctx: Context) -> list[str]:
    """Three timestamps of the right moment in a form the profile's format refuses."""
    now = ctx.now()
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    fmt = ctx.scheme.timestamp_format
    if fmt == "unix-millis":
        return [f"{now * 1000}.0", iso, f"0x{now * 1000:x}"]
    if fmt == "rfc3339":
        return [f"{now}.0", iso[:10], f"0x{now:x}"]  # an ISO date without its time
    return [f"{now}.0", iso, f"0x{now:x}"]


def _timestamp_malformed(index: int) -> Mode:
    def build(ctx: Context) -> Signed:
        value = _malformed_timestamps(ctx)[index]
        return ctx.fresh(timestamp=value)

    labels = ("with a fraction", "as an ISO date", "in hex")
    return Mode(f"{TIMESTAMP_HEADER} {labels[index]}", (), ("AUTH-007",), build)


def _bad_nonces(profile: Profile) -> list[tuple[str, str]]:
    """Nonces just outside the profile's nonce pattern (kept only if they really miss it)."""
    pattern = profile.auth.nonce_pattern
    base = uuid.uuid4().hex
    candidates = [
        ("one character too short", base[:15]),
        ("one character too long", (base * 5)[:129]),
        ("with a character outside the set", base[:31] + "!"),
        ("with a dot", base[:16] + "." + base[16:]),
    ]
    return [(label, v) for label, v in candidates if not pattern_matches(pattern, v)]


def _nonce_malformed(index: int) -> Mode:
    def build(ctx: Context) -> Signed | None:
        nonces = _bad_nonces(ctx.profile)
        if index >= len(nonces):
            return None
        return ctx.fresh(nonce=nonces[index][1])

    labels = ("too short", "too long", "outside the character set", "with a dot")
    return Mode(f"{NONCE_HEADER} {labels[index]}", (), ("AUTH-008",), build)


def _signature_truncated(ctx: Context) -> Signed:
    signed = ctx.fresh()
    inp = sign_input(ctx.client, ctx.spec, signed, body_bytes(ctx.spec))
    sent = auth_headers(ctx.client, inp, signed.secret)[SIGNATURE_HEADER]
    signed.replace = {SIGNATURE_HEADER: sent[:-1]}
    return signed


def _other_secret(ctx: Context) -> Signed:
    others = [c for c in ctx.profile.credentials if c.api_key != ctx.client.credential.api_key]
    secret = others[0].api_secret if others else ctx.client.credential.api_secret + "x"
    return ctx.fresh(secret=secret)


def _body_changed(ctx: Context) -> Signed | None:
    if not ctx.spec.has_body or not isinstance(ctx.spec.body, dict) or not ctx.covers("body"):
        return None
    changed = dict(ctx.spec.body, conformance_tamper=1)
    sent = json.dumps(changed, ensure_ascii=False, separators=(",", ":")).encode()
    return ctx.fresh(sign_body=body_bytes(ctx.spec), send_body=sent)


def _body_reformatted(ctx: Context) -> Signed | None:
    if not ctx.spec.has_body or not ctx.covers("body"):
        return None
    sent = json.dumps(ctx.spec.body, ensure_ascii=False, indent=1).encode()
    return ctx.fresh(sign_body=body_bytes(ctx.spec), send_body=sent)


def _body_unsigned(ctx: Context) -> Signed | None:
    if not ctx.spec.has_body or not ctx.covers("body"):
        return None
    return ctx.fresh(sign_body=b"")


def _query_changed(ctx: Context) -> Signed | None:
    if not ctx.covers("query"):
        return None
    query = dict(ctx.spec.query)
    changed = dict(query)
    if query:
        name = next(iter(query))
        value = query[name]
        changed[name] = value - 1 if isinstance(value, int) and value > 1 else f"{value}x"
    else:
        changed["conformance"] = "1"
    return ctx.fresh(sign_target=target_of(ctx.client, ctx.spec, query), send_query=changed)


def _path_changed(ctx: Context) -> Signed | None:
    if not ctx.spec.path_params or not ctx.covers("path"):
        return None
    name = next(iter(ctx.spec.path_params))
    other = RequestSpec(
        ctx.spec.operation_id,
        ctx.spec.method,
        ctx.spec.path_template,
        {**ctx.spec.path_params, name: ctx.other_id},
        ctx.spec.query,
    )
    return ctx.fresh(sign_target=target_of(ctx.client, other, ctx.spec.query))


def _method_changed(ctx: Context) -> Signed | None:
    if not ctx.covers("method"):
        return None
    return ctx.fresh(sign_method="GET" if ctx.spec.method != "GET" else "POST")


def _stale(ctx: Context) -> Signed:
    return ctx.fresh(timestamp=ctx.stamp(ctx.now() - ctx.profile.clock_window_secs - ctx.margin))


def _future(ctx: Context) -> Signed:
    return ctx.fresh(timestamp=ctx.stamp(ctx.now() + ctx.profile.clock_window_secs + ctx.margin))


def _unknown_key(ctx: Context) -> Signed:
    return ctx.fresh(api_key=f"mk_unknown_{uuid.uuid4().hex[:16]}")


REFUSALS: tuple[Mode, ...] = (
    *(_missing(h) for h in AUTH_HEADERS),
    *(_empty(h) for h in AUTH_HEADERS),
    *(_timestamp_malformed(i) for i in range(3)),
    *(_nonce_malformed(i) for i in range(4)),
    Mode("unknown X-Api-Key", (), ("AUTH-009",), _unknown_key, ("unknown_key",)),
    Mode(
        "signature truncated",
        (),
        ("AUTH-013",),
        _signature_truncated,
        ("malformed", "bad_signature"),
    ),
    *(
        Mode(name, (), (rid,), build, ("bad_signature",))
        for name, rid, build in (
            ("signature made with another secret", "AUTH-013", _other_secret),
            ("body changed after signing", "AUTH-014", _body_changed),
            ("body re-serialised after signing", "AUTH-014", _body_reformatted),
            ("body left out of the signature", "AUTH-014", _body_unsigned),
            ("query changed after signing", "AUTH-015", _query_changed),
            ("path changed after signing", "AUTH-015", _path_changed),
            ("method changed after signing", "AUTH-015", _method_changed),
        )
    ),
    Mode("timestamp just outside the window in the past", (), ("AUTH-010",), _stale, ("expired",)),
    Mode(
        "timestamp just outside the window in the future", (), ("AUTH-011",), _future, ("expired",)
    ),
    Mode(
        "no credentials and an invalid request",
        (),
        ("AUTH-020",),
        lambda ctx: ctx.fresh(
            unsigned=True,
            send_body=b"{}" if ctx.spec.has_body else None,
            send_query=None if ctx.spec.has_body else {**ctx.spec.query, "limit": "not-a-number"},
        ),
        ("missing",),
    ),
)
# The mode whose nonce the genuine request reuses afterwards: a refused request (here: a wrong
# signature) must not spend the nonce of the genuine one.
NONCE_DONOR = "signature made with another secret"


# ----------------------------------------------------------------------------- recording
@dataclass
class Findings:
    problems: list[str] = field(default_factory=list)
    evidence: Evidence | None = None

    def add(self, problems: list[str], client: SuiteClient, prefix: str = "") -> None:
        if problems:
            self.problems += [f"{prefix}{p}" for p in problems]
            if self.evidence is None:
                self.evidence = client.last_exchange


def _record(
    recorder: Any,
    check_id: str,
    ids: tuple[str, ...],
    findings: Findings,
    passed_message: str,
    operation_id: str,
) -> None:
    if not ids:
        return
    outcome = Outcome.FAILED if findings.problems else Outcome.PASSED
    message = "; ".join(findings.problems[:8]) if findings.problems else passed_message
    recorder.record(check_id, ids, outcome, message, operation_id, findings.evidence)


def _refused(response: httpx.Response) -> list[str]:
    return [] if 400 <= response.status_code < 500 else [f"not refused: {summary(response)}"]


def _authenticated(response: httpx.Response, profile: Profile) -> list[str]:
    """Accepted by authentication: neither an auth error nor a server error."""
    if response.status_code in profile.auth.statuses or response.status_code >= 500:
        return [f"not accepted: {summary(response)}"]
    return []


def _statuses(expected: tuple[ErrorSpec, ...]) -> str:
    return "/".join(str(s) for s in dict.fromkeys(e.status for e in expected))


def _answers(expected: tuple[ErrorSpec, ...]) -> str:
    return " or ".join(f"{e.status} {e.code}" for e in expected)


def _modes_for(operation_id: str, index: int, quick: bool) -> list[Mode]:
    if not quick or operation_id == QUICK_FULL_OPERATION:
        return list(REFUSALS)
    return rotate(REFUSALS, index * 3, 3)


# ----------------------------------------------------------------------------- the steps
@dataclass
class Run:
    """What the steps of one operation's test share."""

    ctx: Context
    recorder: Any
    operation_id: str
    key: str | None  # the Idempotency-Key of the refused requests (None: the op takes none)

    @property
    def client(self) -> SuiteClient:
        return self.ctx.client

    @property
    def profile(self) -> Profile:
        return self.ctx.profile

    def send(self, how: Signed, key: str | None) -> httpx.Response:
        return send_signed(self.client, self.ctx.spec, how, key)

    def new_key(self) -> str | None:
        return str(uuid.uuid4()) if self.key is not None else None

    def record(self, name: str, ids: tuple[str, ...], findings: Findings, ok: str) -> None:
        _record(
            self.recorder, f"auth {self.operation_id} {name}", ids, findings, ok, self.operation_id
        )


def refuse_each_mode(run: Run, modes: list[Mode]) -> str | None:
    """Send every refusal mode with the run's key; returns the nonce of the NONCE_DONOR."""
    shape = ErrorShapes()
    donor_nonce: str | None = None
    for mode in modes:
        how = mode.build(run.ctx)
        if how is None:
            continue
        if mode.name == NONCE_DONOR:
            donor_nonce = how.nonce
        expected = run.profile.auth.errors_for(*mode.kinds)
        response = run.send(how, run.key)
        refused, with_status = Findings(), Findings()
        refused.add(_refused(response), run.client)
        with_status.add(status_problems_any(response, expected), run.client)
        if response.status_code in {e.status for e in expected}:
            shape.add(response, run.client.last_exchange, f"{mode.name}: ")
        run.record(f"{mode.name} refused", mode.contract_ids, refused, f"{mode.name}: refused")
        run.record(
            f"{mode.name} {_statuses(expected)}",
            mode.profile_ids,
            with_status,
            f"{mode.name}: {_answers(expected)}",
        )
    spec = run.ctx.spec
    if run.key is not None and run.profile.idempotency_required(spec.method, run.operation_id):
        response = run.send(Signed("", "", "", "", unsigned=True), None)
        first = Findings()
        first.add(status_problems(response, run.profile.auth.error_for("missing")), run.client)
        run.record(
            "no credentials and no Idempotency-Key",
            ("AUTH-019",),
            first,
            "refused as unauthenticated first",
        )
    shape.record(run.recorder, f"auth {run.operation_id} error shape", run.operation_id)
    return donor_nonce


def genuine_request_is_a_first_use(run: Run, factories: Factories, nonce: str | None) -> None:
    """After the refusals, the genuine request, with their Idempotency-Key and the nonce of a
    refused one, is a first use that succeeds: the refusals left no trace."""
    spec = run.ctx.spec
    response = run.send(run.ctx.fresh(nonce=nonce) if nonce else run.ctx.fresh(), run.key)
    effects = Findings()
    prefix = "the genuine request after the refused ones: "
    if spec.ready and run.key is not None:
        effects.add(success_problems(response, run.profile, run.operation_id), run.client, prefix)
    else:
        effects.add(_authenticated(response, run.profile), run.client, prefix)
    replay_header = run.profile.idempotency.replay_header  # "": no marker declared
    if replay_header and response.headers.get(replay_header):
        effects.add([f"it was answered as a replay ({replay_header})"], run.client)
    if run.operation_id == "createPayment" and isinstance(spec.body, dict):
        found = factories.payments_with_order_no(str(spec.body["merchant_order_no"]))
        if len(found) != 1:
            effects.add([f"{len(found)} payments carry the order number (expected 1)"], run.client)
    if run.key is not None:
        run.record(
            "refusals have no side effect",
            SIDE_EFFECT_IDS,
            effects,
            "the genuine request afterwards was a first use and succeeded",
        )
    else:
        run.record(
            "refusals have no side effect",
            ("AUTH-017",),
            effects,
            "the genuine request afterwards was accepted",
        )


def signed_requests_are_accepted(run: Run, edges: bool) -> None:
    """A request signed now is accepted; with ``edges``, also timestamps just inside the
    clock window, in the past and in the future."""
    window, margin = run.profile.clock_window_secs, run.ctx.margin
    now, inside = Findings(), Findings()
    response = run.send(run.ctx.fresh(), run.new_key())
    now.add(_authenticated(response, run.profile), run.client)
    run.record(
        "signed request accepted",
        ("AUTH-005",),
        now,
        "a request signed as the profile states was accepted",
    )
    if not edges:
        return
    for label, offset in (("past", -(window - margin)), ("future", window - margin)):
        timestamp = run.ctx.stamp(run.ctx.now() + offset)
        response = run.send(run.ctx.fresh(timestamp=timestamp), run.new_key())
        inside.add(
            _authenticated(response, run.profile),
            run.client,
            f"timestamp {window - margin} s in the {label}: ",
        )
    run.record(
        "inside the window accepted",
        ("AUTH-012",),
        inside,
        f"timestamps {window - margin} s off accepted",
    )


def replayed_nonce_is_refused(run: Run) -> None:
    """The same request signed afresh with a nonce already accepted is refused."""
    if not run.profile.auth.nonce_single_use:
        run.recorder.record(
            f"auth {run.operation_id} nonce replayed",
            ("AUTH-016",),
            Outcome.NOT_EXERCISED,
            "auth.nonce_single_use = false: the profile lets a nonce be used again, so a "
            "replayed nonce is not refused",
            run.operation_id,
        )
        return
    auth_error = run.profile.auth.error_for("replayed")
    first = run.ctx.fresh()
    replay = Findings()
    response = run.send(first, run.new_key())
    replay.add(_authenticated(response, run.profile), run.client, "the first use: ")
    response = run.send(run.ctx.fresh(nonce=first.nonce), run.new_key())
    replay.add(status_problems(response, auth_error), run.client, "the replayed nonce: ")
    run.record(
        "nonce replayed",
        ("AUTH-016",),
        replay,
        f"a replayed nonce is refused with {auth_error.status}",
    )


# ----------------------------------------------------------------------------- the test
@pytest.mark.requirement(*ALL_IDS)
def test_authentication(
    operation_id: str,
    request: pytest.FixtureRequest,
    suite_client: SuiteClient,
    conformance_profile: Profile,
    effective_contract: dict[str, Any],
    check_recorder: Any,
) -> None:
    """Every refusal mode answered with the profile's auth error and without side effect; a
    genuine request, one just inside the clock window, accepted; a replayed nonce refused."""
    factories = Factories(suite_client, conformance_profile, effective_contract)
    try:
        spec = factories.request(operation_id)
    except PrerequisiteError as exc:
        pytest.skip(f"not exercised: {exc}")
    quick = is_quick(request.config)
    full = not quick or operation_id == QUICK_FULL_OPERATION
    ids = collection_operations(request.config)
    modes = _modes_for(operation_id, ids.index(operation_id), quick)
    takes_key = contract_operation(operation_id, effective_contract).accepts_idempotency_key
    ctx = Context(
        suite_client, conformance_profile, spec, other_id=f"conformance_{uuid.uuid4().hex[:12]}"
    )
    run = Run(ctx, check_recorder, operation_id, str(uuid.uuid4()) if takes_key else None)

    donor_nonce = refuse_each_mode(run, modes)
    genuine_request_is_a_first_use(run, factories, donor_nonce)
    signed_requests_are_accepted(run, edges=full)
    replayed_nonce_is_refused(run)
