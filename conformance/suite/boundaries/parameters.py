"""Near misses of query and path parameters: text that is no text, and cursors never issued.

Every query and path parameter of an operation (``parameter_constraints``) has an ``encoding``
constraint: its value, as sent, must decode to UTF-8 text. Its near misses append a malformed
percent-escape (``%zz``, a ``%`` at the end, ``%4``) or escapes of bytes that are not UTF-8
(``%FF%FE``, ``%C3``, ``%C0%AF``) to the parameter's known-valid value. Query parameters that
carry a cursor (``parameter_classes.yaml``) also have a ``cursor`` constraint: an unknown cursor
of the same shape as a real one, a real ``next_cursor`` issued to the OTHER merchant for the
same listing, and a real one of this merchant cut in half. A real cursor comes from the first
page of the listing at its smallest ``limit`` (two items are made first when the listing has
too few); without one, the case is not sent and says why.

Each case is a ``variants.Raw`` request: the operation's known-valid request from the factories
with exactly ONE parameter changed, sent byte for byte (signature, Idempotency-Key and body stay
valid). ``expectation`` says which answers pass and under which requirement ids; the test is
``test_parameters.py``.

A malformed escape may be refused or read literally, as the profile's
``status.malformed_percent_escape`` says ("refuse", "literal" or "either"). A literal reading is
judged against a control: the same request with the same text sent well-formed (``usdc%zz`` as
``usdc%25zz``), which a server that reads ``%zz`` as text must answer alike: the same status and
code, or for a success the same items (never a 2xx that ignores the parameter).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import httpx

from conformance.core.case_coverage import CaseKey, CaseLog
from conformance.core.catalogue import load_catalogue
from conformance.core.formats import as_literal
from conformance.core.profile import ErrorSpec, Profile
from conformance.core.yamldata import load_yaml
from conformance.judge.admission import malformed_ids
from conformance.judge.boundary_requirements import RequirementMap
from conformance.judge.constraints import (
    PARAMETER_KINDS,
    Constraint,
    FieldRef,
    iter_constraints,
)
from conformance.judge.outcomes import (
    VALIDATION_DETAILS,
    ErrorShapes,
    is_validation_error,
    json_object,
    malformed_refusal,
    status_problems,
    summary,
    validation_details_problems,
)
from conformance.suite.boundaries.classes import keys_of
from conformance.suite.boundaries.sides import Side
from conformance.suite.factories import Factories, RequestSpec
from conformance.suite.robustness.variants import (
    Raw,
    content_of,
    path_with,
    query_with,
    send_raw,
    target_of,
)
from conformance.suite.tool_errors import PrerequisiteError
from conformance.suite.wire.check_properties import CheckRecorder
from conformance.suite.wire.client import SuiteClient

DATA_FILE: Final = Path(__file__).with_name("parameter_classes.yaml")
ENCODING: Final = "encoding"
CURSOR: Final = "cursor"
UNKNOWN_CURSOR: Final = "unknown-cursor"
FOREIGN_CURSOR: Final = "foreign-cursor"
TRUNCATED_CURSOR: Final = "truncated-cursor"
MALFORMED_ESCAPE: Final = "malformed-percent-escape"
# Where the valid request does not carry the parameter, the near miss follows this text.
FILLER: Final = "conformance"
# A real cursor is mutated into an unknown one of the same shape only when it has at least this
# many letters and digits; a shorter one (an offset?) has too few neighbours never issued.
MUTABLE_CURSOR_LENGTH: Final = 12
# A character of a cursor is replaced by another of the same kind: hex stays hex.
SAME_KIND: Final = (
    "0123456789",
    "abcdef",
    "ghijklmnopqrstuvwxyz",
    "ABCDEF",
    "GHIJKLMNOPQRSTUVWXYZ",
)


@dataclass(frozen=True)
class NearMiss:
    """One raw text of an encoding class, appended to the parameter's value as sent."""

    near_miss: str  # the class id
    label: str
    text: str


@dataclass(frozen=True)
class CursorRule:
    ids: tuple[str, ...]
    answer: str  # "validation_status" or "any_refusal"


