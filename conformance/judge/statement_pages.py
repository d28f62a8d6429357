"""The rules of one statement page against the query that asked for it (profile 5).

Whatever one page shows on its own: its places and currency, its lines' directions, signs,
order and running balances, the window and the limit it was asked for; a first page (no
``cursor``) also gives the opening balance (the balance before its first line) and, when its
count says it holds the whole window, the closing balance and ``reconciles``. What needs more
than one page (the walk of a window by its cursors, the history around it) is the statements
family's and the validator's ``walks``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any, Protocol

from conformance.core.formats import epoch_seconds
from conformance.core.profile import Profile
from conformance.judge import statements as statement
from conformance.judge.findings import ANSWER as CHECK
from conformance.judge.findings import Finding, verdict
from conformance.judge.values import first_of, json_int, query_int


class PageCall(Protocol):
    @property
    def query(self) -> dict[str, str]: ...

    answer: Any


class StatementPages:
    """Judges statement pages for one profile."""

    def __init__(self, profile: Profile) -> None:
        self._currencies = profile.currencies
        self._directions = profile.statements.directions
        self._statement_limits = profile.range("statements", "limit")
        self._statement_default = int(self._statement_limits.default or 0)

    def judge(self, call: PageCall) -> Iterator[Finding]:
        """The rules of one page (none when it cannot be read: the response schema's)."""
        try:
            page = statement.parse_page(call.answer)
        except statement.Unreadable:
            return iter(())
        return self.page(call.query, call.answer, page)

    def page(
        self, query: Mapping[str, str], body: Mapping[str, Any], page: statement.Page
    ) -> Iterator[Finding]:
        """The rules of ``page`` (``body`` parsed), read with ``query``.

        Two disagreements one page cannot settle are left to the caller: a first balance that
        does not follow from the opening (a wrong opening, or a wrong balance), and a first
        page whose cursor says more remain while its count says none (a wrong count, or a
        wrong cursor). The family knows the window's lines; a recording shows the answer in
        other reads (the balance before that line in a longer read, what the cursor reads);
        naming both would blame a figure that may be right."""
        check = CHECK
        problems = statement.format_problems(body, page.accounting_decimals)
        yield verdict(check, (statement.PLACES,), first_of(problems))
        currency = self._currencies.get(query.get("currency_id", ""))
        if currency is not None:
            problem = (
                None
                if (page.code, page.symbol) == (currency.code, currency.symbol)
                else f"code {page.code!r} and symbol {page.symbol!r}, not {currency.code!r} "
                f"and {currency.symbol!r}"
            )
            yield verdict(check, (statement.CURRENCY,), problem)
        yield from self._page_size(query, page)
        if not page.lines:
            return
        odd = [
            f"{line.describe()}: direction is not one of {list(self._directions)}"
            for line in page.lines
            if line.direction not in self._directions
        ]
        yield verdict(check, (statement.DIRECTION,), first_of(odd))
        signs = [statement.sign_problem(line, self._directions) for line in page.lines]
        yield verdict(check, (statement.SIGN,), first_of([s for s in signs if s]))
        ids = page.ids
        yield verdict(check, (statement.ORDER,), statement.order_problem(ids))
        chain = statement.chain_problems(page.lines)
        first_page = "cursor" not in query
        if first_page and not chain:
            # The balance before the window's first line is the balance before ``from``; one
            # that differs is the caller's to judge (see above). When the page's own balances
            # do not chain, the running balance fails alone.
            first = page.lines[0]
            if page.opening == first.balance_after - first.signed:
                yield verdict(check, (statement.OPENING,), None)
        yield verdict(check, (statement.RUNNING, statement.FEE), first_of(chain))
        start, end = epoch_seconds(query.get("from")), epoch_seconds(query.get("to"))
        if start is not None and end is not None:  # exact: a line may sit on an edge
            outside = [
                line.describe() for line in page.lines if not statement.in_window(line, start, end)
            ]
            yield verdict(check, (statement.WINDOW,), first_of(outside))
        limit = query_int(query.get("limit")) if "limit" in query else self._statement_default
        if limit is not None and limit > 0:
            problem = f"{len(ids)} lines, more than the limit {limit}" if len(ids) > limit else None
            yield verdict(check, (statement.LIMIT,), problem)
        if first_page:
            yield from self._whole_window(page)

    def _page_size(self, query: Mapping[str, str], page: statement.Page) -> Iterator[Finding]:
        """The page states its size: the ``limit`` asked for, or the profile's default."""
        given = "limit" in query
        limit = query_int(query.get("limit")) if given else self._statement_default
        shown = json_int(page.limit)
        if limit is None or limit <= 0 or shown is None:
            return
        if not self._statement_limits.min <= limit <= self._statement_limits.max:
            return  # a limit that must be refused, accepted: STMT-012 judges the request
        asked = "asked for" if given else "the profile's default"
        problem = None if shown == limit else f"limit {shown}, where {asked} is {limit}"
        yield verdict(CHECK, (statement.LIMIT,), problem)

    def _whole_window(self, page: statement.Page) -> Iterator[Finding]:
        """The first page: its count says whether more pages follow; when none does, the page
        is the whole window and the closing balance and ``reconciles`` follow from it."""
        check, shown = CHECK, len(page.lines)
        count = json_int(page.count)
        if count is None:
            return
        more = count > shown
        cursor = page.next_cursor is not None
        if count < shown:
            message = f"window_entry_count {count}, yet the first page holds {shown} lines"
            yield verdict(check, (statement.COUNT,), message)
            return
        if cursor and not more:
            return  # a wrong count, or a cursor where nothing remains: the caller can tell
        problem = (
            None
            if more == cursor
            else f"window_entry_count {count} with {shown} lines on the first page and no "
            "next_cursor"
        )
        yield verdict(check, (statement.COUNT, statement.CURSOR), problem)
        if cursor or more:
            return
        closing = page.lines[-1].balance_after
        problem = (
            None if page.closing == closing else f"closing {page.closing}, last balance {closing}"
        )
        yield verdict(check, (statement.CLOSING,), problem)
        total = page.opening + sum((line.signed for line in page.lines), Decimal(0))
        if isinstance(page.reconciles, bool):
            problem = (
                None
                if page.reconciles == (total == page.closing)
                else f"reconciles {page.reconciles}: opening + signed = {total}, closing "
                f"{page.closing}"
            )
            yield verdict(check, (statement.RECONCILES,), problem)
