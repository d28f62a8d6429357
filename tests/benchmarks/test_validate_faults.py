"""The validator measured on a foreign client's recordings: the scripted merchant integration's
HAR of the unfaulted reference server validates CONFORMANT, a fault the validator already
judges is counted as caught, and a miss is classed visible or not visible."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.merchant_client import HarLog, record_session
from benchmarks.validate_faults import (
    RunRecord,
    classify,
    fingerprint,
    first_difference,
    main,
    markdown,
    measure,
    not_visible_reason,
    sample,
    summarise,
    volatile_places,
)
from conformance.core.profile import load_profile
from conformance.reference.faults import find_fault
from conformance.reference.server import ReferenceServer
from conformance.validator.readers import iter_exchanges
from conformance.validator.recording_file import validate_file


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The merchant client's HAR of one session against the unfaulted reference server."""
    profile = load_profile("default")
    with ReferenceServer(profile=profile) as server:
        har = record_session(server.base_url, profile, seed=2)
    path = tmp_path_factory.mktemp("session") / "session.har"
    har.write(path)
    return path


def test_the_unfaulted_recording_validates_conformant(session: Path) -> None:
    result = validate_file(session, "default", format="har")
    assert [r.requirement.id for r in result.requirements if r.failures] == []
    assert result.verdict_summary.startswith("CONFORMANT, ")
    assert int(result.options["exchanges"]) > 150


def test_a_fault_the_validator_judges_is_counted_as_caught() -> None:
    known = find_fault("state-cancel-expired-payment-allowed")  # a cancel after an expiry
    assert known is not None
    record = measure(known, seed=1)
    assert record.caught
    assert "PAY-STATE-005" in record.failures
    assert "PAY-STATE-005" in record.on_target


def test_the_benchmark_writes_the_table_and_every_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "50%off" in a query answered 500: no server error, and not the refusal STATUS-011 asks for
    assert (
        main(["--faults", "robust-query-escape-500", "--seeds", "1", "--out", str(tmp_path)]) == 0
    )
    document = json.loads((tmp_path / "validate-faults.json").read_text(encoding="utf-8"))
    assert document["summary"]["per_category"] == {
        "robustness": {"caught": 1, "visible": 1, "total": 1}
    }
    assert document["summary"]["false_alarms_per_seed"] == {"1": []}
    caught = document["records"][1]
    assert caught["fault"] == "robust-query-escape-500"
    assert caught["on_target"] == ["ERR-006", "STATUS-011"]
    table = (tmp_path / "validate-faults.md").read_text(encoding="utf-8")
    assert "| robustness | 1 | 1 | 1 |" in table
    assert "| robustness | 1 | 1 | 1 |" in capsys.readouterr().out


def test_the_client_covers_every_operation_of_both_merchants(session: Path) -> None:
    profile = load_profile("default")
    path = session
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["log"]["version"] == "1.2"
    assert document["log"]["creator"]["name"] == "payment-conformance merchant-client"
    exchanges = list(iter_exchanges(path))  # the validator's own reader reads it
    keys = {ex.header("X-Api-Key") for ex in exchanges}
    assert {c.api_key for c in profile.credentials} <= keys
    paths = {ex.url.split("/", 3)[3].split("?")[0] for ex in exchanges}
    for wanted in (
        "v1/payments",
        "v1/subscriptions",
        "v1/payout-schedules",
        "v1/split-template",
        "v1/webhook-endpoints",
        "v1/webhook-deliveries",
        "v1/x402/requirements",
        "v1/x402/settle",
        "v1/statements",
    ):
        assert wanted in paths or any(p.startswith(wanted) for p in paths), wanted
    assert any("/test-helpers/" in p for p in paths)
    not_utf8 = [
        e
        for e in document["log"]["entries"]
        if e["request"].get("postData", {}).get("encoding") == "base64"
    ]
    assert len(not_utf8) == 1  # the Latin-1 body is written as base64, as browsers do


# -- visible or not: what a recording shows ----------------------------------------------------
def _entry(
    status: int, body: object, started: str = "2026-01-01T00:00:00.000Z"
) -> dict[str, object]:
    return {
        "startedDateTime": started,
        "request": {"method": "GET", "url": "http://h/v1/payments"},
        "response": {
            "status": status,
            "headers": [
                {"name": "Content-Type", "value": "application/json"},
                {"name": "Date", "value": "today"},
            ],
            "content": {"text": json.dumps(body)},
        },
    }


