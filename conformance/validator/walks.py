"""Lists and statements seen across recorded exchanges: order, page walks, one window's figures.

``WalkChecks`` learns when each payment was created (the answer of its create) and judges:

- payment lists (profile 5, ``payments.list_order``): two payments whose creates did not
  overlap in time are listed newest first (or oldest first, as the profile says) (PAY-018);
- a page walk of a list: the request that follows an answer's ``next_cursor`` (same API key,
  same filters) continues where that page ended, without repeating a payment of it and, for an
  unfiltered list, without skipping a payment of the same merchant created between the two
  pages' boundary items (PAY-019);
- a page walk of a statement (same API key, currency and window): the page after a cursor is
  not empty, starts after the previous page's last line and chains its balance on from it (a
  line skipped at the boundary breaks the chain, a repeated one is not after it) (STMT-013);
- reads of one statement window (same server, API key, currency, ``from`` and ``to``) with the same
  ``window_entry_count`` above 0 read the same lines, so they state the same opening (STMT-006)
  and closing balance (STMT-007) and the same ``reconciles`` (STMT-008), whichever page they
  are: a page stating the page's figures instead of the window's disagrees with the others.

The ledger only grows: a window whose count is unchanged holds the same lines. A window
without lines is not compared (its ``from`` may lie ahead, so its opening may still move).
Creates that overlap in time have no order; a payment created outside the recording is not
judged. Every table is bounded (``TABLE_LIMIT``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise
from typing import Any
from urllib.parse import parse_qsl

from conformance.core.formats import epoch_seconds
from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.core.untrusted import split_url
from conformance.judge import statements as statement
from conformance.validator.checks import FAMILY
from conformance.validator.exchange import Exchange
from conformance.validator.tables import TABLE_LIMIT, BoundedTable, Finding, When, digest

API_KEY_HEADER = "x-api-key"
CURSOR = "cursor"
LIMIT = "limit"
LIST_ORDER = f"{FAMILY}.list_order"
LIST_WALK = f"{FAMILY}.list_walk"
STATEMENT_WALK = f"{FAMILY}.statement_walk"
STATEMENT_WINDOW = f"{FAMILY}.statement_window"
ORDER_IDS, WALK_IDS = ("PAY-018",), ("PAY-019",)
ORDERED_KEPT = 200
"""Items of one list answer whose order is judged (the first ones with a known create)."""
CREATIONS_KEPT = 10_000
"""Creates remembered per merchant in recording order, to find a payment skipped between two
pages (the oldest forgotten first)."""


@dataclass(frozen=True, slots=True)
class _Created:
    owner: bytes
    when: When


@dataclass(frozen=True, slots=True)
class _ListPage:
    """A payments page that gave a ``next_cursor``: what the next page must continue."""

    query: bytes  # digest of the filters (the query without cursor and limit)
    filtered: bool
    last: str  # the page's last payment
    first: str
    source: str
    ids: frozenset[str]  # every payment of the page


@dataclass(frozen=True, slots=True)
class _StatementPage:
    window: bytes
    last_id: int
    last_balance: Decimal
    source: str
    whole_count: object  # a first page's window_entry_count when it says no line remains


@dataclass(frozen=True, slots=True)
class _Figures:
    """What one read stated about its whole window."""

    opening: Decimal
    closing: Decimal
    reconciles: object
    source: str


class WalkChecks:
    """Creation order, list and statement page walks, and the figures of one window."""

    READS_BODY = frozenset({"createPayment", "listPayments", "getStatement"})

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self._newest_first = profile.payments.list_order != "oldest-first"
        self._merchant = {c.api_key: c.merchant_id for c in profile.credentials}
        self._created: BoundedTable[str, _Created] = BoundedTable(limit)
        # per merchant: (position, id) of its creates in recording order
        self._creations: BoundedTable[bytes, list[tuple[int, str]]] = BoundedTable(limit)
        self._lists: BoundedTable[bytes, _ListPage] = BoundedTable(limit)
        self._statements: BoundedTable[bytes, _StatementPage] = BoundedTable(limit)
        self._windows: BoundedTable[bytes, _Figures] = BoundedTable(limit)
        # per ledger line (server, key, currency, entry id): the balance before it, as a page
        # that held the line before it showed (that line's balance_after)
        self._before: BoundedTable[bytes, object] = BoundedTable(limit)

    def observe(
        self,
        exchange: Exchange,
        operation_id: str,
        headers: dict[str, str],
        body: Any,
        when: When,
    ) -> Iterator[Finding]:
        """Judge a list or statement answer against what came before; learn from it."""
        status = exchange.status or 0
        if operation_id not in self.READS_BODY or not 200 <= status < 300:
            return
        if not isinstance(body, dict):
            return
        api_key = headers.get(API_KEY_HEADER, "")
        owner = (
            digest("merchant", self._merchant[api_key])
            if api_key in self._merchant
            else (digest("key", api_key))
        )
        if operation_id == "createPayment":
            self._create(body, owner, when)
        elif operation_id == "listPayments":
            yield from self._list(exchange, api_key, owner, body)
        else:
            yield from self._statement(exchange, api_key, body)

    # -- payments ----------------------------------------------------------------------------
    def _create(self, body: dict[str, Any], owner: bytes, when: When) -> None:
        ident = body.get("id")
        if not isinstance(ident, str) or self._created.get(ident) is not None:
            return  # a replay answers the first create's payment
        self._created.put(ident, _Created(owner, when))
        mine = self._creations.get(owner)
        if mine is None:
            mine = []
            self._creations.put(owner, mine)
        mine.append((when.position, ident))
        if len(mine) > CREATIONS_KEPT:
            del mine[: len(mine) - CREATIONS_KEPT]

    def _list(
        self, exchange: Exchange, api_key: str, owner: bytes, body: dict[str, Any]
    ) -> Iterator[Finding]:
        items = body.get("payments")
        if not isinstance(items, list):
            return
        ids = [i["id"] for i in items if isinstance(i, dict) and isinstance(i.get("id"), str)]
        if len(ids) != len(items):
            return  # an item without an id: the schema check's
        yield from self._order(ids)
        query = dict(parse_qsl(exchange.query, keep_blank_values=True))
        filters = {k: v for k, v in query.items() if k not in (CURSOR, LIMIT)}
        query_digest = digest(*(f"{k}={v}" for k, v in sorted(filters.items())))
        cursor = query.get(CURSOR)
        if cursor is not None:
            before = self._lists.get(digest(api_key, cursor))
            if before is not None and before.query == query_digest:
                yield from self._continued(before, ids, owner)
        following = body.get("next_cursor")
        if isinstance(following, str) and following and ids:
            page = _ListPage(
                query_digest, bool(filters), ids[-1], ids[0], exchange.source, frozenset(ids)
            )
            self._lists.put(digest(api_key, following), page)

    def _newer(self, first: str, second: str) -> bool | None:
        """Whether payment ``first`` was created after ``second`` (None: not known, or their
        creates overlap in time)."""
        a, b = self._created.get(first), self._created.get(second)
        if a is None or b is None or first == second:
            return None
        if a.when.after(b.when):
            return True
        if b.when.after(a.when):
            return False
        return None

    def _listed_before(self, first: str, second: str) -> bool | None:
        """Whether the profile's order puts ``first`` before ``second`` (None: not known)."""
        newer = self._newer(first, second)
        return None if newer is None else newer == self._newest_first

    def _order(self, ids: list[str]) -> Iterator[Finding]:
        # pairs of the first ORDERED_KEPT known items: a page holds at most the profile's
        # maximum limit (100), and a longer list must not cost its square
        known = [i for i in ids if self._created.get(i) is not None][:ORDERED_KEPT]
        if len(known) < 2:
            return
        judged = False
        for index, first in enumerate(known):
            for second in known[index + 1 :]:
                right = self._listed_before(first, second)
                if right is False:
                    order = "newest" if self._newest_first else "oldest"
                    yield (
                        LIST_ORDER,
                        ORDER_IDS,
                        Outcome.FAILED,
                        f"{first} is listed before {second}, created "
                        + ("earlier" if self._newest_first else "later")
                        + f" in the recording: not {order} first",
                    )
                    return
                judged = judged or right is True
        if judged:
            order = "newest" if self._newest_first else "oldest"
            yield (LIST_ORDER, ORDER_IDS, Outcome.PASSED, f"payments listed {order} first")

    def _continued(self, before: _ListPage, ids: list[str], owner: bytes) -> Iterator[Finding]:
        where = f"the page after {before.source or 'an earlier page'}"
        again = [i for i in ids if i in before.ids]
        if again:
            message = f"{where} lists {again[0]} again: repeated across the boundary"
            yield (LIST_WALK, WALK_IDS, Outcome.FAILED, message)
            return
        earlier = [i for i in ids if self._listed_before(i, before.last)]
        if earlier:
            # the order across pages is the list order's rule, not the walk's
            order = "newest" if self._newest_first else "oldest"
            message = (
                f"{where} lists {earlier[0]}, which the profile's order puts before that page's "
                f"last payment {before.last}: not {order} first across the boundary"
            )
            yield (LIST_ORDER, ORDER_IDS, Outcome.FAILED, message)
            return
        if before.filtered or not ids or self._newer(ids[0], before.last) is None:
            return  # a filter may leave payments out; an unknown first item decides nothing
        skipped = self._between(owner, before.last, ids[0], set(ids))
        if skipped is not None:
            yield (
                LIST_WALK,
                WALK_IDS,
                Outcome.FAILED,
                f"{where} starts with {ids[0]}: {skipped}, created between it and that page's "
                f"last payment {before.last}, is on neither page",
            )
            return
        yield (LIST_WALK, WALK_IDS, Outcome.PASSED, f"{where} continues where it ended")

    def _between(self, owner: bytes, last: str, first: str, shown: set[str]) -> str | None:
        """A payment of ``owner`` the order puts between ``last`` (of a page) and ``first`` (of
        the next page) that neither page shows."""
        mine = self._creations.get(owner) or []
        a, b = self._created.get(last), self._created.get(first)
        assert a is not None and b is not None
        low, high = sorted((a.when.position, b.when.position))
        start = bisect.bisect_right(mine, (low, "\uffff"))
        for _, ident in mine[start : bisect.bisect_left(mine, (high, ""))]:
            if (
                ident not in shown
                and self._listed_before(last, ident)
                and self._listed_before(ident, first)
            ):
                return ident
        return None

    # -- statements --------------------------------------------------------------------------
    def _statement(
        self, exchange: Exchange, api_key: str, body: dict[str, Any]
    ) -> Iterator[Finding]:
        query = dict(parse_qsl(exchange.query, keep_blank_values=True))
        start, end = epoch_seconds(query.get("from")), epoch_seconds(query.get("to"))
        currency = query.get("currency_id")
        if start is None or end is None or currency is None:
            return
        # one ledger: the same server (a recording may hold several), key and currency
        server = split_url(exchange.url).netloc
        ledger = (server, api_key, currency)
        lines = body.get("lines")
        if isinstance(lines, list):
            self._learn_before(ledger, lines)
        # Only the first and last lines are compared: the others are left unread (the answer
        # checks read every line of the page).
        if isinstance(lines, list) and len(lines) > 2:
            body = {**body, "lines": [lines[0], lines[-1]]}
        try:
            page = statement.parse_page(body)
        except statement.Unreadable:
            return  # the answer checks report it
        window = digest(*ledger, str(start), str(end))
        cursor = query.get(CURSOR)
        if cursor is None and page.lines:
            yield from self._opening(ledger, page, exchange.source)
        if cursor is not None:
            before = self._statements.get(digest(api_key, cursor))
            if before is not None and before.window == window:
                yield from self._boundary(before, page)
        if page.next_cursor is not None and page.lines:
            last = page.lines[-1]
            self._statements.put(
                digest(api_key, page.next_cursor),
                _StatementPage(
                    window,
                    last.entry_id,
                    last.balance_after,
                    exchange.source,
                    page.count if cursor is None and _covers(page.count, lines) else None,
                ),
            )
        count = page.count
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            yield from self._figures(digest(window, str(count)), page, count, exchange.source)

    def _learn_before(self, ledger: tuple[str, str, str], lines: list[Any]) -> None:
        for earlier, line in pairwise(lines):
            if isinstance(earlier, dict) and isinstance(line, dict):
                entry = line.get("ledger_entry_id")
                if isinstance(entry, int | str) and not isinstance(entry, bool):
                    key = digest(*ledger, str(entry))
                    self._before.put(key, earlier.get("balance_after_canonical"))

    def _opening(
        self, ledger: tuple[str, str, str], page: statement.Page, source: str
    ) -> Iterator[Finding]:
        """A first page whose first balance does not follow from its opening: another read
        that held the line before it tells which figure is wrong (the page rules leave it)."""
        first = page.lines[0]
        own = first.balance_after - first.signed
        if page.opening == own:
            return
        known = statement.amount(self._before.get(digest(*ledger, str(first.entry_id))))
        where = f"{first.describe()} (another read shows the balance before it is {known})"
        if known == own:
            message = f"opening {page.opening}, not the balance before {where}"
            yield (STATEMENT_WINDOW, (statement.OPENING,), Outcome.FAILED, message)
        elif known == page.opening:
            message = f"{where}: its balance_after does not follow from it"
            yield (STATEMENT_WINDOW, (statement.RUNNING,), Outcome.FAILED, message)

    @staticmethod
    def _boundary(before: _StatementPage, page: statement.Page) -> Iterator[Finding]:
        where = f"the page after {before.source or 'an earlier page'}"
        problem = None
        if not page.lines:
            problem = "holds no line, yet that page's next_cursor said more remain"
        else:
            first = page.lines[0]
            expected = before.last_balance + first.signed
            if first.entry_id <= before.last_id:
                problem = (
                    f"starts with line {first.entry_id}, not after that page's last line "
                    f"{before.last_id}: repeated across the page boundary"
                )
            elif first.balance_after != expected:
                problem = (
                    f"starts with {first.describe()}, whose balance is not {before.last_balance} "
                    f"(that page's last balance) + {first.signed} = {expected}: a line between "
                    "them was skipped"
                )
        if problem is None:
            yield (STATEMENT_WALK, (statement.CURSOR,), Outcome.PASSED, f"{where} continues it")
        else:
            yield (STATEMENT_WALK, (statement.CURSOR,), Outcome.FAILED, f"{where} {problem}")
        if page.lines and before.whole_count is not None:
            # that first page's count said it held the whole window; its cursor said more
            # remain, and more did: the count was wrong, not the cursor
            message = (
                f"{where} holds lines, yet that page's window_entry_count "
                f"{before.whole_count} was its own line count"
            )
            yield (STATEMENT_WALK, (statement.COUNT,), Outcome.FAILED, message)

    def _figures(
        self, key: bytes, page: statement.Page, count: int, source: str
    ) -> Iterator[Finding]:
        seen = self._windows.get(key)
        if seen is None:
            self._windows.put(key, _Figures(page.opening, page.closing, page.reconciles, source))
            return
        where = f"{seen.source or 'an earlier read'} of the same window of {count} lines"
        figures: list[tuple[tuple[str, ...], str, object, object]] = [
            ((statement.OPENING,), "opening_canonical", page.opening, seen.opening),
            ((statement.CLOSING,), "closing_canonical", page.closing, seen.closing),
        ]
        if (page.opening, page.closing) == (seen.opening, seen.closing):
            # reconciles follows from the opening and closing a read states: where those differ,
            # so may it, and that is their failure
            figures.append(
                ((statement.RECONCILES,), "reconciles", page.reconciles, seen.reconciles)
            )
        for ids, name, mine, theirs in figures:
            if mine == theirs:
                yield (STATEMENT_WINDOW, ids, Outcome.PASSED, f"{name} as in {where}")
            else:
                message = f"{name} {mine}, where {where} states {theirs}"
                yield (STATEMENT_WINDOW, ids, Outcome.FAILED, message)


def _covers(count: object, lines: object) -> bool:
    """A ``window_entry_count`` no more than the lines of its page."""
    return (
        isinstance(count, int)
        and not isinstance(count, bool)
        and isinstance(lines, list)
        and count <= len(lines)
    )
