"""``payment-conformance contract`` writes the effective contract of a profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from openapi_spec_validator import validate

from conformance.cli import main
from conformance.core.contract import effective_contract
from conformance.core.openapi import HTTP_METHODS
from conformance.core.profile import load_profile, resolve_profile_path


def _run(*args: str) -> Any:
    return CliRunner().invoke(main, ["contract", *args])


def _operation_count(doc: dict[str, Any]) -> int:
    return sum(1 for item in doc["paths"].values() for m in item if m in HTTP_METHODS)


def test_default_prints_the_yaml_effective_contract_of_the_default_profile() -> None:
    result = _run()
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(result.stdout)
    validate(doc)
    assert _operation_count(doc) == 20
    assert doc == effective_contract(load_profile())
    assert doc["info"]["x-profile"]["name"] == "default"


def test_json_format() -> None:
    result = _run("--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["paths"]["/v1/payments"]["post"]["responses"]["201"]
    assert _operation_count(doc) == 20


def test_output_file(tmp_path: Path) -> None:
    target = tmp_path / "contract.json"
    result = _run("--format", "json", "-o", str(target))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert str(target) in result.stderr
    assert json.loads(target.read_text(encoding="utf-8"))["info"]["x-profile"]["name"] == "default"


def test_profile_given_as_a_path(tmp_path: Path) -> None:
    text = resolve_profile_path("default").read_text(encoding="utf-8")
    custom = tmp_path / "mine.toml"
    custom.write_text(text.replace('name = "default"', 'name = "mine"', 1), encoding="utf-8")
    result = _run("--profile", str(custom))
    assert result.exit_code == 0, result.output
    x_profile = yaml.safe_load(result.stdout)["info"]["x-profile"]
    assert x_profile["name"] == "mine"
    assert x_profile["sha256"] == load_profile(custom).sha256


def test_an_invalid_profile_names_the_key_and_exits_2(tmp_path: Path) -> None:
    text = resolve_profile_path("default").read_text(encoding="utf-8")
    broken = tmp_path / "broken.toml"
    broken.write_text(text.replace("clock_window_secs = 300", 'clock_window_secs = "300"'))
    result = _run("--profile", str(broken))
    assert result.exit_code == 2
    assert "auth.clock_window_secs" in result.stderr
    assert "Traceback" not in result.output


def test_an_unknown_profile_name_exits_2() -> None:
    result = _run("--profile", "nonexistent")
    assert result.exit_code == 2
    assert "no profile named 'nonexistent'" in result.stderr
    assert result.stdout == ""


def test_an_unwritable_output_exits_2(tmp_path: Path) -> None:
    result = _run("-o", str(tmp_path / "missing-dir" / "contract.yaml"))
    assert result.exit_code == 2
    assert "cannot write" in result.stderr


def test_a_bad_format_is_a_usage_error() -> None:
    result = _run("--format", "xml")
    assert result.exit_code == 2
    assert "xml" in result.output
