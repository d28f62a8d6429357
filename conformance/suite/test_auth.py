"""Authentication headers, for every operation (spec 5, profile 1).

Each operation's known-valid request (from the factories) is sent with one thing wrong at a
time: each of the four headers missing, empty or malformed, an unknown key, a signature made
with another secret, the body, query, path or method changed after signing, a timestamp just
outside the clock window (past and future), a replayed nonce, no credentials and no
Idempotency-Key, no credentials and an invalid body. The judge (``judge.auth``) names the rule
each request breaks and gives the verdict on its answer: the profile's status and code for its
kind of failure (``auth.errors``, else ``auth.error``); the error shape too. Timestamps just
inside the window are accepted. Requests are signed under the profile's
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
from conformance.core.profile import Credential, Profile
from conformance.core.results import Evidence, Outcome
from conformance.core.signing import (
    AUTH_HEADERS,
    NONCE_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    Scheme,
    SigningInput,
)
from conformance.judge.auth import (
    BAD_SIGNATURE,
    CHECK,
    FUTURE,
    HEADER_IDS,
    HEADER_MISSING,
    MALFORMED_NONCE,
    MALFORMED_TIMESTAMP,
    REPLAYED,
    STALE,
    UNKNOWN_KEY,
    AuthRules,
    Breach,
    Clock,
    Memory,
    NonceUses,
)
from conformance.judge.findings import Finding
from conformance.judge.outcomes import (
    ERROR_SHAPE_IDS,
    ErrorShapes,
    json_object,
    status_problems,
    success_problems,
    summary,
)
from conformance.judge.signatures import Signed
from conformance.suite.factories import Factories, RequestSpec
from conformance.suite.selection import collection_operations, is_quick, rotate
from conformance.suite.tool_errors import CaseError, PrerequisiteError
from conformance.suite.wire.client import MISSING, SuiteClient

pytestmark = pytest.mark.family("auth")

SIDE_EFFECT_IDS = ("AUTH-017", "AUTH-018")
ALL_IDS = (
    *HEADER_IDS.values(),
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
class Signing:
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


def sign_input(client: SuiteClient, spec: RequestSpec, how: Signing, body: bytes) -> SigningInput:
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
    client: SuiteClient, spec: RequestSpec, how: Signing, idempotency_key: str | None
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
    """One way of getting authentication wrong: the requirement it is built to break (the judge
    must see the request break it) and, for a signature that does not verify, what it was made
    over (the judge takes it as given: verifying needs the secrets)."""

    name: str
    breaks: str
    build: Callable[[Context], Signing | None]  # None: the mode does not apply
    signed: Signed = Signed.AS_SENT
    invalid: bool = False  # the request breaks the contract too (AUTH-020)


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

    def fresh(self, **changes: Any) -> Signing:
        credential = self.client.credential
        signed = Signing(
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


def _without(header: str, value: str | None) -> Callable[[Context], Signing]:
    """The header absent (``None``) or empty; a client leaving out the timestamp or the nonce
    signs without it too, so the string to sign then has an empty value in its place."""

    def build(ctx: Context) -> Signing:
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
    return Mode(f"{header} missing", HEADER_IDS[header], _without(header, None))


def _empty(header: str) -> Mode:
    return Mode(f"{header} empty", HEADER_IDS[header], _without(header, ""))


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
    def build(ctx: Context) -> Signing:
        value = _malformed_timestamps(ctx)[index]
        return ctx.fresh(timestamp=value)

    labels = ("with a fraction", "as an ISO date", "in hex")
    return Mode(f"{TIMESTAMP_HEADER} {labels[index]}", MALFORMED_TIMESTAMP, build)


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
    def build(ctx: Context) -> Signing | None:
        nonces = _bad_nonces(ctx.profile)
        if index >= len(nonces):
            return None
        return ctx.fresh(nonce=nonces[index][1])

    labels = ("too short", "too long", "outside the character set", "with a dot")
    return Mode(f"{NONCE_HEADER} {labels[index]}", MALFORMED_NONCE, build)


def _signature_truncated(ctx: Context) -> Signing:
    signed = ctx.fresh()
    inp = sign_input(ctx.client, ctx.spec, signed, body_bytes(ctx.spec))
    sent = auth_headers(ctx.client, inp, signed.secret)[SIGNATURE_HEADER]
    signed.replace = {SIGNATURE_HEADER: sent[:-1]}
    return signed


def _other_secret(ctx: Context) -> Signing:
    others = [c for c in ctx.profile.credentials if c.api_key != ctx.client.credential.api_key]
    secret = others[0].api_secret if others else ctx.client.credential.api_secret + "x"
    return ctx.fresh(secret=secret)


def _body_changed(ctx: Context) -> Signing | None:
    if not ctx.spec.has_body or not isinstance(ctx.spec.body, dict) or not ctx.covers("body"):
        return None
    changed = dict(ctx.spec.body, conformance_tamper=1)
    sent = json.dumps(changed, ensure_ascii=False, separators=(",", ":")).encode()
    return ctx.fresh(sign_body=body_bytes(ctx.spec), send_body=sent)


def _body_reformatted(ctx: Context) -> Signing | None:
    if not ctx.spec.has_body or not ctx.covers("body"):
        return None
    sent = json.dumps(ctx.spec.body, ensure_ascii=False, indent=1).encode()
    return ctx.fresh(sign_body=body_bytes(ctx.spec), send_body=sent)


def _body_unsigned(ctx: Context) -> Signing | None:
    if not ctx.spec.has_body or not ctx.covers("body"):
        return None
    return ctx.fresh(sign_body=b"")


def _query_changed(ctx: Context) -> Signing | None:
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


def _path_changed(ctx: Context) -> Signing | None:
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


def _method_changed(ctx: Context) -> Signing | None:
    if not ctx.covers("method"):
        return None
    return ctx.fresh(sign_method="GET" if ctx.spec.method != "GET" else "POST")


def _stale(ctx: Context) -> Signing:
    return ctx.fresh(timestamp=ctx.stamp(ctx.now() - ctx.profile.clock_window_secs - ctx.margin))


def _future(ctx: Context) -> Signing:
    return ctx.fresh(timestamp=ctx.stamp(ctx.now() + ctx.profile.clock_window_secs + ctx.margin))


def _unknown_key(ctx: Context) -> Signing:
    return ctx.fresh(api_key=f"mk_unknown_{uuid.uuid4().hex[:16]}")


def _unauthenticated_invalid(ctx: Context) -> Signing:
    return ctx.fresh(
        unsigned=True,
        send_body=b"{}" if ctx.spec.has_body else None,
        send_query=None if ctx.spec.has_body else {**ctx.spec.query, "limit": "not-a-number"},
    )


REFUSALS: tuple[Mode, ...] = (
    *(_missing(h) for h in AUTH_HEADERS),
    *(_empty(h) for h in AUTH_HEADERS),
    *(_timestamp_malformed(i) for i in range(3)),
    *(_nonce_malformed(i) for i in range(4)),
    Mode("unknown X-Api-Key", UNKNOWN_KEY, _unknown_key),
    # cut short: of another form than the scheme's (a hook's may have any: then it is wrong)
    Mode("signature truncated", BAD_SIGNATURE, _signature_truncated, Signed.UNKNOWN),
    Mode("signature made with another secret", BAD_SIGNATURE, _other_secret, Signed.OTHER_SECRET),
    *(
        Mode(name, signed.ids[0], build, signed)
        for name, signed, build in (
            ("body changed after signing", Signed.BODY_CHANGED, _body_changed),
            ("body re-serialised after signing", Signed.BODY_CHANGED, _body_reformatted),
            ("body left out of the signature", Signed.BODY_CHANGED, _body_unsigned),
            ("query changed after signing", Signed.TARGET_CHANGED, _query_changed),
            ("path changed after signing", Signed.TARGET_CHANGED, _path_changed),
            ("method changed after signing", Signed.TARGET_CHANGED, _method_changed),
        )
    ),
    Mode("timestamp just outside the window in the past", STALE, _stale),
    Mode("timestamp just outside the window in the future", FUTURE, _future),
    Mode(
        "no credentials and an invalid request",
        HEADER_MISSING,
        _unauthenticated_invalid,
        invalid=True,
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
    outcome = Outcome.FAILED if findings.problems else Outcome.PASSED
    message = "; ".join(findings.problems[:8]) if findings.problems else passed_message
    recorder.record(check_id, ids, outcome, message, operation_id, findings.evidence)


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
    rules: AuthRules

    @property
    def client(self) -> SuiteClient:
        return self.ctx.client

    @property
    def profile(self) -> Profile:
        return self.ctx.profile

    def send(self, how: Signing, key: str | None) -> tuple[httpx.Response, float]:
        """The answer to ``how``, and when it was sent (Unix seconds)."""
        sent_at = time.time()
        return send_signed(self.client, self.ctx.spec, how, key), sent_at

    def new_key(self) -> str | None:
        return str(uuid.uuid4()) if self.key is not None else None

    def record(self, name: str, ids: tuple[str, ...], findings: Findings, ok: str) -> None:
        _record(
            self.recorder, f"auth {self.operation_id} {name}", ids, findings, ok, self.operation_id
        )

    def judged(self, name: str, found: list[Finding], what: str) -> None:
        """Record the judge's findings on the last exchange, each as ``name`` and its ids."""
        for finding in found:
            failed = finding.outcome is Outcome.FAILED
            self.recorder.record(
                f"auth {self.operation_id} {name} ({', '.join(finding.ids)})",
                finding.ids,
                finding.outcome,
                f"{what}: {finding.message}" if what and failed else finding.message,
                self.operation_id,
                self.client.last_exchange if failed else None,
            )

    def clock(self, response: httpx.Response, sent_at: float) -> Clock | None:
        stated = self.rules.timestamp(response.request.headers.get(TIMESTAMP_HEADER, ""))
        return None if stated is None else self.rules.clock(stated, sent_at)

    def breach(self, mode: Mode, response: httpx.Response, sent_at: float) -> Breach:
        """The rule the judge sees ``response``'s request break (it must be ``mode``'s)."""
        found = self.rules.breach(
            response.request.headers.get,
            sent_at=sent_at,
            signed=mode.signed,
            known_keys={c.api_key for c in self.profile.credentials},
        )
        if found is None or mode.breaks not in (*found.ids, *found.contract_ids):
            raise CaseError(
                f"{mode.name}: the judge sees {found} in the request, not {mode.breaks}"
            )
        return found


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
        response, sent_at = run.send(how, run.key)
        breach = run.breach(mode, response, sent_at)
        found = run.rules.refusal(
            breach,
            response.status_code,
            json_object(response),
            known_valid=True,
            also_invalid=mode.invalid,
        )
        run.judged(mode.name, found, mode.name)
        if response.status_code in {e.status for e in breach.answers}:
            shape.add(response, run.client.last_exchange, f"{mode.name}: ")
    spec = run.ctx.spec
    if run.key is not None and run.profile.idempotency_required(spec.method, run.operation_id):
        response, _ = run.send(Signing("", "", "", "", unsigned=True), None)
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
    response, _ = run.send(run.ctx.fresh(nonce=nonce) if nonce else run.ctx.fresh(), run.key)
    effects = Findings()
    prefix = "the genuine request after the refused ones: "
    if spec.ready and run.key is not None:
        effects.add(success_problems(response, run.profile, run.operation_id), run.client, prefix)
    elif not run.rules.authenticated(response.status_code):
        effects.add([f"not accepted: {summary(response)}"], run.client, prefix)
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
    cases = [("signed request accepted", "", 0)]
    if edges:
        cases += [
            (f"timestamp {window - margin} s in the {label} accepted", label, offset)
            for label, offset in (("past", -(window - margin)), ("future", window - margin))
        ]
    for name, label, offset in cases:
        timestamp = run.ctx.stamp(run.ctx.now() + offset)
        response, sent_at = run.send(run.ctx.fresh(timestamp=timestamp), run.new_key())
        where = run.clock(response, sent_at)
        if where is not Clock.INSIDE:
            raise CaseError(f"{name}: the judge sees the timestamp {where}, not inside the window")
        found = run.rules.accepted(response.status_code, where, known_valid=True)
        run.judged(name, found, f"timestamp {window - margin} s in the {label}" if label else "")


