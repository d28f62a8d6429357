"""A walk of every page of ``listPayments`` (PAY-014, PAY-016, PAY-018, PAY-019).

The server is shared: the list also holds payments of other tests. A walk therefore asserts
about every page what holds whatever else is listed (at most ``limit`` items, only the filtered
status, no payment twice, a cursor never leading to an empty page of an unfiltered list) and
about the test's own payments what the model knows (each one on some page, newest first). The
walk stops once every own payment has been seen, or after ``MAX_ITEMS`` items: a long list of a
long session is not walked to its end, and then a missing payment proves nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.judge.payment_rules import LIST
from conformance.suite.payments.book import ModelPayment, PaymentBook
from conformance.suite.stateful import body_of

MAX_ITEMS = 200


@dataclass
class Walk:
    """What one walk saw: ids in page order, and whether it reached the end of the list."""

    ids: list[str] = field(default_factory=list)
    pages: int = 0
    ended: bool = False


def walk(
    book: PaymentBook,
    own: Sequence[ModelPayment],
    *,
    limit: int | None = None,
    status: str | None = None,
) -> Walk:
    """Walk the pages of the list (``status`` filter, page size ``limit``) until ``own``, the
    test's payments that the filter must return, have all been seen."""
    rules = book.rules
    filtered = ["PAY-014"] if status is not None else []
    wanted = {p.id for p in own}
    result = Walk()
    seen: set[str] = set()
    cursor: str | None = None
    title = f"limit={limit}" + (f" status={status}" if status else "")
    while True:
        response = book.list_payments(limit=limit, status=status, cursor=cursor)
        ids = ["PAY-016", *filtered] + (["PAY-019"] if cursor else [])
        book.verdicts.status(ids, response, rules.success("listPayments"), f"list {title}")
        body = body_of(response)
        items = body.get("payments")
        book.check(["PAY-016"], isinstance(items, list), "the list has no payments array")
        assert isinstance(items, list)
        result.pages += 1
        book.judge(response, LIST)  # the page's size, its statuses and the status filter
        _page_checks(book, items, status, cursor, title)
        for item in items:
            item_id = str(item.get("id"))
            book.check(
                ["PAY-019"],
                item_id not in seen,
                f"list {title}: payment {item_id} is on two pages (page {result.pages})",
            )
            seen.add(item_id)
            result.ids.append(item_id)
        next_cursor = body.get("next_cursor")
        if not isinstance(next_cursor, str) or not next_cursor:
            result.ended = True
            break
        if wanted <= seen or len(seen) >= MAX_ITEMS:
            break
        cursor = next_cursor
    _own_checks(book, own, result, filtered, title)
    return result


def _page_checks(
    book: PaymentBook, items: list[Any], status: str | None, cursor: str | None, title: str
) -> None:
    book.check(
        ["PAY-016"],
        all(isinstance(i, dict) and isinstance(i.get("id"), str) for i in items),
        f"list {title}: an entry without a string id",
    )
    if status is None:
        # Payments are never removed, so a cursor of an unfiltered list always has a rest.
        book.check(
            ["PAY-019"],
            cursor is None or bool(items),
            f"list {title}: next_cursor led to an empty page",
        )


def _own_checks(
    book: PaymentBook,
    own: Sequence[ModelPayment],
    result: Walk,
    filtered: list[str],
    title: str,
) -> None:
    position = {item_id: index for index, item_id in enumerate(result.ids)}
    missing = [p.order_no for p in own if p.id not in position]
    if missing and not result.ended and not any(p.id in position for p in own):
        # Own payments were made moments ago: newest first, they lead the list.
        book.check(
            ["PAY-018"],
            not book.rules.newest_first,
            f"list {title}: none of this test's {len(own)} newest payments is among the "
            f"first {len(result.ids)} listed",
        )
        return
    # newest first: once the oldest own payment is listed, every other one was listed before it
    oldest = min(own, key=lambda p: p.sequence).id if own else None
    if result.ended or (book.rules.newest_first and oldest in position):
        book.check(
            ["PAY-019", *filtered],
            not missing,
            f"list {title}: {len(missing)} payment(s) on no page ({', '.join(missing[:4])}) "
            f"after {result.pages} page(s)",
        )
    listed = sorted((p for p in own if p.id in position), key=lambda p: position[p.id])
    sequence = [p.sequence for p in listed]
    expected = sorted(sequence, reverse=book.rules.newest_first)
    book.check(
        ["PAY-018"],
        sequence == expected,
        f"list {title}: payments in the order {[p.order_no for p in listed]}, "
        f"not {'newest' if book.rules.newest_first else 'oldest'} first",
    )
