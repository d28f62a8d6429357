"""Pausing a paused payout schedule, seen across recorded exchanges: it must change nothing.

``PauseChecks`` keeps the last answer showing each payout schedule (its status, its
``updated_at`` and a digest of the rest) and judges an accepted pausePayoutSchedule of a
schedule the previous answer showed paused: the answer must be the schedule unchanged, the same
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
from conformance.core.results import Outcome
from conformance.validator.checks import FAMILY
from conformance.validator.exchange import Exchange
from conformance.validator.tables import (
    TABLE_LIMIT,
    BoundedTable,
    Finding,
    Moment,
    canonical,
    digest,
)

PAUSE = "pausePayoutSchedule"
SCHEDULE_OPERATIONS = frozenset(
    {"createPayoutSchedule", "replacePayoutSchedule", PAUSE, "retirePayoutSchedule"}
)
PAUSE_UNCHANGED = f"{FAMILY}.pause_unchanged"


@dataclass(frozen=True, slots=True)
class _Shown:
    status: str
    updated_at: str
    rest: bytes  # digest of the schedule but its updated_at
    source: str
    when: Moment


class PauseChecks:
    """The last answer showing each payout schedule, and the pauses that wrote it again."""

    READS_BODY = SCHEDULE_OPERATIONS  # the operations whose answers it reads

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        paused = [t.target for t in profile.transitions("payout_schedules") if t.operation == PAUSE]
        self._paused = paused[0] if paused else None
        self._shown: BoundedTable[str, _Shown] = BoundedTable(limit)

    def observe(
        self, exchange: Exchange, operation_id: str, body: Any, when: Moment, *, replayed: bool
    ) -> Iterator[Finding]:
        """Judge a pause against the schedule's previous answer, then remember this one."""
        if operation_id not in SCHEDULE_OPERATIONS or replayed or not isinstance(body, dict):
            return
        ident, status, updated_at = body.get("id"), body.get("status"), body.get("updated_at")
        if not 200 <= (exchange.status or 0) < 300 or not (
            isinstance(ident, str) and isinstance(status, str) and isinstance(updated_at, str)
        ):
            return
        rest = digest(canonical({k: v for k, v in body.items() if k != "updated_at"}))
        before = self._shown.get(ident)
        self._shown.put(ident, _Shown(status, updated_at, rest, exchange.source, when))
        if (
            operation_id != PAUSE
            or before is None
            or before.status != self._paused
            or before.rest != rest
            or not when.after(before.when)
        ):
            return
        same = before.updated_at == updated_at
        yield (
            PAUSE_UNCHANGED,
            ("PAYOUT-STATE-008",),
            Outcome.PASSED if same else Outcome.FAILED,
            f"pause of {ident}, paused in {before.source or 'an earlier exchange'}: "
            + (
                "answered unchanged"
                if same
                else f"written again (updated_at {before.updated_at} became {updated_at})"
            ),
        )
