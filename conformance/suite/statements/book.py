"""What the suite itself booked: its payments, their splits and every deposit, exactly.

The ledger of a merchant is shared with every other test of the run, so the family never
predicts a whole statement; it predicts the lines of its own payments (found by
``payment_id``) and checks everything else by arithmetic that holds whatever else is there.

A split share is ``amount * bps / 10000``; the profile does not say how it is rounded, so any
value between the share rounded down and rounded up to the smallest unit is accepted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from hypothesis import strategies as st

from conformance.judge.statements import Line

BPS_TOTAL = 10_000


def unit(places: int) -> Decimal:
    """The smallest amount with ``places`` decimal places (``Decimal('0.000001')`` for 6)."""
    return Decimal(1).scaleb(-places)


def text(value: Decimal) -> str:
    """A request amount: plain digits, never an exponent (``1E-6`` -> ``0.000001``)."""
    return format(value, "f")


def fit(value: Decimal, places: int) -> Decimal:
    """``value`` cut to ``places`` decimal places, and never below the smallest amount."""
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and -exponent <= places and value > 0:
        return value
    cut = value.quantize(unit(places), ROUND_FLOOR)
    return cut if cut > 0 else unit(places)


def amounts(places: int, *, most: int = 10**9) -> st.SearchStrategy[Decimal]:
    """Positive amounts with 0 to ``places`` decimal places."""
    return st.builds(
        lambda digits, shift: Decimal(digits).scaleb(-shift),
        st.integers(1, most),
        st.integers(0, places),
    )


def splits(
    recipients: Sequence[str], *, least: int = 0
) -> st.SearchStrategy[list[tuple[str, int]]]:
    """Split shares to distinct recipients whose bps stay below the whole (the payee keeps a
    remainder, so its balance grows with every deposit)."""
    if not recipients:
        return st.just([])
    most = min(len(recipients), 2)
    return st.lists(
        st.tuples(st.sampled_from(list(recipients)), st.integers(1, 4_000)),
        min_size=min(least, most),
        max_size=most,
        unique_by=lambda share: share[0],
    )


@dataclass
class PaymentRecord:
    payment_id: str
    currency_id: str
    chain_id: str
    quote: Decimal
    splits: tuple[tuple[str, int], ...]
    places: int  # the precision shares are rounded to
    deposits: list[Decimal] = field(default_factory=list)

    @property
    def received(self) -> Decimal:
        return sum(self.deposits, Decimal(0))

    @property
    def open(self) -> bool:
        """The deposit helper still takes money (profile 6: settled once the quote is met)."""
        return self.received < self.quote

    def share_range(self, deposit: Decimal, bps: int) -> tuple[Decimal, Decimal]:
        exact = deposit * bps / BPS_TOTAL
        quantum = unit(self.places)
        return exact.quantize(quantum, ROUND_FLOOR), exact.quantize(quantum, ROUND_CEILING)

    def credit_accepted(self, deposit: Decimal, credit: Decimal) -> bool:
        """The payee's credit for a deposit: the deposit, or (when the server books splits as
        a net credit) the deposit less the shares."""
        if credit == deposit:
            return True
        if not self.splits:
            return False
        ranges = [self.share_range(deposit, bps) for _, bps in self.splits]
        low = deposit - sum((high for _, high in ranges), Decimal(0))
        high = deposit - sum((low for low, _ in ranges), Decimal(0))
        return low <= credit <= high

    def bps_of(self, merchant_id: str) -> int | None:
        return next((bps for m, bps in self.splits if m == merchant_id), None)


@dataclass
class Book:
    """Every payment the current example made, by id."""

    payments: dict[str, PaymentRecord] = field(default_factory=dict)

    def add(self, record: PaymentRecord) -> PaymentRecord:
        self.payments[record.payment_id] = record
        return record

    def of_currency(self, currency_id: str) -> list[PaymentRecord]:
        return [p for p in self.payments.values() if p.currency_id == currency_id and p.deposits]

    def paying(self, currency_id: str, recipient: str) -> list[PaymentRecord]:
        return [p for p in self.of_currency(currency_id) if p.bps_of(recipient) is not None]

    def own_lines(self, history: Iterable[Line], payments: Sequence[PaymentRecord]) -> list[Line]:
        ids = {p.payment_id for p in payments}
        return [line for line in history if line.payment_id in ids]


def unmatched_credits(
    record: PaymentRecord, credits: Sequence[Line]
) -> tuple[list[Decimal], list[Line]]:
    """Match the payee's credit lines of a payment with its deposits, one to one: the deposits
    no line books and the lines no deposit explains."""
    left = list(credits)
    missing: list[Decimal] = []
    for deposit in sorted(record.deposits, reverse=True):
        match = next((ln for ln in left if ln.amount == deposit), None)
        if match is None:
            match = next((ln for ln in left if record.credit_accepted(deposit, ln.amount)), None)
        if match is None:
            missing.append(deposit)
        else:
            left.remove(match)
    return missing, left


def unmatched_shares(
    record: PaymentRecord, recipient: str, incomes: Sequence[Line]
) -> tuple[list[Decimal], list[Line]]:
    """The recipient's split-income lines of a payment against one share per deposit."""
    bps = record.bps_of(recipient)
    left = list(incomes)
    missing: list[Decimal] = []
    if bps is None:
        return missing, left
    for deposit in record.deposits:
        low, high = record.share_range(deposit, bps)
        match = next((ln for ln in left if low <= ln.amount <= high), None)
        if match is not None:
            left.remove(match)
        elif low > 0:  # a share that may round to nothing need not be booked
            missing.append(deposit * bps / BPS_TOTAL)
    return missing, left


def counted(lines: Iterable[Line]) -> Counter[int]:
    return Counter(line.entry_id for line in lines)
