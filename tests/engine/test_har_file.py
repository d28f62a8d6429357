"""``run --record FILE.har``: the suite's own traffic as one HAR 1.2 file, secrets masked."""

from __future__ import annotations

import gzip
import json
import re
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.core.profile import load_profile
from conformance.core.redaction import SIGNATURE_MARKS
from conformance.engine import har_file as recording
from conformance.engine.har_file import merge_parts
from conformance.engine.options import RunError, RunOptions
from conformance.engine.progress import NullDisplay
from conformance.engine.runner import execute
from conformance.suite.wire import har
from conformance.suite.wire.har import PART_SUFFIX, PartRecorder
from conformance.suite.wire.tap import WireExchange
from tests.engine.hostile import Behaviour, canned, closed_port, hostile_server
from tests.markers import BUDGET_STOP_NOISE

# The HAR 1.2 fields a reader relies on (http://www.softwareishard.com/blog/har-12-spec/).
_NAME_VALUE = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["name", "value"],
        "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
    },
}
HAR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["log"],
    "properties": {
        "log": {
            "type": "object",
            "required": ["version", "creator", "entries"],
            "properties": {
                "version": {"const": "1.2"},
                "creator": {
                    "type": "object",
                    "required": ["name", "version"],
                    "properties": {"name": {"const": "payment-conformance"}},
                },
                "entries": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": [
                            "startedDateTime",
                            "time",
                            "request",
                            "response",
                            "cache",
                            "timings",
                        ],
                        "properties": {
                            "startedDateTime": {"type": "string", "pattern": r"^\d{4}-.*Z$"},
                            "time": {"type": "number", "minimum": 0},
                            "request": {
                                "type": "object",
                                "required": [
                                    "method",
                                    "url",
                                    "httpVersion",
                                    "headers",
                                    "queryString",
                                    "headersSize",
                                    "bodySize",
                                ],
                                "properties": {
                                    "headers": _NAME_VALUE,
                                    "queryString": _NAME_VALUE,
                                    "headersSize": {"const": -1},
                                    "postData": {
                                        "type": "object",
                                        "required": ["mimeType", "text"],
                                    },
                                },
                            },
                            "response": {
                                "type": "object",
                                "required": [
                                    "status",
                                    "statusText",
                                    "httpVersion",
                                    "headers",
                                    "content",
                                    "redirectURL",
                                    "headersSize",
                                    "bodySize",
                                ],
                                "properties": {
                                    "status": {"type": "integer"},
                                    "headers": _NAME_VALUE,
                                    "content": {
                                        "type": "object",
                                        "required": ["size", "mimeType"],
                                    },
                                    "redirectURL": {"const": ""},
                                    "headersSize": {"const": -1},
                                },
                            },
                            "cache": {"type": "object"},
                            "timings": {
                                "type": "object",
                                "required": ["send", "wait", "receive"],
                                "properties": {
                                    "send": {"type": "number", "minimum": 0},
                                    "wait": {"type": "number", "minimum": 0},
                                    "receive": {"type": "number", "minimum": 0},
                                },
                            },
                        },
                    },
                },
            },
        }
    },
}


def _secrets() -> list[str]:
    return [c.api_secret for c in load_profile().credentials]


def _assert_recording_of(har_path: Path, requests_sent: int) -> list[dict[str, Any]]:
    """``har_path`` is a valid HAR of ``requests_sent`` exchanges, in time order, no secret."""
    text = har_path.read_text(encoding="utf-8")
    har = json.loads(text)
    jsonschema.validate(har, HAR_SCHEMA)
    entries: list[dict[str, Any]] = har["log"]["entries"]
    assert len(entries) == requests_sent
    starts = [entry["startedDateTime"] for entry in entries]
    assert starts == sorted(starts)
    for secret in _secrets():
        assert secret not in text
    assert "whsec_" not in text
    signatures = [
        header["value"]
        for entry in entries
        for header in entry["request"]["headers"]
        if header["name"].lower() == "x-signature"
    ]
    # masked with what each was signed over where the recorder could check it with the secret (not
    # with a missing auth header or an unknown key)
    assert "[redacted: verifies]" in signatures
    assert set(signatures) <= {*SIGNATURE_MARKS, "[redacted]"}
    return entries


