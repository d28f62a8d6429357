"""results.json: the whole run for machines, valid against results.schema.json."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from conformance.reporting import json_report
from conformance.reporting.view import RunView


def load(view: RunView) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(json_report.render(view))
    return document


def validator() -> jsonschema.Draft202012Validator:
    schema = json_report.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize(
    ("view_name", "verdict", "exit_code"),
    [
        ("passing_view", "CONFORMANT", 0),
        ("failing_view", "NOT CONFORMANT", 1),
        ("untested_view", "NOT TESTED", 2),
    ],
)
def test_every_kind_of_run_is_valid_against_the_schema(
    request: pytest.FixtureRequest, view_name: str, verdict: str, exit_code: int
) -> None:
    document = load(request.getfixturevalue(view_name))
    errors = [e.message for e in validator().iter_errors(document)]
    assert errors == []
    assert (document["verdict"], document["exit_code"]) == (verdict, exit_code)


def test_the_schema_rejects_a_document_that_breaks_it(failing_view: RunView) -> None:
    document = load(failing_view)
    document["requirements"][0]["outcome"] = "maybe"
    del document["seed"]
    assert len(list(validator().iter_errors(document))) == 2


def test_it_states_what_was_tested(failing_view: RunView) -> None:
    document = load(failing_view)
    assert document["seed"] == 42
    assert document["contract_sha256"] == "3f2a" + "0" * 60
    assert document["profile"] == {"name": "default", "sha256": "a1b2" + "f" * 60}
    assert document["target"] == {
        "base_url": "http://127.0.0.1:53117",
        "embedded": True,
        "fault": None,
    }
    assert document["suite_version"] == "0.1.0"
    assert document["started_at"] == "2026-11-22T10:04:11Z"


def test_every_requirement_with_its_layer_and_outcome(failing_view: RunView) -> None:
    document = load(failing_view)
    got = {r["id"]: (r["layer"], r["outcome"]) for r in document["requirements"]}
    assert got == {
        "OPS-001": ("contract", "passed"),
        "OPS-002": ("contract", "failed"),
        "AUTH-001": ("contract", "passed"),
        "AUTH-002": ("contract", "failed"),
        "ERR-001": ("contract", "passed"),
        "IDEM-004": ("profile", "failed"),
        "HELP-001": ("profile", "not_exercised"),
    }
    assert document["counts"]["requirements"] == {
        "passed": 3,
        "failed": 3,
        "not_exercised": 1,
        "total": 7,
    }
    assert document["counts"]["layers"]["profile"]["failed"] == 1


def test_a_requirement_points_at_its_checks(failing_view: RunView) -> None:
    document = load(failing_view)
    ops = next(r for r in document["requirements"] if r["id"] == "OPS-002")
    covering = [document["checks"][i] for i in ops["checks"]]
    assert {c["check_id"] for c in covering} == {
        "schema/createPayment/content-type",
        "schema/createPayment/server-error",
    }
    assert all("OPS-002" in c["requirement_ids"] for c in covering)
    assert ops["replay"] == "payment-conformance run --only OPS-002 --seed 42 --quick"


def test_failed_checks_keep_their_evidence_and_cut_huge_bodies(failing_view: RunView) -> None:
    document = load(failing_view)
    replay = next(c for c in document["checks"] if c["check_id"] == "idem/replay")
    evidence = replay["evidence"]
    assert evidence["method"] == "POST"
    assert evidence["status"] == 201
    assert evidence["truncated"] == {"response_body": 200_010}
    assert len(evidence["response_body"]) == json_report.BODY_LIMIT


def test_not_exercised_requirements_give_their_reason(untested_view: RunView) -> None:
    document = load(untested_view)
    reasons = {r["reason_not_exercised"] for r in document["requirements"]}
    assert reasons == {"preflight failed: the server did not answer"}
    assert document["target"]["embedded"] is False
