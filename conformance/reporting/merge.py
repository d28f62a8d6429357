"""``merge``: the report directories of the shards of one run (``run --shard i/N``) as one run.

Each directory's results.json is read (and validated) as ``report`` reads it, and the directory
checked against its manifest (and signature, if signed) as ``verify`` checks it. Given a public
key (``merge --public-key``, or the public half of ``--sign-key``), every shard must be signed
with it: an unsigned shard, or one signed with another key, is a ``MergeError``. Without one,
unsigned shards are merged and the merged run names them (``UNSIGNED_SHARDS``) in every report
and in its manifest. The shards must
have run the same suite version (this one: it folds with its own catalogue), contract, profile,
seed, target and options (but those of one machine: ``PER_MACHINE_OPTIONS``), and together every
test of their plan exactly once (``core.shards``): a missing or repeated shard, or shards of
different plans, is a ``MergeError`` naming it. Their checks are then folded per requirement
again, as one unsharded run folds its checks, so the verdict and every requirement's outcome are
those of a run of all the checks.

What the merged run reports of the shards together: requests, rate limits, statuses and webhook
receiver counts added up; the constraint-case triples united (applicable and sent: one
operation's cases may come from several shards) and their cases added up; the earliest start;
the longest shard's duration (the wall time of shards run at the same time); the earliest first
failure; every shard's reason for not finishing. What results.json no longer holds cannot be
merged back: the full length of a body cut at ``json_report.BODY_LIMIT`` (the merged report says
the cut length) and the results left out as outside ``--only``/``--skip`` (not counted in the
merged report).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from conformance import __version__
from conformance.core.case_coverage import CaseLog, OperationCaseCoverage, logged
from conformance.core.catalogue import Catalogue
from conformance.core.diff import RunOutcomes, compare, outcomes_of, target_name
from conformance.core.evidence import check_from_dict
from conformance.core.receiver_counts import PathDrops, ReceiverCounts
from conformance.core.results import (
    RateLimitCounts,
    RunResult,
    Target,
    fold,
    merge_statuses,
)
from conformance.core.shards import ShardPlan, plan_from_dict, plan_sha256
from conformance.core.waivers import WaiverFile, apply_waivers
from conformance.reporting import json_report, signing
from conformance.reporting.load import LoadError, read_document
from conformance.reporting.verification import CannotVerify, verify_directory

# Options that may differ between the machines of one run: how many processes each has, how
# the server reaches its own webhook receiver, and which shard it is.
PER_MACHINE_OPTIONS = frozenset({"shard", "workers", "workers_auto", "webhook_url", "webhook_bind"})
# The merged run's options naming the shards merged without a signature ("1/4, 3/4"), and the
# fingerprint of the key every shard's signature was verified with.
UNSIGNED_SHARDS = "unsigned_shards"
SHARDS_SIGNED_BY = "shards_signed_by"


class MergeError(Exception):
    """The directories are not the complete shards of one run; the message says why."""


@dataclass(frozen=True)
class ShardRun:
    """One shard's report directory: its results.json and its plan."""

    directory: Path
    document: dict[str, Any]
    plan: ShardPlan
    signed: bool = False  # a manifest.sig that verifies

    @property
    def name(self) -> str:
        return f"shard {self.plan.shard} ({self.directory})"


def load_shard(directory: Path, public_key: Ed25519PublicKey | None = None) -> ShardRun:
    """The shard whose reports ``directory`` holds; ``MergeError`` when it holds none, or (with
    ``public_key``) when they are not signed with that key."""
    if not directory.is_dir():
        raise MergeError(f"{directory} is not a directory of reports")
    try:
        document = read_document(directory / json_report.FILENAME)
        verification = verify_directory(directory, public_key, allow_unsigned=public_key is None)
    except (LoadError, CannotVerify) as exc:
        raise MergeError(str(exc)) from None
    if public_key is not None and not verification.signed:
        raise MergeError(
            f"{directory}: the shard is not signed (no manifest.sig): nothing proves its "
            f"results are those it wrote, and merge takes only shards signed with key "
            f"{signing.fingerprint(public_key)}"
        )
    if not verification.verified:
        raise MergeError(
            f"{directory}: the reports are not those the shard wrote: {verification.problems[0]}"
        )
    if "shard" not in document:
        raise MergeError(f"{directory} holds the reports of a run without --shard")
    try:
        plan = plan_from_dict(document["shard"])
    except ValueError as exc:
        raise MergeError(f"{directory}: {exc}") from None
    return ShardRun(directory, document, plan, verification.signature_valid)


def _target(document: dict[str, Any]) -> str:
    """What makes two targets the same server (``core.diff.target_name``), as words."""
    target = document["target"]
    return target_name(target["base_url"], target["embedded"], target["fault"])


def _profile(document: dict[str, Any]) -> str:
    return f"{document['profile']['name']} (sha256 {document['profile']['sha256'][:12]})"


