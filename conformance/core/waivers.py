"""Waivers (``run --waivers FILE``): known deviations an implementer declared, and what each did.

The file is TOML (docs/waivers.md): one ``[[waiver]]`` table per entry, naming a requirement id
(optionally an operation id and a check id), a reason and an expiry date. ``load_waivers``
refuses a malformed file before anything runs; ``apply_waivers`` turns the failed requirements
whose every failing check a live waiver names into ``Outcome.WAIVED`` and says, per waiver, what
it covered, whether it had expired, or that it covered nothing (stale).

A waiver is live through its expiry date (inclusive); "today" is the UTC date the run started.
A waiver never touches an unfinished run: the engine ends those incomplete (exit 2) whatever
the requirements say.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Any

from conformance.core import tomlsafe, untrusted_files
from conformance.core.results import CheckResult, Outcome, RequirementResult

# A waivers file lists a few dozen entries; this bounds what a wrong path (a log, an image) costs.
MAX_BYTES = 1024 * 1024
TABLE = "waiver"
KEYS = {"requirement", "operation", "check", "reason", "expires"}
REQUIRED = ("requirement", "reason", "expires")


class WaiverError(Exception):
    """The waivers file cannot be used; the message names the file, the entry and the problem."""


class WaiverState(StrEnum):
    APPLIED = "applied"  # live, and it covered at least one failing check
    EXPIRED = "expired"  # past its expiry date: it waived nothing
    STALE = "stale"  # live, but no failing check of this run was one it names


@dataclass(frozen=True)
class Waiver:
    requirement_id: str
    reason: str
    expires: date
    operation_id: str | None = None
    check_id: str | None = None

    @property
    def label(self) -> str:
        """ "AUTH-003", "AUTH-003 on createPayment", "AUTH-003 check C on createPayment"."""
        text = self.requirement_id
        if self.check_id is not None:
            text += f" check {self.check_id}"
        if self.operation_id is not None:
            text += f" on {self.operation_id}"
        return text

    def names(self, requirement_id: str, check: CheckResult) -> bool:
        """Whether this waiver names ``check``'s failure of requirement ``requirement_id``."""
        return (
            requirement_id == self.requirement_id
            and self.operation_id in (None, check.operation_id)
            and self.check_id in (None, check.check_id)
        )

    def expired_on(self, today: date) -> bool:
        return today > self.expires


@dataclass(frozen=True)
class Covered:
    """One failing check of one requirement a waiver named."""

    requirement_id: str
    check_id: str
    operation_id: str | None

    def describe(self) -> str:
        where = f" on {self.operation_id}" if self.operation_id else ""
        return f"{self.requirement_id}: {self.check_id}{where}"


@dataclass(frozen=True)
class WaiverResult:
    """What one waiver did in a run."""

    waiver: Waiver
    state: WaiverState
    covered: tuple[Covered, ...] = ()  # failing checks it named (an expired one: would have)
    waived: tuple[str, ...] = ()  # requirement ids it turned from failed into waived
    note: str = ""  # why it is stale or expired, or why its requirement failed all the same

    @property
    def covered_label(self) -> str:
        """How the reports introduce ``covered``: an expired waiver covered nothing."""
        return "named, not waived" if self.state is WaiverState.EXPIRED else "covered"

    def describe(self) -> str:
        """One line: "AUTH-003 (expires 2026-12-31): applied: waived AUTH-003 (2 checks)"."""
        head = f"{self.waiver.label} (expires {self.waiver.expires.isoformat()}): {self.state}"
        if self.state is WaiverState.APPLIED:
            checks = len(self.covered)
            head += f": covered {checks} failing check{'' if checks == 1 else 's'}"
        return f"{head}; {self.note}" if self.note else head


@dataclass(frozen=True)
class WaiverFile:
    """A loaded waivers file: where it was, its SHA-256 and its entries in file order."""

    path: str
    sha256: str
    waivers: tuple[Waiver, ...]


