"""``payment-conformance requirements`` lists the catalogue, filtered, for people and tools."""

from __future__ import annotations

import json

from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.catalogue import load_catalogue


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["requirements", *args])


def test_default_is_a_table_of_every_requirement_with_a_count() -> None:
    result = _run()
    assert result.exit_code == 0, result.output
    catalogue = load_catalogue()
    for header in ("id", "layer", "level", "section", "text"):
        assert header in result.stdout
    assert "AUTH-001" in result.stdout
    contract = sum(1 for r in catalogue if r.layer == "contract")
    profile = len(catalogue) - contract
    last_line = result.stdout.strip().splitlines()[-1]
    assert last_line == f"{len(catalogue)} requirements ({contract} contract, {profile} profile)"


def test_bracketed_text_is_printed_as_written_not_as_markup() -> None:
    result = _run("--only", "STMT-001", "--format", "table")
    assert result.exit_code == 0, result.output
    assert "[from, to)" in result.stdout


def test_section_filter() -> None:
    result = _run("--section", "spec 5", "--format", "ids")
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == ["AUTH-001", "AUTH-002", "AUTH-003", "AUTH-004"]


def test_layer_filter() -> None:
    result = _run("--layer", "profile", "--format", "ids")
    assert result.exit_code == 0, result.output
    ids = result.stdout.split()
    assert ids == [r.id for r in load_catalogue() if r.layer == "profile"]
    assert "AUTH-001" not in ids


def test_section_and_layer_together() -> None:
    result = _run("--section", "spec 4", "--layer", "profile")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "0 requirements"


def test_only_and_skip_take_ids_prefixes_and_sections() -> None:
    result = _run(
        "--only", "AUTH,TEN", "--skip", "profile 1", "--skip", "AUTH-004", "--format", "ids"
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == ["AUTH-001", "AUTH-002", "AUTH-003"]


def test_json_format_carries_every_field() -> None:
    result = _run("--only", "IDEM-007", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["count"] == 1
    assert doc["catalogue_sha256"] == load_catalogue().sha256
    (entry,) = doc["requirements"]
    assert entry["id"] == "IDEM-007"
    assert entry["section"] == "profile 2"
    assert entry["section_title"] == "Idempotency"
    assert entry["layer"] == "profile"
    assert entry["level"] == "MUST"
    assert "byte for byte" in entry["text"]
    assert "createPayment" in entry["operations"]


def test_an_unknown_section_is_a_clear_error_with_exit_code_2() -> None:
    result = _run("--section", "spec 12")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "error: unknown section 'spec 12': sections are spec 1, spec 2" in result.stderr
    assert "Traceback" not in result.output


def test_an_unknown_selector_is_a_clear_error_with_exit_code_2() -> None:
    result = _run("--only", "IDEMX")
    assert result.exit_code == 2
    assert "error: unknown requirement selector 'IDEMX'" in result.stderr
    assert "Traceback" not in result.output


def test_an_unknown_layer_or_format_is_a_usage_error() -> None:
    assert _run("--layer", "both").exit_code == 2
    assert _run("--format", "csv").exit_code == 2


def test_a_filtered_table_counts_what_it_lists_and_names_the_whole() -> None:
    # issue 17: "--layer profile" was documented as the whole catalogue's count
    result = _run("--layer", "profile")
    assert result.exit_code == 0, result.output
    catalogue = load_catalogue()
    listed = [line for line in result.stdout.splitlines() if line.startswith("│ ")]
    rows = {line.split("│")[1].strip() for line in listed} - {""}
    profile = [r.id for r in catalogue if r.layer == "profile"]
    assert rows == set(profile)
    last_line = result.stdout.strip().splitlines()[-1]
    expected = f"{len(profile)} of {len(catalogue)} requirements listed ({len(profile)} profile)"
    assert last_line == expected
