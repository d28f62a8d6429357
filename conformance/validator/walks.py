"""Lists and statements seen across recorded exchanges: order, page walks, one window's figures.

``WalkChecks`` feeds payment creates and lists to the judge (``judge.lists.ListWalks``: the
list order, PAY-018, and page walks, PAY-019) and judges:

- a page walk of a statement (same API key, currency and window): the page after a cursor is
  not empty, starts after the previous page's last line and chains its balance on from it (a
  line skipped at the boundary breaks the chain, a repeated one is not after it) (STMT-013);
- reads of one statement window (same server, API key, currency, ``from`` and ``to``) with the same
  ``window_entry_count`` above 0 read the same lines, so they state the same opening (STMT-006)
  and closing balance (STMT-007) and the same ``reconciles`` (STMT-008), whichever page they
  are: a page stating the page's figures instead of the window's disagrees with the others.

The ledger only grows: a window whose count is unchanged holds the same lines. A window
without lines is not compared (its ``from`` may lie ahead, so its opening may still move).
Every table is bounded (``TABLE_LIMIT``).
"""

from __future__ import annotations

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
from conformance.judge.lists import ListWalks
from conformance.judge.tables import TABLE_LIMIT, BoundedTable, When, digest
from conformance.validator.checks import FAMILY
from conformance.validator.exchange import Exchange
from conformance.validator.tables import Finding

API_KEY_HEADER = "x-api-key"
CURSOR = "cursor"
LIMIT = "limit"
STATEMENT_WALK = f"{FAMILY}.statement_walk"
STATEMENT_WINDOW = f"{FAMILY}.statement_window"


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
        self._merchant = {c.api_key: c.merchant_id for c in profile.credentials}
        self._lists = ListWalks(profile, limit=limit)
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
        if isinstance(ident, str):
            self._lists.created(owner, ident, when)

    def _list(
        self, exchange: Exchange, api_key: str, owner: bytes, body: dict[str, Any]
    ) -> Iterator[Finding]:
        items = body.get("payments")
        if not isinstance(items, list):
            return
        ids = [i["id"] for i in items if isinstance(i, dict) and isinstance(i.get("id"), str)]
        if len(ids) != len(items):
            return  # an item without an id: the schema check's
        query = dict(parse_qsl(exchange.query, keep_blank_values=True))
        found = self._lists.listed(
            owner, api_key, query, ids, body.get("next_cursor"), exchange.source
        )
        for check, ids_, outcome, message in found:
            yield (f"{FAMILY}.{check}", ids_, outcome, message)

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