def _options(document: dict[str, Any]) -> dict[str, str]:
    options: dict[str, str] = document["options"]
    return {k: v for k, v in options.items() if k not in PER_MACHINE_OPTIONS}


def check_same_run(shards: Sequence[ShardRun]) -> None:
    """``MergeError`` unless every shard ran what the first did, with this suite version."""
    first = shards[0]
    if first.document["suite_version"] != __version__:
        raise MergeError(
            f"{first.name} ran suite {first.document['suite_version']}, this is {__version__}: "
            "merge with the version the shards ran"
        )
    aspects = {
        "suite version": lambda d: d["suite_version"],
        "contract": lambda d: d["contract_sha256"],
        "profile": _profile,
        "seed": lambda d: str(d["seed"]),
        "target": _target,
    }
    for shard in shards[1:]:
        for aspect, of in aspects.items():
            if of(shard.document) != of(first.document):
                raise MergeError(
                    f"{shard.name} and {first.name} ran a different {aspect}: "
                    f"{of(shard.document)} and {of(first.document)}"
                )
        mine, theirs = _options(shard.document), _options(first.document)
        for option in sorted(set(mine) | set(theirs)):
            if mine.get(option) != theirs.get(option):
                raise MergeError(
                    f"{shard.name} and {first.name} ran with a different option {option}: "
                    f"{mine.get(option, '(not given)')} and {theirs.get(option, '(not given)')}"
                )


def check_complete(shards: Sequence[ShardRun]) -> None:
    """``MergeError`` unless the shards are each part of one plan exactly once."""
    totals = sorted({s.plan.shard.total for s in shards})
    if len(totals) > 1:
        raise MergeError(f"the shards split the run into different numbers of parts: {totals}")
    total = totals[0]
    by_index: dict[int, list[ShardRun]] = {}
    for shard in shards:
        by_index.setdefault(shard.plan.shard.index, []).append(shard)
    for index, given in sorted(by_index.items()):
        if len(given) > 1:
            where = ", ".join(str(s.directory) for s in given)
            raise MergeError(f"shard {index}/{total} is given {len(given)} times: {where}")
    missing = [f"{i}/{total}" for i in range(1, total + 1) if i not in by_index]
    if missing:
        which = f"shards {', '.join(missing)} are" if len(missing) > 1 else f"shard {missing[0]} is"
        raise MergeError(f"{which} missing: merge needs all {total}")
    first = shards[0]
    for shard in shards[1:]:
        if shard.plan.plan_sha256 != first.plan.plan_sha256:
            raise MergeError(
                f"{shard.name} and {first.name} are parts of different plans "
                "(other tests collected, or another split)"
            )
    parts = [(test, s.plan.shard.index) for s in shards for test in s.plan.tests]
    twice = sorted(test for test, times in Counter(t for t, _ in parts).items() if times > 1)
    if twice:
        raise MergeError(f"the shards ran these tests more than once: {', '.join(twice[:5])}")
    if len(parts) != first.plan.plan_tests or plan_sha256(parts) != first.plan.plan_sha256:
        raise MergeError(
            f"the shards ran {len(parts)} tests, not the {first.plan.plan_tests} of their plan"
        )


def _receiver(documents: Sequence[dict[str, Any]]) -> ReceiverCounts | None:
    counts = [
        ReceiverCounts.from_dict(d["webhook_receiver"])
        for d in documents
        if d.get("webhook_receiver")
    ]
    if not counts:
        return None
    drops: dict[str, PathDrops] = {}
    for count in counts:
        for drop in count.drops:
            seen = drops.get(drop.path, PathDrops(drop.path))
            drops[drop.path] = PathDrops(
                drop.path,
                seen.deliveries + drop.deliveries,
                seen.bytes + drop.bytes,
                seen.refused + drop.refused,
            )
    return ReceiverCounts(
        sum(c.kept for c in counts), sum(c.kept_bytes for c in counts), tuple(drops.values())
    )


def _case_coverage(
    shards: Sequence[ShardRun],
) -> tuple[CaseLog | None, tuple[OperationCaseCoverage, ...]]:
    """The shards' constraint cases united: their triples as sets, their cases added up. A
    shard whose results.json keeps summaries without triples (never one of ``run``) cannot be
    united: its summary of an operation is taken when no other shard has that operation, and
    otherwise the merge is refused; the merged run then keeps summaries alone too."""
    log = CaseLog()
    alone: dict[str, tuple[ShardRun, OperationCaseCoverage]] = {}
    for shard in shards:
        value = shard.document.get("case_coverage")
        if not isinstance(value, dict):
            continue
        if "applicable" in value:
            log.merge(CaseLog.from_dict(value))
            continue
        for data in value["operations"]:
            summary = OperationCaseCoverage.from_dict(data)
            if summary.operation_id in alone:
                raise MergeError(_cannot_unite(summary.operation_id, shard))
            alone[summary.operation_id] = (shard, summary)
    united = {c.operation_id: c for c in log.by_operation()}
    for operation_id, (shard, summary) in alone.items():
        if operation_id in united:
            raise MergeError(_cannot_unite(operation_id, shard))
        united[operation_id] = summary
    return logged(log) if not alone else None, tuple(united[op] for op in sorted(united))


