"""A request answered with a server error (judge/server_errors.py): the refusal it should have
got, named as every family and the validator name it; nothing for a request that had to
succeed (ERR-006 alone, which the caller names)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.request_schemas import RequestSchemas
from conformance.judge.server_errors import ServerErrors
from tests.judge.test_admission import FakeCall

PROFILE = load_profile()
SCHEMAS = RequestSchemas(effective_contract(PROFILE))
ERRORS = ServerErrors(PROFILE, SCHEMAS)


@dataclass
class Sent(FakeCall):
    body: bytes = b""

    @property
    def request_body(self) -> bytes:
        return self.body


def sent(operation_id: str, request: Any, *, raw_query: str = "", **path: str) -> Sent:
    body = json.dumps(request).encode() if request is not None else b""
    return Sent(operation_id, request, 500, raw_query=raw_query, path_params=path, body=body)


def refusals(call: Sent) -> list[tuple[tuple[str, ...], Outcome]]:
    return [(f.ids, f.outcome) for f in ERRORS.refusals(call, SCHEMAS.shape(call.operation_id))]


def test_a_valid_request_had_to_succeed_nothing_more_than_its_server_error() -> None:
    assert refusals(sent("listPayments", None, raw_query="limit=20")) == []


def test_a_request_breaking_a_constraint_names_the_constraint_refusal() -> None:
    [(ids, outcome)] = refusals(sent("listPayments", None, raw_query="limit=101"))
    assert outcome is Outcome.FAILED
    assert "STATUS-008" in ids  # a value above its maximum, as the boundaries family names it


def test_a_request_breaking_a_business_rule_names_that_rule() -> None:
    over = {
        "shares": [{"merchant_id": "m_gamma", "bps": 6000}, {"merchant_id": "m_delta", "bps": 6000}]
    }
    found = refusals(sent("replaceSplitTemplate", over))
    assert (("SPLIT-004",), Outcome.FAILED) in found


def test_the_message_says_what_the_request_broke_and_what_it_got() -> None:
    call = sent("listPayments", None, raw_query="limit=ten")
    [finding] = ERRORS.refusals(call, SCHEMAS.shape("listPayments"))
    assert finding.message.startswith("the request breaks the contract: query.limit")
    assert "answered 500" in finding.message
