"""``merge``: the shards of one run folded again as one run, and everything that is not the
complete set of shards of one run refused, naming what is wrong."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.core.case_coverage import CaseKey, CaseLog, OperationCaseCoverage
from conformance.core.results import Target, Verdict, fold
from conformance.reporting import write_reports
from conformance.reporting.load import read_document
from conformance.reporting.merge import MergeError, merge_shards
from tests.reporting.shard_runs import (
    CATALOGUE,
    SELECTED,
    TESTS,
    check_of,
    shard_result,
    shards,
    write_shard,
)


def test_merged_outcomes_are_those_of_one_run_of_every_check(tmp_path: Path) -> None:
    merged = merge_shards(shards(tmp_path), CATALOGUE)
    one_run = fold(list(SELECTED), [check_of(t.nodeid) for t in TESTS])
    assert [(r.requirement.id, r.outcome) for r in merged.requirements] == [
        (r.requirement.id, r.outcome) for r in one_run
    ]
    assert merged.verdict is Verdict.NOT_CONFORMANT
    assert len(merged.checks) == len(TESTS)


def test_merged_counts_add_up_and_time_is_the_longest_shards(tmp_path: Path) -> None:
    merged = merge_shards(shards(tmp_path), CATALOGUE)
    assert merged.requests_sent == 300
    assert merged.duration_s == 30.0
    assert merged.started_at == "2026-11-25T20:01:00Z"
    assert merged.options["shards"] == "3"
    assert {"shard", "workers", "webhook_url"}.isdisjoint(merged.options)
    assert merged.shard is None


def test_the_merged_results_json_is_valid_and_records_no_shard(tmp_path: Path) -> None:
    result = merge_shards(shards(tmp_path), CATALOGUE)
    write_reports(result, tmp_path / "merged", CATALOGUE)
    document = read_document(tmp_path / "merged" / "results.json")  # validated by its schema
    assert "shard" not in document
    assert document["verdict"] == "NOT CONFORMANT"


def test_a_shard_results_json_records_its_part_of_the_plan(tmp_path: Path) -> None:
    directory = shards(tmp_path)[1]
    shard = read_document(directory / "results.json")["shard"]  # validated by its schema
    assert (shard["index"], shard["total"], shard["plan_tests"]) == (2, 3, len(TESTS))
    assert 0 < len(shard["tests"]) < len(TESTS)


def test_a_missing_shard_is_named(tmp_path: Path) -> None:
    given = shards(tmp_path, total=4)
    with pytest.raises(MergeError, match=r"shards 2/4, 4/4 are missing"):
        merge_shards([given[0], given[2]], CATALOGUE)


def test_a_shard_given_twice_is_named(tmp_path: Path) -> None:
    given = shards(tmp_path)
    again = write_shard(tmp_path, shard_result(2, 3), name="shard-2-again")
    with pytest.raises(MergeError, match=r"shard 2/3 is given 2 times: .*shard-2, .*shard-2-again"):
        merge_shards([*given, again], CATALOGUE)


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"seed": 6}, "a different seed: 6 and 5"),
        ({"profile_sha256": "q" * 64}, "a different profile"),
        ({"contract_sha256": "d" * 64}, "a different contract"),
        ({"target": Target("http://127.0.0.1:9002", embedded=True, fault="f")}, "target"),
    ],
)
def test_shards_of_another_run_are_refused(
    tmp_path: Path, changes: dict[str, Any], says: str
) -> None:
    given = shards(tmp_path)
    given[1] = write_shard(tmp_path, shard_result(2, 3, **changes), name="other")
    with pytest.raises(MergeError, match=says):
        merge_shards(given, CATALOGUE)


def test_shards_of_two_servers_are_named_in_words_not_python_tuples(tmp_path: Path) -> None:
    given = shards(tmp_path)
    remote = shard_result(2, 3, target=Target("https://sandbox.example", embedded=False))
    given[1] = write_shard(tmp_path, remote, name="remote")
    with pytest.raises(MergeError) as raised:
        merge_shards(given, CATALOGUE)
    assert str(raised.value).endswith(
        "ran a different target: https://sandbox.example and the embedded reference server"
    )
    other = shard_result(2, 3, profile_sha256="q" * 64)
    given[1] = write_shard(tmp_path, other, name="other")
    with pytest.raises(MergeError) as raised:
        merge_shards(given, CATALOGUE)
    assert str(raised.value).endswith(
        "ran a different profile: default (sha256 qqqqqqqqqqqq) and default (sha256 pppppppppppp)"
    )


def test_shards_with_another_option_are_refused_naming_it(tmp_path: Path) -> None:
    given = shards(tmp_path)
    other = shard_result(2, 3)
    given[1] = write_shard(
        tmp_path, replace(other, options={**other.options, "quick": "false"}), name="slow"
    )
    with pytest.raises(MergeError, match="a different option quick: false and true"):
        merge_shards(given, CATALOGUE)


def test_shards_of_another_suite_version_are_refused(tmp_path: Path) -> None:
    given = [write_shard(tmp_path, shard_result(i, 2, suite_version="0.0.1")) for i in (1, 2)]
    with pytest.raises(MergeError, match=r"ran suite 0\.0\.1, this is"):
        merge_shards(given, CATALOGUE)


def test_shards_of_different_plans_are_refused(tmp_path: Path) -> None:
    given = shards(tmp_path)
    given[2] = write_shard(tmp_path, shard_result(3, 3, tests=TESTS[:-1]), name="fewer")
    with pytest.raises(MergeError, match="parts of different plans"):
        merge_shards(given, CATALOGUE)


def test_shards_that_do_not_cover_their_plan_are_refused(tmp_path: Path) -> None:
    given = shards(tmp_path)
    short = shard_result(1, 3)
    assert short.shard is not None
    short = replace(short, shard=replace(short.shard, tests=short.shard.tests[1:]))
    given[0] = write_shard(tmp_path, short, name="short")
    with pytest.raises(MergeError, match=f"ran {len(TESTS) - 1} tests, not the {len(TESTS)}"):
        merge_shards(given, CATALOGUE)


def test_a_shard_whose_reports_were_edited_is_refused(tmp_path: Path) -> None:
    given = shards(tmp_path)
    path = given[0] / "results.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["checks"][0]["outcome"] = "passed"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(MergeError, match="shard-1: the reports are not those the shard wrote"):
        merge_shards(given, CATALOGUE)


def test_reports_of_a_run_without_shard_are_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    write_reports(replace(shard_result(1, 1), shard=None), plain, CATALOGUE)
    with pytest.raises(MergeError, match="run without --shard"):
        merge_shards([plain], CATALOGUE)


def test_a_directory_without_reports_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MergeError, match="not a directory of reports"):
        merge_shards([tmp_path / "nothing"], CATALOGUE)
    with pytest.raises(MergeError, match=r"results\.json"):
        merge_shards([tmp_path], CATALOGUE)


def test_a_shard_that_did_not_finish_leaves_the_merged_run_incomplete(tmp_path: Path) -> None:
    given = shards(tmp_path, total=2)
    given[1] = write_shard(
        tmp_path, shard_result(2, 2, incomplete_reason="interrupted"), name="stopped"
    )
    merged = merge_shards(given, CATALOGUE)
    assert merged.incomplete_reason == "shard 2/2: interrupted"
    assert merged.exit_code == 2


def _case_log(applicable: list[CaseKey], sent: list[CaseKey]) -> CaseLog:
    log = CaseLog()
    log.expect(applicable)
    for key in sent:
        log.record(key)
    return log


def test_constraint_cases_of_the_shards_are_united(tmp_path: Path) -> None:
    """Two shards ran tests of one operation: its pairs are the union of theirs (a pair one
    shard had no case for is covered if the other sent one), its cases the sum; a shard that
    logged none adds nothing."""
    dot = CaseKey("createPayoutSchedule", "body.min_send_amount", "pattern", "trailing-dot")
    null = CaseKey("createPayoutSchedule", "body.min_send_amount", "type", "null")
    cursor = CaseKey("listPayments", "query.cursor", "cursor", "foreign-cursor")
    logs = {
        1: _case_log([dot, null], [dot, dot]),  # no null case here...
        2: _case_log([null, cursor], [null]),  # ...but in this shard; no cursor case anywhere
        3: None,
    }
    given = [
        write_shard(
            tmp_path,
            shard_result(
                i,
                3,
                case_log=log,
                case_coverage=() if log is None else log.by_operation(),
            ),
        )
        for i, log in logs.items()
    ]
    merged = merge_shards(given, CATALOGUE)
    assert merged.case_log is not None
    assert (merged.case_log.applicable, merged.case_log.sent) == ({dot, null, cursor}, {dot, null})
    assert merged.case_coverage == (
        OperationCaseCoverage("createPayoutSchedule", 2, 2, 2, 3, ()),
        OperationCaseCoverage(
            "listPayments",
            1,
            1,
            0,
            0,
            ("listPayments query.cursor: no foreign-cursor case (cursor)",),
        ),
    )
    write_reports(merged, tmp_path / "merged", CATALOGUE)
    document = read_document(tmp_path / "merged" / "results.json")  # validated by its schema
    assert document["case_coverage"]["cases"] == {"createPayoutSchedule": 3}


def test_shards_that_logged_no_constraint_case_merge_into_none(tmp_path: Path) -> None:
    merged = merge_shards(shards(tmp_path), CATALOGUE)
    assert (merged.case_coverage, merged.case_log) == ((), None)


def _summaries_alone(log: CaseLog) -> dict[str, Any]:
    return {"case_coverage": log.by_operation(), "case_log": None}


def test_summaries_without_triples_are_taken_for_operations_no_other_shard_has(
    tmp_path: Path,
) -> None:
    dot = CaseKey("createPayoutSchedule", "body.min_send_amount", "pattern", "trailing-dot")
    cursor = CaseKey("listPayments", "query.cursor", "cursor", "foreign-cursor")
    given = [
        write_shard(tmp_path, shard_result(1, 3, **_summaries_alone(_case_log([dot], [dot])))),
        write_shard(tmp_path, shard_result(2, 3, case_log=_case_log([cursor], []))),
        write_shard(tmp_path, shard_result(3, 3)),
    ]
    merged = merge_shards(given, CATALOGUE)
    assert merged.case_log is None  # not all shards kept their triples: summaries alone
    assert [(c.operation_id, c.covered, c.triples) for c in merged.case_coverage] == [
        ("createPayoutSchedule", 1, 1),
        ("listPayments", 0, 1),
    ]
    write_reports(merged, tmp_path / "merged", CATALOGUE)
    read_document(tmp_path / "merged" / "results.json")  # validated by its schema


def test_summaries_without_triples_of_one_operation_in_two_shards_are_refused(
    tmp_path: Path,
) -> None:
    dot = CaseKey("createPayoutSchedule", "body.min_send_amount", "pattern", "trailing-dot")
    null = CaseKey("createPayoutSchedule", "body.min_send_amount", "type", "null")
    given = [
        write_shard(tmp_path, shard_result(1, 3, **_summaries_alone(_case_log([dot], [dot])))),
        write_shard(tmp_path, shard_result(2, 3, case_log=_case_log([null], [null]))),
        write_shard(tmp_path, shard_result(3, 3)),
    ]
    with pytest.raises(MergeError, match=r"shard 1/3 .* createPayoutSchedule without its triples"):
        merge_shards(given, CATALOGUE)