@dataclass(frozen=True)
class ParameterClasses:
    """``parameter_classes.yaml``: the classes, their texts and the requirement ids."""

    encoding: tuple[NearMiss, ...]
    cursor_classes: tuple[str, ...]
    truncated_min_length: int
    no_server_error: tuple[str, ...]
    unknown_id: tuple[str, ...]  # operations these ids list may answer a bad path id 404
    cursor_rules: Mapping[str, CursorRule]  # operation id -> rule

    @classmethod
    def load(cls, path: Path = DATA_FILE) -> ParameterClasses:
        data = load_yaml(path.read_text(encoding="utf-8"))
        ids = data["requirements"]
        return cls(
            encoding=tuple(
                NearMiss(str(name), str(v["label"]), str(v["text"]))
                for name, values in data["encoding"].items()
                for v in values
            ),
            cursor_classes=tuple(str(c) for c in data["cursor"]["classes"]),
            truncated_min_length=int(data["cursor"]["truncated_min_length"]),
            no_server_error=tuple(ids["no_server_error"]),
            unknown_id=tuple(ids["unknown_id"]),
            cursor_rules={
                op: CursorRule(tuple(rule["ids"]), str(rule["answer"]))
                for op, rule in ids["cursor"].items()
            },
        )

    def expected_keys(self, constraints: Sequence[Constraint]) -> list[CaseKey]:
        """The triples that apply: the class vocabulary's (``near_miss_classes.yaml``)."""
        return [key for c in constraints for key in keys_of(c)]


@cache
def classes() -> ParameterClasses:
    return ParameterClasses.load()


def key_of(constraint: Constraint, near_miss: str) -> CaseKey:
    return CaseKey(constraint.operation_id, str(constraint.field), constraint.kind, near_miss)


# ----------------------------------------------------------------------------- constraints
def parameter_constraints(contract: Mapping[str, Any], operation_id: str) -> list[Constraint]:
    """The operation's ``encoding`` (every query and path parameter) and ``cursor`` (the query
    parameters ``constraint_pins.yaml`` names) constraints, as ``iter_constraints`` finds them;
    header parameters are other families' (auth, Idempotency-Key)."""
    return [c for c in iter_constraints(contract, operation_id) if c.kind in PARAMETER_KINDS]


def operations_with_parameters(
    contract: Mapping[str, Any], operation_ids: Sequence[str]
) -> list[str]:
    return [op for op in operation_ids if parameter_constraints(contract, op)]


# ----------------------------------------------------------------------------- cases
@dataclass(frozen=True)
class ParameterCase:
    """One request with one parameter changed; ``raw`` None: not sent, ``why_not`` says why."""

    constraint: Constraint
    near_miss: str
    label: str
    raw: Raw | None
    why_not: str = ""
    # A malformed escape's control: the same request with the same text sent well-formed.
    control: Raw | None = None

    @property
    def key(self) -> CaseKey:
        return key_of(self.constraint, self.near_miss)


def sent_value(spec: RequestSpec, ref: FieldRef) -> str:
    """The parameter's valid value as a SuiteClient sends it (percent-encoded), or the filler
    when the valid request does not carry it."""
    name = ref.pointer[0]
    values = spec.path_params if ref.location == "path" else spec.query
    if name not in values:
        return FILLER
    return quote(str(values[name]), safe="") if ref.location == "path" else _query_value(spec, name)


def _query_value(spec: RequestSpec, name: str) -> str:
    encoded = str(httpx.QueryParams({name: str(spec.query[name])}))
    return encoded.partition("=")[2]


def with_raw_value(spec: RequestSpec, ref: FieldRef, raw_value: str) -> Raw | None:
    """``spec`` as a raw request whose parameter at ``ref`` is ``raw_value``, sent as is; None
    when the operation has no such path parameter."""
    name = ref.pointer[0]
    if ref.location == "path":
        path = path_with(spec, raw_value, name)
        return None if path is None else Raw(spec.method, target_of(spec, path), content_of(spec))
    return Raw(spec.method, query_with(spec, name, raw_value), content_of(spec))


def encoding_cases(
    constraint: Constraint, spec: RequestSpec, *, quick: bool, found: ParameterClasses | None = None
) -> list[ParameterCase]:
    """The valid value of the parameter followed by each text of each encoding class (the
    first of each class with ``quick``)."""
    found = found or classes()
    valid = sent_value(spec, constraint.field)
    cases: list[ParameterCase] = []
    seen: set[str] = set()
    for miss in found.encoding:
        if quick and miss.near_miss in seen:
            continue
        seen.add(miss.near_miss)
        raw = with_raw_value(spec, constraint.field, valid + miss.text)
        why = "" if raw is not None else f"the valid request has no {constraint.field}"
        control = None
        if miss.near_miss == MALFORMED_ESCAPE:
            control = with_raw_value(spec, constraint.field, as_literal(valid + miss.text))
        cases.append(ParameterCase(constraint, miss.near_miss, miss.label, raw, why, control))
    return cases


