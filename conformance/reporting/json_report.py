"""results.json: the whole run, machine-readable, described by ``results.schema.json``.

Checks are listed once, in ``checks``; a requirement names its checks by their position in that
list (a check may cover several requirements). Evidence bodies longer than ``BODY_LIMIT``
characters are cut, and ``truncated`` gives the full length of each cut body.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.core.resources import package_data
from conformance.reporting import diff, waivers
from conformance.reporting.view import (
    Body,
    CheckView,
    EvidenceView,
    RequirementView,
    RunView,
    SectionView,
    clip_body,
)

# 1.1: verdict_summary, requirements_exercised, rerun, replay_note; 1.2: first_failure_s;
# 1.3: rate_limits; 1.4: counts.layers "contract" (was "spec"), outside_selection, statuses_seen,
# webhook_receiver; next: waivers, requirements[].waived_by, outcome "waived", counts.waived,
# case_coverage
SCHEMA_VERSION = "1.4"
BODY_LIMIT = 65_536
FILENAME = "results.json"
SCHEMA_FILENAME = "results.schema.json"


def schema() -> dict[str, Any]:
    """The JSON Schema of results.json."""
    text = package_data("reporting", SCHEMA_FILENAME).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _body(body: Body | None, name: str, truncated: dict[str, int]) -> str | None:
    if body is None:
        return None
    clipped = clip_body(body, BODY_LIMIT)
    if clipped.truncated:
        truncated[name] = clipped.length
    return clipped.text


def _evidence(evidence: EvidenceView) -> dict[str, Any]:
    truncated: dict[str, int] = {}
    return {
        "method": evidence.method,
        "url": evidence.url,
        "request_headers": dict(evidence.request_headers),
        "request_body": _body(evidence.request_body, "request_body", truncated),
        "status": evidence.status,
        "response_headers": dict(evidence.response_headers),
        "response_body": _body(evidence.response_body, "response_body", truncated),
        "curl": evidence.curl,
        "truncated": truncated,
    }


def _check(check: CheckView) -> dict[str, Any]:
    return {
        "check_id": check.check_id,
        "family": check.family,
        "requirement_ids": list(check.requirement_ids),
        "outcome": check.outcome.value,
        "message": check.message,
        "operation_id": check.operation_id,
        "duration_s": round(check.duration_s, 6),
        "reason_not_exercised": check.reason_not_exercised,
        "evidence": None if check.evidence is None else _evidence(check.evidence),
    }


def _requirement(requirement: RequirementView) -> dict[str, Any]:
    return {
        "id": requirement.id,
        "section": requirement.section.key,
        "layer": requirement.layer.value,
        "level": requirement.level,
        "text": requirement.text,
        "operations": list(requirement.operations),
        "outcome": requirement.outcome.value,
        "reason_not_exercised": requirement.reason_not_exercised,
        "replay": requirement.replay,
        "checks": [c.index for c in requirement.checks],
        **({"waived_by": list(requirement.waived_by)} if requirement.waived_by else {}),
    }


def _section(section: SectionView) -> dict[str, Any]:
    return {
        "key": section.key,
        "document": section.section.document,
        "number": section.section.number,
        "title": section.title,
        "counts": section.counts.as_dict(),
        "requirements": [r.id for r in section.requirements],
    }


def document(view: RunView) -> dict[str, Any]:
    """results.json as a Python object."""
    return {
        "schema_version": SCHEMA_VERSION,
        "suite_version": view.suite_version,
        "contract_sha256": view.contract_sha256,
        "profile": {"name": view.profile_name, "sha256": view.profile_sha256},
        "seed": view.seed,
        "target": {"base_url": view.base_url, "embedded": view.embedded, "fault": view.fault},
        "started_at": view.started_at,
        "duration_s": round(view.duration_s, 6),
        "requests_sent": view.requests_sent,
        "options": dict(view.options),
        "verdict": view.verdict,
        "verdict_summary": view.verdict_summary,
        "requirements_exercised": view.exercised,
        "exit_code": view.exit_code,
        "incomplete_reason": view.incomplete_reason,
        "first_failure_s": view.first_failure_s,
        "warnings": list(view.warnings),
        "rate_limits": view.rate_limits.as_dict(),
        "outside_selection": view.outside_selection,
        "statuses_seen": {
            op: {str(status): answers for status, answers in counts.items()}
            for op, counts in view.statuses_seen.items()
        },
        "webhook_receiver": (
            None if view.webhook_receiver is None else view.webhook_receiver.as_dict()
        ),
        **_case_coverage(view),
        "counts": {
            "requirements": view.counts.as_dict(),
            "checks": view.check_counts.as_dict(),
            "layers": {name: counts.as_dict() for name, counts in view.layers},
        },
        **({"waivers": waivers.as_dict(view.waivers)} if view.waivers is not None else {}),
        "rerun": view.rerun,
        "replay_note": view.replay_note,
        **({} if view.baseline is None else {"baseline": diff.as_dict(view.baseline)}),
        "sections": [_section(s) for s in view.sections],
        "requirements": [_requirement(r) for r in view.requirements],
        "checks": [_check(c) for c in view.checks],
    }


def _case_coverage(view: RunView) -> dict[str, Any]:
    """``case_coverage``: the per-operation summaries and the triples behind them (applicable,
    sent, cases per operation), so that ``merge`` unions the shards' sets; absent when no test
    logged a constraint case. A result built with summaries alone (no ``case_log``: never one
    of ``run``) keeps them alone."""
    if view.case_log is None and not view.case_coverage:
        return {}
    triples = {} if view.case_log is None else view.case_log.to_dict()
    return {"case_coverage": {"operations": [c.to_dict() for c in view.case_coverage], **triples}}


def _with_shard(view: RunView, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the shard's plan of a ``run --shard`` (an unsharded run has none)."""
    return data if view.shard is None else {**data, "shard": view.shard}


def render(view: RunView) -> str:
    return json.dumps(_with_shard(view, document(view)), indent=2, ensure_ascii=False) + "\n"