# -- real runs against the embedded reference server -----------------------------------------
@pytest.mark.slow
def test_a_run_records_every_request_it_sent_with_secrets_masked(tmp_path: Path) -> None:
    har_path = tmp_path / "f.har"
    options = RunOptions(seed=7, only=("AUTH-001",), quick=True, record=har_path)
    result = execute(options, NullDisplay()).result
    assert result.exit_code == 0

    entries = _assert_recording_of(har_path, result.requests_sent)
    # preflight's requests come first: its unsigned reachability probe opens the recording
    first = entries[0]["request"]
    assert first["method"] == "GET" and first["url"].endswith("/v1/payments?limit=1")
    assert not any(h["name"].lower() == "x-signature" for h in first["headers"])
    assert entries[0]["response"]["status"] == 401


@pytest.mark.slow
def test_two_workers_parts_are_merged_into_one_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts_seen: list[str] = []
    real_merge = recording.merge_parts

    def spy(directory: Path, target: Path) -> recording.Merged:
        parts_seen.extend(sorted(p.name.split("-")[0] for p in directory.glob(f"*{PART_SUFFIX}")))
        return real_merge(directory, target)

    monkeypatch.setattr(recording, "merge_parts", spy)
    har_path = tmp_path / "f.har"
    options = RunOptions(seed=7, only=("AUTH-001",), quick=True, workers=2, record=har_path)
    result = execute(options, NullDisplay()).result
    assert result.exit_code == 0

    assert parts_seen == ["gw0", "gw1", "preflight"]
    _assert_recording_of(har_path, result.requests_sent)


def test_a_run_stopped_by_preflight_still_writes_what_it_recorded(tmp_path: Path) -> None:
    har_path = tmp_path / "f.har"
    with (
        hostile_server(Behaviour.HTML) as url,
        pytest.raises(RunError, match="preflight failed"),
    ):
        execute(RunOptions(base_url=url, record=har_path), NullDisplay())
    har = json.loads(har_path.read_text(encoding="utf-8"))
    jsonschema.validate(har, HAR_SCHEMA)
    entries = har["log"]["entries"]
    assert [e["request"]["url"] for e in entries] == [url + "/v1/payments?limit=1"] * 2
    assert {e["response"]["content"]["mimeType"] for e in entries} == {"text/html; charset=utf-8"}


def test_nothing_reached_gives_an_empty_recording(tmp_path: Path) -> None:
    har_path = tmp_path / "f.har"
    options = RunOptions(base_url=f"http://127.0.0.1:{closed_port()}", record=har_path)
    with pytest.raises(RunError, match="preflight failed"):
        execute(options, NullDisplay())
    har = json.loads(har_path.read_text(encoding="utf-8"))
    assert har["log"]["entries"] == []  # the connection was refused before any HTTP request