@dataclass(frozen=True)
class Cursors:
    """Real cursors of one listing: this merchant's and the other merchant's (None: none
    could be had, ``*_why`` says why)."""

    own: str | None
    foreign: str | None
    own_why: str = ""
    foreign_why: str = ""


def unknown_cursor(own: str | None, rng: random.Random) -> str:
    """A cursor never issued: ``own`` with every letter and digit after its first quarter
    replaced by another of the same kind (same length and shape: a hex digit by a hex digit,
    a digit by a digit), or a made-up token when
    there is no real cursor long enough to disguise."""
    if own is None or sum(ch.isascii() and ch.isalnum() for ch in own) < MUTABLE_CURSOR_LENGTH:
        return FILLER + "_unknown_cursor_" + "".join(rng.choices("0123456789abcdef", k=32))
    keep = len(own) // 4
    changed = [own[:keep]]
    for ch in own[keep:]:
        kind = next((k for k in SAME_KIND if ch in k), None)
        changed.append(rng.choice(kind.replace(ch, "")) if kind else ch)
    return "".join(changed)


def truncated_cursor(own: str, min_length: int) -> str | None:
    """``own`` cut in half, or None when it is too short to cut meaningfully."""
    return own[: len(own) // 2] if len(own) >= min_length else None


def cursor_cases(
    constraint: Constraint,
    spec: RequestSpec,
    cursors: Cursors,
    rng: random.Random,
    found: ParameterClasses | None = None,
) -> list[ParameterCase]:
    """One case per cursor class; a class without the real cursor it needs is not sent."""
    found = found or classes()
    ref = constraint.field
    cases: list[ParameterCase] = []
    for name in found.cursor_classes:
        value: str | None
        why = ""
        if name == UNKNOWN_CURSOR:
            value = unknown_cursor(cursors.own, rng)
            label = "a cursor never issued, shaped like a real one"
        elif name == FOREIGN_CURSOR:
            value, why = cursors.foreign, cursors.foreign_why
            label = "the other merchant's next_cursor of the same listing"
        elif name == TRUNCATED_CURSOR:
            label = "this merchant's next_cursor cut in half"
            if cursors.own is None:
                value, why = None, cursors.own_why
            else:
                value = truncated_cursor(cursors.own, found.truncated_min_length)
                why = (
                    f"this merchant's cursor {cursors.own!r} is shorter than "
                    f"{found.truncated_min_length} characters: half of it may be another "
                    "valid cursor"
                )
        else:
            raise ValueError(f"unknown cursor class {name!r}")
        raw = None if value is None else with_raw_value(spec, ref, quote(value, safe=""))
        cases.append(ParameterCase(constraint, name, label, raw, "" if raw else why))
    return cases


# ----------------------------------------------------------------------------- real cursors
def smallest_limit(contract: Mapping[str, Any], operation_id: str, name: str = "limit") -> int:
    """The smallest ``limit`` the effective contract allows (1 when it says nothing)."""
    for constraint in iter_constraints(contract, operation_id):
        if str(constraint.field) == f"query.{name}" and constraint.kind == "minimum":
            return max(1, int(constraint.value))
    return 1


def first_page_cursor(
    factories: Factories, spec: RequestSpec, cursor_name: str
) -> tuple[str | None, str]:
    """The next_cursor of the first page of ``spec``'s listing at its smallest limit; when
    there is none, two items are added to the listing and it is read again."""
    limit = smallest_limit(factories.contract, spec.operation_id)
    query = {k: v for k, v in spec.query.items() if k != cursor_name}
    page = replace(spec, query={**query, "limit": limit})
    answer = ""
    for attempt in range(2):
        if attempt:
            add_items(factories, spec.operation_id)
        response = factories.send(page)
        body = json_object(response) or {}
        cursor = body.get("next_cursor")
        if isinstance(cursor, str) and cursor:
            return cursor, ""
        answer = summary(response, 120)
    who = factories.merchant_id
    return None, (
        f"{who}'s listing with limit={limit} carried no next_cursor even after two items were "
        f"added ({answer})"
    )


def add_items(factories: Factories, operation_id: str) -> None:
    """Two more items in the merchant's listing: payments, or ledger lines (deposits through
    the profile's test helper, else x402 settlements)."""
    if operation_id == "getStatement":
        if factories.profile.helper("deposit") is not None:
            currency, chain = factories.currency, factories.chain
            payment = factories.create_payment(
                quotes={currency: {"amount": "10", "chain_ids": [chain]}}, splits=[]
            )
            for _ in range(2):
                response = factories.deposit(payment["id"], currency, chain, "4")
                if response.status_code >= 300:
                    raise PrerequisiteError(f"the deposit helper answered {summary(response, 120)}")
        else:
            for _ in range(2):
                factories.settled_x402("exact")
        return
    for _ in range(2):
        factories.create_payment()


def real_cursors(
    factories: Factories, other: Factories, spec: RequestSpec, cursor_name: str
) -> Cursors:
    """This merchant's and the other merchant's first-page cursors of ``spec``'s listing."""

    def one(source: Factories) -> tuple[str | None, str]:
        try:
            return first_page_cursor(source, spec, cursor_name)
        except PrerequisiteError as exc:
            return None, f"no cursor of {source.merchant_id} could be had: {exc}"

    own, own_why = one(factories)
    foreign, foreign_why = one(other)
    if foreign is not None and foreign == own:
        foreign, foreign_why = None, "both merchants were given the same cursor"
    return Cursors(own, foreign, own_why, foreign_why)


# ----------------------------------------------------------------------------- judging
@dataclass(frozen=True)
class Expectation:
    """The answers that pass (none: any 4xx) and the ids the refusal is reported under;
    ``escape_reading``: how a malformed escape may be read (the profile's
    ``status.malformed_percent_escape``, for an encoding constraint)."""

    answers: tuple[ErrorSpec, ...]
    ids: tuple[str, ...]
    escape_reading: str = "refuse"

    @property
    def what(self) -> str:
        """How a result names the side: ``refused with 400 validation_error or 404 ...``."""
        if not self.answers:
            return "refused (any 4xx)"
        wanted = self.wanted
        if self.escape_reading == "either":
            return f"refused with {wanted}, or a malformed escape read literally"
        if self.escape_reading == "literal":
            return f"refused with {wanted}, a malformed escape read literally"
        return f"refused with {wanted}"

    def case_problems(
        self, case: ParameterCase, response: httpx.Response, control: Control
    ) -> list[str]:
        """The problems of ``response`` to ``case``; ``control`` sends its control request
        when the case is a malformed escape the profile lets the server read literally."""
        refusal = self.problems(response)
        if case.near_miss != MALFORMED_ESCAPE or case.control is None:
            return refusal
        if self.escape_reading == "refuse" or (self.escape_reading == "either" and not refusal):
            return refusal
        return literal_problems(response, control(case.control))

    def problems(self, response: httpx.Response) -> list[str]:
        if not self.answers:
            refused = 400 <= response.status_code < 500
            return [] if refused else [f"not refused: {summary(response)}"]
        if any(not status_problems(response, answer) for answer in self.answers):
            return []
        return [f"{self.wanted} expected, got {summary(response)}"]

    @property
    def wanted(self) -> str:
        """The answers that pass: ``400 validation_error or 404 not_found``."""
        return " or ".join(f"{a.status}" + (f" {a.code}" if a.code else "") for a in self.answers)


Control = Callable[[Raw], httpx.Response]


def literal_problems(response: httpx.Response, control: httpx.Response) -> list[str]:
    """A malformed escape read literally must be answered as ``control`` (the same text sent
    well-formed) is: the same status and error code, or, both successes, the same items (a
    success that ignored the parameter lists what the control's filter left out)."""
    wanted = f"read literally, the answer to the same text well-formed ({summary(control, 80)})"
    got = f"{wanted} expected, got {summary(response)}"
    ok, control_ok = response.status_code < 300, control.status_code < 300
    if ok != control_ok or (not ok and response.status_code != control.status_code):
        return [got]
    if not ok:
        code, control_code = _code(response), _code(control)
        return [got] if code != control_code else []
    return [got] if _identity(response) != _identity(control) else []


def _code(response: httpx.Response) -> object:
    return (json_object(response) or {}).get("code")


def _identity(response: httpx.Response) -> object:
    """What a success answer is about: its resource's id and, for each list it holds (a
    listing's items), the ids of the items (the items themselves where they have none)."""
    body = json_object(response) or {}
    lists = {
        key: [item.get("id", item) if isinstance(item, dict) else item for item in value]
        for key, value in body.items()
        if isinstance(value, list)
    }
    return body.get("id"), lists


def applicable(ids: Sequence[str], operation_id: str) -> tuple[str, ...]:
    """The ids whose catalogue entry lists the operation."""
    catalogue = load_catalogue()
    return tuple(
        rid for rid in ids if (r := catalogue.get(rid)) is not None and operation_id in r.operations
    )


def expectation(
    constraint: Constraint,
    spec: RequestSpec,
    profile: Profile,
    found: ParameterClasses | None = None,
) -> Expectation:
    """What the profile says a case of ``constraint`` gets, and the ids that judge it."""
    found = found or classes()
    ids = expectation_ids(constraint, found)
    validation = profile.error("status", "validation")
    reading = profile.status.malformed_percent_escape
    if constraint.kind == CURSOR:
        rule = found.cursor_rules.get(constraint.operation_id)
        if rule is None or rule.answer == "any_refusal":
            return Expectation((), ids)
        return Expectation((malformed_refusal(profile),), ids)
    if constraint.field.location == "path" and applicable(found.unknown_id, spec.operation_id):
        # "%zz" in an id of an operation that answers an unknown id with 404: a malformed
        # parameter (400) or an id no resource has (404). A PUT that creates its id: 400 only.
        return Expectation((validation, profile.error("status", "not_found")), ids, reading)
    return Expectation((validation,), ids, reading)


def expectation_ids(constraint: Constraint, found: ParameterClasses) -> tuple[str, ...]:
    """The ids a refusal of ``constraint``'s cases is reported under."""
    op = constraint.operation_id
    if constraint.kind == CURSOR:
        rule = found.cursor_rules.get(op)
        return applicable(rule.ids if rule else (), op)
    return malformed_ids(constraint.field.location, op)  # the judge's, as it judges a recording


def every_id(contract: Mapping[str, Any], operation_id: str) -> tuple[str, ...]:
    """Every id a test of the operation may report (for its requirement marker)."""
    found = classes()
    ids: list[str] = list(found.no_server_error)
    for constraint in parameter_constraints(contract, operation_id):
        ids += expectation_ids(constraint, found)
    ids += RequirementMap.load().error_shape
    return applicable(tuple(dict.fromkeys(ids)), operation_id)


# ----------------------------------------------------------------------------- one operation
def _name(constraint: Constraint) -> str:
    return f"{constraint.operation_id} {constraint.field} {constraint.kind}"


def server_error_problems(response: httpx.Response) -> list[str]:
    return [f"a server error: {summary(response)}"] if response.status_code >= 500 else []


def check_operation(
    operation_id: str,
    client: SuiteClient,
    other_client: SuiteClient,
    profile: Profile,
    contract: Mapping[str, Any],
    recorder: CheckRecorder,
    case_log: CaseLog,
    *,
    quick: bool,
    seed: int,
) -> None:
    """Every parameter near miss of the operation, judged and logged (``test_parameters``)."""
    found = classes()
    constraints = parameter_constraints(contract, operation_id)
    case_log.expect(found.expected_keys(constraints))
    factories = Factories(client, profile, contract)
    try:
        spec = factories.request(operation_id)
    except PrerequisiteError as exc:
        for constraint in constraints:
            ids = (*found.no_server_error, *expectation_ids(constraint, found))
            Side(unexercised=[str(exc)]).record(
                recorder, ids, _name(constraint), operation_id, "refused"
            )
        return
    other = Factories(other_client, profile, contract)
    rng = random.Random(f"{seed}:{operation_id}")
    shape = ErrorShapes()

    def control(raw: Raw) -> httpx.Response:
        return send_raw(client, spec, raw)

    for constraint in constraints:
        if constraint.kind == CURSOR:
            cursors = real_cursors(factories, other, spec, constraint.field.pointer[0])
            cases = cursor_cases(constraint, spec, cursors, rng, found)
        else:
            cases = encoding_cases(constraint, spec, quick=quick, found=found)
        expected = expectation(constraint, spec, profile, found)
        no_error, refused = Side(), Side()
        for case in cases:
            if case.raw is None:
                for side in (no_error, refused):
                    side.unexercised.append(f"{case.near_miss}: {case.why_not}")
                continue
            response = send_raw(client, spec, case.raw)
            exchange = client.last_exchange
            case_log.record(case.key)
            named = f"{case.near_miss} {case.label}"
            no_error.add(server_error_problems(response), named, client)
            problems = expected.case_problems(case, response, control)
            refused.add(problems, named, client, exchange)
            if 400 <= response.status_code < 500:
                label = f"{constraint.field} {case.near_miss} {case.label}: "
                shape.add(response, exchange, label)
                if is_validation_error(response, profile):
                    details = validation_details_problems(response, profile)
                    shape.add_problems(VALIDATION_DETAILS, details, exchange, label)
        name = _name(constraint)
        no_error.record(
            recorder, found.no_server_error, name, operation_id, "without a server error"
        )
        refused.record(recorder, expected.ids, name, operation_id, expected.what)
    shape.record(recorder, f"boundaries {operation_id} parameters error shape", operation_id)
