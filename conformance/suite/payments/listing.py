"""A walk of every page of ``listPayments`` (PAY-014, PAY-016, PAY-018, PAY-019).

The server is shared: the list also holds payments of other tests. The walk sends the pages
and asks the judge (``judge.lists.ListWalks``): of each page what holds whatever else is listed
(at most ``limit`` items, only the filtered status, the order of the payments it knows, a cursor
continuing its page), and of the whole walk what the test's own payments say (each one on some
page, none twice, in the profile's order). The walk stops once every own payment has been seen,
or after ``MAX_ITEMS`` items: a long list of a long session is not walked to its end, and then a
missing payment proves nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.judge.payment_rules import LIST
from conformance.suite.payments.book import ModelPayment, PaymentBook
from conformance.suite.stateful import body_of
from conformance.suite.tool_errors import CaseError

MAX_ITEMS = 200


def walk(
    book: PaymentBook,
    own: Sequence[ModelPayment],
    *,
    limit: int | None = None,
    status: str | None = None,
) -> None:
    """Walk the pages of the list (``status`` filter, page size ``limit``) until ``own``, the
    test's payments that the filter must return, have all been seen; the judge judges each page
    (``judge.lists.ListWalks.listed``) and the whole walk (``walked``: it knows ``own``)."""
    rules = book.rules
    filtered = ("PAY-014",) if status is not None else ()
    wanted = [p.id for p in own]
    pages: list[list[str]] = []
    listed: list[str] = []
    ended = False
    cursor: str | None = None
    title = f"list limit={limit}" + (f" status={status}" if status else "")
    while True:
        query = {"limit": limit, "status": status, "cursor": cursor}
        response = book.list_payments(**query)
        ids = ["PAY-016", *filtered] + (["PAY-019"] if cursor else [])
        book.verdicts.status(ids, response, rules.success("listPayments"), title)
        body = body_of(response)
        items = body.get("payments")
        book.check(["PAY-016"], isinstance(items, list), "the list has no payments array")
        assert isinstance(items, list)
        book.judge(response, LIST)  # the page's size, its statuses and the status filter
        book.check(
            ["PAY-016"],
            all(isinstance(i, dict) and isinstance(i.get("id"), str) for i in items),
            f"{title}: an entry without a string id",
        )
        page = [str(item["id"]) for item in items]
        pages.append(page)
        listed.extend(page)
        next_cursor = body.get("next_cursor")
        book.listed(query, page, next_cursor, f"{title} page {len(pages)}")
        if not isinstance(next_cursor, str) or not next_cursor:
            ended = True
            break
        # counted with repeats: a server cycling through pages must not hold the walk
        if set(wanted) <= set(listed) or len(listed) >= MAX_ITEMS:
            break
        cursor = next_cursor
    try:
        found = list(book.lists.walked(wanted, pages, ended=ended, filtered=filtered, what=title))
    except ValueError as unseen:
        raise CaseError(f"{title}: {unseen}") from None
    book.verdicts.findings(found)