def _cannot_unite(operation_id: str, shard: ShardRun) -> str:
    return (
        f"{shard.name} keeps the constraint-case summary of {operation_id} without its triples, "
        "and another shard has that operation too: their cases cannot be united"
    )


def _selectors(options: dict[str, str], name: str) -> tuple[str, ...]:
    return tuple(filter(None, options.get(name, "").split(",")))


def merged_result(shards: Sequence[ShardRun], catalogue: Catalogue) -> RunResult:
    """One ``RunResult`` of the shards (checked with ``check_same_run``, ``check_complete``)."""
    shards = sorted(shards, key=lambda s: s.plan.shard.index)
    documents = [s.document for s in shards]
    first = documents[0]
    options = _options(first)
    options["shards"] = str(len(shards))
    unsigned = [str(s.plan.shard) for s in shards if not s.signed]
    if unsigned:
        options[UNSIGNED_SHARDS] = ", ".join(unsigned)
    selected = catalogue.select(_selectors(options, "only"), _selectors(options, "skip"))
    outside = frozenset(r.id for r in catalogue.requirements) - {r.id for r in selected}
    checks = [check_from_dict(c) for d in documents for c in d["checks"]]
    rate_limits = RateLimitCounts()
    statuses: dict[str, dict[int, int]] = {}
    for document in documents:
        rate_limits += RateLimitCounts.from_dict(document.get("rate_limits", {}))
        seen = document.get("statuses_seen", {})
        merge_statuses(statuses, {op: {int(s): n for s, n in c.items()} for op, c in seen.items()})
    reasons = [
        f"shard {s.plan.shard}: {s.document['incomplete_reason']}"
        for s in shards
        if s.document["incomplete_reason"] is not None
    ]
    failures = [d["first_failure_s"] for d in documents if d["first_failure_s"] is not None]
    case_log, case_coverage = _case_coverage(shards)
    target = first["target"]
    return RunResult(
        suite_version=first["suite_version"],
        contract_sha256=first["contract_sha256"],
        profile_name=first["profile"]["name"],
        profile_sha256=first["profile"]["sha256"],
        seed=first["seed"],
        target=Target(target["base_url"], target["embedded"], target["fault"]),
        started_at=min(d["started_at"] for d in documents),
        duration_s=max(d["duration_s"] for d in documents),
        requests_sent=sum(d["requests_sent"] for d in documents),
        requirements=fold(list(selected), checks),
        checks=tuple(checks),
        options=options,
        incomplete_reason="; ".join(reasons) if reasons else None,
        first_failure_s=min(failures) if failures else None,
        rate_limits=rate_limits,
        outside_ids=outside,
        statuses_seen=statuses,
        webhook_receiver=_receiver(documents),
        case_coverage=case_coverage,
        case_log=case_log,
    )


def merge_shards(
    directories: Sequence[Path],
    catalogue: Catalogue,
    public_key: Ed25519PublicKey | None = None,
) -> RunResult:
    """The run the shards in ``directories`` make together; ``MergeError`` when they do not,
    or (with ``public_key``) when one is not signed with that key."""
    if not directories:
        raise MergeError("give the report directory of every shard")
    shards = [load_shard(d, public_key) for d in directories]
    check_same_run(shards)
    check_complete(shards)
    result = merged_result(shards, catalogue)
    if public_key is None:
        return result
    options = {**result.options, SHARDS_SIGNED_BY: signing.fingerprint(public_key)}
    return replace(result, options=options)


def gated(
    result: RunResult,
    waivers: WaiverFile | None,
    strict_waivers: bool,
    baseline: RunOutcomes | None,
    today: date,
) -> RunResult:
    """The merged run with ``merge --waivers`` and ``--baseline`` applied, as ``run`` applies
    them to an unsharded run: a shard sees only its part, so a waiver or a baseline is judged
    on the whole run, once. ``today`` (UTC) judges a waiver's expiry: the merge's own clock,
    never a time a shard's results.json states (anyone could have written it)."""
    options = dict(result.options)
    waived = None
    requirements = result.requirements
    if waivers is not None:
        requirements, waived = apply_waivers(requirements, waivers, today, strict=strict_waivers)
        options["waivers"] = waivers.path
        if strict_waivers:
            options["strict_waivers"] = "true"
    if baseline is not None:
        options["baseline"] = baseline.source
    gated_result = replace(result, requirements=requirements, waivers=waived, options=options)
    if baseline is not None:
        gated_result = replace(gated_result, baseline=compare(baseline, outcomes_of(gated_result)))
    return gated_result