def test_the_record_path_is_checked_before_the_run(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "f.har"
    with pytest.raises(RunError, match="does not exist"):
        execute(RunOptions(record=missing, base_url="http://127.0.0.1:9"), NullDisplay())
    with pytest.raises(RunError, match="is a directory"):
        execute(RunOptions(record=tmp_path, base_url="http://127.0.0.1:9"), NullDisplay())


def test_the_cli_refuses_an_unwritable_record_path(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main, ["run", "--record", str(tmp_path / "no" / "f.har"), "--report-dir", str(tmp_path)]
    )
    assert outcome.exit_code == 2
    assert "error: cannot record the traffic to" in outcome.output
    assert "Traceback" not in outcome.output


# -- merging parts ---------------------------------------------------------------------------
def _exchange(started: float, path: str = "/v1/payments") -> WireExchange:
    return WireExchange(
        started=started,
        method="GET",
        url=f"http://127.0.0.1:1{path}",
        request_headers=(("Host", "127.0.0.1:1"),),
        request_body=b"",
        status=200,
        reason="OK",
        response_headers=(("content-type", "application/json"),),
        response_body=b"{}",
    )


def test_parts_merge_in_start_order_and_an_unfinished_last_line_is_dropped(
    tmp_path: Path,
) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()
    first, second = PartRecorder(parts, "gw0"), PartRecorder(parts, "gw1")
    first.path = parts / f"gw0{PART_SUFFIX}"  # one process here: two names
    second.path = parts / f"gw1{PART_SUFFIX}"
    for started, recorder in ((3.0, first), (1.0, second), (2.0, first), (4.0, second)):
        recorder(_exchange(1_800_000_000 + started, f"/v1/payments/p{int(started)}"))
    first.stop()
    second.stop()
    with second.path.open("ab") as cut_short:
        cut_short.write(b'{"startedDateTime": "2027-01-15T08:00:00.000000Z", "requ')

    merged = merge_parts(parts, tmp_path / "out.har")

    assert (merged.entries, merged.dropped) == (4, 1)
    har = json.loads((tmp_path / "out.har").read_text(encoding="utf-8"))
    jsonschema.validate(har, HAR_SCHEMA)
    urls = [entry["request"]["url"].rsplit("/", 1)[-1] for entry in har["log"]["entries"]]
    assert urls == ["p1", "p2", "p3", "p4"]


def test_merging_no_part_gives_an_empty_recording(tmp_path: Path) -> None:
    merge_parts(tmp_path, tmp_path / "out.har")
    har = json.loads((tmp_path / "out.har").read_text(encoding="utf-8"))
    assert har["log"]["entries"] == [] and har["log"]["version"] == "1.2"


# -- bounds (issue 17, point 4) ----------------------------------------------------------------
@BUDGET_STOP_NOISE
def test_a_gzip_bomb_server_gives_a_bounded_recording_within_the_run_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every answer after preflight: 8 MiB of NULs, gzipped to 8 KiB. Unbounded, each entry was
    # 48 MiB of "\u0000" and the HAR grew by gigabytes; small limits here, the defaults' shape.
    limits = har.RecordLimits(
        body_bytes=64 * 1024, bodies_bytes=1024 * 1024, file_bytes=1536 * 1024
    )
    monkeypatch.setattr(har, "DEFAULT_LIMITS", limits)
    bomb = canned("200 OK", gzip.compress(b"\0" * (8 * 1024 * 1024)), Content_Encoding="gzip")
    har_path = tmp_path / "bomb.har"
    budget_s = 15.0  # the suite starts in a few seconds on a loaded machine: room for bombs
    with hostile_server(Behaviour.PREFLIGHT_THEN_CANNED, bomb) as url:
        started = time.perf_counter()
        outcome = CliRunner().invoke(
            main,
            [
                *("run", "--base-url", url, "--quick", "--workers", "1", "--no-progress"),
                *("--max-duration", f"{budget_s:g}", "--record", str(har_path)),
                *("--report-dir", str(tmp_path / "reports")),
            ],
        )
        took = time.perf_counter() - started
    assert outcome.exit_code in (1, 2), outcome.output
    assert "Traceback" not in outcome.output
    # The budget, its hard stop's grace and the stop itself (workers torn down, reports written
    # with the bombs' evidence): 20 s in all on an idle machine, 37 s in CI before the reports'
    # escaping and redaction got faster. Unbounded, writing the recording alone took minutes.
    assert took < budget_s + 30.0

    size = har_path.stat().st_size
    assert size <= limits.file_bytes + 4096  # the cap, and the log's head
    har_doc = json.loads(har_path.read_text(encoding="utf-8"))
    jsonschema.validate(har_doc, HAR_SCHEMA)
    entries = har_doc["log"]["entries"]
    cut = [e for e in entries if e.get("_truncated")]
    assert cut and all("comment" in e for e in cut), outcome.output
    bombs = [e["response"]["content"] for e in cut if e["response"]["content"].get("text")]
    assert bombs and {c["encoding"] for c in bombs} == {"base64"}
    assert "recorded by run --record, bounded: " in har_doc["log"]["comment"]
    # the console says where the recording went and what was cut
    line = next(s for s in outcome.output.splitlines() if s.startswith("recording: "))
    assert line.startswith(f"recording: {har_path} ({len(entries)} entries, ") and "; cut: " in line
    # validate reads it: a cut body is not judged, its status still is
    from conformance.validator.readers import iter_exchanges

    assert sum(1 for e in iter_exchanges(har_path) if e.truncated) == len(cut)


def test_the_console_says_where_a_recording_went(tmp_path: Path) -> None:
    har_path = tmp_path / "f.har"
    outcome = CliRunner().invoke(
        main,
        [
            *("run", "--only", "AUTH-001", "--quick", "--workers", "1", "--no-progress"),
            *("--record", str(har_path), "--report-dir", str(tmp_path / "reports")),
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    entries = len(json.loads(har_path.read_text(encoding="utf-8"))["log"]["entries"])
    assert re.search(
        rf"^recording: {re.escape(str(har_path))} \({entries} entries, \d+\.\d MB\)$",
        outcome.output,
        re.M,
    ), outcome.output
    assert "manifest.json" in outcome.output  # the reports line names every file written