def replayed_nonce_is_refused(run: Run) -> None:
    """The same request signed afresh with a nonce already accepted is refused."""
    if not run.profile.auth.nonce_single_use:
        run.recorder.record(
            f"auth {run.operation_id} nonce replayed",
            (REPLAYED,),
            Outcome.NOT_EXERCISED,
            "auth.nonce_single_use = false: the profile lets a nonce be used again, so a "
            "replayed nonce is not refused",
            run.operation_id,
        )
        return
    uses = NonceUses(run.rules, Memory())
    first = run.ctx.fresh()
    scope = (first.api_key, first.nonce)
    stated = run.rules.timestamp(first.timestamp)
    response, _ = run.send(first, run.new_key())
    accepted = run.rules.authenticated(response.status_code)
    uses.observe(scope, stated, "the first use", accepted=accepted)
    if not accepted:
        failure = Finding(CHECK, (REPLAYED,), Outcome.FAILED, f"not accepted: {summary(response)}")
        run.judged("nonce replayed", [failure], "the first use")
        return
    response, _ = run.send(run.ctx.fresh(nonce=first.nonce), run.new_key())
    status = response.status_code
    breach, _ = uses.observe(scope, stated, "the replay", accepted=run.rules.authenticated(status))
    if breach is None:
        raise CaseError("the judge sees no reuse of the nonce it saw accepted")
    found = run.rules.refusal(breach, status, json_object(response), known_valid=True)
    run.judged("nonce replayed", found, "the replayed nonce")


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
    key = str(uuid.uuid4()) if takes_key else None
    run = Run(ctx, check_recorder, operation_id, key, AuthRules(conformance_profile))

    donor_nonce = refuse_each_mode(run, modes)
    genuine_request_is_a_first_use(run, factories, donor_nonce)
    signed_requests_are_accepted(run, edges=full)
    replayed_nonce_is_refused(run)