@dataclass(frozen=True)
class WaiverReport:
    """The waivers of a run, as every report shows them (``RunResult.waivers``)."""

    file: str
    sha256: str
    strict: bool  # run --strict-waivers: a stale waiver fails the run
    results: tuple[WaiverResult, ...]

    @property
    def used(self) -> int:
        """Waivers that turned a failed requirement into a waived one (the verdict's N)."""
        return sum(1 for r in self.results if r.waived)

    @property
    def stale(self) -> tuple[WaiverResult, ...]:
        return tuple(r for r in self.results if r.state is WaiverState.STALE)

    @property
    def expired(self) -> tuple[WaiverResult, ...]:
        return tuple(r for r in self.results if r.state is WaiverState.EXPIRED)

    @property
    def strict_failure(self) -> str | None:
        """Why ``--strict-waivers`` fails the run (None: it does not)."""
        stale = self.stale
        if not self.strict or not stale:
            return None
        named = "; ".join(f"{r.waiver.label}: {r.note}" for r in stale)
        count = f"{len(stale)} stale waiver{'' if len(stale) == 1 else 's'}"
        return f"--strict-waivers: {count} ({named})"


def load_waivers(
    path: Path, requirement_ids: Collection[str], operation_ids: Collection[str] = ()
) -> WaiverFile:
    """The waivers of the TOML file at ``path``; raises ``WaiverError`` on any problem.

    ``requirement_ids`` are the catalogue's; ``operation_ids`` the contract's (empty: any
    operation id is taken).
    """
    try:
        data = untrusted_files.read_bytes(path, max_bytes=MAX_BYTES)
    except untrusted_files.UntrustedFileError as exc:
        raise WaiverError(f"cannot read the waivers file {exc}") from None
    try:
        document = tomlsafe.loads(data.decode("utf-8"))
    except tomlsafe.TomlTooComplex as exc:
        raise WaiverError(f"the waivers file {path} is refused unparsed: {exc}") from None
    except UnicodeDecodeError:
        raise WaiverError(f"the waivers file {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise WaiverError(f"the waivers file {path} is not valid TOML: {exc}") from None
    waivers = _entries(document, requirement_ids, operation_ids)
    seen: dict[tuple[str, str | None, str | None], int] = {}
    for number, waiver in enumerate(waivers, start=1):
        key = (waiver.requirement_id, waiver.operation_id, waiver.check_id)
        if key in seen:
            raise WaiverError(
                f"{path}: waiver {number} repeats waiver {seen[key]} ({waiver.label}): "
                "give each requirement, operation and check one entry"
            )
        seen[key] = number
    return WaiverFile(str(path), hashlib.sha256(data).hexdigest(), tuple(waivers))


def _entries(
    document: dict[str, Any], requirement_ids: Collection[str], operation_ids: Collection[str]
) -> list[Waiver]:
    unknown = sorted(set(document) - {TABLE})
    if unknown:
        raise WaiverError(
            f"the waivers file has unknown top-level key(s) {', '.join(unknown)}: "
            f"each waiver is a [[{TABLE}]] table"
        )
    entries = document.get(TABLE, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise WaiverError(f"the waivers file's '{TABLE}' must be [[{TABLE}]] tables")
    return [
        _waiver(number, entry, requirement_ids, operation_ids)
        for number, entry in enumerate(entries, start=1)
    ]


def _waiver(
    number: int,
    entry: dict[str, Any],
    requirement_ids: Collection[str],
    operation_ids: Collection[str],
) -> Waiver:
    where = f"waiver {number}"
    unknown = sorted(set(entry) - KEYS)
    if unknown:
        raise WaiverError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})"
        )
    for key in REQUIRED:
        if key not in entry:
            raise WaiverError(f"{where}: no {key}")
    requirement_id = _text(where, entry, "requirement")
    where = f"waiver {number} ({requirement_id})"
    if requirement_id not in requirement_ids:
        raise WaiverError(f"{where}: unknown requirement id {requirement_id!r}")
    operation_id = _text(where, entry, "operation") if "operation" in entry else None
    if operation_id is not None and operation_ids and operation_id not in operation_ids:
        raise WaiverError(f"{where}: unknown operation id {operation_id!r}")
    check_id = _text(where, entry, "check") if "check" in entry else None
    return Waiver(
        requirement_id=requirement_id,
        reason=_text(where, entry, "reason"),
        expires=_date(where, entry["expires"]),
        operation_id=operation_id,
        check_id=check_id,
    )


