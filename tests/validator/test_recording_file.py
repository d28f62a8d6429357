"""Validating a whole recording: streaming, bounded aggregation, the run result, shards."""

from __future__ import annotations

import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from benchmarks.validate import reference_traffic
from conformance.core.profile import Profile, load_profile
from conformance.core.redaction import REDACTED
from conformance.core.results import CheckResult, Outcome, RunResult, Verdict
from conformance.reference.server import ReferenceServer
from conformance.validator.exchange import Exchange, RecordingError
from conformance.validator.recording_file import (
    PartialResult,
    check_exchanges,
    merge,
    to_run_result,
    validate_file,
    validate_partition,
)
from tests.validator.samples import exchange, write_har, write_jsonl


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile("default")


@pytest.fixture(scope="module")
def traffic(profile: Profile) -> list[Exchange]:
    """A session recorded against the reference server."""
    with ReferenceServer(profile=profile) as server:
        return reference_traffic(server.base_url, profile)


@pytest.fixture(scope="module")
def faulted_traffic(profile: Profile) -> list[Exchange]:
    with ReferenceServer(profile=profile, faults=("idem-replay-missing-header",)) as server:
        return reference_traffic(server.base_url, profile)


def requirement(result: RunResult, rid: str) -> tuple[Outcome, tuple[CheckResult, ...], str]:
    found = next(r for r in result.requirements if r.requirement.id == rid)
    return found.outcome, found.checks, found.reason_not_exercised or ""


def test_reference_traffic_is_conformant(tmp_path: Path, traffic: list[Exchange]) -> None:
    result = validate_file(write_jsonl(tmp_path / "traffic.jsonl", traffic))
    assert result.verdict is Verdict.CONFORMANT, [
        (r.requirement.id, r.failures[0].message) for r in result.requirements if r.failures
    ]
    assert result.exit_code == 0
    assert result.target.embedded is False
    assert result.target.base_url.startswith("http://127.0.0.1:")
    assert result.requests_sent == 0
    assert result.options["exchanges"] == str(len(traffic))
    assert requirement(result, "IDEM-007")[0] is Outcome.PASSED
    assert requirement(result, "AUTH-016")[0] is Outcome.PASSED


def test_a_faulted_server_is_found_in_a_har(
    tmp_path: Path, faulted_traffic: list[Exchange]
) -> None:
    result = validate_file(write_har(tmp_path / "traffic.har", faulted_traffic))
    assert result.verdict is Verdict.NOT_CONFORMANT and result.exit_code == 1
    outcome, checks, _ = requirement(result, "IDEM-008")
    assert outcome is Outcome.FAILED
    assert checks[0].message.startswith("1 of 1 exchanges failed; first: traffic.har entry ")
    assert checks[0].evidence is not None and checks[0].evidence.method == "POST"


def test_results_stay_one_per_check_and_requirement(profile: Profile) -> None:
    """Thousands of failing exchanges give one check per requirement: counts and the first."""
    broken = [
        Exchange(
            **{
                **exchange("GET", "/v1/nowhere", status=500, response_body="boom").__dict__,
                "source": f"big.jsonl line {n}",
            }
        )
        for n in range(1, 3001)
    ]
    result = to_run_result([check_exchanges(broken, profile)], profile)
    failed = [c for c in result.checks if c.outcome is Outcome.FAILED]
    assert failed and len(result.checks) < 50
    assert all(
        c.message.startswith("3,000 of 3,000 exchanges failed; first: big.jsonl line 1:")
        for c in failed
    )


def test_untouched_requirements_say_which_operation_was_missing(
    tmp_path: Path, traffic: list[Exchange]
) -> None:
    lists = [ex for ex in traffic if ex.method == "GET" and ex.path == "/v1/payments"]
    result = validate_file(write_jsonl(tmp_path / "lists.jsonl", lists))
    outcome, _, reason = requirement(result, "STMT-001")
    assert outcome is Outcome.NOT_EXERCISED
    assert reason == "no exchange of getStatement in the recording"


