"""Reading statements and checking them, page by page, with exact arithmetic.

Every page read is checked on its own (OPS-007 a readable statement, STMT-009 places,
STMT-016 code and symbol, STMT-003 directions, STMT-004 signs). ``history`` reads a long
window around the current example (limit at the profile's maximum) to learn every line the
merchant has near now; ``audit`` then reads a window ``[from, to)`` whose edges are the
``created_at`` of lines already booked, so that no line of another test can enter it while it is
walked, and compares what the server says with what the history implies:

- read without a limit: the profile's default limit, exactly the history's lines of the window
  (STMT-001), ascending ids (STMT-002), no cursor when nothing remains, balances chained line
  to line (STMT-005, STMT-015), the count (STMT-010), the opening balance = the balance after the
  last earlier line (STMT-006), the closing balance (STMT-007), ``reconciles`` (STMT-008);
- read with ``limit`` = the number of lines: one full page and no cursor (STMT-013);
- walked with a small limit: no page over the limit (STMT-011), no gap or repeat and a cursor
  exactly while lines remain (STMT-013), the same count, opening, closing and ``reconciles``
  on every page, balances chained across page boundaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx

from conformance.judge.statement_pages import StatementPages
from conformance.judge.statements import (
    CLOSING,
    COUNT,
    CURSOR,
    FEE,
    OPENING,
    ORDER,
    READ,
    RECONCILES,
    RUNNING,
    WINDOW,
    Line,
    Page,
    Unreadable,
    balance_before,
    chain_problems,
    order_problem,
    parse_page,
    window_lines,
)
from conformance.suite.factories import locate_operation
from conformance.suite.stateful import MachineContext, body_of
from conformance.suite.wire.client import SuiteClient

OPERATION = "getStatement"
HISTORY_MARGIN_SECS = 30  # beyond the profile's clock window, around the example's own lines
MAX_WALK_PAGES = 8  # a small-limit walk reads at most about this many pages


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Account:
    """One merchant's ledger in one currency, read with that merchant's client."""

    client: SuiteClient
    currency_id: str

    @property
    def merchant_id(self) -> str:
        return self.client.credential.merchant_id

    def __str__(self) -> str:
        return f"{self.merchant_id} {self.currency_id}"


@dataclass(frozen=True)
class History:
    """Every line of an account in a window around now, in ledger order."""

    opening: Decimal
    lines: tuple[Line, ...]
    accounting_decimals: int


def edges(lines: Sequence[Line]) -> list[Line]:
    """One line per distinct ``created_at`` instant, earliest first: the window edges."""
    seen: dict[Decimal, Line] = {}
    for line in lines:
        seen.setdefault(line.created, line)
    return [seen[moment] for moment in sorted(seen)]


def _ids(lines: Sequence[Line]) -> list[int]:
    return [line.entry_id for line in lines]


class Statements:
    """The family's statement reader: every page it returns has passed the page checks."""

    def __init__(self, ctx: MachineContext) -> None:
        self.ctx = ctx
        self.profile = ctx.profile
        _, self.path = locate_operation(ctx.contract, OPERATION)
        self.limits = ctx.profile.range("statements", "limit")
        self.pages = StatementPages(ctx.profile)

    @property
    def verdicts(self) -> Any:
        return self.ctx.verdicts

    # -- reading --------------------------------------------------------------------------
    def get(
        self,
        account: Account,
        start: str,
        end: str,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        currency_id: str | None = None,
    ) -> httpx.Response:
        params: dict[str, Any] = {
            "currency_id": currency_id or account.currency_id,
            "from": start,
            "to": end,
        }
        if limit is not None:
            params["limit"] = limit
        if cursor is not None:
            params["cursor"] = cursor
        return account.client.get(self.path, params=params, operation_id=OPERATION)

    def page(
        self,
        account: Account,
        start: str,
        end: str,
        *,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        what = f"statement of {account} [{start}, {end})" + (
            f" limit {limit}" if limit is not None else ""
        )
        response = self.get(account, start, end, limit=limit, cursor=cursor)
        expected = self.profile.success_status(OPERATION)
        self.verdicts.status([READ], response, expected, what)
        body = body_of(response)
        try:
            page = parse_page(body)
        except Unreadable as unreadable:
            self.verdicts.check(unreadable.requirement_ids, False, f"{what}: {unreadable.message}")
            raise AssertionError("unreachable") from None
        query = dict(response.request.url.params)  # as sent, as a recording shows it
        self.verdicts.findings(self.pages.page(query, body, page), what)
        return page

    def history(self, account: Account, since: datetime, *, start: str | None = None) -> History:
        """Every line of ``account`` from a little before ``since`` (or from ``start``) to a
        little after now.

        The window's end is in the future, so lines of other tests may arrive while it is
        read: only what stays true then is checked here (order, balances chained).
        """
        margin = timedelta(seconds=self.profile.clock_window_secs + HISTORY_MARGIN_SECS)
        start = start or iso(since - margin)
        end = iso(datetime.now(UTC) + margin)
        limit = self.limits.max
        pages: list[Page] = []
        cursor: str | None = None
        lines: list[Line] = []
        for _ in range(50):
            page = self.page(account, start, end, limit=limit, cursor=cursor)
            pages.append(page)
            lines += page.lines
            cursor = page.next_cursor
            if cursor is None or not page.lines:
                break
        where = f"history of {account} [{start}, {end})"
        self._order(where, lines)
        self._chain(where, lines)
        return History(pages[0].opening, tuple(lines), pages[0].accounting_decimals)

    # -- checks ---------------------------------------------------------------------------
    def _order(self, where: str, lines: Sequence[Line]) -> None:
        problem = order_problem(_ids(lines))
        self.verdicts.check([ORDER], problem is None, f"{where}: {problem}")

    def _chain(self, where: str, lines: Sequence[Line]) -> None:
        self.verdicts.problems([RUNNING, FEE], (f"{where}: {p}" for p in chain_problems(lines)))

    def audit(self, account: Account, history: History, first: Line, last: Line, small: int) -> int:
        """Check the window ``[first.created_at, last.created_at)`` of ``account`` read whole,
        read as one exactly full page, and walked ``small`` lines at a time (made larger when
        the walk would take too many pages). Returns the number of lines in the window."""
        start, end = first.created_text, last.created_text
        expected = window_lines(history.lines, first.created, last.created)
        count = len(expected)
        opening = balance_before(history.lines, history.opening, first.created)
        closing = expected[-1].balance_after if expected else opening
        signed_sum = sum((line.signed for line in expected), Decimal(0))
        where = f"statement of {account} [{start}, {end})"

        # (a) the whole window, without a limit (its order, balances and size are the page
        # rules' that ``page`` ran)
        whole = self.page(account, start, end)
        default = self.limits.default
        if default is None or count <= default:
            self._window(where, whole.lines, expected, history)
            self.verdicts.check(
                [CURSOR],
                whole.next_cursor is None,
                f"{where}: next_cursor on a page that holds all {count} lines of the window",
            )
        self._totals(where, whole, count, opening, closing, signed_sum)

        # (b) exactly one full page: nothing remains, so no cursor
        if 1 <= count <= self.limits.max:
            full = self.page(account, start, end, limit=count)
            if full.next_cursor is not None:
                # followed once, unjudged here: a recording then shows what the cursor reads
                # (nothing), so the validator can tell the cursor was wrong, not the count
                self.get(account, start, end, limit=count, cursor=full.next_cursor)
            self.verdicts.check(
                [CURSOR],
                full.next_cursor is None and full.ids == _ids(expected),
                f"{where} limit {count} (the window's line count): lines {full.ids}, next_cursor "
                f"{'present' if full.next_cursor else 'absent'}; expected lines {_ids(expected)} "
                "and no next_cursor",
            )

        # (c) a walk with a small limit
        if count >= 2:
            size = max(min(small, count - 1), -(-count // MAX_WALK_PAGES), self.limits.min)
            self._walk(account, (start, end), size, expected, (opening, closing, signed_sum))
        return count

    def _window(
        self, where: str, seen: Sequence[Line], expected: Sequence[Line], history: History
    ) -> None:
        wanted = set(_ids(expected))
        got = _ids(seen)
        known = {line.entry_id: line for line in history.lines}
        extra = [known[i].describe() if i in known else f"line {i}" for i in got if i not in wanted]
        missing = [line.describe() for line in expected if line.entry_id not in set(got)]
        repeated = sorted({i for i in got if got.count(i) > 1})
        problems = []
        if extra:
            problems.append(f"lines outside the window listed: {extra[:5]}")
        if missing:
            problems.append(f"lines of the window not listed: {missing[:5]}")
        if repeated:
            problems.append(f"lines listed twice: {repeated[:5]}")
        self.verdicts.problems([WINDOW], (f"{where}: {p}" for p in problems))

    def _totals(
        self,
        where: str,
        page: Page,
        count: int,
        opening: Decimal,
        closing: Decimal,
        signed_sum: Decimal,
    ) -> None:
        """What every page of the window states about the whole window."""
        self.verdicts.check(
            [COUNT],
            page.count == count,
            f"{where}: window_entry_count {page.count!r}, the window holds {count} lines",
        )
        self.verdicts.check(
            [OPENING],
            page.opening == opening,
            f"{where}: opening_canonical {page.opening}, the balance before from is {opening}",
        )
        self.verdicts.check(
            [CLOSING],
            page.closing == closing,
            f"{where}: closing_canonical {page.closing}, the balance after the window's last "
            f"line is {closing}",
        )
        holds = page.opening + signed_sum == page.closing
        self.verdicts.check(
            [RECONCILES],
            isinstance(page.reconciles, bool) and page.reconciles == holds,
            f"{where}: reconciles {page.reconciles!r}, but opening {page.opening} + signed sum "
            f"{signed_sum} {'=' if holds else '!='} closing {page.closing}",
        )

    def _walk(
        self,
        account: Account,
        window: tuple[str, str],
        size: int,
        expected: Sequence[Line],
        totals: tuple[Decimal, Decimal, Decimal],
    ) -> None:
        start, end = window
        where = f"statement of {account} [{start}, {end}) limit {size}"
        wanted = _ids(expected)
        count = len(wanted)
        walked: list[Line] = []
        read: list[tuple[str, Page]] = []
        cursor: str | None = None
        for number in range(1, count + 2):
            page = self.page(account, start, end, limit=size, cursor=cursor)
            at = f"{where}, page {number}"
            position = len(walked)
            self.verdicts.check(
                [CURSOR],
                page.ids == wanted[position : position + size] and bool(page.lines),
                f"{at}: lines {page.ids}, expected {wanted[position : position + size]} "
                f"(the window's lines are {wanted})",
            )
            walked += page.lines
            remain = count - len(walked)
            self.verdicts.check(
                [CURSOR],
                (page.next_cursor is not None) == (remain > 0),
                f"{at}: next_cursor {'present' if page.next_cursor else 'absent'} with "
                f"{remain} lines remaining",
            )
            read.append((at, page))
            cursor = page.next_cursor
            if cursor is None:
                break
        # the figures after the walk: a recording then holds the pages a wrong count hid
        # (the validator tells a count from a cursor by what the next page holds)
        for at, page in read:
            self._totals(at, page, count, *totals)
        self._chain(where, walked)
