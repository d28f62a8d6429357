"""Which due webhook deliveries go next, read at a cost that does not grow with the backlog.

A long-lived server keeps the endpoints of earlier runs, their receivers usually gone, and every
event still queues a delivery to each of them: thousands of deliveries to failing endpoints, of
which the dispatcher may send only ``MAX_FAILING_IN_FLIGHT`` at once. It claims again each time
an attempt ends, so a claim that read and sorted every due delivery made each attempt cost as
much as the whole backlog (1,200 deliveries took 47 s and 25 s of CPU to drain, the store's lock
held by the sort all along). A claim now reads:

- with ``live``, every due delivery of the endpoints that answer;
- of the failing endpoints, only the first ``failing`` that have a due delivery (those that
  failed least, through ``webhook_endpoint_health_by_failures``), and of each its first
  ``failing`` due deliveries (through ``webhook_deliveries_by_endpoint``).

``send_order`` puts them in the order to send. Between claims the dispatcher sleeps until the
next delivery falls due (``next_due_us``) or a transaction queues one (``queued``), instead of
polling the table.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

FAILING_AFTER = 3  # failed attempts in a row that make an endpoint failing (one send's budget)


@dataclass(frozen=True)
class Candidate:
    """A due delivery, with what orders it."""

    rowid: int
    id: str
    merchant_id: str
    endpoint_id: str
    next_us: int
    created_us: int
    retry: bool  # attempted before
    failures: int  # its endpoint's failures in a row, when failing (else 0)
    failing: bool


def send_order(candidates: Iterable[Candidate]) -> list[Candidate]:
    """``candidates`` in the order to send them.

    Endpoints that answer first, failing ones after (those that failed least first). Then round
    robin over merchants, then over a merchant's endpoints: a backlog of one endpoint, or of one
    merchant's many endpoints, does not hold back the deliveries of the others. First attempts
    before retries, then the earliest due.
    """
    found = list(candidates)

    def own(c: Candidate) -> tuple[bool, int, int]:
        return (c.retry, c.next_us, c.created_us)

    def turns(
        groups: Iterable[list[Candidate]], key: Callable[[Candidate], tuple[object, ...]]
    ) -> dict[str, int]:
        return {c.id: turn for group in groups for turn, c in enumerate(sorted(group, key=key))}

    by_endpoint: defaultdict[tuple[str, str], list[Candidate]] = defaultdict(list)
    by_merchant: defaultdict[tuple[bool, str], list[Candidate]] = defaultdict(list)
    for c in found:
        by_endpoint[c.merchant_id, c.endpoint_id].append(c)
        by_merchant[c.failing, c.merchant_id].append(c)
    endpoint_turn = turns(by_endpoint.values(), own)
    merchant_turn = turns(by_merchant.values(), lambda c: (endpoint_turn[c.id], *own(c)))
    return sorted(
        found,
        key=lambda c: (c.failing, c.failures, merchant_turn[c.id], endpoint_turn[c.id], *own(c)),
    )


def _due(alias: str, faults: frozenset[str]) -> str:
    if "webhook-retries-after-success" in faults:
        return f"({alias}.status = 'pending' OR {alias}.attempts < {alias}.attempt_budget)"
    return f"{alias}.status = 'pending'"


class DueReader:
    """The queries of a claim, for a server with ``faults``."""

    def __init__(self, faults: frozenset[str]) -> None:
        due_d, due_x = _due("d", faults), _due("x", faults)
        columns = (
            "d.rowid, d.id, d.merchant_id, d.endpoint_id, d.next_attempt_us, d.created_us,"
            " d.attempts > 0"
        )
        self._candidates = (
            "WITH live_endpoint AS (SELECT e.merchant_id, e.id FROM webhook_endpoints e"
            " WHERE :live AND NOT EXISTS (SELECT 1 FROM webhook_endpoint_health h"
            " WHERE h.merchant_id = e.merchant_id AND h.endpoint_id = e.id"
            " AND h.failures >= :failing_after)),"
            " failing_endpoint AS (SELECT h.merchant_id, h.endpoint_id AS id, h.failures"
            " FROM webhook_endpoint_health h WHERE h.failures >= :failing_after"
            " AND EXISTS (SELECT 1 FROM webhook_endpoints e"
            " WHERE e.merchant_id = h.merchant_id AND e.id = h.endpoint_id)"
            " AND EXISTS (SELECT 1 FROM webhook_deliveries x"
            " WHERE x.merchant_id = h.merchant_id AND x.endpoint_id = h.endpoint_id"
            f" AND {due_x} AND x.next_attempt_us <= :now)"
            " ORDER BY h.failures LIMIT :failing)"
            f" SELECT {columns}, 0, 0 FROM live_endpoint p"
            # CROSS JOIN keeps the endpoints the outer loop: never a scan of every due delivery
            " CROSS JOIN webhook_deliveries d"
            " ON d.merchant_id = p.merchant_id AND d.endpoint_id = p.id"
            f" WHERE {due_d} AND d.next_attempt_us <= :now"
            f" UNION ALL SELECT {columns}, p.failures, 1 FROM failing_endpoint p"
            " JOIN webhook_deliveries d ON d.rowid IN (SELECT x.rowid FROM webhook_deliveries x"
            " WHERE x.merchant_id = p.merchant_id AND x.endpoint_id = p.id"
            f" AND {due_x} AND x.next_attempt_us <= :now"
            " ORDER BY x.next_attempt_us, x.created_us LIMIT :failing)"
        )
        self._next_due = (
            f"SELECT x.next_attempt_us FROM webhook_deliveries x WHERE {due_x}"
            " AND x.next_attempt_us > ? ORDER BY x.next_attempt_us LIMIT 1"
        )

    def candidates(
        self, conn: sqlite3.Connection, now_us: int, *, live: bool, failing: int
    ) -> list[Candidate]:
        """The due deliveries a claim chooses from (see the module's doc)."""
        params = {"now": now_us, "live": live, "failing": failing, "failing_after": FAILING_AFTER}
        return [
            Candidate(
                int(r[0]),
                str(r[1]),
                str(r[2]),
                str(r[3]),
                int(r[4]),
                int(r[5]),
                bool(r[6]),
                int(r[7]),
                bool(r[8]),
            )
            for r in conn.execute(self._candidates, params)
        ]

    @staticmethod
    def sendable(
        conn: sqlite3.Connection, chosen: Sequence[Candidate]
    ) -> dict[int, tuple[int, str, str, str]]:
        """By rowid: the generation, the endpoint's url and secret, and the payload."""
        if not chosen:
            return {}
        marks = ", ".join("?" * len(chosen))
        rows = conn.execute(
            "SELECT d.rowid, d.generation, e.url, e.secret, d.payload FROM webhook_deliveries d"
            " JOIN webhook_endpoints e ON e.merchant_id = d.merchant_id AND e.id = d.endpoint_id"
            f" WHERE d.rowid IN ({marks})",
            [c.rowid for c in chosen],
        )
        return {int(r[0]): (int(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows}

    def next_due_us(self, conn: sqlite3.Connection, now_us: int) -> int | None:
        """When the next delivery not due yet falls due."""
        row = conn.execute(self._next_due, (now_us,)).fetchone()
        return None if row is None else int(row[0])


# ------------------------------------------------------------------ waking on queued work
_listeners: dict[sqlite3.Connection, list[Callable[[], None]]] = {}
_listeners_lock = threading.Lock()


def on_queued(conn: sqlite3.Connection, wake: Callable[[], None]) -> Callable[[], None]:
    """Call ``wake`` whenever a transaction on ``conn`` queues a delivery attempt (``queued``);
    returns what stops it."""
    with _listeners_lock:
        _listeners.setdefault(conn, []).append(wake)

    def stop() -> None:
        with _listeners_lock:
            wakes = _listeners.get(conn, [])
            if wake in wakes:
                wakes.remove(wake)
            if not wakes:
                _listeners.pop(conn, None)

    return stop


def queued(conn: sqlite3.Connection) -> None:
    """A transaction on ``conn`` queued a delivery attempt. Its listeners look once it commits:
    the store's lock, which the transaction holds, keeps their claims until then."""
    with _listeners_lock:
        wakes = list(_listeners.get(conn, ()))
    for wake in wakes:
        wake()
