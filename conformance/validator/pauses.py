"""Pausing a paused payout schedule, seen across recorded exchanges: it must change nothing.

``PauseChecks`` keeps the last answer showing each payout schedule (its status and a digest of
each member) and has the judge (``lifecycle.idle_findings``) judge an accepted
pausePayoutSchedule against it: a pause of a paused schedule answers it unchanged, the same
``updated_at`` (PAYOUT-STATE-008). Judged only when the previous answer's exchange ended before
this one started (overlapping exchanges have no order) and showed the schedule as this answer
does but for ``updated_at``: a change in between that the recording does not show is then ruled
out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from conformance.core.profile import Profile
from conformance.judge.lifecycle import StateMachine, idle_findings
from conformance.judge.tables import TABLE_LIMIT, BoundedTable, digest
from conformance.judge.values import canonical
from conformance.validator.checks import FAMILY
from conformance.validator.exchange import Exchange
from conformance.validator.findings import Call
from conformance.validator.tables import Finding, Moment

PAUSE = "pausePayoutSchedule"
SCHEDULE_OPERATIONS = frozenset(
    {"createPayoutSchedule", "replacePayoutSchedule", PAUSE, "retirePayoutSchedule"}
)
PAUSE_UNCHANGED = f"{FAMILY}.pause_unchanged"


@dataclass(frozen=True, slots=True)
class _Shown:
    status: str
    fields: dict[str, bytes]  # digest of each member
    source: str
    when: Moment


class PauseChecks:
    """The last answer showing each payout schedule, and the pauses that wrote it again."""

    READS_BODY = SCHEDULE_OPERATIONS  # the operations whose answers it reads

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self._machine = StateMachine.of(profile, "payout_schedules")
        self._shown: BoundedTable[str, _Shown] = BoundedTable(limit)

    def observe(
        self, exchange: Exchange, operation_id: str, body: Any, when: Moment, *, replayed: bool
    ) -> Iterator[Finding]:
        """Judge a pause against the schedule's previous answer, then remember this one."""
        if operation_id not in SCHEDULE_OPERATIONS or replayed or not isinstance(body, dict):
            return
        ident, status = body.get("id"), body.get("status")
        status_code = exchange.status or 0
        if not 200 <= status_code < 300 or not (isinstance(ident, str) and isinstance(status, str)):
            return
        fields = {k: digest(canonical(v)) for k, v in body.items()}
        before = self._shown.get(ident)
        self._shown.put(ident, _Shown(status, fields, exchange.source, when))
        if operation_id != PAUSE or before is None or not when.after(before.when):
            return
        changed = {
            k for k in before.fields.keys() | fields.keys() if before.fields.get(k) != fields.get(k)
        }
        call = Call(exchange, operation_id, {}, status_code, body)
        for finding in idle_findings(
            self._machine,
            before.status,
            call,
            changed,
            known_valid=False,
            resource_id=f"{ident} (in {before.source or 'an earlier exchange'})",
        ):
            yield finding._replace(check=PAUSE_UNCHANGED)
