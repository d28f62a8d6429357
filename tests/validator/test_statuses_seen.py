"""``validate`` counts the status codes of the recording's answers per operation, as a run does."""

from __future__ import annotations

import pickle
from pathlib import Path

from conformance.validator.recording_file import merge, validate_file, validate_partition
from tests.validator.samples import exchange, write_jsonl


def test_the_answers_of_a_recording_are_counted_per_operation(tmp_path: Path) -> None:
    recording = [
        exchange("POST", "/v1/payments", status=201),
        exchange("POST", "/v1/payments", status=201),
        exchange("POST", "/v1/payments", status=400),
        exchange("GET", "/v1/payments", status=200),
        exchange("GET", "/v1/payments", status=None),  # no answer recorded
        exchange("GET", "/v1/elsewhere", status=404),  # no operation
    ]
    result = validate_file(write_jsonl(tmp_path / "traffic.jsonl", recording))
    assert result.statuses_seen == {"createPayment": {201: 2, 400: 1}, "listPayments": {200: 1}}


def test_parts_validated_apart_add_up(tmp_path: Path) -> None:
    first = [exchange("POST", "/v1/payments", status=201)]
    second = [exchange("POST", "/v1/payments", status=201), exchange("GET", "/v1/payments")]
    parts = [
        pickle.loads(pickle.dumps(validate_partition(path.read_text().splitlines())))
        for path in (
            write_jsonl(tmp_path / "first.jsonl", first),
            write_jsonl(tmp_path / "second.jsonl", second),
        )
    ]
    assert merge(parts).statuses_seen == {"createPayment": {201: 2}, "listPayments": {200: 1}}