def test_an_empty_recording_tests_nothing(tmp_path: Path) -> None:
    result = validate_file(write_jsonl(tmp_path / "empty.jsonl", []))
    assert result.verdict is Verdict.NOT_TESTED and result.exit_code == 2


# -- partitioned traffic ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def sessions(profile: Profile, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three sessions' traffic, one shard each (as sharding by merchant or session gives),
    the second from a faulted server."""
    where = tmp_path_factory.mktemp("shards")
    shards = []
    for number, faults in enumerate(((), ("idem-replay-missing-header",), ())):
        with ReferenceServer(profile=profile, faults=faults) as server:
            traffic = reference_traffic(server.base_url, profile, tag=str(number))
        shards.append(write_jsonl(where / f"shard-{number}.jsonl", traffic))
    return shards


def _whole(shards: list[Path], where: Path) -> Path:
    whole = where / "whole.jsonl"
    whole.write_text("".join(s.read_text(encoding="utf-8") for s in shards), encoding="utf-8")
    return whole


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _summary(result: RunResult) -> tuple[str, list[tuple[str, str, str]]]:
    """The verdict and every check's outcome and counts (the first failure's place aside: a
    shard numbers its own lines)."""
    checks = sorted(
        (c.check_id, c.outcome.value, c.message.split("; first:")[0]) for c in result.checks
    )
    return result.verdict_summary, checks


def test_shards_validated_in_processes_merge_into_one_result(
    tmp_path: Path, sessions: list[Path]
) -> None:
    whole = validate_file(_whole(sessions, tmp_path))
    with ProcessPoolExecutor(max_workers=2) as pool:
        partials = list(pool.map(validate_partition, [_lines(s) for s in sessions]))
    merged = merge(partials)
    assert _summary(merged) == _summary(whole)
    assert merged.verdict is Verdict.NOT_CONFORMANT and merged.exit_code == 1
    assert requirement(merged, "IDEM-008")[0] is Outcome.FAILED
    assert merged.options["exchanges"] == whole.options["exchanges"]


def test_cross_exchange_pairs_split_over_shards_are_not_seen(
    tmp_path: Path, sessions: list[Path]
) -> None:
    """The documented limit: a replay and its original in two shards are not compared."""
    lines = _lines(sessions[1])
    keyed = [n for n, line in enumerate(lines) if '"bench-replay-1"' in line]
    replay = keyed[1]  # the second request under the session's key: the replay
    merged = merge([validate_partition(lines[:replay]), validate_partition(lines[replay:])])
    assert requirement(merged, "IDEM-008")[0] is Outcome.NOT_EXERCISED
    assert requirement(validate_file(sessions[1]), "IDEM-008")[0] is Outcome.FAILED


def test_a_partial_result_survives_pickling(traffic: list[Exchange], profile: Profile) -> None:
    partial = check_exchanges(traffic[:5], profile)
    copy = pickle.loads(pickle.dumps(partial))
    assert isinstance(copy, PartialResult)
    assert _summary(merge([copy])) == _summary(merge([partial]))


def test_a_bad_line_in_a_shard_is_a_recording_error() -> None:
    with pytest.raises(RecordingError, match=r"^part-7 line 2 is not valid JSON"):
        validate_partition(["", "{nope\n"], name="part-7")


def test_shards_on_dask(tmp_path: Path, sessions: list[Path]) -> None:
    bag = pytest.importorskip("dask.bag", reason="dask is not installed (pip install dask[bag])")
    partials = (
        bag.read_text([str(s) for s in sessions])
        .map_partitions(lambda lines: [validate_partition(lines)])
        .compute(scheduler="processes", num_workers=2)
    )
    assert len(partials) == 3
    assert _summary(merge(partials)) == _summary(validate_file(_whole(sessions, tmp_path)))


def test_the_commands_of_a_validation_re_validate_the_recording(tmp_path: Path) -> None:
    """A report of recorded traffic offers no ``run`` command: its checks come from the file,
    named by the path given (not its name alone, which would not find it from elsewhere)."""
    path = tmp_path / "traffic.jsonl"
    write_jsonl(path, [exchange("GET", "/v1/payments", response_body={"payments": []})])
    result = validate_file(path)
    assert result.rerun_command() == f"payment-conformance validate {path}"
    assert result.replay_command("SHAPE-001") == f"payment-conformance validate {path}"
    assert "validating the same recording again" in result.replay_note


def test_another_keys_id_answered_outside_the_status_table_fails_isolation_alone(
    profile: Profile,
) -> None:
    """A cancel of another merchant's payment answered 403: the id was found (TEN-001), which
    the isolation rules judge; the status table of a request that had to succeed does not."""
    auth = (
        ("X-Timestamp", "1767225600"),
        ("X-Nonce", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
        ("X-Signature", REDACTED),  # as a recorder masks it: this test judges other things
    )
    alpha, beta = ("X-Api-Key", "mk_test_alpha"), ("X-Api-Key", "mk_test_beta")
    created = exchange(
        "POST", "/v1/payments", request_headers=(alpha, *auth), status=201,
        response_body={"id": "pay_a1"},
    )  # fmt: skip
    forbidden = exchange(
        "POST", "/v1/payments/pay_a1/cancel", request_headers=(beta, *auth), status=403,
        response_body={"code": "forbidden", "message": "not yours"},
    )  # fmt: skip
    result = to_run_result([check_exchanges([created, forbidden], profile)], profile)
    assert requirement(result, "TEN-001")[0] is Outcome.FAILED
    assert requirement(result, "STATUS-002")[0] is not Outcome.FAILED


def test_a_reused_key_not_refused_is_judged_by_the_reuse_rule_alone(profile: Profile) -> None:
    """A key reused with another body answered with the first request's stored answer: IDEM-010
    fails; that answer is no answer to the second request, so nothing else is judged on it."""
    stored = {"id": "pay_a1", "status": "pending"}  # not a whole payment: its schema fails

    def create(amount: str, nonce: str) -> Exchange:
        headers = (
            ("X-Api-Key", "mk_test_alpha"),
            ("X-Timestamp", "1767225600"),
            ("X-Nonce", nonce),
            ("X-Signature", REDACTED),
            ("Idempotency-Key", "k-reused-0001"),
            ("Content-Type", "application/json"),
        )
        body = {"quotes": {"usdc": {"amount": amount}}, "merchant_order_no": "o-1"}
        return exchange(
            "POST", "/v1/payments", request_headers=headers, request_body=body, status=201,
            response_body=stored,
        )  # fmt: skip

    pair = [create("1", "0f1e2d3c4b5a6978"), create("2", "8796a5b4c3d2e1f0")]
    result = to_run_result([check_exchanges(pair, profile)], profile)
    failed = [c for c in result.checks if c.outcome is Outcome.FAILED]
    assert [c.requirement_ids for c in failed if "IDEM-010" in c.requirement_ids] == [("IDEM-010",)]
    # the stored answer's own failures are the first exchange's alone
    assert all("2 of 2" not in c.message for c in failed)


@pytest.mark.parametrize(
    ("status", "outcome"), [("pending", Outcome.NOT_EXERCISED), ("queued", Outcome.FAILED)]
)
def test_a_rule_with_a_half_no_recording_shows_is_failed_never_passed(
    profile: Profile, status: str, outcome: Outcome
) -> None:
    """A resend answered 200 {status pending} shows the answer of DLV-013, not the attempt it
    queues (only a webhook receiver sees that): no pass. A wrong status is its failure."""
    headers = (
        ("X-Api-Key", "mk_test_alpha"),
        ("X-Timestamp", "1767225600"),
        ("X-Nonce", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
        ("X-Signature", REDACTED),
        ("Idempotency-Key", "k-resend-0001"),
    )
    resend = exchange(
        "POST", "/v1/webhook-deliveries/dlv_1/resend", request_headers=headers, status=200,
        response_body={"status": status},
    )  # fmt: skip
    result = to_run_result([check_exchanges([resend], profile)], profile)
    found, _, reason = requirement(result, "DLV-013")
    assert found is outcome
    if outcome is Outcome.NOT_EXERCISED:
        assert reason.startswith("1 of 1 exchanges passed, but the rule has a half no recording")
        assert "webhook receiver" in reason
