"""A run's requirement outcomes read back from its results.json, for ``core.diff.compare``.

The file is validated as ``report`` validates it (``load.read_document``), so a foreign or
edited file, or one of another major schema version, is refused with a message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.core.diff import RunOutcomes, target_name
from conformance.core.results import Outcome
from conformance.reporting.load import read_document

RESULTS_FILENAME = "results.json"


def results_path(path: Path) -> Path:
    """``path`` itself, or the results.json inside it when it is a report directory."""
    return path / RESULTS_FILENAME if path.is_dir() else path


def _target(target: dict[str, Any]) -> str:
    return target_name(target["base_url"], target["embedded"], target["fault"])


def read_outcomes(path: Path) -> RunOutcomes:
    """The outcomes of the run stored at ``path`` (a results.json or its report directory);
    ``LoadError`` says why a file cannot be used."""
    file = results_path(path)
    document = read_document(file)
    validation = document["options"].get("mode") == "validate"
    return RunOutcomes(
        source=str(path),
        suite_version=document["suite_version"],
        contract_sha256=document["contract_sha256"],
        profile_name=document["profile"]["name"],
        profile_sha256=document["profile"]["sha256"],
        started_at=document["started_at"],
        verdict=document["verdict"],
        outcomes={r["id"]: Outcome(r["outcome"]) for r in document["requirements"]},
        seed=None if validation else document["seed"],
        target=None if validation else _target(document["target"]),
    )