def _text(where: str, entry: dict[str, Any], key: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise WaiverError(f"{where}: {key} must be a non-empty string")
    return value.strip()


def _date(where: str, value: object) -> date:
    """A TOML date (``expires = 2026-12-31``) or the same as a string; never a date-time."""
    if isinstance(value, date) and type(value) is date:
        return value
    if isinstance(value, str):
        try:
            if len(value) == 10:
                return date.fromisoformat(value)
        except ValueError:
            pass
    raise WaiverError(f"{where}: expires must be a date written YYYY-MM-DD, not {value!r}")


def apply_waivers(
    results: Iterable[RequirementResult],
    waivers: WaiverFile,
    today: date,
    *,
    strict: bool = False,
) -> tuple[tuple[RequirementResult, ...], WaiverReport]:
    """``results`` with each failed requirement whose every failing check a live waiver names
    turned into ``Outcome.WAIVED`` (``waived_by``: those waivers' positions), and what each
    waiver did. An expired waiver waives nothing; a requirement with one failing check no live
    waiver names stays failed."""
    results = tuple(results)
    live = [not w.expired_on(today) for w in waivers.waivers]
    covered: list[dict[Covered, None]] = [{} for _ in waivers.waivers]
    waived: list[list[str]] = [[] for _ in waivers.waivers]
    folded = []
    for result in results:
        if result.outcome is not Outcome.FAILED:
            folded.append(result)
            continue
        used: set[int] = set()
        uncovered = 0
        for check in result.failures:
            naming = [
                i for i, w in enumerate(waivers.waivers) if w.names(result.requirement.id, check)
            ]
            for i in naming:
                covered[i][Covered(result.requirement.id, check.check_id, check.operation_id)] = (
                    None
                )
            live_naming = [i for i in naming if live[i]]
            used.update(live_naming)
            uncovered += not live_naming
        if used and not uncovered:
            for i in used:
                waived[i].append(result.requirement.id)
            folded.append(replace(result, outcome=Outcome.WAIVED, waived_by=tuple(sorted(used))))
        else:
            folded.append(result)
    outcomes = {r.requirement.id: r.outcome for r in results}
    report = tuple(
        _result(w, live[i], tuple(covered[i]), tuple(waived[i]), outcomes)
        for i, w in enumerate(waivers.waivers)
    )
    return tuple(folded), WaiverReport(waivers.path, waivers.sha256, strict, report)


def _result(
    waiver: Waiver,
    live: bool,
    covered: tuple[Covered, ...],
    waived: tuple[str, ...],
    outcomes: dict[str, Outcome],
) -> WaiverResult:
    expires = waiver.expires.isoformat()
    if not live:
        if covered:
            note = (
                f"expired on {expires}: the {len(covered)} failing check(s) it names count "
                "as failures"
            )
        else:
            note = f"expired on {expires}"
        return WaiverResult(waiver, WaiverState.EXPIRED, covered, (), note)
    if covered:
        note = "" if waived else "its requirement failed all the same: on a check it does not name"
        return WaiverResult(waiver, WaiverState.APPLIED, covered, waived, note)
    return WaiverResult(waiver, WaiverState.STALE, (), (), _stale_note(waiver, outcomes))


def _stale_note(waiver: Waiver, outcomes: dict[str, Outcome]) -> str:
    outcome = outcomes.get(waiver.requirement_id)
    if outcome is None:
        return "covered nothing: its requirement was not selected in this run"
    if outcome is Outcome.PASSED:
        return "covered nothing: its requirement passed"
    if outcome is Outcome.NOT_EXERCISED:
        return "covered nothing: its requirement was not exercised"
    return "covered nothing: its requirement failed, but on no check and operation it names"
