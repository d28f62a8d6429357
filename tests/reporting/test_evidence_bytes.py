"""Evidence in the reports is what was on the wire: only secret values are replaced."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.core.redaction import REDACTED
from conformance.reporting import write_reports
from conformance.reporting.scrub import Scrubber
from tests.reporting.runs import FAILED, check, evidence, make_run

WIRE_BODY = '{"a":1,"a":2,"n":1e999,"secret":"whsec_c2VjcmV0c2VjcmV0"}'


def test_the_scrubber_keeps_duplicate_keys_and_number_spellings() -> None:
    body, escaped = Scrubber(()).body(WIRE_BODY)
    assert body == '{"a":1,"a":2,"n":1e999,"secret":"[redacted]"}'
    assert not escaped


def test_the_scrubber_keeps_the_layout_of_a_body_with_a_non_string_secret() -> None:
    body = '{\n  "signature": {"v": 1},\n  "amount": 10.00\n}'
    assert Scrubber(()).body(body)[0] == f'{{\n  "signature": "{REDACTED}",\n  "amount": 10.00\n}}'


def test_results_json_holds_the_body_as_received_without_its_secret(tmp_path: Path) -> None:
    run = make_run([check("c", FAILED, "OPS-002", evidence_=evidence(response_body=WIRE_BODY))])
    write_reports(run, tmp_path)
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    (recorded,) = [c["evidence"]["response_body"] for c in results["checks"]]
    assert recorded == '{"a":1,"a":2,"n":1e999,"secret":"[redacted]"}'
    for data in (p.read_bytes() for p in tmp_path.iterdir()):
        assert b"c2VjcmV0c2VjcmV0" not in data
