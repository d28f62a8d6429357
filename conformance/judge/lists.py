"""Payment lists and merchant order numbers across exchanges (PAY-013, PAY-018, PAY-019, TEN-008,
IDEM-009): small observers fed exchanges in order, by the validator from a recording and by the
suite's payment family from the traffic it sends.

``ListWalks`` learns when each payment was created (the answer of its create) and judges:

- payment lists (profile 5, ``payments.list_order``): two payments whose creates did not
  overlap in time are listed newest first (or oldest first, as the profile says) (PAY-018);
- a page walk: the request that follows an answer's ``next_cursor`` (same API key, same
  filters) continues where that page ended, without repeating a payment of it, without
  leading an unfiltered list to an empty page (payments are never removed: a cursor says more
  remain) and, for an unfiltered list, without skipping a payment of the same merchant created
  between the two pages' boundary items (PAY-019);
- a list filtered by one ``merchant_order_no`` (numbers unique per merchant) with at most one
  payment on a page of more gives no ``next_cursor``: nothing more can remain (PAY-019);
- with ``walked``, a whole walk whose caller knows which payments it must list (the suite,
  which created them): no payment on two pages, the walk in the profile's order, and, once the
  walk reached the end, every expected payment listed (PAY-019; a filter's ids too).

``OrderNumbers`` learns which payment holds each merchant's ``merchant_order_no`` and judges:

- a second createPayment of that merchant with a number already used, sent with another
  Idempotency-Key: refused with the profile's duplicate-order error, never created (PAY-013;
  ``known_valid``: the rest of the request is valid, so another answer fails too);
- a createPayment of another merchant with that number: a new payment, never refused as a
  duplicate (TEN-008; judged only between merchants the profile's credentials name);
- a listPayments answer showing a second payment with a number the merchant used: a replay
  that inserted the payment again (IDEM-009, when a replay of that number was seen), else a
  duplicate created (PAY-013).

Creates that overlap in time have no order; a payment whose create was not seen is not judged.
Every table is bounded (``TABLE_LIMIT``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.judge.findings import Finding
from conformance.judge.tables import TABLE_LIMIT, BoundedTable, When, digest

LIST_ORDER, LIST_WALK, ORDER_NUMBER = "list_order", "list_walk", "order_number"
ORDER_IDS, WALK_IDS = ("PAY-018",), ("PAY-019",)
DUPLICATE_IDS = ("PAY-013",)
CURSOR, LIMIT, ORDER_NO = "cursor", "limit", "merchant_order_no"
EARLIER = "an earlier exchange"
ORDERED_KEPT = 200
"""Items of one list answer whose order is judged (the first ones with a known create)."""
CREATIONS_KEPT = 10_000
"""Creates remembered per merchant in order, to find a payment skipped between two pages (the
oldest forgotten first)."""


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
    source: str
    ids: frozenset[str]  # every payment of the page


class ListWalks:
    """Creation order, and the order and page walks of payment lists."""

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self.newest_first = profile.payments.list_order != "oldest-first"
        self._unique = profile.payments.unique_merchant_order_no
        self._created: BoundedTable[str, _Created] = BoundedTable(limit)
        # per merchant: (position, id) of its creates in order
        self._creations: BoundedTable[bytes, list[tuple[int, str]]] = BoundedTable(limit)
        self._lists: BoundedTable[bytes, _ListPage] = BoundedTable(limit)

    @property
    def _order_name(self) -> str:
        return "newest" if self.newest_first else "oldest"

    def created(self, owner: bytes, payment_id: str, when: When) -> None:
        """Learn a payment a create answered (a replay answers the first create's payment)."""
        if self._created.get(payment_id) is not None:
            return
        self._created.put(payment_id, _Created(owner, when))
        mine = self._creations.get(owner)
        if mine is None:
            mine = []
            self._creations.put(owner, mine)
        mine.append((when.position, payment_id))
        if len(mine) > CREATIONS_KEPT:
            del mine[: len(mine) - CREATIONS_KEPT]

    def listed(
        self,
        owner: bytes,
        scope: str,
        query: Mapping[str, str],
        ids: Sequence[str],
        next_cursor: object,
        source: str,
    ) -> Iterator[Finding]:
        """Judge one page of a successful listPayments answer (its ``query``; ``ids``, the
        payments in page order; ``scope``, the API key that asked) and learn its cursor."""
        yield from self.order(ids)
        filters = {k: v for k, v in query.items() if k not in (CURSOR, LIMIT)}
        query_digest = digest(*(f"{k}={v}" for k, v in sorted(filters.items())))
        cursor = query.get(CURSOR)
        if cursor is not None:
            before = self._lists.get(digest(scope, cursor))
            if before is not None and before.query == query_digest:
                yield from self._continued(before, ids, owner)
        following = isinstance(next_cursor, str) and bool(next_cursor)
        if ORDER_NO in filters and self._unique and len(ids) <= 1:
            yield from self._one_number(filters[ORDER_NO], query.get(LIMIT), len(ids), following)
        if following and ids:
            assert isinstance(next_cursor, str)
            page = _ListPage(query_digest, bool(filters), ids[-1], source, frozenset(ids))
            self._lists.put(digest(scope, next_cursor), page)

    @staticmethod
    def _one_number(
        number: str, page_size: str | None, count: int, following: bool
    ) -> Iterator[Finding]:
        """A merchant's number holds one payment: past it nothing remains to list."""
        if page_size is not None and not (page_size.isdigit() and int(page_size) > 1):
            return  # a page of one may be full
        if following:
            message = (
                f"merchant_order_no={number} listed {count} payment(s) and a next_cursor: a "
                "merchant's number holds one payment, nothing more remains"
            )
            yield Finding(LIST_WALK, WALK_IDS, Outcome.FAILED, message)
        else:
            message = f"merchant_order_no={number}: no next_cursor past its payment"
            yield Finding(LIST_WALK, WALK_IDS, Outcome.PASSED, message)

    def order(self, ids: Sequence[str]) -> Iterator[Finding]:
        """PAY-018 on payments listed in this order (a page, or the pages of one walk)."""
        # pairs of the first ORDERED_KEPT known items: a longer list must not cost its square
        known = [i for i in ids if self._created.get(i) is not None][:ORDERED_KEPT]
        if len(known) < 2:
            return
        judged = False
        for index, first in enumerate(known):
            for second in known[index + 1 :]:
                right = self._listed_before(first, second)
                if right is False:
                    yield Finding(
                        LIST_ORDER,
                        ORDER_IDS,
                        Outcome.FAILED,
                        f"{first} is listed before {second}, created "
                        + ("earlier" if self.newest_first else "later")
                        + f": not {self._order_name} first",
                    )
                    return
                judged = judged or right is True
        if judged:
            message = f"payments listed {self._order_name} first"
            yield Finding(LIST_ORDER, ORDER_IDS, Outcome.PASSED, message)

    def walked(
        self,
        expected: Sequence[str],
        pages: Sequence[Sequence[str]],
        *,
        ended: bool,
        filtered: Sequence[str] = (),
        what: str = "the walk",
    ) -> Iterator[Finding]:
        """The whole walk ``pages`` of a caller that knows the payments ``expected`` on it
        (those its filter must list) and whether it reached the end of the list: no payment
        twice, the profile's order across pages, and every expected payment listed once the
        walk ended (or once, newest first, the oldest expected payment was listed). An expected
        payment must have been learnt (``created``)."""
        seen: set[str] = set()
        listed: list[str] = []
        wanted = set(expected)
        for number, page in enumerate(pages, 1):
            for item in page:
                if item in seen:
                    message = f"{what}: payment {item} is listed twice (page {number})"
                    yield Finding(LIST_WALK, WALK_IDS, Outcome.FAILED, message)
                    return
                seen.add(item)
            listed.extend(page)
        yield from self.order([i for i in listed if i in wanted])
        missing = [i for i in expected if i not in seen]
        if missing and not ended and len(missing) == len(expected):
            # made moments ago: newest first, they lead the list
            if self.newest_first:
                message = (
                    f"{what}: none of the {len(expected)} newest payments is among the first "
                    f"{len(listed)} listed"
                )
                yield Finding(LIST_ORDER, ORDER_IDS, Outcome.FAILED, message)
            return
        oldest = min(expected, key=self._position, default=None)
        if ended or (self.newest_first and oldest in seen):
            ids = (*WALK_IDS, *filtered)
            if missing:
                message = (
                    f"{what}: {len(missing)} payment(s) on no page ({', '.join(missing[:4])}) "
                    f"after {len(pages)} page(s)"
                )
                yield Finding(LIST_WALK, ids, Outcome.FAILED, message)
            else:
                yield Finding(LIST_WALK, ids, Outcome.PASSED, f"{what} lists every payment")

    def _position(self, payment_id: str) -> int:
        created = self._created.get(payment_id)
        if created is None:
            raise ValueError(f"{payment_id}: expected on a walk, but its create was not seen")
        return created.when.position

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
        return None if newer is None else newer == self.newest_first

    def _continued(self, before: _ListPage, ids: Sequence[str], owner: bytes) -> Iterator[Finding]:
        where = f"the page after {before.source or 'an earlier page'}"
        again = [i for i in ids if i in before.ids]
        if again:
            message = f"{where} lists {again[0]} again: repeated across the boundary"
            yield Finding(LIST_WALK, WALK_IDS, Outcome.FAILED, message)
            return
        earlier = [i for i in ids if self._listed_before(i, before.last)]
        if earlier:
            # the order across pages is the list order's rule, not the walk's
            message = (
                f"{where} lists {earlier[0]}, which the profile's order puts before that page's "
                f"last payment {before.last}: not {self._order_name} first across the boundary"
            )
            yield Finding(LIST_ORDER, ORDER_IDS, Outcome.FAILED, message)
            return
        if before.filtered:
            return  # a filter may leave payments out, and a status may change
        if not ids:
            message = f"{where} is empty, yet that page's next_cursor said more remain"
            yield Finding(LIST_WALK, WALK_IDS, Outcome.FAILED, message)
            return
        if self._newer(ids[0], before.last) is None:
            return  # an unknown first item decides nothing
        skipped = self._between(owner, before.last, ids[0], set(ids))
        if skipped is not None:
            yield Finding(
                LIST_WALK,
                WALK_IDS,
                Outcome.FAILED,
                f"{where} starts with {ids[0]}: {skipped}, created between it and that page's "
                f"last payment {before.last}, is on neither page",
            )
            return
        yield Finding(LIST_WALK, WALK_IDS, Outcome.PASSED, f"{where} continues where it ended")

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


@dataclass(frozen=True, slots=True)
class _Order:
    """The payment that holds a merchant's order number, and whether a replay of its
    creation was seen."""

    payment_id: str
    source: str
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class _FirstUse:
    """The merchant whose payment first held an order number."""

    merchant: bytes
    known: bool  # the profile's credentials name the merchant (not only an API key)
    source: str


@dataclass(frozen=True, slots=True)
class OrderUse:
    """A createPayment answer as the order-number rules read it."""

    merchant: bytes  # the merchant (or, when the profile does not name it, the API key)
    known: bool  # the profile's credentials name the merchant
    number: str  # the request's merchant_order_no
    status: int
    code: object  # the error body's code (None when there is none)
    payment_id: object  # the answer's id
    source: str = ""


class OrderNumbers:
    """Which payment holds each merchant's order numbers, and the answers that contradict it."""

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self.duplicate = profile.error("status", "duplicate_order")
        self._orders: BoundedTable[bytes, _Order] = BoundedTable(limit)
        self._first: BoundedTable[bytes, _FirstUse] = BoundedTable(limit)
        self._payments: BoundedTable[str, bytes] = BoundedTable(limit)  # payment id: merchant

    def created(
        self, use: OrderUse, *, replayed: bool = False, known_valid: bool = False
    ) -> Iterator[Finding]:
        """Judge a createPayment answer, then learn the payment it created. ``known_valid``:
        the request is a duplicate built to break PAY-013, valid otherwise and sent with a new
        Idempotency-Key, so any answer but the duplicate-order error fails (``ValueError``
        when no payment of the merchant is known to hold its number)."""
        slot = digest(use.merchant, use.number)
        own = self._orders.get(slot)
        if known_valid and own is None:
            raise ValueError(f"merchant_order_no {use.number!r} is not known to be used")
        first = self._first.get(digest(use.number))
        other = first if first is not None and first.merchant != use.merchant else None
        if 200 <= use.status < 300:
            yield from self._accepted(use, slot, own, first, other, replayed, known_valid)
            return
        if self.duplicate.matches(use.status, use.code):
            if own is not None:
                yield Finding(
                    ORDER_NUMBER,
                    DUPLICATE_IDS,
                    Outcome.PASSED,
                    f"merchant_order_no {use.number!r}, used in {own.source or EARLIER}: "
                    f"refused ({use.status} {use.code})",
                )
            elif other is not None and other.known and use.known:
                yield Finding(
                    ORDER_NUMBER,
                    ("TEN-008",),
                    Outcome.FAILED,
                    f"merchant_order_no {use.number!r}, used only by another merchant (in "
                    f"{other.source or EARLIER}): refused as a duplicate ({use.status} {use.code})",
                )
        elif known_valid:
            yield Finding(
                ORDER_NUMBER,
                DUPLICATE_IDS,
                Outcome.FAILED,
                f"merchant_order_no {use.number!r} used again: answered {use.status} "
                f"{use.code}, not the duplicate-order error {self.duplicate.status} "
                f"{self.duplicate.code}",
            )

    def _accepted(
        self,
        use: OrderUse,
        slot: bytes,
        own: _Order | None,
        first: _FirstUse | None,
        other: _FirstUse | None,
        replayed: bool,
        known_valid: bool,
    ) -> Iterator[Finding]:
        payment_id = use.payment_id
        if not isinstance(payment_id, str):
            return
        if replayed:
            if own is not None and own.payment_id == payment_id:
                self._orders.put(slot, replace(own, replayed=True))
            return
        if own is not None and (own.payment_id != payment_id or known_valid):
            yield Finding(
                ORDER_NUMBER,
                DUPLICATE_IDS,
                Outcome.FAILED,
                f"merchant_order_no {use.number!r}, used by {own.payment_id} created in "
                f"{own.source or EARLIER}: a second payment {payment_id} created ({use.status})",
            )
        if own is None:
            self._orders.put(slot, _Order(payment_id, use.source))
        self._payments.put(payment_id, use.merchant)
        if first is None:
            self._first.put(digest(use.number), _FirstUse(use.merchant, use.known, use.source))
        if other is not None and other.known and use.known:
            yield Finding(
                ORDER_NUMBER,
                ("TEN-008",),
                Outcome.PASSED,
                f"merchant_order_no {use.number!r}, used by another merchant: accepted",
            )

    def listed(self, merchant: bytes, items: Iterator[dict[str, Any]]) -> Iterator[Finding]:
        """Judge the payments a successful listPayments answer of ``merchant`` shows."""
        shown_replayed = False
        for item in items:
            payment_id, number = item.get("id"), item.get(ORDER_NO)
            if not isinstance(payment_id, str) or not isinstance(number, str):
                continue
            owner = self._payments.get(payment_id)
            if owner is not None and owner != merchant:
                continue  # another merchant's payment: the isolation rules' business
            own = self._orders.get(digest(merchant, number))
            if own is None:
                continue
            if own.payment_id != payment_id:
                yield Finding(
                    ORDER_NUMBER,
                    ("IDEM-009",) if own.replayed else DUPLICATE_IDS,
                    Outcome.FAILED,
                    f"listPayments shows {payment_id} with merchant_order_no {number!r}, held "
                    f"by {own.payment_id} created in {own.source or EARLIER}"
                    + (" and replayed since: the replay created it again" if own.replayed else ""),
                )
                return
            shown_replayed = shown_replayed or own.replayed
        if shown_replayed:
            yield Finding(
                ORDER_NUMBER,
                ("IDEM-009",),
                Outcome.PASSED,
                "listPayments shows each replayed creation's payment once",
            )