def test_times_are_compared_as_offsets_from_the_session_start() -> None:
    one = fingerprint([_entry(200, {"expires_at": "2026-01-01T01:00:00Z", "n": 1})])
    later = fingerprint(
        [_entry(200, {"expires_at": "2026-01-02T01:00:05Z", "n": 1}, "2026-01-02T00:00:00.000Z")]
    )
    assert one[0]["/expires_at"] == later[0]["/expires_at"] == "t+12"
    assert "header date" not in one[0]  # noise
    assert one[0]["header content-type"] == "application/json"


def test_a_generated_value_reads_as_the_order_the_session_first_showed_it() -> None:
    rotated = fingerprint([_entry(200, {"secret": "whsec_0aaaaaaaaaaaaaaa"}),
                           _entry(200, {"secret": "whsec_1bbbbbbbbbbbbbbb"})])  # fmt: skip
    kept = fingerprint([_entry(200, {"secret": "whsec_2ccccccccccccccc"}),
                        _entry(200, {"secret": "whsec_2ccccccccccccccc"})])  # fmt: skip
    assert rotated[0]["/secret"] == kept[0]["/secret"] == "v0"
    assert rotated[1]["/secret"] == "v1"  # a new secret
    assert kept[1]["/secret"] == "v0"  # the same one again: a difference
    amounts = fingerprint([_entry(200, {"raw": "50500000000000000000", "status": "settled"})])
    assert amounts[0]["/raw"] == '"50500000000000000000"'  # amounts and words are kept


def test_a_place_the_unfaulted_recordings_disagree_on_is_not_a_difference() -> None:
    first = fingerprint([_entry(200, {"id": "pay_1", "status": "pending"})])
    second = fingerprint([_entry(200, {"id": "pay_2", "status": "pending"})])
    volatile = volatile_places([first, second])
    assert volatile == {(0, "/id")}
    faulted_id = fingerprint([_entry(200, {"id": "pay_3", "status": "pending"})])
    assert first_difference(faulted_id, first, volatile) == ""
    faulted_status = fingerprint([_entry(200, {"id": "pay_3", "status": "settled"})])
    assert first_difference(faulted_status, first, volatile) == (
        'entry 1 (GET /v1/payments): /status is "settled" (unfaulted: "pending")'
    )
    accepted = fingerprint([_entry(201, {"id": "pay_3"})])
    assert first_difference(accepted, first, volatile) == (
        "entry 1 (GET /v1/payments): status is 201 (unfaulted: 200)"  # the status says most
    )


def test_a_miss_is_classed_visible_or_not_visible() -> None:
    reference = fingerprint([_entry(404, {"code": "not_found"})])
    runs = [
        RunRecord(None, "", 1, exchanges=1, fingerprint=reference),
        RunRecord(
            "isolation-list-all-merchants",
            "isolation",
            1,
            exchanges=1,
            fingerprint=fingerprint([_entry(200, {"payments": []})]),
        ),
        RunRecord("webhook-id-is-event-id", "domain", 1, exchanges=1, fingerprint=reference),
        RunRecord(
            "robust-query-escape-500",
            "robustness",
            1,
            exchanges=1,
            failures=["ERR-006"],
            fingerprint=fingerprint([_entry(500, {})]),
        ),
    ]
    classify(runs)
    assert runs[1].visible.startswith("entry 1 (GET /v1/payments): ")
    assert runs[2].visible == "" and runs[2].not_visible_reason.startswith("webhook deliveries")
    assert runs[3].caught and runs[3].visible == ""  # caught: not classed
    summary = summarise(runs)
    assert summary["per_category"]["isolation"] == {"caught": 0, "visible": 1, "total": 1}
    assert summary["per_category"]["robustness"] == {"caught": 1, "visible": 1, "total": 1}
    table = markdown(summary, runs, "now")
    assert "| **all** | **1** | **2** | **3** |" in table
    assert "`webhook-id-is-event-id` (domain): webhook deliveries" in table


def test_reasons_a_fault_is_not_visible() -> None:
    expiry = find_fault("x402-settle-accepts-expired")
    flows = find_fault("auth-nonce-optional")
    assert expiry is not None and flows is not None
    assert not_visible_reason(expiry).startswith("depends on time passing")
    assert not_visible_reason(flows).startswith("the client's flows did not take")


def test_a_sample_spreads_over_the_selection() -> None:
    assert sample(list("abcdefghij"), 3) == ["a", "d", "g"]  # type: ignore[arg-type]
    assert sample(list("ab"), 5) == ["a", "b"]  # type: ignore[arg-type]


def test_bad_arguments_exit_2() -> None:
    for argv in (["--seeds", "0"], ["--faults", "no-such-fault"], ["--categories", "nope"]):
        with pytest.raises(SystemExit) as caught:
            main(argv)
        assert caught.value.code == 2


def test_an_empty_log_is_a_valid_har() -> None:
    assert HarLog().document()["log"]["entries"] == []
