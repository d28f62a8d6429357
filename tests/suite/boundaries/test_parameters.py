"""Near misses of query and path parameters (conformance/suite/boundaries/parameters.py).

First how the cases are built (pure: no server): which constraints an operation's parameters
have, which raw request each near miss is, which answers pass. Then proofs against the embedded
reference server, driven through ``check_operation`` as ``test_parameters`` drives it: the
unfaulted server passes every case and every triple gets a case, whatever the seed; a server
that breaks a rule (a reference fault, or the reference server with one function made hostile)
fails the requirement the rule is reported under, and only that.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
import pytest

from conformance.core.case_coverage import CaseKey, CaseLog
from conformance.core.catalogue import load_catalogue
from conformance.core.contract import effective_contract, operations
from conformance.core.profile import ErrorSpec, Profile, load_profile
from conformance.core.results import CheckResult, Outcome
from conformance.engine.options import RunOptions
from conformance.engine.runner import run_suite
from conformance.reference import statements, validation
from conformance.reference.server import ReferenceServer
from conformance.suite.boundaries.parameters import (
    CURSOR,
    ENCODING,
    FOREIGN_CURSOR,
    TRUNCATED_CURSOR,
    UNKNOWN_CURSOR,
    Cursors,
    Expectation,
    check_operation,
    classes,
    cursor_cases,
    encoding_cases,
    every_id,
    expectation,
    operations_with_parameters,
    parameter_constraints,
    unknown_cursor,
)
from conformance.suite.factories import RequestSpec
from conformance.suite.wire.check_properties import CheckRecorder
from conformance.suite.wire.client import SuiteClient

PROFILE = load_profile()
CONTRACT = effective_contract(PROFILE)
OPERATIONS = [op.operation_id for op in operations(CONTRACT)]


def spec(operation_id: str, **parts: Any) -> RequestSpec:
    found = next(op for op in operations(CONTRACT) if op.operation_id == operation_id)
    return RequestSpec(operation_id, found.method, found.path, **parts)


def constraint(operation_id: str, field: str, kind: str = ENCODING) -> Any:
    return next(
        c
        for c in parameter_constraints(CONTRACT, operation_id)
        if str(c.field) == field and c.kind == kind
    )


def response(status: int, body: Any = None) -> httpx.Response:
    return httpx.Response(status, json=body if body is not None else {})


# ----------------------------------------------------------------------------- constraints
def test_every_query_and_path_parameter_has_an_encoding_constraint_and_cursors_a_cursor_one() -> (
    None
):
    def of(op: str) -> list[str]:
        return [f"{c.field} {c.kind}" for c in parameter_constraints(CONTRACT, op)]

    assert of("listPayments") == [
        "query.status encoding",
        "query.merchant_order_no encoding",
        "query.cursor encoding",
        "query.cursor cursor",
        "query.limit encoding",
    ]
    assert of("getStatement") == [
        "query.currency_id encoding",
        "query.from encoding",
        "query.to encoding",
        "query.cursor encoding",
        "query.cursor cursor",
        "query.limit encoding",
    ]
    assert of("cancelPayment") == ["path.id encoding"]  # the Idempotency-Key header is not ours
    assert of("reportX402Usage") == ["path.payment_id encoding"]
    assert of("createPayment") == []


def test_the_operations_with_parameters_are_those_with_a_query_or_path_parameter() -> None:
    assert operations_with_parameters(CONTRACT, OPERATIONS) == [
        "putWebhookEndpoint",
        "rotateWebhookEndpointSecret",
        "resendWebhookDelivery",
        "listPayments",
        "cancelPayment",
        "acceptUnderpaidPayment",
        "cancelSubscription",
        "replacePayoutSchedule",
        "retirePayoutSchedule",
        "pausePayoutSchedule",
        "reportX402Usage",
        "getStatement",
    ]


def test_the_triples_that_apply_are_two_encoding_classes_and_three_cursor_classes() -> None:
    keys = classes().expected_keys(parameter_constraints(CONTRACT, "listPayments"))
    assert len(keys) == 4 * 2 + 3
    assert CaseKey("listPayments", "query.cursor", "cursor", "foreign-cursor") in keys
    assert CaseKey("listPayments", "query.limit", "encoding", "invalid-utf8") in keys
    assert CaseKey("listPayments", "query.limit", "encoding", "malformed-percent-escape") in keys


# ----------------------------------------------------------------------------- cases
def test_an_encoding_case_follows_the_valid_path_id_with_the_escape_and_keeps_the_body() -> None:
    base = spec("replacePayoutSchedule", path_params={"id": "ps_1"}, body={"mode": "x"})
    cases = encoding_cases(constraint("replacePayoutSchedule", "path.id"), base, quick=False)
    assert [(c.near_miss, c.raw and c.raw.target) for c in cases] == [
        ("malformed-percent-escape", "/v1/payout-schedules/ps_1%zz"),
        ("malformed-percent-escape", "/v1/payout-schedules/ps_1%"),
        ("malformed-percent-escape", "/v1/payout-schedules/ps_1%4"),
        ("invalid-utf8", "/v1/payout-schedules/ps_1%FF%FE"),
        ("invalid-utf8", "/v1/payout-schedules/ps_1%C3"),
        ("invalid-utf8", "/v1/payout-schedules/ps_1%C0%AF"),
    ]
    assert all(c.raw and c.raw.method == "PUT" and c.raw.content == b'{"mode":"x"}' for c in cases)


def test_a_query_case_changes_one_parameter_and_sends_the_others_as_the_client_would() -> None:
    base = spec("getStatement", query={"currency_id": "usdc", "from": "2026-01-01T00:00:00Z"})
    [case, *_] = encoding_cases(constraint("getStatement", "query.from"), base, quick=True)
    assert case.raw is not None
    assert case.raw.target == "/v1/statements?currency_id=usdc&from=2026-01-01T00%3A00%3A00Z%zz"
    assert case.raw.content is None


def test_a_parameter_the_valid_request_does_not_carry_is_added_with_a_filler() -> None:
    base = spec("listPayments", query={"limit": 20})
    cases = encoding_cases(constraint("listPayments", "query.status"), base, quick=True)
    assert [c.raw and c.raw.target for c in cases] == [
        "/v1/payments?limit=20&status=conformance%zz",
        "/v1/payments?limit=20&status=conformance%FF%FE",
    ]


def test_quick_sends_the_first_text_of_each_class() -> None:
    base = spec("cancelPayment", path_params={"id": "pay_1"})
    cases = encoding_cases(constraint("cancelPayment", "path.id"), base, quick=True)
    assert [c.label for c in cases] == ["%zz (no hex digits)", "%FF%FE (never UTF-8)"]


OWN = "eyJhZnRlciI6IDEyfQ.0123456789abcdef0123456789abcdef"


def test_an_unknown_cursor_has_the_shape_of_a_real_one_and_is_none_of_them() -> None:
    made = unknown_cursor(OWN, random.Random(7))
    assert len(made) == len(OWN) and made != OWN
    assert made[: len(OWN) // 4] == OWN[: len(OWN) // 4]
    assert [c.isdigit() for c in made] == [c.isdigit() for c in OWN]
    assert made.index(".") == OWN.index(".")
    assert unknown_cursor(OWN, random.Random(7)) == made  # the same seed, the same case


def test_a_short_cursor_is_not_disguised_an_offset_has_too_few_neighbours() -> None:
    made = unknown_cursor("20", random.Random(1))
    assert made.startswith("conformance_unknown_cursor_") and len(made) > 40
    assert unknown_cursor(None, random.Random(1)).startswith("conformance_unknown_cursor_")


def test_cursor_cases_send_the_foreign_cursor_and_half_of_this_merchants() -> None:
    base = spec("listPayments", query={"limit": 20})
    cursors = Cursors(own=OWN, foreign="pay_of_the_other_merchant")
    cases = cursor_cases(
        constraint("listPayments", "query.cursor", CURSOR), base, cursors, random.Random(3)
    )
    targets = {c.near_miss: c.raw and c.raw.target for c in cases}
    assert targets[FOREIGN_CURSOR] == "/v1/payments?limit=20&cursor=pay_of_the_other_merchant"
    assert targets[TRUNCATED_CURSOR] == f"/v1/payments?limit=20&cursor={OWN[: len(OWN) // 2]}"
    assert str(targets[UNKNOWN_CURSOR]).startswith("/v1/payments?limit=20&cursor=eyJhZnRl")


def test_a_cursor_class_without_its_real_cursor_is_not_sent_and_says_why() -> None:
    base = spec("listPayments", query={"limit": 20})
    cursors = Cursors(own="10", foreign=None, foreign_why="the listing had no second page")
    cases = cursor_cases(
        constraint("listPayments", "query.cursor", CURSOR), base, cursors, random.Random(3)
    )
    why = {c.near_miss: c.why_not for c in cases if c.raw is None}
    assert why == {
        FOREIGN_CURSOR: "the listing had no second page",
        TRUNCATED_CURSOR: "this merchant's cursor '10' is shorter than 8 characters: half of it "
        "may be another valid cursor",
    }
    assert [c.near_miss for c in cases if c.raw is not None] == [UNKNOWN_CURSOR]


# ----------------------------------------------------------------------------- judging
def test_a_path_id_that_is_no_text_may_be_refused_as_malformed_or_as_unknown() -> None:
    base = spec("cancelPayment", path_params={"id": "pay_1"})
    wanted = expectation(constraint("cancelPayment", "path.id"), base, PROFILE)
    assert wanted == Expectation(
        (PROFILE.error("status", "validation"), PROFILE.error("status", "not_found")),
        ("STATUS-013",),
        "either",
    )
    assert wanted.problems(response(404, {"code": "not_found"})) == []
    assert wanted.problems(response(400, {"code": "validation_error"})) == []
    assert wanted.problems(response(200))  # served
    assert wanted.problems(response(500))
    assert wanted.problems(response(409, {"code": "invalid_state"}))


def test_a_put_that_creates_its_id_must_refuse_it_as_malformed() -> None:
    base = spec("putWebhookEndpoint", path_params={"id": "we_1"}, body={})
    wanted = expectation(constraint("putWebhookEndpoint", "path.id"), base, PROFILE)
    assert wanted == Expectation(
        (PROFILE.error("status", "validation"),), ("STATUS-011",), "either"
    )
    assert wanted.problems(response(404, {"code": "not_found"}))


def test_a_payments_cursor_gets_the_validation_status_and_a_statement_cursor_any_refusal() -> None:
    payments = expectation(
        constraint("listPayments", "query.cursor", CURSOR), spec("listPayments"), PROFILE
    )
    assert payments == Expectation((ErrorSpec(400),), ("PAY-020",))
    assert payments.problems(response(400, {"code": "bad_cursor"})) == []  # no code pinned
    statement = expectation(
        constraint("getStatement", "query.cursor", CURSOR), spec("getStatement"), PROFILE
    )
    assert statement == Expectation((), ("STMT-018",))
    assert statement.problems(response(422)) == []
    assert statement.problems(response(200)) == ["not refused: 200 {}"]
    assert statement.problems(response(503)) == ["not refused: 503 {}"]


def test_a_query_value_that_is_no_text_gets_400_validation_error() -> None:
    wanted = expectation(constraint("listPayments", "query.limit"), spec("listPayments"), PROFILE)
    assert wanted == Expectation(
        (PROFILE.error("status", "validation"),), ("STATUS-011",), "either"
    )


def test_the_marker_names_every_id_a_test_may_report_and_all_are_in_the_catalogue() -> None:
    shape = {"ERR-001", "ERR-002", "ERR-003", "ERR-004", "ERR-005", "STATUS-012"}
    assert set(every_id(CONTRACT, "listPayments")) == {"ERR-006", "STATUS-011", "PAY-020"} | shape
    assert set(every_id(CONTRACT, "getStatement")) == {"ERR-006", "STATUS-011", "STMT-018"} | shape
    assert set(every_id(CONTRACT, "cancelPayment")) == {"ERR-006", "STATUS-013"} | shape
    catalogue = load_catalogue()
    found = classes()
    named = [*found.no_server_error, *found.unknown_id]
    named += [i for rule in found.cursor_rules.values() for i in rule.ids]
    assert all(rid in catalogue for rid in named)


# ----------------------------------------------------------------------------- proofs
@dataclass
class Run:
    checks: list[CheckResult]
    log: CaseLog

    def failed(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for check in self.checks:
            if check.outcome is Outcome.FAILED:
                for rid in check.requirement_ids:
                    found.setdefault(rid, []).append(check.message)
        return found


def run(
    faults: tuple[str, ...] = (),
    *,
    seed: int = 7,
    quick: bool = False,
    profile: Profile = PROFILE,
    escape_reading: str | None = None,
) -> Run:
    """``test_parameters`` of every operation against a fresh reference server."""
    recorder, log = CheckRecorder("boundaries"), CaseLog()
    with (
        ReferenceServer(profile=profile, faults=faults, escape_reading=escape_reading) as server,
        SuiteClient(server.base_url, profile, profile.primary) as client,
        SuiteClient(server.base_url, profile, profile.secondary) as other,
    ):
        for op in operations_with_parameters(CONTRACT, OPERATIONS):
            check_operation(
                op, client, other, profile, CONTRACT, recorder, log, quick=quick, seed=seed
            )
    return Run(recorder.checks, log)


@pytest.mark.parametrize(("seed", "quick"), [(7, False), (43, False), (11, True)])
def test_the_reference_server_passes_every_case_and_every_triple_gets_one(
    seed: int, quick: bool
) -> None:
    done = run(seed=seed, quick=quick)
    assert done.failed() == {}
    assert [c.message for c in done.checks if c.outcome is not Outcome.PASSED] == []
    coverage = done.log.by_operation()
    assert [c.missing for c in coverage if c.missing] == []
    assert len(coverage) == 12
    assert sum(c.triples for c in coverage) == 10 * 2 + 11 + 13
    assert sum(done.log.cases.values()) == (44 if quick else 120)
    passed = {rid for c in done.checks if c.outcome is Outcome.PASSED for rid in c.requirement_ids}
    assert {"ERR-006", "STATUS-011", "STATUS-013", "PAY-020", "STMT-018", "ERR-001"} <= passed


@pytest.mark.parametrize(
    ("fault", "breaks"),
    [
        ("payments-cursor-foreign-accepted", {"PAY-020"}),
        ("robust-query-escape-500", {"ERR-006", "STATUS-011"}),
        ("robust-non-ascii-id-500", {"ERR-006", "STATUS-011", "STATUS-013"}),
        ("validation-malformed-escape-dropped", {"STATUS-011"}),
    ],
)
def test_a_reference_fault_fails_the_ids_it_breaks(fault: str, breaks: set[str]) -> None:
    assert set(run((fault,)).failed()) == breaks


@pytest.fixture
def hostile(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """The embedded reference server runs in this process: a test makes one function of it
    hostile with ``monkeypatch`` (undone after the test)."""
    yield monkeypatch


def test_a_server_that_reads_invalid_utf8_as_text_fails_status_011(
    hostile: pytest.MonkeyPatch,
) -> None:
    # A path id "we_x%FF%FE" decoded with replacement characters: a PUT creates the endpoint
    # "we_x\ufffd\ufffd". No profile allows that reading. (The query's parser still refuses
    # such bytes, and "%zz" read as text is a reading the default profile allows.)
    hostile.setattr(validation, "unreadable", lambda raw, literal=False: None)
    failed = run().failed()
    assert set(failed) == {"STATUS-011"}
    messages = " ".join(failed["STATUS-011"])
    assert "putWebhookEndpoint path.id encoding: 3 of 6 cases" in messages
    assert "invalid-utf8" in messages and "malformed-percent-escape" not in messages


def with_reading(reading: str) -> Profile:
    status = {**PROFILE.data["status"], "malformed_percent_escape": reading}
    return replace(PROFILE, data={**PROFILE.data, "status": status})


@pytest.mark.parametrize("quick", [False, True])
def test_a_server_that_reads_a_malformed_escape_literally_passes_where_the_profile_allows_it(
    quick: bool,
) -> None:
    # Issue 27: "usdc%zz" read as text, as most HTTP stacks do, is answered as "usdc%25zz" is.
    for profile in (PROFILE, with_reading("literal")):
        done = run(profile=profile, escape_reading="literal", quick=quick)
        assert done.failed() == {}
        assert [c.message for c in done.checks if c.outcome is not Outcome.PASSED] == []


def test_a_literal_reading_fails_status_011_where_the_profile_pins_refusal(
    hostile: pytest.MonkeyPatch,
) -> None:
    real = validation.unreadable
    hostile.setattr(validation, "unreadable", lambda raw, literal=False: real(raw, literal=True))
    failed = run(profile=with_reading("refuse")).failed()
    assert set(failed) == {"STATUS-011"}
    messages = " ".join(failed["STATUS-011"])
    assert "putWebhookEndpoint path.id encoding" in messages
    assert "malformed-percent-escape" in messages and "invalid-utf8" not in messages


def test_a_refusing_server_fails_status_011_where_the_profile_pins_the_literal_reading(
    hostile: pytest.MonkeyPatch,
) -> None:
    real = validation.unreadable
    hostile.setattr(validation, "unreadable", lambda raw, literal=False: real(raw))
    failed = run(profile=with_reading("literal"), quick=True).failed()
    assert set(failed) == {"STATUS-011", "STATUS-013"}  # a path id: 400 where 404 was due
    assert "malformed-percent-escape" in " ".join(failed["STATUS-011"])


def test_a_literal_reading_that_ignores_the_parameter_fails_status_011() -> None:
    failed = run(("validation-malformed-escape-dropped",), escape_reading="literal").failed()
    assert set(failed) == {"STATUS-011"}
    assert "read literally, the answer to the same text well-formed" in " ".join(
        failed["STATUS-011"]
    )


def test_a_statement_cursor_not_bound_to_its_merchant_fails_stmt_013(
    hostile: pytest.MonkeyPatch,
) -> None:
    def binding(self: statements.StatementQuery) -> bytes:  # the bug: the merchant left out
        return f"{self.currency_id}\n{self.from_us}\n{self.to_us}".encode()

    hostile.setattr(statements.StatementQuery, "binding", binding)
    failed = run().failed()
    assert set(failed) == {"STMT-018"}
    assert failed["STMT-018"][0].startswith("getStatement query.cursor cursor: 1 of 3 cases")
    assert "foreign-cursor" in failed["STMT-018"][0]


def test_a_statement_cursor_read_leniently_fails_stmt_013_for_every_class(
    hostile: pytest.MonkeyPatch,
) -> None:
    real = statements.decode_cursor

    def lenient(query: statements.StatementQuery, cursor: str) -> int | None:
        return real(query, cursor) or 0  # the bug: a cursor it cannot read starts over

    hostile.setattr(statements, "decode_cursor", lenient)
    failed = run().failed()
    assert set(failed) == {"STMT-018"}
    assert failed["STMT-018"][0].startswith("getStatement query.cursor cursor: 3 of 3 cases")


def test_a_truncated_cursor_that_crashes_the_server_fails_err_006(
    hostile: pytest.MonkeyPatch,
) -> None:
    real = statements.decode_cursor

    def fixed_width(query: statements.StatementQuery, cursor: str) -> int | None:
        struct.unpack(">QQ", bytes.fromhex(cursor.partition(".")[2]))  # the bug: a whole tag
        return real(query, cursor)

    hostile.setattr(statements, "decode_cursor", fixed_width)
    failed = run().failed()
    assert set(failed) == {"ERR-006", "STMT-018"}
    assert failed["ERR-006"][0].startswith("getStatement query.cursor cursor: 1 of 3 cases")
    assert "truncated-cursor" in failed["ERR-006"][0]


# ----------------------------------------------------------------------------- through the engine
def engine_run(seed: int, fault: str | None = None) -> list[CheckResult]:
    """A run selecting the two cursor ids: the listPayments and getStatement tests of this
    module (their markers name them) with the payments and statements families."""
    result = run_suite(RunOptions(seed=seed, only=("PAY-020", "STMT-018"), embedded_fault=fault))
    return [c for c in result.checks if c.family == "boundaries"]


@pytest.mark.slow
def test_a_run_reports_the_parameter_cases_under_the_boundaries_family() -> None:
    mine = engine_run(7)
    assert {c.operation_id for c in mine} == {"listPayments", "getStatement"}
    assert [c.message for c in mine if c.outcome is not Outcome.PASSED] == []
    assert "boundaries getStatement query.cursor cursor refused (any 4xx)" in {
        c.check_id for c in mine
    }


@pytest.mark.slow
def test_a_run_against_a_faulted_server_fails_the_cursor_requirement() -> None:
    failed = [
        c for c in engine_run(7, "payments-cursor-foreign-accepted") if c.outcome is Outcome.FAILED
    ]
    assert [(c.check_id, c.requirement_ids) for c in failed] == [
        ("boundaries listPayments query.cursor cursor refused with 400", ("PAY-020",))
    ]
    assert failed[0].evidence is not None  # the exchange that was served


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fault", "breaks"),
    [
        ("payments-cursor-truncated-500", {"PAY-020", "ERR-006"}),
        ("statement-bad-cursor-first-page", {"STMT-018"}),
    ],
)
def test_a_cursor_fault_fails_the_requirement_it_breaks(fault: str, breaks: set[str]) -> None:
    failed = {
        rid
        for c in engine_run(7, fault)
        if c.outcome is Outcome.FAILED
        for rid in c.requirement_ids
    }
    assert breaks <= failed, f"{fault}: failed {sorted(failed)}"


def test_a_business_rule_refusal_is_no_validation_error_where_both_are_422() -> None:
    # Issue 27: a profile whose validation error is 422 invalid_request; "usdc%zz" read as
    # text is an unknown currency, 422 unknown_currency without details: STATUS-012 (the
    # details of a validation error) does not judge it.
    status = {**PROFILE.data["status"], "validation": {"status": 422, "code": "invalid_request"}}
    profile = replace(PROFILE, data={**PROFILE.data, "status": status})
    done = run(profile=profile, escape_reading="literal", quick=True)
    assert done.failed() == {}
    details = [c for c in done.checks if "STATUS-012" in c.requirement_ids]
    assert details and all(c.outcome is Outcome.PASSED for c in details)
