"""The near-miss class faults (conformance/reference/faults/near_misses.yaml), request by request.

For each body-field fault: the unfaulted server refuses the near miss with 400 validation_error
naming the field ("must be of type ..."), and a server with the fault accepts the very same
request. The values are the ones the boundaries family sends for each class: null, the number
12 for a string, a digit string for an integer, {"conformance": 1} and ["conformance"]. (The
cursor faults are shown in tests/reference/test_payments.py and test_statements.py.)
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.core.profile import Profile
from conformance.reference.faults import find_fault
from conformance.reference.server import ReferenceServer
from tests.reference.domain_factories import settled_payment
from tests.reference.factories import create_payout, error_code, payout_body, subscription_body
from tests.reference.signed_client import SignedClient

Request = tuple[str, str, Any]  # method, path, body


@dataclass(frozen=True)
class NearMiss:
    fault: str
    near_miss: str  # the class of the value (near_miss_classes.yaml)
    field: str  # as the 400's details name it
    request: Callable[[SignedClient], Request]  # built for a client of the server asked
    accepted_with: int  # the faulted server's answer


def _replace_schedule(**changes: Any) -> Callable[[SignedClient], Request]:
    def build(client: SignedClient) -> Request:
        schedule = create_payout(client)
        return "PUT", f"/v1/payout-schedules/{schedule['id']}", {**payout_body(), **changes}

    return build


def _usage(**changes: Any) -> Callable[[SignedClient], Request]:
    def build(client: SignedClient) -> Request:
        payment_id, _ = settled_payment(client, scheme="upto")
        usage = {"actual_amount": "0.01", "usage_id": "u-" + uuid.uuid4().hex[:8], "evidence": {}}
        return "POST", f"/v1/x402/{payment_id}/usage", {**usage, **changes}

    return build


def _subscription(**changes: Any) -> Callable[[SignedClient], Request]:
    return lambda _: ("POST", "/v1/subscriptions", subscription_body(**changes))


CASES = [
    NearMiss(
        "validation-null-as-absent",
        "null",
        "first_run_at",
        _replace_schedule(first_run_at=None),
        200,
    ),
    NearMiss(
        "validation-number-coerced-to-string",
        "number",
        "min_send_amount",
        _replace_schedule(min_send_amount=12),
        200,
    ),
    NearMiss(
        "validation-numeric-string-coerced",
        "string",
        "interval_secs",
        _subscription(interval_secs="2592000"),
        201,
    ),
    NearMiss(
        "validation-object-stored-as-json-text",
        "object",
        "usage_id",
        _usage(usage_id={"conformance": 1}),
        200,
    ),
    NearMiss(
        "validation-object-field-accepts-array",
        "array",
        "evidence",
        _usage(evidence=["conformance"]),
        200,
    ),
]


@pytest.fixture(scope="module")
def healthy(profile: Profile) -> Iterator[SignedClient]:
    with (
        ReferenceServer(profile=profile) as server,
        SignedClient(server.base_url, profile.primary) as client,
    ):
        yield client


@pytest.mark.parametrize("case", CASES, ids=[f"{c.near_miss}-{c.fault}" for c in CASES])
def test_the_near_miss_is_refused_and_only_its_fault_accepts_it(
    profile: Profile, healthy: SignedClient, case: NearMiss
) -> None:
    method, path, body = case.request(healthy)
    right = healthy.request(method, path, body)
    assert right.status_code == 400, right.text
    assert error_code(right) == "validation_error"
    details = right.json()["details"]
    assert [d["field"] for d in details] == [case.field]
    assert details[0]["message"].startswith("must be of type")
    with (
        ReferenceServer(profile=profile, faults=(case.fault,)) as faulty,
        SignedClient(faulty.base_url, profile.primary) as client,
    ):
        method, path, body = case.request(client)
        wrong = client.request(method, path, body)
    assert wrong.status_code == case.accepted_with, wrong.text


def test_each_body_fault_names_the_type_requirements() -> None:
    for case in CASES:
        fault = find_fault(case.fault)
        assert fault is not None and fault.source == "near_misses.yaml"
        assert {"SHAPE-031", "STATUS-004"} <= set(fault.breaks)
