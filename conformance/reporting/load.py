"""Read a stored results.json back into the ``RunView`` every report format renders.

``payment-conformance report`` re-renders report.html, junit.xml or summary.md from it. The file
is validated against ``results.schema.json`` first, then for what a schema cannot say (check
positions in range, known sections), so an edited or foreign file is refused with a message
instead of rendering a wrong report.

The loader builds the view, not a ``RunResult``: results.json holds texts already redacted and
made printable, and rebuilding them through ``build_view`` would redact, merge equal checks and
recompute commands a second time. What results.json does not keep, and how it is recovered:

- bodies longer than ``json_report.BODY_LIMIT``: their first characters and, in ``truncated``,
  their full length; every other format clips to a smaller limit, so it shows the same text and
  the same "first N of M characters" note;
- whether a body had unprintable bytes escaped: recovered from the ``\\xNN``/``\\uNNNN``
  escapes of the characters ``printable`` escapes (a body that held such an escape as literal
  text gets the "binary" note too, and a body cut in results.json whose escapes all came after
  the cut loses it);
- the report directory summary.md names: the caller says it (``report`` uses the directory of
  the results file).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from conformance.core import untrusted_files
from conformance.core.case_coverage import CaseLog, OperationCaseCoverage
from conformance.core.catalogue import Layer, Section
from conformance.core.diff import Diff
from conformance.core.receiver_counts import ReceiverCounts
from conformance.core.results import Outcome, RateLimitCounts
from conformance.core.untrusted_files import UntrustedFileError
from conformance.core.waivers import WaiverReport
from conformance.reporting import diff, json_report, waivers
from conformance.reporting.view import (
    Body,
    CheckView,
    EvidenceView,
    RequirementView,
    RunView,
    SectionView,
    _anchor,
)

# A results.json of a full run is a few MB (98 failed checks whose bodies all reached
# ``json_report.BODY_LIMIT``: 6 MB); this leaves room for 80 times that and bounds what
# ``report`` and ``verify`` read of a file someone else may have prepared.
MAX_BYTES = 512 * 1024 * 1024
# Bytes do not bound what the parsed document costs: 512 MiB of "{}," would decode into some
# 10 GB of objects. A full run's results.json holds about 40,000 JSON values; 50 times that
# decodes into a few hundred MB at most.
MAX_VALUES = 2_000_000
# The escapes ``core.untrusted.printable`` writes: C0/C1 controls, DEL, surrogate bytes
# (``\x80``-``\xff``), the non-characters U+FFFE/U+FFFF and the bidirectional-text controls.
_ESCAPE = re.compile(
    r"\\x(?:0[0-8bcef]|1[0-9a-f]|7f|[89a-f][0-9a-f])"
    r"|\\u(?:d[89a-f][0-9a-f]{2}|fff[ef]|061c|200[ef]|202[a-e]|206[6-9])"
)


class LoadError(Exception):
    """The file is not a results.json this version can render; the message says why."""


@dataclass(frozen=True)
class StoredBody(Body):
    """A body as results.json holds it: maybe cut, with the length of the whole body."""

    whole_length: int = 0

    @property
    def length(self) -> int:
        return max(self.whole_length, len(self.text))


def read_document(path: Path) -> dict[str, Any]:
    """results.json at ``path`` as a Python object, validated against its schema."""
    if not os.path.lexists(path):
        raise LoadError(f"cannot read {path}: No such file or directory")
    try:
        document = untrusted_files.read_json(path, max_bytes=MAX_BYTES, max_values=MAX_VALUES)
    except UntrustedFileError as exc:
        raise LoadError(str(exc)) from None
    except UnicodeDecodeError:
        raise LoadError(f"{path} is not UTF-8 text, so not a results.json") from None
    except ValueError as exc:
        raise LoadError(f"{path} is not JSON ({exc})") from None
    _check_major_version(path, document)
    validator = jsonschema.Draft202012Validator(json_report.schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise LoadError(
            f"{path} is not a valid results.json of payment-conformance: "
            f"at {where}: {error.message[:300]}"
        )
    loaded: dict[str, Any] = document
    return loaded


def _check_major_version(path: Path, document: object) -> None:
    """Refuse a results.json of another major schema version by name (its layout differs)."""
    version = document.get("schema_version") if isinstance(document, dict) else None
    ours = json_report.SCHEMA_VERSION.split(".")[0]
    if isinstance(version, str) and version.split(".")[0] != ours:
        raise LoadError(
            f"{path} is a results.json of schema version {version[:20]}; this version of "
            f"payment-conformance reads schema {ours}.x"
        )


def load_view(path: Path, *, reports_dir: str | None = None) -> RunView:
    """The report view of the run stored in results.json at ``path``.

    ``reports_dir`` is the directory summary.md names (default: the one holding ``path``).
    """
    document = read_document(path)
    try:
        return view_of(
            document, reports_dir=str(path.parent) if reports_dir is None else reports_dir
        )
    except LoadError as exc:
        raise LoadError(f"{path}: {exc}") from None


def _body(text: str | None, whole_length: int | None) -> Body | None:
    if text is None:
        return None
    escaped = _ESCAPE.search(text) is not None
    return StoredBody(text, escaped, whole_length or len(text))


def _evidence(data: dict[str, Any]) -> EvidenceView:
    truncated = data["truncated"]
    return EvidenceView(
        method=data["method"],
        url=data["url"],
        request_headers=tuple(data["request_headers"].items()),
        request_body=_body(data["request_body"], truncated.get("request_body")),
        status=data["status"],
        response_headers=tuple(data["response_headers"].items()),
        response_body=_body(data["response_body"], truncated.get("response_body")),
        curl=data["curl"],
    )


def _check(index: int, data: dict[str, Any]) -> CheckView:
    return CheckView(
        index=index,
        check_id=data["check_id"],
        family=data["family"],
        requirement_ids=tuple(data["requirement_ids"]),
        outcome=Outcome(data["outcome"]),
        message=data["message"],
        operation_id=data["operation_id"],
        duration_s=data["duration_s"],
        evidence=None if data["evidence"] is None else _evidence(data["evidence"]),
        reason_not_exercised=data["reason_not_exercised"],
    )


def view_of(document: dict[str, Any], *, reports_dir: str) -> RunView:
    """The view of a results.json ``document`` already validated against the schema."""
    checks = tuple(_check(i, c) for i, c in enumerate(document["checks"]))
    sections = {
        s["key"]: Section(s["document"], s["number"], s["title"]) for s in document["sections"]
    }
    for key, section in sections.items():
        if section.key != key:
            raise LoadError(f"section {key!r} has document/number {section.key!r}")
    requirements = []
    for data in document["requirements"]:
        if data["section"] not in sections:
            raise LoadError(
                f"requirement {data['id']} names an unknown section {data['section']!r}"
            )
        if any(i >= len(checks) for i in data["checks"]):
            raise LoadError(f"requirement {data['id']} names a check beyond the {len(checks)}")
        requirements.append(
            RequirementView(
                id=data["id"],
                anchor=_anchor(data["id"]),
                section=sections[data["section"]],
                layer=Layer(data["layer"]),
                level=data["level"],
                text=data["text"],
                operations=tuple(data["operations"]),
                outcome=Outcome(data["outcome"]),
                checks=tuple(checks[i] for i in data["checks"]),
                reason_not_exercised=data["reason_not_exercised"],
                replay=data["replay"],
                waived_by=tuple(data.get("waived_by", ())),
            )
        )
    by_id = {r.id: r for r in requirements}
    section_views = []
    for s in document["sections"]:
        missing = [rid for rid in s["requirements"] if rid not in by_id]
        if missing:
            raise LoadError(f"section {s['key']!r} lists unknown requirements {missing[:5]}")
        section_views.append(
            SectionView(sections[s["key"]], tuple(by_id[rid] for rid in s["requirements"]))
        )
    target = document["target"]
    case_coverage, case_log = _case_coverage(document.get("case_coverage"))
    view = RunView(
        suite_version=document["suite_version"],
        contract_sha256=document["contract_sha256"],
        profile_name=document["profile"]["name"],
        profile_sha256=document["profile"]["sha256"],
        seed=document["seed"],
        base_url=target["base_url"],
        embedded=target["embedded"],
        fault=target["fault"],
        started_at=document["started_at"],
        duration_s=document["duration_s"],
        requests_sent=document["requests_sent"],
        options=tuple(document["options"].items()),
        verdict=document["verdict"],
        exit_code=document["exit_code"],
        requirements=tuple(requirements),
        sections=tuple(section_views),
        checks=checks,
        reports_dir=reports_dir,
        incomplete_reason=document.get("incomplete_reason"),
        first_failure_s=document.get("first_failure_s"),
        rerun=document["rerun"],
        replay_note=document["replay_note"],
        rate_limits=RateLimitCounts.from_dict(document.get("rate_limits") or {}),  # 1.3
        outside_selection=document.get("outside_selection", 0),  # 1.4
        statuses_seen={  # 1.4
            op: {int(status): answers for status, answers in counts.items()}
            for op, counts in document.get("statuses_seen", {}).items()
        },
        webhook_receiver=_receiver_counts(document.get("webhook_receiver")),  # 1.4
        waivers=_waivers(document.get("waivers")),
        baseline=_baseline(document.get("baseline")),
        case_coverage=case_coverage,
        case_log=case_log,
    )
    _check_waived_by(view)
    if view.verdict_summary != document["verdict_summary"]:
        raise LoadError(
            f"verdict_summary {document['verdict_summary']!r} does not match the requirements "
            f"it lists ({view.verdict_summary!r})"
        )
    return view


def _waivers(value: Any) -> WaiverReport | None:
    if not isinstance(value, dict):
        return None
    try:
        return waivers.from_dict(value)
    except ValueError as exc:  # a date the schema's pattern lets through: 2026-13-45
        raise LoadError(f"waivers: {exc}") from None


def _check_waived_by(view: RunView) -> None:
    count = 0 if view.waivers is None else len(view.waivers.results)
    for requirement in view.requirements:
        if any(i >= count for i in requirement.waived_by):
            raise LoadError(f"requirement {requirement.id} names a waiver beyond the {count}")


def _baseline(value: Any) -> Diff | None:
    if value is None:
        return None
    try:
        return diff.from_dict(value)
    except ValueError as exc:
        raise LoadError(str(exc)) from None


def _case_coverage(value: Any) -> tuple[tuple[OperationCaseCoverage, ...], CaseLog | None]:
    """``case_coverage`` and ``case_log`` of the view, as stored (a results.json written before
    the field existed, or of a run that logged no constraint case, has none)."""
    if not isinstance(value, dict):
        return (), None
    operations = tuple(OperationCaseCoverage.from_dict(o) for o in value["operations"])
    if "applicable" not in value:  # summaries alone (the schema wants all three or none)
        return operations, None
    log = CaseLog.from_dict(value)
    if operations != log.by_operation():
        raise LoadError("case_coverage: its operations do not match the triples it lists")
    return operations, log


def _receiver_counts(value: Any) -> ReceiverCounts | None:
    return ReceiverCounts.from_dict(value) if isinstance(value, dict) else None
